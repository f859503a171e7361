// createProxy: the model proxy as a route table plus readiness and close().
import type { Route, RouteTable } from '../http/contract.ts'
import { ConfigurationError } from '../errors.ts'
import type { Logger } from '../logger.ts'
import type { Backend, CredentialStatus, ProxyObserver, ReadyState } from './upstream/backend.ts'
import { checkBackendOptions, createBackend, isConfiguredBackend } from './upstream/create-backend.ts'
import type { BackendOptions } from './upstream/create-backend.ts'
import { DEFAULT_CHAT_LIMITS, createChatRequestValidator } from './chat/request-schema.ts'
import type { ChatSchemaLimits } from './chat/request-schema.ts'
import { createClientAuth, PROXY_PASSWORD_MIN_LENGTH } from './access/client-auth.ts'
import { createPasswordAttempts, DEFAULT_PASSWORD_ATTEMPT_LIMITS } from './access/password-attempts.ts'
import type { PasswordAttemptLimits } from './access/password-attempts.ts'
import type { KeyResolver } from './access/caller.ts'
import { createModelPolicy } from './access/model-policy.ts'
import type { ModelAccess } from './access/model-policy.ts'
import type { AccessLevel } from '../store/types.ts'
import { createMetering } from './access/metering.ts'
import { createOwnership, DEFAULT_MAX_CACHE_TTL_SECONDS } from './access/ownership.ts'
import { createToolPolicy } from './access/tool-policy.ts'
import { createUploadQuota, DEFAULT_UPLOAD_BYTES_PER_DAY } from './access/upload-quota.ts'
import { resolveLimitsOption } from '../metering/limits-rule.ts'
import type { LimitsByLevel } from '../metering/limits-rule.ts'
import type { CounterStore, OwnerStore } from '../store/types.ts'
import type { RateLimiter } from '../metering/rate-limiter.ts'
import type { UsageEntry, UsageLedger } from '../metering/usage-ledger.ts'
import { createPriceList } from '../metering/call-cost.ts'
import type { PriceList } from '../metering/call-cost.ts'
import { createImageFetcher } from './images/fetch.ts'
import type { ImageFetchOptions } from './images/fetch.ts'
import { createModelCatalog, modelLocations } from './models/catalog.ts'
import type { ModelCatalog, ModelStanding } from './models/catalog.ts'
import { createModelAliases } from './models/operator-aliases.ts'
import type { ModelAliases } from './models/operator-aliases.ts'
import { loadModelFile } from './models/data.ts'
import { proxyRoutes } from './routes.ts'
import { registeredSurfaces } from './surfaces.ts'
import { createBodyBudget, defaultBodyBudgetBytes } from '../http/body-budget.ts'
import type { BodyBudget } from '../http/body-budget.ts'
import { DEFAULT_BODY_READ_LIMITS } from '../http/read-body.ts'
import type { BodyReadLimits } from '../http/read-body.ts'
import { DEFAULT_SAFETY_SETTINGS } from './safety-settings.ts'
import { startModelDiscovery } from './models/discovery.ts'
import type { ProxyContext } from './context.ts'
import type { ModelDiscovery } from './models/discovery.ts'
import { createResponsesSettings } from './responses/settings.ts'
import type { ResponsesOptions } from './responses/settings.ts'
import type { SafetySetting } from './safety-settings.ts'

