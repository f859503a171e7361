// One attempt of an upstream call (lib/proxy/upstream/client.ts retries): undici's dispatch() with a handler, an SSE
// answer's events parsed as they arrive, and transport failures named as the client's errors.
import type { Agent, Dispatcher } from 'undici'
import { fail, isGatehouseError } from '../../errors.ts'
import type { GatehouseError } from '../../errors.ts'
import type { Logger } from '../../logger.ts'
import { createPushQueue } from './push-queue.ts'
import type { PushQueue } from './push-queue.ts'
import { createSseDecoder } from './sse.ts'
import { upstreamError } from './errors.ts'

/** One upstream answer: unary calls (and any non-2xx answer) read whole, a stream's 2xx events still arriving. */
export interface Answer {
  statusCode: number
  text?: string
  events?: PushQueue<unknown[]>
}

/** What an attempt reads of the call (an UpstreamRequest of lib/proxy/upstream/client.ts). */
export interface AttemptTarget { url: string | URL, signal?: AbortSignal }

/** The timeouts a transport failure's message names. */
export interface Timeouts { connectTimeoutMs: number, idleTimeoutMs: number }

/** What an attempt runs with: the client's Agent (made on first use), its logger and timeouts. */
export interface DispatchEnv extends Timeouts {
  agent: () => Agent
  logger: Logger
}

export function transportError (err: unknown, signal: AbortSignal | undefined, during: string, o: Timeouts): GatehouseError {
  if (isGatehouseError(err)) return err
  if (signal?.aborted === true) return fail('CLIENT_CLOSED_REQUEST', undefined, { cause: err })
  const code = (err as { code?: unknown } | null)?.code
  const seconds = Math.round(o.idleTimeoutMs / 100) / 10
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return fail('UPSTREAM_TIMEOUT', `Could not connect to the upstream within ${o.connectTimeoutMs / 1000} s`, { cause: err })
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return fail('UPSTREAM_TIMEOUT', `The upstream did not answer within ${seconds} s`, { cause: err })
  if (code === 'UND_ERR_BODY_TIMEOUT') return fail('UPSTREAM_TIMEOUT', `The upstream sent nothing for ${seconds} s ${during}`, { cause: err })
  const message = err instanceof Error ? err.message : String(err)
  return fail('UPSTREAM_ERROR', `Upstream request failed ${during}: ${message}`, { cause: err })
}

/**
 * One attempt, through undici's dispatch() with a handler: request() would also build a body stream and an
 * async resource per call, a measurable share of a proxied request's cost. Same Agent, so the same connect,
 * header and body timeouts. A unary answer, and any non-2xx one, is read whole; a streaming 2xx answer
 * resolves at once, its events parsed as they arrive and read through a queue that pauses the socket
 * while the consumer lags behind.
 */
