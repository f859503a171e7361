// How the proxy routes send server-sent events: headers, a keep-alive comment whenever nothing
// was sent for a while (long thinking phases trip the 60–100 s idle cut-offs of proxies and hosts),
// the observer's stream hooks, and cancelling the upstream call when the stream stops early.
import type { StreamBody } from '../http/contract.ts'
import type { Backend, GeminiEventStream, ProxyObserver, UpstreamCall } from './backend.ts'
import { CORS_HEADERS } from './client-auth.ts'

export const KEEPALIVE = ': keepalive\n\n'

export const SSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  ...CORS_HEADERS,
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
})

/** What a wait on the source ended with, when it was not the source's next result. */
const FLUSH = Symbol('flush')
const IDLE = Symbol('idle')

/**
 * `source`, with the chunks that arrive during one turn of the event loop joined into one (one socket write
 * instead of several: a chunk's write costs more than its translation), and KEEPALIVE inserted whenever
 * `intervalMs` pass without a chunk. One timer serves the whole stream, pushed back after every chunk: a timer
 * per chunk costs more than the chunk.
 */
export async function * withKeepAlive (source: AsyncIterable<string>, intervalMs: number): AsyncGenerator<string> {
  const it = source[Symbol.asyncIterator]()
  let pending: Promise<IteratorResult<string>> | undefined
  // Set while waiting for the source: the timer ends the wait with IDLE, meaning "send a keep-alive".
  let wake: ((value: typeof IDLE) => void) | undefined
  const timer = setTimeout(function tick () {
    wake?.(IDLE)
    timer.refresh()
  }, intervalMs)
  let buffered = ''
  let finished = false
  try {
    while (true) {
      const next = pending ??= it.next()
      let flush: NodeJS.Immediate | undefined
      const result = await new Promise<IteratorResult<string> | typeof IDLE | typeof FLUSH>((resolve, reject) => {
        wake = resolve
        // Something is waiting to go out: send it once this turn's I/O is handled, unless more comes first.
        if (buffered !== '') flush = setImmediate(resolve, FLUSH)
        next.then(resolve, reject)
      })
      wake = undefined
      if (flush !== undefined) clearImmediate(flush)
      if (result === FLUSH) {
        const out = buffered
        buffered = ''
        yield out
        continue
      }
      if (result === IDLE) {
        yield KEEPALIVE
        continue
      }
      pending = undefined
      if (result.done === true) {
        finished = true
        if (buffered !== '') yield buffered
        return
      }
      timer.refresh()
      buffered += result.value
    }
  } finally {
    clearTimeout(timer)
    if (!finished) {
      // Stopped early: close the source without waiting (it may be blocked on the upstream, which
      // the caller aborts), and swallow the rejection that abort gives a pending read.
      pending?.catch(() => {})
      it.return?.()?.catch(() => {})
    }
  }
}

export interface EventStreamOptions {
  keepAliveMs: number
  observer?: ProxyObserver
  /** Runs when the stream stops before its source is done (the client went away): aborts the upstream call. */
  onStop: () => void
}

/** How many events a chunk of SSE text holds: each ends with a blank line, and JSON data never holds a raw newline. */
function eventCount (chunk: string): number {
  let count = 0
  for (let i = chunk.indexOf('\n\n'); i !== -1; i = chunk.indexOf('\n\n', i + 2)) count++
  return count
}

export function eventStream (source: AsyncIterable<string>, options: EventStreamOptions): StreamBody {
  const { observer } = options
  return (async function * eventStreamBody () {
    observer?.streamOpened?.()
    let done = false
    try {
      for await (const chunk of withKeepAlive(source, options.keepAliveMs)) {
        if (chunk !== KEEPALIVE) observer?.streamChunk?.(eventCount(chunk))
        yield chunk
      }
      done = true
    } finally {
      // A source that ran to its end has finished with the upstream already: nothing to abort.
      if (!done) options.onStop()
      observer?.streamClosed?.()
    }
  })()
}

/**
 * An AbortController that also follows the client's signal; abort() it to cancel the upstream call.
 * A listener rather than AbortSignal.any(): one per stream, gone with the request, and cheaper.
 */
export function linkedAbort (clientSignal: AbortSignal | undefined): { signal: AbortSignal, abort: () => void } {
  const controller = new AbortController()
  if (clientSignal?.aborted === true) controller.abort(clientSignal.reason)
  else clientSignal?.addEventListener('abort', () => controller.abort(clientSignal.reason), { once: true })
  return { signal: controller.signal, abort: () => { if (!controller.signal.aborted) controller.abort(new Error('stream closed')) } }
}

/**
 * Opens an upstream stream that the client's disconnect cancels, and that `abort` cancels when the
 * stream stops early; a failure to open cancels it at once.
 */
export async function openUpstreamStream (backend: Backend, call: Omit<UpstreamCall, 'signal'>, clientSignal: AbortSignal | undefined): Promise<{ events: GeminiEventStream, abort: () => void }> {
  const upstream = linkedAbort(clientSignal)
  try {
    return { events: await backend.stream({ ...call, signal: upstream.signal }), abort: upstream.abort }
  } catch (err) {
    upstream.abort()
    throw err
  }
}
