// createProxy: the model proxy as a route table plus readiness and close().
import type { Route } from '../http/contract.ts'
import type { Logger } from '../logger.ts'
import type { Backend, ProxyObserver, ReadyState } from './upstream/backend.ts'
import { createBackend, createUnconfiguredBackend } from './upstream/create-backend.ts'
import type { BackendOptions } from './upstream/create-backend.ts'
import { DEFAULT_CHAT_LIMITS, createChatRequestValidator } from './chat/request-schema.ts'
import type { ChatSchemaLimits } from './chat/request-schema.ts'
import { createClientAuth, PROXY_PASSWORD_MIN_LENGTH } from './access/client-auth.ts'
import { createPasswordAttempts, DEFAULT_PASSWORD_ATTEMPT_LIMITS } from './access/password-attempts.ts'
import type { PasswordAttemptLimits } from './access/password-attempts.ts'
import { createImageFetcher } from './images/fetch.ts'
import type { ImageFetchOptions } from './images/fetch.ts'
import { createModelCatalog, DEFAULT_MODELS } from './models/catalog.ts'
import { proxyRoutes } from './routes.ts'
import { createBodyBudget, defaultBodyBudgetBytes } from '../http/body-budget.ts'
import type { BodyBudget } from '../http/body-budget.ts'
import { DEFAULT_BODY_READ_LIMITS } from '../http/read-body.ts'
import type { BodyReadLimits } from '../http/read-body.ts'
import { DEFAULT_SAFETY_SETTINGS } from './safety-settings.ts'
import type { SafetySetting } from './safety-settings.ts'

export interface ProxyOptions {
  /** The password every client presents (GEMINI_AUTH_PASSWORD), at least 16 characters. Default unset: every proxy route answers 503. */
  password?: string
  /**
   * Wrong passwords allowed per client address (IPv6: per /64) before its requests are a 429 with Retry-After
   * until the window ends, even with the right password; counted in this process's memory. Default
   * { attempts: 10, windowSeconds: 300 }; `false` counts nothing.
   */
  passwordAttempts?: Partial<PasswordAttemptLimits> | false
  /** The clock of the password-attempt windows. Default `() => new Date()`; tests pass a fake one. */
  now?: () => Date
  /** The upstream. Default: built from `upstream` with createBackend; with neither, calls answer 503. The caller closes a backend it passes. */
  backend?: Backend
  /** Options for createBackend (credentials, API key, endpoints, timeouts), used when `backend` is not given. */
  upstream?: BackendOptions
  /** Base model ids of the catalog (variants are generated). Default DEFAULT_MODELS. */
  models?: readonly string[]
  /** Safety settings sent when a client gives none. Default every category at BLOCK_NONE. */
  safetySettings?: readonly SafetySetting[]
  /** SSE keep-alive comment after this many ms without data. Default 15000. */
  keepAliveMs?: number
  /**
   * Limits for fetching http(s) image URLs; `false` refuses such URLs (400). Default 20 MiB, 15 s, 3 redirects,
   * 16 per request, ports 80 and 443 only, and no internal addresses (`allowPrivateNetworks: false`: loopback,
   * private, link-local and CGNAT destinations are a 400, on every redirect hop, so clients cannot reach the
   * gateway's network). Every refused URL gets the same answer; the reason goes to the log.
   */
  imageFetch?: ImageFetchOptions | false
  /** Largest request body in bytes (413 beyond). Default 26214400 (25 MiB: room for inline images). */
  maxBodyBytes?: number
  /**
   * Request-body bytes the proxy routes hold at once, across all requests: a request that does not fit waits
   * (up to 30 s, then 503 with Retry-After). Hosts reserve through Route.bodyBudget before reading a body.
   * Default a sixteenth of the container's memory limit (else of the machine's memory), at least maxBodyBytes;
   * `false` for no limit.
   */
  maxBodyBytesInFlight?: number | false
  /**
   * How long hosts wait for a request body: the whole of it within `timeoutMs`, and past `graceMs` at least
   * `minBytesPerSecond` on average; 408 beyond. Default { timeoutMs: 240000, minBytesPerSecond: 16384, graceMs: 10000 }.
   */
  bodyRead?: Partial<BodyReadLimits>
  /** Chat request limits. Default 2048 messages, 1000 parts per message, 4096 parts per request, 512 tools. */
  chatLimits?: Partial<ChatSchemaLimits>
  /** Logger. Default none. Passwords and tokens are never logged. */
  logger?: Logger
  /** Told about streams (opened, chunk, closed) and, through the backend it builds, upstream calls. Default none. */
  observer?: ProxyObserver
}

