// How the proxy routes send server-sent events: headers, a keep-alive comment whenever nothing
// was sent for a while (long thinking phases trip the 60–100 s idle cut-offs of proxies and hosts),
// the observer's stream hooks, and cancelling the upstream call when the stream stops early.
import { attachEventBatches, eventBatches } from './upstream/backend.ts'
import type { Backend, GeminiResponse, ProxyObserver, UpstreamCall } from './upstream/backend.ts'
import type { PushQueueFlow, PushSink } from './upstream/push-queue.ts'
import { CORS_HEADERS } from './access/client-auth.ts'
import { logFailure } from '../errors.ts'
import type { Logger } from '../logger.ts'

export const KEEPALIVE = ': keepalive\n\n'

export const SSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  ...CORS_HEADERS,
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
})

export interface EventStreamOptions {
  keepAliveMs: number
  /** What a keep-alive sends. Default KEEPALIVE, an SSE comment; a surface whose clients expect an event of their own names it. */
  keepAlive?: string
  observer?: ProxyObserver
  /** Runs when the stream stops before its source is done (the client went away): aborts the upstream call. */
  onStop?: () => void
  /** Told of a failure mid-stream (lib/errors.ts logFailure), once, here where the stream ends. Default none. */
  logger?: Logger
}

/** What a governed call observes of a stream (lib/proxy/call/lifecycle.ts): each batch of events before its translation, and the end. */
export interface StreamWatch {
  /** The events of one upstream read, as they arrived. */
  batch (events: GeminiResponse[]): void
  /** The source ended (err undefined) or failed; not called when the client went away first (onStop is). */
  ended (err?: unknown): void
}

/** How many events a chunk of SSE text holds: each ends with a blank line, and JSON data never holds a raw newline. */
function eventCount (chunk: string): number {
  let count = 0
  for (let i = chunk.indexOf('\n\n'); i !== -1; i = chunk.indexOf('\n\n', i + 2)) count++
  return count
}

/** The text a body holds before it pauses its source: the client, or the host's socket, lags behind. */
const HIGH_WATER = 64 * 1024

type Reader = { resolve: (r: IteratorResult<string>) => void, reject: (err: unknown) => void }

/**
 * A route's SSE body, and its one batching point: the text written during one turn of the event loop goes out
 * as one chunk at the end of that turn (one socket write instead of several: a write costs more than a
 * translation; the first read alone takes what waits at once), KEEPALIVE whenever `keepAliveMs` pass without text
 * while the host waits for some, the observer told of each chunk, the source paused while HIGH_WATER characters wait, and cancelled (with `onStop`) when the
 * host stops reading before the end. An iterator written out rather than a generator: no promise per event, one
 * per chunk the host reads.
 */
class SseBody implements AsyncIterableIterator<string> {
  /** Set by whoever feeds the body. */
  flow: PushQueueFlow | undefined
  private buffer = ''
  /** The source is done (end or failure); what the buffer holds still goes out. */
  private sourceDone = false
  private failure: { err: unknown } | undefined
  /** The host has read the end, or stopped reading. */
  private finished = false
  private paused = false
  /** The host has had an answer to a read. */
  private started = false
  private reader: Reader | undefined
  /** Armed when text starts waiting, and kept until it fires: a quick source cannot postpone the write. */
  private flushing: NodeJS.Immediate | undefined
  private readonly timer: NodeJS.Timeout
  private readonly options: EventStreamOptions

  constructor (options: EventStreamOptions) {
    this.options = options
    this.timer = setTimeout(this.idle, options.keepAliveMs)
    options.observer?.streamOpened?.()
  }

  get closed (): boolean { return this.finished || this.sourceDone }

  write (text: string): void {
    if (this.closed || text === '') return
    this.buffer += text
    this.timer.refresh()
    this.flushing ??= setImmediate(this.flush)
    if (!this.paused && this.buffer.length >= HIGH_WATER) {
      this.paused = true
      this.flow?.pause()
    }
  }

  /** The source ended; `text` is its last. */
  end (text = ''): void {
    if (this.closed) return
    this.write(text)
    this.sourceDone = true
    this.flushing ??= setImmediate(this.flush)
  }

  /** The source failed: the host's read after the text already written fails with `err`. */
  fail (err: unknown): void {
    if (this.closed) return
    this.failure = { err }
    this.sourceDone = true
    this.flushing ??= setImmediate(this.flush)
  }

  async next (): Promise<IteratorResult<string>> {
    if (this.finished) return { value: undefined, done: true }
    return await new Promise<IteratorResult<string>>((resolve, reject) => {
      const reader = { resolve, reject }
      // The first read takes what waits at once (a route's head, and the events that came with the upstream's
      // headers): the first byte need not wait for the end of a turn that serves every other socket first. Once
      // the source is done nothing more can join a batch: the rest and the end go at once, so the host ends the
      // response in the same socket write as its last text (back to back, a whole stream often comes before the
      // first read; waiting for the turn's end cost a write syscall of its own for the final chunk marker).
      if (this.flushing === undefined || !this.started || this.sourceDone) this.answer(reader)
      else this.reader = reader
    })
  }

  async return (): Promise<IteratorResult<string>> {
    if (!this.finished) {
      const early = !this.sourceDone
      this.finish()
      this.buffer = ''
      this.reader?.resolve({ value: undefined, done: true })
      this.reader = undefined
      if (early) {
        this.flow?.cancel()
        this.options.onStop?.()
      }
    }
    return { value: undefined, done: true }
  }

  [Symbol.asyncIterator] (): this { return this }

