// The HTTP client for every upstream call: one keep-alive undici Agent, connect and idle timeouts,
// cancellation through the caller's signal, one refresh-and-retry on 401, one retry with jitter of
// a unary call answered 5xx, SSE decoding for streams, and upstream errors turned into GatehouseErrors.
import type { Agent, Dispatcher } from 'undici'
import { undici } from '../../load-package.ts'
import { setTimeout as sleep } from 'node:timers/promises'
import { Readable } from 'node:stream'
import { fail, isGatehouseError } from '../../errors.ts'
import type { PushQueue } from './push-queue.ts'
import { parseErrorBody, retryDelaySeconds, upstreamError } from './errors.ts'
import { callOnce, transportError } from './dispatch.ts'
import type { Answer, DispatchEnv } from './dispatch.ts'
import { UPSTREAM_DEFAULTS } from './options.ts'
import { SILENT_LOGGER } from '../../logger.ts'
import type { UpstreamClientOptions } from './options.ts'

/** How a call authenticates: headers for each attempt, and what to do when the upstream answers 401. */
export interface UpstreamAuth {
  headers (): Promise<Record<string, string>>
  /** After a 401 for the given headers: get fresh credentials (throws when that fails). Without it a 401 is final. */
  rejected? (used: Record<string, string>): Promise<void>
}

export interface UpstreamRequest {
  /** A URL object for an endpoint called on every request: undici would parse a string each time. */
  url: string | URL
  /** Default POST. */
  method?: 'GET' | 'POST' | 'PATCH' | 'DELETE'
  /** JSON body (POST). */
  body?: unknown
  /** Base model of the call, for the User-Agent and metrics; setup calls leave it unset. */
  model?: string
  auth: UpstreamAuth
  signal?: AbortSignal
  /** json(): the answer must be a JSON object (a generateContent answer), so an empty body is an upstream error too. Default false: empty is `{}`. */
  expectObject?: boolean
}

export interface UpstreamClient {
  /** A unary call answering JSON (retried per the options). */
  json (req: UpstreamRequest): Promise<unknown>
  /**
   * A streaming call (SSE). Resolves once the upstream answered 200, with its events parsed as JSON, grouped
   * as they arrived: one array per network read that completed any. An answer that is not SSE (a line that is
   * no SSE field, an HTML page), an event that is not JSON, or a stream that ends without any event fails the
   * iteration with UPSTREAM_ERROR after the events before it, so garbage never reads as a complete answer.
   * Never retried once the upstream answered. Breaking out of the iteration closes the
   * upstream connection. `toEvents` turns each group into what the caller reads (groups it leaves empty are
   * dropped): done as the bytes arrive, rather than by one more generator for every group to pass through.
   */
  stream<T> (req: UpstreamRequest, toEvents: (events: unknown[]) => T[]): Promise<PushQueue<T[]>>
  /**
   * One call passed through as it is (lib/proxy/native/pass-through.ts): the body sent as it arrives, the answer
   * resolved at its headers, whatever its status, its body still arriving. Same Agent and timeouts; never
   * retried (a streamed body cannot be sent twice). Rejects with UPSTREAM_ERROR/UPSTREAM_TIMEOUT, or what the
   * body's iteration threw (a body over its limit).
   */
  forward (req: ForwardCall): Promise<{ status: number, headers: Record<string, string>, body: AsyncIterable<Uint8Array> }>
  close (): Promise<void>
}

export interface ForwardCall {
  url: URL
  method: string
  headers: Record<string, string>
  body?: AsyncIterable<Uint8Array>
  signal?: AbortSignal
  /** Base model named in the path, for metrics. */
  model?: string
}

/** Every event as it is. */
const AS_IS = (events: unknown[]): unknown[] => events

/** Model named in the User-Agent of calls that are not about one model (project setup). */
const SETUP_MODEL = 'gemini-2.5-pro'
// A 429 is never retried on the same credential: the credential pool cools it down and fails over
// (lib/proxy/upstream/credential-pool.ts), so gateway and client retries cannot multiply.
const RETRYABLE = (status: number): boolean => status === 499 || (status >= 500 && status <= 599)