export interface Proxy {
  routes: Route[]
  /** The budget the routes share (undefined with `maxBodyBytesInFlight: false`), for metrics. */
  bodyBudget?: BodyBudget
  /** Ready when the upstream credentials are usable and the project is resolved. */
  ready (): Promise<ReadyState>
  /** Closes what createProxy created (the image fetcher, and the backend when it built it). */
  close (): Promise<void>
}

function positiveInteger (value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new TypeError(`createProxy: ${name} must be a positive integer (got ${String(value)})`)
  return value
}

function nonNegative (value: number, name: string): number {
  if (!Number.isFinite(value) || value < 0) throw new TypeError(`createProxy: ${name} must be a number of at least 0 (got ${String(value)})`)
  return value
}

export function createProxy (options: ProxyOptions = {}): Proxy {
  const { password } = options
  if (password !== undefined && password !== '' && password.length < PROXY_PASSWORD_MIN_LENGTH) {
    throw new TypeError(`createProxy: password must be at least ${PROXY_PASSWORD_MIN_LENGTH} characters (got ${password.length})`)
  }
  const attemptLimits = options.passwordAttempts === false ? undefined : { ...DEFAULT_PASSWORD_ATTEMPT_LIMITS, ...options.passwordAttempts }
  if (attemptLimits !== undefined) {
    positiveInteger(attemptLimits.attempts, 'passwordAttempts.attempts')
    positiveInteger(attemptLimits.windowSeconds, 'passwordAttempts.windowSeconds')
  }
  const bodyRead = { ...DEFAULT_BODY_READ_LIMITS, ...options.bodyRead }
  positiveInteger(bodyRead.timeoutMs, 'bodyRead.timeoutMs')
  nonNegative(bodyRead.minBytesPerSecond, 'bodyRead.minBytesPerSecond')
  nonNegative(bodyRead.graceMs, 'bodyRead.graceMs')
  const fetcher = options.imageFetch === false ? undefined : createImageFetcher(options.imageFetch, undefined, options.logger)
  const ownsBackend = options.backend === undefined
  const backend = options.backend ?? (options.upstream === undefined
    ? createUnconfiguredBackend()
    : createBackend({ logger: options.logger, observer: options.observer, ...options.upstream }))
  const maxBodyBytes = options.maxBodyBytes ?? 25 * 1024 * 1024
  const inFlight = options.maxBodyBytesInFlight ?? defaultBodyBudgetBytes(maxBodyBytes)
  const bodyBudget = inFlight === false ? undefined : createBodyBudget({ bytes: inFlight })
  const attempts = attemptLimits === undefined ? undefined : createPasswordAttempts(attemptLimits, options.now ?? (() => new Date()), options.logger)
  const chatLimits = { ...DEFAULT_CHAT_LIMITS, ...options.chatLimits }
  const routes = proxyRoutes({
    checkAuth: createClientAuth(password, attempts),
    catalog: createModelCatalog(options.models ?? DEFAULT_MODELS),
    backend,
    validateChat: createChatRequestValidator(chatLimits),
    maxTotalParts: chatLimits.maxTotalParts,
    fetchImage: fetcher?.fetch,
    maxImageUrls: fetcher?.maxPerRequest,
    maxImageBytes: fetcher?.maxBytes,
    safetySettings: options.safetySettings ?? DEFAULT_SAFETY_SETTINGS,
    keepAliveMs: options.keepAliveMs ?? 15000,
    maxBodyBytes,
    bodyBudget,
    bodyRead,
    logger: options.logger,
    observer: options.observer,
  })
  return {
    routes,
    bodyBudget,
    ready: () => backend.ready(),
    async close () {
      await fetcher?.close()
      if (ownsBackend) await backend.close()
    },
  }
}