  /** Gives `reader` what waits, the end or the failure; keeps it waiting when there is none yet. */
  private answer (reader: Reader): void {
    this.started = true
    if (this.buffer !== '') {
      const value = this.buffer
      this.buffer = ''
      this.options.observer?.streamChunk?.(eventCount(value))
      if (this.paused) {
        this.paused = false
        this.flow?.resume()
      }
      reader.resolve({ value, done: false })
    } else if (this.sourceDone) {
      const failure = this.failure
      this.finish()
      if (failure === undefined) reader.resolve({ value: undefined, done: true })
      else reader.reject(failure.err)
    } else {
      this.reader = reader
    }
  }

  private readonly flush = (): void => {
    this.flushing = undefined
    const reader = this.reader
    if (reader === undefined) return
    this.reader = undefined
    this.answer(reader)
  }

  private readonly idle = (): void => {
    this.timer.refresh()
    const reader = this.reader
    if (reader === undefined || this.buffer !== '' || this.sourceDone) return
    this.reader = undefined
    reader.resolve({ value: this.options.keepAlive ?? KEEPALIVE, done: false })
  }

  private finish (): void {
    this.finished = true
    this.failure = undefined
    clearTimeout(this.timer)
    if (this.flushing !== undefined) clearImmediate(this.flushing)
    this.flushing = undefined
    this.options.observer?.streamClosed?.()
  }
}

/**
 * Reads `source` into `sink` (for sources that are not a PushQueue), pausing while asked to. Cancelling closes the
 * source without waiting for its read in flight (it may be blocked on the upstream, which onStop aborts).
 */
function pump<T> (source: AsyncIterable<T>, sink: PushSink<T>): PushQueueFlow {
  const it = source[Symbol.asyncIterator]()
  let stopped = false
  let paused = false
  let resumed: (() => void) | undefined
  void (async () => {
    try {
      while (true) {
        if (paused) await new Promise<void>(resolve => { resumed = resolve })
        if (stopped) return
        const result = await it.next()
        if (stopped) return
        if (result.done === true) return sink.end()
        sink.push(result.value)
      }
    } catch (err) {
      if (!stopped) sink.fail(err)
    }
  })()
  return {
    pause: () => { paused = true },
    resume: () => {
      paused = false
      resumed?.()
      resumed = undefined
    },
    cancel: () => {
      if (stopped) return
      stopped = true
      resumed?.()
      it.return?.()?.catch(() => {})
    },
  }
}

/** An SSE body of the text chunks of `source` (see SseBody): a failure of the source fails the body's read after the text before it. */
export function eventStream (source: AsyncIterable<string>, options: EventStreamOptions): AsyncIterableIterator<string> {
  const body = new SseBody(options)
  body.flow = pump(source, { push: text => body.write(text), end: () => body.end(), fail: err => body.fail(err) })
  return body
}

/** How a route turns upstream events into its SSE text: each batch translated once, into one string. */
export interface SseTranslator {
  /** Sent first, before any event (may be ''). */
  head: string
  /** What a keep-alive sends on this surface (EventStreamOptions.keepAlive); default the SSE comment KEEPALIVE. */
  keepAlive?: string
  /** The text for the events of one upstream read ('' when they have nothing for the client). */
  events: (batch: GeminiResponse[]) => string
  /** After the last event. */
  end: () => string
  /** After a failure mid-stream: the error as the route's clients expect it. */
  error: (err: unknown) => string
}

/**
 * A route's SSE body of upstream `events`, translated by `translator`: the built-in backends hand each upstream
 * read's events straight to the translator as they arrive (attachEventBatches), any other stream is read batch by
 * batch. A translation that throws ends the stream like an upstream failure.
 */
export function sseBody (events: AsyncIterable<GeminiResponse>, translator: SseTranslator, options: EventStreamOptions & { watch?: StreamWatch }): AsyncIterableIterator<string> {
  const body = new SseBody(options)
  const watch = options.watch
  body.write(translator.head)
  const sink: PushSink<GeminiResponse[]> = {
    push (batch) {
      if (body.closed) return
      watch?.batch(batch)
      let text: string
      try {
        text = translator.events(batch)
      } catch (err) {
        sink.fail(err)
        body.flow?.cancel()
        return
      }
      body.write(text)
    },
    end () {
      if (body.closed) return
      watch?.ended()
      body.end(translator.end())
    },
    fail (err) {
      if (body.closed) return
      logFailure(options.logger, err, {}, 'stream failed')
      watch?.ended(err)
      body.end(translator.error(err))
    },
  }
  body.flow = attachEventBatches(events, sink) ?? pump(eventBatches(events), sink)
  return body
}

/**
 * An AbortController that also follows the client's signal; abort() it to cancel the upstream call.
 * A listener rather than AbortSignal.any(): one per stream, gone with the request, and cheaper.
 */
function linkedAbort (clientSignal: AbortSignal | undefined): { signal: AbortSignal, abort: () => void } {
  const controller = new AbortController()
  if (clientSignal?.aborted === true) controller.abort(clientSignal.reason)
  else clientSignal?.addEventListener('abort', () => controller.abort(clientSignal.reason), { once: true })
  return { signal: controller.signal, abort: () => { if (!controller.signal.aborted) controller.abort(new Error('stream closed')) } }
}

/**
 * Opens an upstream stream that the client's disconnect cancels, and that `abort` cancels when the
 * stream stops early; a failure to open cancels it at once.
 */
export async function openUpstreamStream (backend: Backend, call: Omit<UpstreamCall, 'signal'>, clientSignal: AbortSignal | undefined): Promise<{ events: AsyncIterable<GeminiResponse>, abort: () => void }> {
  const upstream = linkedAbort(clientSignal)
  try {
    return { events: await backend.stream({ ...call, signal: upstream.signal }), abort: upstream.abort }
  } catch (err) {
    upstream.abort()
    throw err
  }
}