/** Tenant isolation of upstream resources (docs/model-proxy.md, "Upstream resources and their owners"). */
export interface ProxyResourceOptions {
  /** Where the owner of each file, upload, cache, batch and operation a key creates is kept (a Store's `owners`). Default none: keys cannot create upstream resources, and every existing one is the operator's. */
  owners?: OwnerStore
  /** The level table whose `allow` lists the resource kinds (`files`, `caches`, `batches`) each level's keys may use, and whose `tools` lists the built-in tools they may send (`googleSearch`, `urlContext`, `googleMaps`, `codeExecution`, `fileSearch`) (the same table as createAuthService's `limits`, GEMINI_LIMITS). Default files and caches, and every built-in tool, for every level. */
  byLevel?: LimitsByLevel
  /** Longest TTL a key may give a cache, in seconds; a create or TTL change asking more is a 400 (GEMINI_MAX_CACHE_TTL_SECONDS). Default 3600. */
  maxCacheTtlSeconds?: number
  /** Where the bytes each user's keys upload per UTC day are counted (a Store's `counters`). Default none: uploads are not counted. */
  counters?: CounterStore
  /** Bytes a user's keys may upload (/upload/v1beta) per UTC day; past it a 429 UPLOAD_QUOTA_EXCEEDED (GEMINI_UPLOAD_BYTES_PER_DAY). Default 10 GiB. */
  uploadBytesPerDay?: number
}

export interface ProxyOptions {
  /** The operator password (GEMINI_AUTH_PASSWORD), at least 16 characters: every model, no limits. Default unset: only keys work, and without `keys` every proxy route answers 503. */
  password?: string
  /** Resolves users' API keys (`ghk_...`), presented in any form the password may take; createAuthService's result is one. Default unset: only the password works. */
  keys?: KeyResolver
  /** Model-name patterns (`*` for any run of characters, matched against base names) per access level; a level left out may use every model. Default every level at or above minAccessLevel may use every model. */
  modelAccess?: ModelAccess
  /** Names clients send mapped to catalogue models (`*` for any run of characters; exact names, then the longest pattern win), e.g. `{"claude-*": "gemini-3.8-flash"}` for Claude Code (GEMINI_MODEL_ALIASES). Default none. */
  modelAliases?: ModelAliases
  /** Lowest access level whose keys may use the proxy (PROXY_MIN_ACCESS_LEVEL). Default 'member'. */
  minAccessLevel?: AccessLevel
  /** Admits key callers' model calls and charges their tokens (createRateLimiter); the operator password is never limited. Default none: no limits. */
  limiter?: RateLimiter
  /** Who owns which upstream resource, which kinds keys may use, the longest cache TTL. Default: no owners kept (keys create nothing), files and caches allowed, 3600 s. The operator password is held to none of it. */
  resources?: ProxyResourceOptions
  /** Where every model call is recorded, the operator's with userId "operator" (createUsageLedger). Default none. */
  usage?: UsageLedger
  /** Told of every finished model call once, with the caller's access level or 'operator' (metrics). Default none. */
  onCall?: (entry: UsageEntry, accessLevel: AccessLevel | 'operator') => void
  /**
   * Wrong passwords or keys answered 401 per client address (IPv6: per /64) before its further wrong ones are a 429
   * with Retry-After until the window ends; a valid key or the right password always passes. Counted in this
   * process's memory. Default { attempts: 10, windowSeconds: 300 }; `false` counts nothing.
   */
  passwordAttempts?: Partial<PasswordAttemptLimits> | false
  /** The clock of the password-attempt windows, metering, and the model file's shutdown dates (a shut-down model is served by its replacement). Default `() => new Date()`; tests pass a fake one. */
  now?: () => Date
  /** The upstream. Default: built from `upstream` with createBackend; with neither, calls answer 503. The caller closes a backend it passes. */
  backend?: Backend
  /** Options for createBackend (credentials, API key, endpoints, timeouts), used when `backend` is not given. */
  upstream?: BackendOptions
  /** Base model ids of the catalog (variants are generated); a model the file says the backend does not serve is a ConfigurationError. Default every model of the model file that the backend serves. */
  models?: readonly string[]
  /** Path of a model file replacing the shipped one (lib/proxy/models/models.json, docs/model-proxy.md). Default the shipped file. */
  modelsFile?: string
  /**
   * Path of an operator's price file (docs/prices.md, "Overriding prices"): its entries for a model and backend
   * replace the shipped ones of that pair (lib/proxy/models/prices.json), others are added. Default none.
   */
  pricesFile?: string
  /**
   * Model discovery (docs/upstream-protocol.md, "Model discovery"): `true` or `{ intervalMs }` reads the upstream's own
   * model list in the background at start and every intervalMs (default 6 h) and offers only what it lists. Default
   * false (the model file alone decides, and no list call is made).
   */
  modelDiscovery?: boolean | { intervalMs?: number }
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
  /**
   * The OpenAI Responses surface (docs/responses.md, "Options"): `secret` sealing thought signatures, `store` keeping
   * `store: true` responses, `ttlDays` (default 30), `limits`, `websocket` (the socket limits). Default a per-process secret and no store.
   */
  responses?: ResponsesOptions
  /** Logger. Default none. Passwords and tokens are never logged. */
  logger?: Logger
  /** Told about streams (opened, chunk, closed) and, through the backend it builds, upstream calls. Default none. */
  observer?: ProxyObserver
}

