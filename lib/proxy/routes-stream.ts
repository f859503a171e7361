// How the proxy routes send server-sent events: headers, a keep-alive comment whenever nothing
// was sent for a while (long thinking phases trip the 60–100 s idle cut-offs of proxies and hosts),
// the observer's stream hooks, and cancelling the upstream call when the stream stops early.
import type { Backend, GeminiResponse, ProxyObserver, UpstreamCall } from './upstream/backend.ts'
import { CORS_HEADERS } from './access/client-auth.ts'

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

export interface EventStreamOptions {
  keepAliveMs: number
  observer?: ProxyObserver
  /** Runs when the stream stops before its source is done (the client went away): aborts the upstream call. */
  onStop?: () => void
}

/** How many events a chunk of SSE text holds: each ends with a blank line, and JSON data never holds a raw newline. */
function eventCount (chunk: string): number {
  let count = 0
  for (let i = chunk.indexOf('\n\n'); i !== -1; i = chunk.indexOf('\n\n', i + 2)) count++
  return count
}

/**
 * A route's SSE body from `source`: the chunks that arrive during one turn of the event loop joined into
 * one (one socket write instead of several: a chunk's write costs more than its translation), KEEPALIVE
 * inserted whenever `keepAliveMs` pass without a chunk, the observer told of each write, and `onStop` run
 * when the stream stops before its source is done. One generator does all of it (every layer of async
 * iteration costs each chunk a few promises), with one timer per stream, pushed back after every chunk.
 */
export async function * eventStream (source: AsyncIterable<string>, options: EventStreamOptions): AsyncGenerator<string> {
  const { observer } = options
  const it = source[Symbol.asyncIterator]()
  let pending: Promise<IteratorResult<string>> | undefined
  // Set while waiting for the source: the timers end the wait early (IDLE: send a keep-alive; FLUSH: send what waits).
  let wake: ((value: typeof IDLE | typeof FLUSH) => void) | undefined
  const timer = setTimeout(function tick () {
    wake?.(IDLE)
    timer.refresh()
  }, options.keepAliveMs)
  let buffered = ''
  // Armed when text starts waiting and kept until it fires, so a source that answers quickly every time cannot
  // postpone the write: whatever waits goes out at the end of the turn in which it began to wait.
  let flushTimer: NodeJS.Immediate | undefined
  let flushDue = false
  const flushNow = (): void => {
    flushTimer = undefined
    flushDue = true
    wake?.(FLUSH)
  }
  const takeBuffered = (): string => {
    const out = buffered
    buffered = ''
    flushDue = false
    if (flushTimer !== undefined) clearImmediate(flushTimer)
    flushTimer = undefined
    observer?.streamChunk?.(eventCount(out))
    return out
  }
  let finished = false
  observer?.streamOpened?.()
  try {
    while (true) {
      if (flushDue) {
        yield takeBuffered()
        continue
      }
      const next = pending ??= it.next()
      let result: IteratorResult<string> | typeof IDLE | typeof FLUSH
      try {
        result = await new Promise<IteratorResult<string> | typeof IDLE | typeof FLUSH>((resolve, reject) => {
          wake = resolve
          next.then(resolve, reject)
        })
      } catch (err) {
        // The source failed: what it gave before still goes out first.
        if (buffered !== '') yield takeBuffered()
        throw err
      } finally {
        wake = undefined
      }
      if (result === FLUSH) continue
      if (result === IDLE) {
        yield KEEPALIVE
        continue
      }
      pending = undefined
      if (result.done === true) {
        finished = true
        if (buffered !== '') yield takeBuffered()
        return
      }
      timer.refresh()
      buffered += result.value
      flushTimer ??= setImmediate(flushNow)
    }
  } finally {
    clearTimeout(timer)
    if (flushTimer !== undefined) clearImmediate(flushTimer)
    if (!finished) {
      // Stopped early: close the source without waiting (it may be blocked on the upstream, which
      // onStop aborts), and swallow the rejection that abort gives a pending read.
      pending?.catch(() => {})
      it.return?.()?.catch(() => {})
      options.onStop?.()
    }
    observer?.streamClosed?.()
  }
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
