// How the proxy routes send server-sent events: headers, a keep-alive comment whenever nothing
// was sent for a while (long thinking phases trip the 60–100 s idle cut-offs of proxies and hosts),
// the observer's stream hooks, and cancelling the upstream call when the stream stops early.
import type { StreamBody } from '../http/contract.ts'
import type { ProxyObserver } from './backend.ts'
import { CORS_HEADERS } from './client-auth.ts'

export const KEEPALIVE = ': keepalive\n\n'

export const SSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  ...CORS_HEADERS,
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
})

/** `source`, with KEEPALIVE inserted after every `intervalMs` without a chunk. */
export async function * withKeepAlive (source: AsyncIterable<string>, intervalMs: number): AsyncGenerator<string> {
  const it = source[Symbol.asyncIterator]()
  let pending: Promise<IteratorResult<string>> | undefined
  let timer: NodeJS.Timeout | undefined
  let finished = false
  try {
    while (true) {
      pending ??= it.next()
      const tick = new Promise<undefined>(resolve => { timer = setTimeout(() => resolve(undefined), intervalMs) })
      const result = await Promise.race([pending, tick])
      clearTimeout(timer)
      if (result === undefined) {
        yield KEEPALIVE
        continue
      }
      pending = undefined
      if (result.done === true) {
        finished = true
        return
      }
      yield result.value
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
  /** Runs once when the stream ends for any reason (used to abort the upstream call). */
  onClose: () => void
}

export function eventStream (source: AsyncIterable<string>, options: EventStreamOptions): StreamBody {
  const { observer } = options
  return (async function * eventStreamBody () {
    observer?.streamOpened?.()
    try {
      for await (const chunk of withKeepAlive(source, options.keepAliveMs)) {
        if (chunk !== KEEPALIVE) observer?.streamChunk?.()
        yield chunk
      }
    } finally {
      options.onClose()
      observer?.streamClosed?.()
    }
  })()
}

/** An AbortController that also follows the client's signal; abort() it to cancel the upstream call. */
export function linkedAbort (clientSignal: AbortSignal | undefined): { signal: AbortSignal, abort: () => void } {
  const controller = new AbortController()
  const signal = clientSignal === undefined ? controller.signal : AbortSignal.any([clientSignal, controller.signal])
  return { signal, abort: () => { if (!controller.signal.aborted) controller.abort(new Error('stream closed')) } }
}