export function callOnce (env: DispatchEnv, req: AttemptTarget, method: string, headers: Record<string, string>, payload: Buffer | undefined, streaming: boolean, toEvents: (events: unknown[]) => unknown[]): Promise<Answer> {
  const { logger } = env
  return new Promise((resolve, reject) => {
    const signal = req.signal
    const chunks: Buffer[] = []
    let statusCode = 0
    let controller: Dispatcher.DispatchController | undefined
    let events: PushQueue<unknown[]> | undefined
    let sse: ReturnType<typeof createSseDecoder> | undefined
    const onAbort = (): void => controller?.abort(signal?.reason)
    const failed = (err: unknown): void => {
      signal?.removeEventListener('abort', onAbort)
      if (events !== undefined) {
        flushPending()
        events.fail(transportError(err, signal, 'during the stream', env))
        return
      }
      const during = statusCode === 0 ? 'before it answered' : statusCode < 300 ? 'while reading its answer' : 'while reading its error answer'
      reject(transportError(err, signal, during, env))
    }
    let sawEvent = false
    let ended = false
    /** Ends the stream with `err` after what was delivered, and hangs up unless the answer is complete already. */
    const refuse = (err: GatehouseError): void => {
      (events as PushQueue<unknown[]>).fail(err)
      if (!ended) controller?.abort(err)
    }
    /**
     * Parsed events to the queue; an error event, a payload that is not JSON or a line that is not SSE ends the
     * stream with an error, after the events before it.
     */
    const deliver = (data: string[]): void => {
      const queue = events as PushQueue<unknown[]>
      if (queue.closed) return
      if (data.length > 0) {
        sawEvent = true
        const parsed = parseEvents(data, req, logger)
        const mapped = parsed.events.length > 0 ? toEvents(parsed.events) : parsed.events
        if (mapped.length > 0) queue.push(mapped)
        if (parsed.error !== undefined) return refuse(parsed.error)
      }
      const invalid = sse?.invalidLine
      if (invalid !== undefined) {
        logger.warn({ url: String(req.url), line: invalid.slice(0, 200) }, 'The upstream stream is not server-sent events')
        refuse(fail('UPSTREAM_ERROR', 'The upstream answered with a stream that is not server-sent events', { upstreamStatus: statusCode }))
      }
    }
    // The data of the HTTP chunks one network read holds (Google frames each event as a chunk of its own, and
    // undici hands each over in its own call), delivered together once that read's synchronous run ends: one
    // batch per read, parsed, translated and written as one.
    let pending: string[] | undefined
    const flushPending = (): void => {
      const data = pending
      pending = undefined
      if (data !== undefined) deliver(data)
    }
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart (c) {
        controller = c
        if (signal?.aborted === true) c.abort(signal.reason)
      },
      onResponseStart (c, status) {
        if (status < 200) return // 1xx answers are interim
        statusCode = status
        if (!streaming || status >= 300) return
        sse = createSseDecoder()
        events = createPushQueue({ pause: () => c.pause(), resume: () => c.resume(), cancel: () => c.abort(new Error('stream closed')) })
        resolve({ statusCode, events })
      },
      onResponseData (_c, chunk) {
        if (sse === undefined) {
          chunks.push(chunk)
          return
        }
        const data = sse.push(chunk)
        if (pending === undefined) {
          pending = data
          queueMicrotask(flushPending)
        } else {
          for (const d of data) pending.push(d)
        }
        // A stream that is not SSE is refused at the chunk that shows it, as before.
        if (sse.invalidLine !== undefined) flushPending()
      },
      onResponseEnd () {
        signal?.removeEventListener('abort', onAbort)
        if (sse === undefined) {
          resolve({ statusCode, text: utf8Text(chunks) })
          return
        }
        flushPending()
        ended = true
        deliver(sse.end())
        if (!sawEvent) refuse(fail('UPSTREAM_ERROR', 'The upstream stream ended without any event', { upstreamStatus: statusCode }))
        events?.end()
      },
      onResponseError (_c, err) { failed(err) },
    }
    signal?.addEventListener('abort', onAbort, { once: true })
    try {
      const target = typeof req.url === 'string' ? new URL(req.url) : req.url
      env.agent().dispatch({ origin: target.origin, path: target.pathname + target.search, method: method as Dispatcher.HttpMethod, headers, body: payload }, handler)
    } catch (err) {
      // A malformed URL or request: nothing was sent.
      failed(err)
    }
  })
}

/** The events in a batch of SSE data payloads, up to the first error event or payload that is not JSON. */
function parseEvents (data: string[], req: AttemptTarget, logger: Logger): { events: unknown[], error?: GatehouseError } {
  const events: unknown[] = []
  for (const text of data) {
    let event: unknown
    try {
      event = JSON.parse(text)
    } catch {
      // Skipping it would hand the client an answer with a hole in it as if it were whole.
      logger.warn({ url: String(req.url), chunk: text.slice(0, 200) }, 'Malformed JSON chunk in the upstream stream')
      return { events, error: fail('UPSTREAM_ERROR', 'The upstream stream sent an event that is not JSON', { upstreamStatus: 200 }) }
    }
    const inner = Array.isArray(event) ? event[0] : event
    if (inner !== null && typeof inner === 'object' && 'error' in inner && !('response' in inner) && !('candidates' in inner)) {
      const code = (inner as { error?: { code?: unknown } }).error?.code
      return { events, error: upstreamError(typeof code === 'number' ? code : 500, text) }
    }
    events.push(event)
  }
  return { events }
}

/** A body as text without its UTF-8 byte order mark, if any, as undici's body.text() reads it. */
function utf8Text (chunks: Buffer[]): string {
  const bytes = Buffer.concat(chunks)
  return bytes.toString('utf8', bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0)
}