export interface Proxy {
  /**
   * The proxy's routes, scoped to `/v1` (unknown `/v1/...` paths answer in the chat-completions shape; it owns
   * `/v1beta/*` with a wildcard), for hapiPlugin, createNodeListener() or createFetchHandler().
   */
  routeTable: RouteTable
  /** routeTable.routes. */
  routes: Route[]
  /** The budget the routes share (undefined with `maxBodyBytesInFlight: false`), for metrics. */
  bodyBudget?: BodyBudget
  /** Ready when the upstream credentials are usable and the project is resolved. */
  ready (): Promise<ReadyState>
  /** Runs a model discovery round now (with `modelDiscovery` on; else resolves at once); resolves when it has ended. */
  discoverModels (): Promise<void>
  /** The price list in force (the shipped one with the operator's pricesFile), checked at construction. */
  prices: PriceList
  /** Read-only, for the console: whether an upstream is configured, the backend's name, each pooled credential's state (none for a backend passed in) and the model ids listed. */
  upstream (): UpstreamView
  /**
   * Closes the Responses WebSockets for a shutdown: each with 1001 at once when no response runs on it, else as soon
   * as its response has ended; resolves once all are closed. A host calls it before it stops its server.
   */
  closeSockets (): Promise<void>
  /** Closes what createProxy created (the image fetcher, and the backend when it built it). */
  close (): Promise<void>
}

export interface UpstreamView {
  /** False when no upstream is configured (every call answers 503 UPSTREAM_NOT_CONFIGURED); true for a backend passed in. */
  configured: boolean
  backend: string | undefined
  credentials: CredentialStatus[]
  models: readonly string[]
  /** The listed base models with no price in force now (docs/prices.md, "Unpriced models"). */
  unpriced: readonly string[]
  /** Each listed base model's family and stage (GA, preview, shut down and its replacement). */
  standings: readonly ModelStanding[]
}

function positiveInteger (value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new ConfigurationError(name, `createProxy: ${name} must be a positive integer (got ${String(value)})`)
  return value
}

function nonNegative (value: number, name: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new ConfigurationError(name, `createProxy: ${name} must be a number of at least 0 (got ${String(value)})`)
  return value
}