export function createUpstreamClient (options: UpstreamClientOptions = {}): UpstreamClient {
  const o = { ...UPSTREAM_DEFAULTS, ...withoutUndefined(options) }
  const logger = options.logger ?? SILENT_LOGGER
  const observer = options.observer
  // Made on the first call, so a proxy that is never called never loads undici (lib/load-package.ts).
  let made: Agent | undefined
  const agentOf = (): Agent => (made ??= new (undici().Agent)({
    connect: { timeout: o.connectTimeoutMs },
    headersTimeout: o.idleTimeoutMs,
    bodyTimeout: o.idleTimeoutMs,
  }))
  const env: DispatchEnv = { agent: agentOf, logger, connectTimeoutMs: o.connectTimeoutMs, idleTimeoutMs: o.idleTimeoutMs }
  const platform = `${process.platform}; ${process.arch}; gatehouse`

  function userAgent (model: string | undefined): string {
    return `GeminiCLI/${o.userAgentVersion}/${model ?? SETUP_MODEL} (${platform})`
  }

  function observe (req: UpstreamRequest, status: number, started: number): void {
    observer?.upstreamCall?.(req.model ?? 'setup', status, (performance.now() - started) / 1000)
  }

  /** How long to wait before retrying this answer, or undefined when it must not be retried. */
  function retryDelayMs (status: number, text: string, attempt: number): number | undefined {
    if (!RETRYABLE(status) || attempt >= o.maxRetries) return undefined
    const body = parseErrorBody(text)
    const hinted = retryDelaySeconds(body)
    if (hinted !== undefined) {
      const ms = hinted * 1000
      return ms > o.maxRetryDelayMs ? undefined : ms + Math.random() * Math.min(250, ms * 0.1)
    }
    return Math.min(o.maxRetryDelayMs, o.retryBaseDelayMs * 2 ** attempt * (0.5 + Math.random()))
  }

  /** Sends until an answer is final; resolves with the 2xx answer (a stream's events still arriving). */
  async function send (req: UpstreamRequest, streaming: boolean, toEvents: (events: unknown[]) => unknown[] = AS_IS): Promise<{ answer: Answer, started: number }> {
    const method = req.method ?? 'POST'
    // Bytes, not the JSON text: undici would copy a string into a Buffer and the text would live on beside it
    // through the call and its retries (a request with a 20 MB image would be held twice).
    const payload = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body))
    let authRetried = false
    let attempt = 0
    for (;;) {
      if (req.signal?.aborted === true) throw fail('CLIENT_CLOSED_REQUEST')
      const authHeaders = await req.auth.headers()
      const headers: Record<string, string> = { 'user-agent': userAgent(req.model), ...authHeaders }
      if (payload !== undefined) headers['content-type'] = 'application/json'
      if (streaming) headers.accept = 'text/event-stream'
      const started = performance.now()
      let answer: Answer
      try {
        answer = await callOnce(env, req, method, headers, payload, streaming, toEvents)
      } catch (err) {
        observe(req, 0, started)
        throw err
      }
      const status = answer.statusCode
      if (status >= 200 && status < 300) return { answer, started }
      observe(req, status, started)
      const text = answer.text ?? ''
      if (status === 401 && req.auth.rejected !== undefined && !authRetried) {
        authRetried = true
        logger.info({ url: String(req.url) }, 'Upstream answered 401: refreshing the access token and retrying once')
        await req.auth.rejected(authHeaders)
        continue
      }
      const delay = streaming ? undefined : retryDelayMs(status, text, attempt)
      if (delay === undefined) throw upstreamError(status, text)
      attempt++
      logger.warn({ url: String(req.url), status, attempt, delayMs: Math.round(delay) }, 'Upstream call failed; retrying')
      try {
        await sleep(delay, undefined, { signal: req.signal })
      } catch {
        throw fail('CLIENT_CLOSED_REQUEST')
      }
    }
  }

  return {
    async json (req) {
      const { answer, started } = await send(req, false)
      observe(req, answer.statusCode, started)
      const text = answer.text ?? ''
      if (text.trim() === '' && req.expectObject !== true) return {}
      let value: unknown
      try {
        value = JSON.parse(text)
      } catch {
        logger.warn({ url: String(req.url), body: text.slice(0, 200) }, 'Upstream answered 2xx with a body that is not JSON')
        throw fail('UPSTREAM_ERROR', 'The upstream answered with a body that is not JSON', { upstreamStatus: answer.statusCode })
      }
      if (req.expectObject === true && (value === null || typeof value !== 'object' || Array.isArray(value))) {
        logger.warn({ url: String(req.url), body: text.slice(0, 200) }, 'Upstream answered 2xx with JSON that is not an object')
        throw fail('UPSTREAM_ERROR', 'The upstream answered with JSON that is not a response object', { upstreamStatus: answer.statusCode })
      }
      return value
    },
    async stream<T> (req: UpstreamRequest, toEvents: (events: unknown[]) => T[]) {
      const { answer, started } = await send(req, true, toEvents)
      observe(req, answer.statusCode, started)
      return answer.events as PushQueue<T[]>
    },
    async forward (req) {
      const started = performance.now()
      const observed: UpstreamRequest = { url: req.url, model: req.model ?? 'pass-through', auth: { headers: async () => ({}) } }
      let answer: Dispatcher.ResponseData
      try {
        answer = await agentOf().request({
          origin: req.url.origin,
          path: req.url.pathname + req.url.search,
          method: req.method as Dispatcher.HttpMethod,
          headers: { 'user-agent': userAgent(req.model), ...req.headers },
          body: req.body === undefined ? undefined : Readable.from(req.body, { objectMode: false }),
          signal: req.signal,
        })
      } catch (err) {
        observe(observed, 0, started)
        // What the body's iteration threw (413, 408) is the client's, not the upstream's.
        const cause = (err as { cause?: unknown } | null)?.cause
        throw isGatehouseError(cause) ? cause : transportError(err, req.signal, 'before it answered', o)
      }
      observe(observed, answer.statusCode, started)
      const headers: Record<string, string> = {}
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value
      }
      return { status: answer.statusCode, headers, body: answer.body }
    },
    async close () {
      // Graceful first; whatever is still open after a second (a stalled stream) is cut.
      const agent = made
      if (agent === undefined) return
      let timer: NodeJS.Timeout | undefined
      const closed = agent.close()
      const late = new Promise<'late'>(resolve => { timer = setTimeout(resolve, 1000, 'late') })
      const outcome = await Promise.race([closed.then(() => 'closed' as const), late])
      clearTimeout(timer)
      if (outcome === 'late') await agent.destroy()
    },
  }
}

function withoutUndefined<T extends object> (obj: T): Partial<T> {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as Partial<T>
}
