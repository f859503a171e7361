// createProxy: the model proxy as a route table plus readiness and close().
import type { Route } from '../http/contract.ts'
import type { Logger } from '../logger.ts'
import type { Backend, ProxyObserver, ReadyState } from './backend.ts'
import { createBackend, createUnconfiguredBackend } from './create-backend.ts'
import type { BackendOptions } from './create-backend.ts'
import { DEFAULT_CHAT_LIMITS, createChatRequestValidator } from './chat-request-schema.ts'
import type { ChatSchemaLimits } from './chat-request-schema.ts'
import { createClientAuth } from './client-auth.ts'
import { createImageFetcher } from './image-fetch.ts'
import type { ImageFetchOptions } from './image-fetch.ts'
import { createModelCatalog, DEFAULT_MODELS } from './model-catalog.ts'
import { proxyRoutes } from './routes.ts'
import { createBodyBudget, defaultBodyBudgetBytes } from '../http/body-budget.ts'
import type { BodyBudget } from '../http/body-budget.ts'
import { DEFAULT_SAFETY_SETTINGS } from './safety-settings.ts'
import type { SafetySetting } from './safety-settings.ts'

export interface ProxyOptions {
  /** The password every client presents (GEMINI_AUTH_PASSWORD). Default unset: every proxy route answers 503. */
  password?: string
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
   * 16 per request, and no internal addresses (`allowPrivateNetworks: false`: loopback, private, link-local
   * and CGNAT destinations are a 400, on every redirect hop, so clients cannot reach the gateway's network).
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

export function createProxy (options: ProxyOptions = {}): Proxy {
  const ownsBackend = options.backend === undefined
  const backend = options.backend ?? (options.upstream === undefined
    ? createUnconfiguredBackend()
    : createBackend({ logger: options.logger, observer: options.observer, ...options.upstream }))
  const fetcher = options.imageFetch === false ? undefined : createImageFetcher(options.imageFetch)
  const maxBodyBytes = options.maxBodyBytes ?? 25 * 1024 * 1024
  const inFlight = options.maxBodyBytesInFlight ?? defaultBodyBudgetBytes(maxBodyBytes)
  const bodyBudget = inFlight === false ? undefined : createBodyBudget({ bytes: inFlight })
  const chatLimits = { ...DEFAULT_CHAT_LIMITS, ...options.chatLimits }
  const routes = proxyRoutes({
    checkAuth: createClientAuth(options.password),
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