function isObject (value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

function refuse (name: string, rule: string, value: unknown): never {
  const shown = typeof value === 'function' ? 'a function' : JSON.stringify(value) ?? String(value)
  throw new ConfigurationError(name, `createProxy: ${name} must be ${rule} (got ${shown})`)
}

/** Every alias names a model the catalogue would send upstream, so a typo fails at start, not on a call. */
function checkAliasTargets (aliases: ModelAliases | undefined, catalog: ModelCatalog): void {
  for (const [from, to] of Object.entries(aliases ?? {})) {
    try {
      catalog.resolve(to)
    } catch (err) {
      throw new ConfigurationError('modelAliases', `createProxy: modelAliases[${JSON.stringify(from)}] maps to ${JSON.stringify(to)}: ${(err as Error).message}`, { cause: err })
    }
  }
}

/** The options checked here are the ones nothing else checks; the rest are checked where they are resolved, all before createProxy returns. */
function checkProxyOptions (options: ProxyOptions): void {
  if (!isObject(options)) refuse('options', 'an object', options)
  const { password } = options
  if (password !== undefined && typeof password !== 'string') refuse('password', 'a string', '(not a string)')
  if (options.keys !== undefined && (!isObject(options.keys) || typeof options.keys.resolveKey !== 'function')) refuse('keys', 'an object with resolveKey (a KeyResolver)', isObject(options.keys) ? Object.keys(options.keys) : options.keys)
  if (options.limiter !== undefined && (!isObject(options.limiter) || typeof options.limiter.admit !== 'function')) refuse('limiter', 'a RateLimiter (createRateLimiter)', isObject(options.limiter) ? Object.keys(options.limiter) : options.limiter)
  if (options.resources !== undefined) {
    const r = options.resources
    if (!isObject(r)) refuse('resources', 'an object', r)
    if (r.owners !== undefined && (!isObject(r.owners) || ['put', 'get', 'getMany', 'delete', 'countByUser'].some(m => typeof (r.owners as unknown as Record<string, unknown>)[m] !== 'function'))) {
      refuse('resources.owners', 'an OwnerStore (a Store\'s owners)', isObject(r.owners) ? Object.keys(r.owners) : r.owners)
    }
    if (r.maxCacheTtlSeconds !== undefined) positiveInteger(r.maxCacheTtlSeconds as number, 'resources.maxCacheTtlSeconds')
    if (r.counters !== undefined && (!isObject(r.counters) || ['add', 'get'].some(m => typeof (r.counters as unknown as Record<string, unknown>)[m] !== 'function'))) {
      refuse('resources.counters', 'a CounterStore (a Store\'s counters)', isObject(r.counters) ? Object.keys(r.counters) : r.counters)
    }
    if (r.uploadBytesPerDay !== undefined) positiveInteger(r.uploadBytesPerDay as number, 'resources.uploadBytesPerDay')
  }
  if (options.usage !== undefined && (!isObject(options.usage) || typeof options.usage.record !== 'function')) refuse('usage', 'a UsageLedger (createUsageLedger)', isObject(options.usage) ? Object.keys(options.usage) : options.usage)
  if (options.passwordAttempts !== undefined && options.passwordAttempts !== false && !isObject(options.passwordAttempts)) refuse('passwordAttempts', 'an object or false', options.passwordAttempts)
  for (const name of ['now', 'onCall'] as const) if (options[name] !== undefined && typeof options[name] !== 'function') refuse(name, 'a function', options[name])
  const { backend } = options
  if (backend !== undefined && (!isObject(backend) || ['generate', 'stream', 'countTokens', 'ready', 'close'].some(m => typeof backend[m as keyof Backend] !== 'function'))) {
    refuse('backend', 'a Backend (generate, stream, countTokens, ready, close)', isObject(backend) ? Object.keys(backend) : backend)
  }
  if (options.upstream !== undefined) {
    if (!isObject(options.upstream)) refuse('upstream', 'an object of createBackend options', options.upstream)
    checkBackendOptions(options.upstream, 'upstream.')
  }
  if (options.models !== undefined && !Array.isArray(options.models)) refuse('models', 'an array of model ids', options.models)
  if (options.modelsFile !== undefined && (typeof options.modelsFile !== 'string' || options.modelsFile === '')) refuse('modelsFile', 'a file path', options.modelsFile)
  if (options.safetySettings !== undefined && (!Array.isArray(options.safetySettings) || !options.safetySettings.every(s => isObject(s) && typeof s.category === 'string' && typeof s.threshold === 'string'))) {
    refuse('safetySettings', 'an array of { category, threshold }', options.safetySettings)
  }
  if (options.keepAliveMs !== undefined) positiveInteger(options.keepAliveMs as number, 'keepAliveMs')
  if (options.imageFetch !== undefined && options.imageFetch !== false) {
    const f = options.imageFetch
    if (!isObject(f)) refuse('imageFetch', 'an object or false', f)
    for (const name of ['maxBytes', 'timeoutMs', 'maxRedirects', 'maxPerRequest'] as const) {
      if (f[name] !== undefined) (name === 'maxRedirects' ? nonNegative : positiveInteger)(f[name] as number, `imageFetch.${name}`)
    }
    if (f.maxRedirects !== undefined && !Number.isSafeInteger(f.maxRedirects)) refuse('imageFetch.maxRedirects', 'a whole number, 0 or more', f.maxRedirects)
    if (f.allowPrivateNetworks !== undefined && typeof f.allowPrivateNetworks !== 'boolean') refuse('imageFetch.allowPrivateNetworks', 'true or false', f.allowPrivateNetworks)
  }
  if (options.maxBodyBytes !== undefined) positiveInteger(options.maxBodyBytes as number, 'maxBodyBytes')
  if (options.maxBodyBytesInFlight !== undefined && options.maxBodyBytesInFlight !== false) positiveInteger(options.maxBodyBytesInFlight as number, 'maxBodyBytesInFlight')
  if (options.bodyRead !== undefined && !isObject(options.bodyRead)) refuse('bodyRead', 'an object', options.bodyRead)
  if (options.chatLimits !== undefined && !isObject(options.chatLimits)) refuse('chatLimits', 'an object', options.chatLimits)
  if (options.logger !== undefined && (!isObject(options.logger) || typeof options.logger.warn !== 'function')) refuse('logger', 'a pino-compatible logger', '(not a logger)')
  if (options.observer !== undefined && !isObject(options.observer)) refuse('observer', 'an object of callbacks', options.observer)
}

export function createProxy (options: ProxyOptions = {}): Proxy {
  checkProxyOptions(options)
  // Checked and read before anything is built, so a bad pricesFile leaves nothing open.
  const prices = createPriceList({ pricesFile: options.pricesFile })
  const { password } = options
  if (password !== undefined && password !== '' && password.length < PROXY_PASSWORD_MIN_LENGTH) {
    throw new ConfigurationError('password', `createProxy: password must be at least ${PROXY_PASSWORD_MIN_LENGTH} characters (got ${password.length})`)
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
  // The pools createBackend builds report their states through the observer: kept here too, for upstream().
  const pools: Array<() => CredentialStatus[]> = []
  const watchPools = (observer: ProxyObserver | undefined): ProxyObserver => ({
    ...observer,
    credentialPool (statuses) {
      pools.push(statuses)
      observer?.credentialPool?.(statuses)
    },
  })
  const fetcher = options.imageFetch === false ? undefined : createImageFetcher(options.imageFetch, undefined, options.logger)
  const discoveryOn = options.modelDiscovery ?? false
  if (typeof discoveryOn !== 'boolean') {
    if (!isObject(discoveryOn)) refuse('modelDiscovery', 'true, false or { intervalMs }', discoveryOn)
    if (discoveryOn.intervalMs !== undefined) positiveInteger(discoveryOn.intervalMs, 'modelDiscovery.intervalMs')
  }
  const ownsBackend = options.backend === undefined
  const modelSpecs = options.modelsFile === undefined ? undefined : loadModelFile(options.modelsFile)
  // With no upstream, createBackend warns once that calls will answer 503 and how to configure one.
  const backend = options.backend ?? (options.upstream === undefined
    ? createBackend({ logger: options.logger })
    : createBackend({ logger: options.logger, observer: watchPools(options.observer), now: options.now, modelLocations: modelLocations(modelSpecs), ...options.upstream }))
  const maxBodyBytes = options.maxBodyBytes ?? 25 * 1024 * 1024
  const inFlight = options.maxBodyBytesInFlight ?? defaultBodyBudgetBytes(maxBodyBytes)
  const bodyBudget = inFlight === false ? undefined : createBodyBudget({ bytes: inFlight })
  const attempts = attemptLimits === undefined ? undefined : createPasswordAttempts(attemptLimits, options.now ?? (() => new Date()), options.logger)
  const chatLimits = { ...DEFAULT_CHAT_LIMITS, ...options.chatLimits }
  const modelPolicy = createModelPolicy(options.modelAccess, options.minAccessLevel)
  const modelAlias = createModelAliases(options.modelAliases)
  // A backend without a name is priced as the Gemini API (the price list keys prices by backend).
  const priceBackend = backend.name ?? 'gemini-api'
  const priceKnown = (model: string, at: Date): boolean => prices.priceAt(model, priceBackend, at) !== undefined
  const catalog = createModelCatalog(options.models, modelSpecs, backend.name, options.now, undefined, priceKnown)
  checkAliasTargets(options.modelAliases, catalog)
  const responses = createResponsesSettings(options.responses, options.now ?? (() => new Date()))
  const byLevel = resolveLimitsOption(options.resources?.byLevel, 'resources.byLevel')
  const ctx: ProxyContext = {
    checkAuth: createClientAuth(password, attempts, options.keys),
    modelPolicy,
    metering: createMetering({ limiter: options.limiter, usage: options.usage, onCall: options.onCall, now: options.now ?? (() => new Date()), prices, backend: priceBackend }),
    ownership: createOwnership({
      owners: options.resources?.owners,
      byLevel,
      maxCacheTtlSeconds: options.resources?.maxCacheTtlSeconds ?? DEFAULT_MAX_CACHE_TTL_SECONDS,
      // A custom endpoint hands out file URIs on its own host: they name the gateway's files as Google's do.
      fileHosts: [options.upstream?.geminiApiEndpoint, options.upstream?.vertexEndpoint].flatMap(url => typeof url === 'string' && URL.canParse(url) ? [new URL(url).hostname] : []),
      uploads: createUploadQuota({ counters: options.resources?.counters, bytesPerDay: options.resources?.uploadBytesPerDay ?? DEFAULT_UPLOAD_BYTES_PER_DAY, now: options.now ?? (() => new Date()) }),
      now: options.now ?? (() => new Date()),
      logger: options.logger,
    }),
    tools: createToolPolicy(byLevel),
    catalog,
    modelAlias,
    backend,
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
  }
  const routeTable = proxyRoutes(ctx, registeredSurfaces({ validateChat: createChatRequestValidator(chatLimits), responses }))
  // With no upstream there is nothing to list: the warning createBackend logs is the one line about it.
  const discovery: ModelDiscovery | undefined = discoveryOn === false || !isConfiguredBackend(backend)
    ? undefined
    : startModelDiscovery({
      backend,
      specs: modelSpecs ?? loadModelFile(),
      intervalMs: discoveryOn === true ? undefined : discoveryOn.intervalMs,
      // Each good round rebuilds the catalog the routes read.
      onChange: discovered => { ctx.catalog = createModelCatalog(options.models, modelSpecs, backend.name, options.now, discovered, priceKnown) },
      logger: options.logger,
      observer: options.observer,
    })
  return {
    routeTable,
    routes: routeTable.routes,
    bodyBudget,
    prices,
    ready: () => backend.ready(),
    discoverModels: async () => { await discovery?.run() },
    upstream: () => ({ configured: isConfiguredBackend(backend), backend: backend.name, credentials: pools.flatMap(statuses => statuses()), models: ctx.catalog.ids, unpriced: ctx.catalog.unpriced(), standings: ctx.catalog.standings() }),
    closeSockets: async () => { await responses.sockets.all() },
    async close () {
      discovery?.stop()
      await fetcher?.close()
      if (ownsBackend) await backend.close()
    },
  }
}
