// The environment reader the gateway and the examples share (docs/configuration.md, "Rules of the environment"):
// each variable validated once (its rule from env-rules.ts), then frozen. Nothing else in the project reads
// process.env; callers pass it in. The OTEL_* variables are checked here; the gateway decides tracing from them
// (gateway/tracing-env.ts), which must load before the library.
import { createHash } from 'node:crypto'
// The library owns every option's default and rule; this file maps variables to options and adds the environment's
// own checks, with the library's rules (OPTION_RULES) so that an error names the variable.
import { ConfigurationError } from '../errors.ts'
import { OPTION_RULES } from '../option-rules.ts'
import { ACCESS_LEVELS } from '../store/types.ts'
import type { AccessLevel } from '../store/types.ts'
import type { BackendKind } from '../option-rules.ts'
import type { LimitsByLevel } from '../metering/limits-rule.ts'
import { parseTrustedProxies } from '../http/client-address.ts'
import { EnvRefusal, bool, number, text } from './env-rules.ts'
import type { EnvRule } from './env-rules.ts'

export type GeminiBackend = BackendKind
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

/** The environment, validated: what readEnvironment gives (the gateway's configuration). */
export interface EnvironmentConfig {
  /** Listen address. Default `0.0.0.0` (HOST). */
  readonly host: string
  /** Listen port; 0 picks a free one. Default 8888 (PORT). */
  readonly port: number
  /** MongoDB connection string; when unset the embedded store is used. Default unset (MONGODB_URL). */
  readonly mongodbUrl?: string
  /** MongoDB database name. Default `gateway` (MONGODB_DB). */
  readonly mongodbDb: string
  /** Embedded store file. Default unset, `./data/auth-db.json` when debug (AUTH_DATA_FILE); unset means memory only. */
  readonly authDataFile?: string
  /** Debug mode: embedded store saved to disk, debug logs. Default false (DEBUG). */
  readonly debug: boolean
  /** System user created at start-up with level hush. Default unset: the library's `system` (AUTH_ADMIN_USERNAME). */
  readonly authAdminUsername?: string
  /** System user's password; a changed value replaces the stored one at start. Default unset: generated once, into authAdminPasswordFile (AUTH_ADMIN_PASSWORD). */
  readonly authAdminPassword?: string
  /** Where a generated system user password is written (mode 0600). Default unset: `admin-password` beside the embedded store's file, else in a new private temp directory (AUTH_ADMIN_PASSWORD_FILE). */
  readonly authAdminPasswordFile?: string
  /** Session lifetime in seconds. Default unset: the library's 3600 (AUTH_SESSION_TTL_SECONDS). */
  readonly authSessionTtlSeconds?: number
  /** A session younger than this may change password, email or username, create an API key, or make an admin write or delete, without current_password; 0: never. Default unset: the library's 600 (AUTH_REAUTH_SECONDS). */
  readonly authReauthSeconds?: number
  /** Session tokens accepted in the query string; header forms always are. Default unset: the library's true (AUTH_QUERY_TOKENS). */
  readonly authQueryTokens?: boolean
  /** Serve the web console (CONSOLE_ENABLED). Default true. */
  readonly consoleEnabled: boolean
  /** Where the console is served (CONSOLE_PATH). Default unset: the library's /console. */
  readonly consolePath?: string
  /** Console sign-in over plain HTTP on any host name, cookie without Secure (CONSOLE_ALLOW_HTTP). Default unset: the library's false. */
  readonly consoleAllowHttp?: boolean
  /** Sign-ups allowed per client address (IPv6: per /64) within the window. Default unset: the library's 10 (AUTH_SIGNUPS_PER_ADDRESS). */
  readonly authSignupsPerAddress?: number
  /** Anyone may sign up; false: only admins add users (the console). Default unset: the library's true (AUTH_PUBLIC_SIGNUP). */
  readonly authPublicSignup?: boolean
  /** Anyone may look users up; false: only signed-in callers. Default unset: the library's true (AUTH_PUBLIC_LOOKUP). */
  readonly authPublicLookup?: boolean
  /** That window in seconds. Default unset: the library's 3600 (AUTH_SIGNUP_WINDOW_SECONDS). */
  readonly authSignupWindowSeconds?: number
  /** Lowest access level that may create API keys and whose keys the proxy accepts. Default unset: the library's `member` (PROXY_MIN_ACCESS_LEVEL). */
  readonly proxyMinAccessLevel?: AccessLevel
  /** Days an API key lives when its creator gives no expires_in_days; 0: forever. Default unset: the library's 90 (PROXY_KEY_DEFAULT_DAYS). */
  readonly proxyKeyDefaultDays?: number
  /** Proxies (addresses, CIDR ranges) whose X-Forwarded-For / Forwarded names the client. Default none (TRUSTED_PROXIES). */
  readonly trustedProxies?: readonly string[]
  /** The operator password a proxy client may present instead of a user key, at least 16 characters. Default unset: only user keys work (GEMINI_AUTH_PASSWORD, LLM_AUTH_PASSWORD). */
  readonly proxyPassword?: string
  /** Model-name patterns per access level, parsed from the JSON object. Default unset: the library's, every level from proxyMinAccessLevel up may use every model (GEMINI_MODEL_ACCESS). */
  readonly geminiModelAccess?: Readonly<Partial<Record<AccessLevel, readonly string[]>>>
  /** Client model names mapped to catalogue models, parsed from the JSON object; the library checks it (GEMINI_MODEL_ALIASES). Default unset: none. */
  readonly geminiModelAliases?: Readonly<Record<string, string>>
  /** OAuth credentials, parsed from the JSON string. Default unset (GEMINI_CREDENTIALS, LLM_CREDENTIALS). */
  readonly geminiCredentials?: Readonly<Record<string, unknown>>
  /** Path to an OAuth credentials file. Default unset (GOOGLE_APPLICATION_CREDENTIALS, PLATFORM_APPLICATION_CREDENTIALS). */
  readonly credentialsFile?: string
  /** A directory of Code Assist OAuth credential files, used as a pool. Default unset (GEMINI_CREDENTIALS_DIR). */
  readonly credentialsDir?: string
  /** Refreshed tokens (and a discovered project) are written back to the credentials file(s); false keeps them in memory (a read-only Secret mount). Default unset: the library's true (GEMINI_CREDENTIALS_WRITE_BACK). */
  readonly credentialsWriteBack?: boolean
  /** Upstream project id; discovered through onboarding when unset. Default unset (GOOGLE_CLOUD_PROJECT, PLATFORM_CLOUD_PROJECT, GOOGLE_CLOUD_PROJECT_ID, GEMINI_PROJECT_ID, LLM_PROJECT_ID). */
  readonly projectId?: string
  /** OAuth client id for credentials without their own. Default unset (GEMINI_OAUTH_CLIENT_ID). */
  readonly oauthClientId?: string
  /** OAuth client secret for credentials without their own. Default unset (GEMINI_OAUTH_CLIENT_SECRET). */
  readonly oauthClientSecret?: string
  /** Code Assist base URL. Default unset: the library's `https://cloudcode-pa.googleapis.com` (CODE_ASSIST_ENDPOINT). */
  readonly codeAssistEndpoint?: string
  /** Key(s) for the public Gemini API backend, comma-separated for a pool. Default unset (GEMINI_API_KEY). */
  readonly geminiApiKey?: string
  /** Public Gemini API base URL. Default unset: the library's `https://generativelanguage.googleapis.com` (GEMINI_API_ENDPOINT). */
  readonly geminiApiEndpoint?: string
  /** Vertex AI location, `global` or a region; several, comma-separated, are a pool. Default unset: the library's `global` (GOOGLE_CLOUD_LOCATION). */
  readonly vertexLocation?: string
  /** Vertex AI base URL replacing the location's host. Default unset: the location's host (VERTEX_ENDPOINT). */
  readonly vertexEndpoint?: string
  /** Which upstream the proxy uses. Default `code-assist` with OAuth credentials, else `gemini-api` with a key, else unset; `vertex` only when set (GEMINI_BACKEND). */
  readonly geminiBackend?: GeminiBackend
  /** Model catalogue override, comma-separated ids. Default unset: the built-in catalogue (GEMINI_MODELS). */
  readonly geminiModels?: readonly string[]
  /** Model file replacing the one the library ships. Default unset: the shipped file (GEMINI_MODELS_FILE). */
  readonly geminiModelsFile?: string
  /** Operator price file replacing or adding to the shipped prices. Default unset: the shipped list alone (GEMINI_PRICES_FILE). */
  readonly geminiPricesFile?: string
  /** Hours between two model discovery rounds, 0 for none. Default 6 (GEMINI_MODEL_DISCOVERY_HOURS). */
  readonly modelDiscoveryHours: number
  /** Proxy rate limits, allowed resource kinds and built-in tools by access level, from JSON `{"member": {"rpm", "tpm", "tokens_per_day", "concurrent", "usd_per_day", "usd_per_month", "allow", "tools"}}`. Default unset: unlimited, files and caches, every built-in tool (GEMINI_LIMITS). */
  readonly geminiLimits?: LimitsByLevel
  /** Longest cache TTL a key may ask for, in seconds. Default unset: the library's 3600 (GEMINI_MAX_CACHE_TTL_SECONDS). */
  readonly geminiMaxCacheTtlSeconds?: number
  /** Bytes a user's keys may upload per UTC day. Default unset: the library's 10 GiB (GEMINI_UPLOAD_BYTES_PER_DAY). */
  readonly geminiUploadBytesPerDay?: number
  /** Chat image URLs may point at private, loopback and link-local addresses. Default unset: the library's false (IMAGE_FETCH_ALLOW_PRIVATE_NETWORKS). */
  readonly imageFetchAllowPrivateNetworks?: boolean
  /** Ports chat image URLs may use. Default unset: the library's, 80 and 443 (IMAGE_FETCH_ALLOWED_PORTS, comma-separated). */
  readonly imageFetchAllowedPorts?: readonly number[]
  /**
   * Seals the thought signatures in Responses reasoning items. Default PROXY_RESPONSES_SECRET, else derived from
   * GEMINI_AUTH_PASSWORD, else from AUTH_ADMIN_PASSWORD, else unset: the library's per-process key (PROXY_RESPONSES_SECRET).
   */
  readonly responsesSecret?: string
  /** Days a stored Responses answer is kept. Default unset: the library's 30 (PROXY_RESPONSES_TTL_DAYS). */
  readonly responsesTtlDays?: number
  /** The Responses WebSocket limits. Default unset: the library's (DEFAULT_SOCKET_LIMITS; PROXY_RESPONSES_WEBSOCKET_*). */
  readonly responsesWebsocketIdleSeconds?: number
  readonly responsesWebsocketLifetimeSeconds?: number
  readonly responsesWebsocketSocketsPerKey?: number
  /** When set, /metrics is served on this port only. Default unset: on the main port (METRICS_PORT). */
  readonly metricsPort?: number
  /** pino level. Default `info`, `debug` when DEBUG=true (LOG_LEVEL). */
  readonly logLevel: LogLevel
  /** Seconds in-flight requests and streams get after SIGTERM. Default 25 (SHUTDOWN_TIMEOUT_SECONDS). */
  readonly shutdownTimeoutSeconds: number
}

/** A bad environment variable: the library's ConfigurationError whose `option` is the variable's name. */
export class EnvironmentError extends ConfigurationError {
  /** The variable at fault (the same as `option`). */
  readonly variable: string
  constructor (variable: string, message: string) {
    super(variable, message)
    this.name = 'EnvironmentError'
    this.variable = variable
  }
}

const { usernamePattern, usernameRule, passwordMin, passwordMax, proxyPasswordMinLength, responsesSecretMinLength, backendKinds, chooseBackend, backendProblem, vertexLocationProblem, isPort, checkModelAccess, parseLimits } = OPTION_RULES
const LOG_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']
const str = text()
const url = text({ httpUrl: true })
const mongoUrl = text({ pattern: { regex: /^mongodb(\+srv)?:\/\/\S+$/, name: 'mongodb:// or mongodb+srv:// connection string' } })
const port = number({ integer: true, min: 0, max: 65535 })
const pattern = (regex: RegExp, name: string): EnvRule => text({ pattern: { regex, name } })
const oneOf = (values: readonly string[]): EnvRule => text({ oneOf: values })
const seconds = (min: number): EnvRule => number({ integer: true, min, max: 366 * 24 * 3600 })

// Keyed by variable name so an error names the variable the operator set.
const SCHEMA: Record<string, EnvRule> = {
  HOST: text({ hostname: true }),
  PORT: port,
  MONGODB_URL: mongoUrl,
  MONGODB_DB: pattern(/^[^/\\. "$*<>:|?]{1,63}$/, 'MongoDB database name'),
  AUTH_DATA_FILE: str,
  DEBUG: bool,
  AUTH_ADMIN_USERNAME: pattern(usernamePattern, usernameRule),
  AUTH_ADMIN_PASSWORD: text({ trim: false, min: passwordMin, max: passwordMax }),
  AUTH_ADMIN_PASSWORD_FILE: str,
  AUTH_SESSION_TTL_SECONDS: seconds(1),
  AUTH_REAUTH_SECONDS: seconds(0),
  AUTH_QUERY_TOKENS: bool,
  GEMINI_MAX_CACHE_TTL_SECONDS: seconds(1),
  GEMINI_UPLOAD_BYTES_PER_DAY: number({ integer: true, min: 1, max: Number.MAX_SAFE_INTEGER }),
  CONSOLE_ENABLED: bool,
  CONSOLE_ALLOW_HTTP: bool,
  CONSOLE_PATH: pattern(/^(?:\/[A-Za-z0-9._~-]+)+\/?$/, 'path such as /console'),
  AUTH_SIGNUPS_PER_ADDRESS: number({ integer: true, min: 1, max: 1_000_000 }),
  AUTH_SIGNUP_WINDOW_SECONDS: seconds(1),
  AUTH_PUBLIC_SIGNUP: bool,
  AUTH_PUBLIC_LOOKUP: bool,
  TRUSTED_PROXIES: raw => {
    const value = raw.trim()
    try {
      parseTrustedProxies(value)
    } catch (err) {
      throw new EnvRefusal(`must be comma-separated IP addresses or CIDR ranges: ${(err as Error).message.replace(/^trustedProxies: /, '')}`)
    }
    return value.split(',').map(s => s.trim()).filter(s => s !== '')
  },
  GEMINI_AUTH_PASSWORD: text({ trim: false, min: proxyPasswordMinLength }),
  LLM_AUTH_PASSWORD: text({ trim: false, min: proxyPasswordMinLength }),
  GEMINI_MODEL_ACCESS: text({ trim: false }),
  GEMINI_MODEL_ALIASES: text({ trim: false }),
  PROXY_MIN_ACCESS_LEVEL: oneOf(ACCESS_LEVELS),
  PROXY_KEY_DEFAULT_DAYS: number({ integer: true, min: 0, max: OPTION_RULES.keyExpiresDaysMax }),
  GEMINI_CREDENTIALS: text({ trim: false }),
  LLM_CREDENTIALS: text({ trim: false }),
  GOOGLE_APPLICATION_CREDENTIALS: str,
  PLATFORM_APPLICATION_CREDENTIALS: str,
  GOOGLE_CLOUD_PROJECT: str,
  PLATFORM_CLOUD_PROJECT: str,
  GOOGLE_CLOUD_PROJECT_ID: str,
  GEMINI_PROJECT_ID: str,
  LLM_PROJECT_ID: str,
  GEMINI_OAUTH_CLIENT_ID: str,
  GEMINI_OAUTH_CLIENT_SECRET: str,
  CODE_ASSIST_ENDPOINT: url,
  GEMINI_API_KEY: str,
  GEMINI_CREDENTIALS_DIR: str,
  GEMINI_CREDENTIALS_WRITE_BACK: bool,
  GEMINI_API_ENDPOINT: url,
  GEMINI_BACKEND: oneOf(backendKinds),
  // Checked with the rest of the Vertex settings in loadConfig (OPTION_RULES.vertexLocationProblem).
  GOOGLE_CLOUD_LOCATION: str,
  VERTEX_ENDPOINT: url,
  GEMINI_MODELS_FILE: str,
  GEMINI_PRICES_FILE: str,
  GEMINI_MODEL_DISCOVERY_HOURS: number({ min: 0, max: 168 }),
  GEMINI_MODELS: pattern(/^[\w.:-]+(\s*,\s*[\w.:-]+)*,?$/, 'comma-separated model ids'),
  GEMINI_LIMITS: text({ trim: false }),
  PROXY_RESPONSES_SECRET: text({ trim: false, min: responsesSecretMinLength }),
  PROXY_RESPONSES_TTL_DAYS: number({ integer: true, min: 1, max: 3650 }),
  PROXY_RESPONSES_WEBSOCKET_IDLE_SECONDS: number({ integer: true, min: 1, max: 86_400 }),
  PROXY_RESPONSES_WEBSOCKET_LIFETIME_SECONDS: number({ integer: true, min: 1, max: 86_400 }),
  PROXY_RESPONSES_WEBSOCKET_SOCKETS_PER_KEY: number({ integer: true, min: 1, max: 10_000 }),
  IMAGE_FETCH_ALLOW_PRIVATE_NETWORKS: bool,
  IMAGE_FETCH_ALLOWED_PORTS: pattern(/^\d{1,5}(\s*,\s*\d{1,5})*$/, 'comma-separated ports'),
  METRICS_PORT: port,
  LOG_LEVEL: oneOf(LOG_LEVELS),
  SHUTDOWN_TIMEOUT_SECONDS: number({ min: 0, max: 3600 }),
  OTEL_SERVICE_NAME: str,
  OTEL_EXPORTER_OTLP_ENDPOINT: url,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: url,
  OTEL_TRACES_EXPORTER: str,
}

const SECRET_VARIABLES = new Set(['PROXY_RESPONSES_SECRET', 'AUTH_ADMIN_PASSWORD', 'GEMINI_AUTH_PASSWORD', 'LLM_AUTH_PASSWORD', 'GEMINI_CREDENTIALS', 'LLM_CREDENTIALS', 'GEMINI_OAUTH_CLIENT_SECRET', 'GEMINI_API_KEY', 'MONGODB_URL'])

function check (env: Record<string, string | undefined>): Record<string, any> {
  const out: Record<string, any> = {}
  for (const [name, schema] of Object.entries(SCHEMA)) {
    const raw = env[name]
    // An empty variable counts as unset: charts and compose files often render `NAME: ""`.
    if (raw === undefined || raw.trim() === '') continue
    try {
      out[name] = schema(raw)
    } catch (err) {
      if (!(err instanceof EnvRefusal)) throw err
      const shown = SECRET_VARIABLES.has(name) ? '' : ` (got ${JSON.stringify(raw.length > 80 ? raw.slice(0, 80) + '…' : raw)})`
      throw new EnvironmentError(name, `Invalid configuration: ${name} ${err.message}${shown}`)
    }
  }
  return out
}

function first (v: Record<string, any>, ...names: string[]): any {
  for (const name of names) if (v[name] !== undefined) return v[name]
  return undefined
}

function parseCredentials (v: Record<string, any>): Record<string, unknown> | undefined {
  const name = v.GEMINI_CREDENTIALS !== undefined ? 'GEMINI_CREDENTIALS' : 'LLM_CREDENTIALS'
  const raw = v[name] as string | undefined
  if (raw === undefined) return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    throw new EnvironmentError(name, `Invalid configuration: ${name} must be OAuth credentials as a JSON object (it is not valid JSON)`)
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new EnvironmentError(name, `Invalid configuration: ${name} must be OAuth credentials as a JSON object`)
  }
  return Object.freeze(parsed as Record<string, unknown>)
}

/** GEMINI_MODEL_ALIASES as JSON; its entries are checked by createProxy, whose error names the variable. */
function parseModelAliases (raw: string | undefined): Readonly<Record<string, string>> | undefined {
  if (raw === undefined) return undefined
  try {
    return Object.freeze(JSON.parse(raw) as Record<string, string>)
  } catch {
    throw new EnvironmentError('GEMINI_MODEL_ALIASES', 'Invalid configuration: GEMINI_MODEL_ALIASES must be a JSON object from model names or patterns to model names, e.g. {"claude-*":"gemini-3.8-flash"} (it is not valid JSON)')
  }
}

/** GEMINI_MODEL_ACCESS, checked with the library's rule (OPTION_RULES.checkModelAccess) so the error names the variable. */
function parseModelAccess (v: Record<string, any>): Readonly<Partial<Record<AccessLevel, readonly string[]>>> | undefined {
  const raw = v.GEMINI_MODEL_ACCESS as string | undefined
  if (raw === undefined) return undefined
  const rule = 'must be a JSON object from access level to an array of model-name patterns, e.g. {"member":["gemini-2.5-flash*"]}'
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    throw new EnvironmentError('GEMINI_MODEL_ACCESS', `Invalid configuration: GEMINI_MODEL_ACCESS ${rule} (it is not valid JSON)`)
  }
  try {
    checkModelAccess(parsed, v.PROXY_MIN_ACCESS_LEVEL)
  } catch (err) {
    if (!(err instanceof ConfigurationError)) throw err
    throw new EnvironmentError('GEMINI_MODEL_ACCESS', `Invalid configuration: GEMINI_MODEL_ACCESS ${rule}: ${err.message.replace(/^createProxy: /, '')}`)
  }
  return Object.freeze(parsed as Partial<Record<AccessLevel, readonly string[]>>)
}

/** GEMINI_LIMITS through the library's rule, its error naming the variable and the field. */
function limitsOf (raw: string | undefined): LimitsByLevel | undefined {
  if (raw === undefined) return undefined
  try {
    return parseLimits(raw, 'GEMINI_LIMITS')
  } catch (err) {
    throw new EnvironmentError('GEMINI_LIMITS', `Invalid configuration: GEMINI_LIMITS is refused: ${(err as Error).message.replace(/^GEMINI_LIMITS: /, '')}`)
  }
}

/** Reads and validates the environment; throws EnvironmentError (one line naming the variable) on a bad value. */
export function readEnvironment (env: Record<string, string | undefined>): EnvironmentConfig {
  const v = check(env)
  const debug: boolean = v.DEBUG ?? false
  const geminiCredentials = parseCredentials(v)
  const credentialsFile: string | undefined = first(v, 'GOOGLE_APPLICATION_CREDENTIALS', 'PLATFORM_APPLICATION_CREDENTIALS')
  const geminiApiKey: string | undefined = v.GEMINI_API_KEY
  const credentialsDir: string | undefined = v.GEMINI_CREDENTIALS_DIR
  const hasOAuth = geminiCredentials !== undefined || credentialsFile !== undefined || credentialsDir !== undefined
  // The library's backend selection, checked here so a missing credential stops start-up with the variable's name.
  const projectId: string | undefined = first(v, 'GOOGLE_CLOUD_PROJECT', 'PLATFORM_CLOUD_PROJECT', 'GOOGLE_CLOUD_PROJECT_ID', 'GEMINI_PROJECT_ID', 'LLM_PROJECT_ID')
  const backendInputs = { backend: v.GEMINI_BACKEND as GeminiBackend | undefined, hasOAuth, hasKey: geminiApiKey !== undefined, hasProject: projectId !== undefined }
  const geminiBackend = chooseBackend(backendInputs)
  const problem = backendProblem(backendInputs)
  if (problem !== undefined) throw new EnvironmentError('GEMINI_BACKEND', `Invalid configuration: ${problem}`)
  // The library's rule of a location or a pool of them.
  const locationProblem = v.GOOGLE_CLOUD_LOCATION === undefined
    ? undefined
    : vertexLocationProblem(v.GOOGLE_CLOUD_LOCATION, { vertex: geminiBackend === 'vertex', hasProject: projectId !== undefined, hasEndpoint: v.VERTEX_ENDPOINT !== undefined }, { project: 'GOOGLE_CLOUD_PROJECT', endpoint: 'VERTEX_ENDPOINT' })
  if (locationProblem !== undefined) throw new EnvironmentError('GOOGLE_CLOUD_LOCATION', `Invalid configuration: GOOGLE_CLOUD_LOCATION ${locationProblem}`)
  const port: number = v.PORT ?? 8888
  if (v.METRICS_PORT !== undefined && v.METRICS_PORT !== 0 && v.METRICS_PORT === port) {
    throw new EnvironmentError('METRICS_PORT', `Invalid configuration: METRICS_PORT must differ from PORT (both ${port})`)
  }
  const models: string | undefined = v.GEMINI_MODELS
  const imagePorts: string | undefined = v.IMAGE_FETCH_ALLOWED_PORTS
  const imageFetchAllowedPorts = imagePorts === undefined ? undefined : Object.freeze(imagePorts.split(',').map(p => Number(p.trim())))
  if (imageFetchAllowedPorts?.some(p => !isPort(p)) === true) {
    throw new EnvironmentError('IMAGE_FETCH_ALLOWED_PORTS', `Invalid configuration: IMAGE_FETCH_ALLOWED_PORTS must list ports 1-65535 (got ${JSON.stringify(imagePorts)})`)
  }
  const geminiLimits = limitsOf(v.GEMINI_LIMITS)
  const proxyPassword = first(v, 'GEMINI_AUTH_PASSWORD', 'LLM_AUTH_PASSWORD')
  const config: EnvironmentConfig = {
    host: v.HOST ?? '0.0.0.0',
    port,
    mongodbUrl: v.MONGODB_URL,
    mongodbDb: v.MONGODB_DB ?? 'gateway',
    authDataFile: v.AUTH_DATA_FILE ?? (debug ? './data/auth-db.json' : undefined),
    debug,
    authAdminUsername: v.AUTH_ADMIN_USERNAME,
    authAdminPassword: v.AUTH_ADMIN_PASSWORD,
    authAdminPasswordFile: v.AUTH_ADMIN_PASSWORD_FILE,
    authSessionTtlSeconds: v.AUTH_SESSION_TTL_SECONDS,
    authReauthSeconds: v.AUTH_REAUTH_SECONDS,
    authQueryTokens: v.AUTH_QUERY_TOKENS,
    consoleEnabled: v.CONSOLE_ENABLED ?? true,
    consolePath: v.CONSOLE_PATH,
    consoleAllowHttp: v.CONSOLE_ALLOW_HTTP,
    authSignupsPerAddress: v.AUTH_SIGNUPS_PER_ADDRESS,
    authSignupWindowSeconds: v.AUTH_SIGNUP_WINDOW_SECONDS,
    authPublicSignup: v.AUTH_PUBLIC_SIGNUP,
    authPublicLookup: v.AUTH_PUBLIC_LOOKUP,
    proxyMinAccessLevel: v.PROXY_MIN_ACCESS_LEVEL,
    proxyKeyDefaultDays: v.PROXY_KEY_DEFAULT_DAYS,
    trustedProxies: v.TRUSTED_PROXIES === undefined ? undefined : Object.freeze(v.TRUSTED_PROXIES),
    proxyPassword,
    geminiModelAccess: parseModelAccess(v),
    geminiModelAliases: parseModelAliases(v.GEMINI_MODEL_ALIASES),
    geminiCredentials,
    credentialsFile,
    credentialsDir,
    credentialsWriteBack: v.GEMINI_CREDENTIALS_WRITE_BACK,
    projectId,
    oauthClientId: v.GEMINI_OAUTH_CLIENT_ID,
    oauthClientSecret: v.GEMINI_OAUTH_CLIENT_SECRET,
    codeAssistEndpoint: v.CODE_ASSIST_ENDPOINT?.replace(/\/+$/, ''),
    geminiApiKey,
    geminiApiEndpoint: v.GEMINI_API_ENDPOINT?.replace(/\/+$/, ''),
    vertexLocation: v.GOOGLE_CLOUD_LOCATION,
    vertexEndpoint: v.VERTEX_ENDPOINT?.replace(/\/+$/, ''),
    geminiBackend,
    geminiModelsFile: v.GEMINI_MODELS_FILE,
    geminiPricesFile: v.GEMINI_PRICES_FILE,
    modelDiscoveryHours: v.GEMINI_MODEL_DISCOVERY_HOURS ?? 6,
    geminiModels: models === undefined ? undefined : Object.freeze(models.split(',').map(s => s.trim()).filter(s => s !== '')),
    geminiLimits,
    geminiMaxCacheTtlSeconds: v.GEMINI_MAX_CACHE_TTL_SECONDS,
    geminiUploadBytesPerDay: v.GEMINI_UPLOAD_BYTES_PER_DAY,
    responsesSecret: responsesSecretOf(v.PROXY_RESPONSES_SECRET, proxyPassword, v.AUTH_ADMIN_PASSWORD),
    responsesTtlDays: v.PROXY_RESPONSES_TTL_DAYS,
    responsesWebsocketIdleSeconds: v.PROXY_RESPONSES_WEBSOCKET_IDLE_SECONDS,
    responsesWebsocketLifetimeSeconds: v.PROXY_RESPONSES_WEBSOCKET_LIFETIME_SECONDS,
    responsesWebsocketSocketsPerKey: v.PROXY_RESPONSES_WEBSOCKET_SOCKETS_PER_KEY,
    imageFetchAllowPrivateNetworks: v.IMAGE_FETCH_ALLOW_PRIVATE_NETWORKS,
    imageFetchAllowedPorts,
    metricsPort: v.METRICS_PORT,
    logLevel: v.LOG_LEVEL ?? (debug ? 'debug' : 'info'),
    shutdownTimeoutSeconds: v.SHUTDOWN_TIMEOUT_SECONDS ?? 25,
  }
  // Drop unset optionals so the frozen object prints cleanly.
  for (const key of Object.keys(config) as Array<keyof EnvironmentConfig>) if (config[key] === undefined) delete (config as any)[key]
  return Object.freeze(config)
}

/**
 * The Responses secret: PROXY_RESPONSES_SECRET, else one derived from a secret the operator already set (so every
 * replica of one deployment agrees without another variable), else none.
 */
function responsesSecretOf (secret: string | undefined, proxyPassword: string | undefined, adminPassword: string | undefined): string | undefined {
  if (secret !== undefined) return secret
  const base = proxyPassword ?? adminPassword
  return base === undefined ? undefined : createHash('sha256').update(`gatehouse responses secret\n${base}`).digest('hex')
}

// The library's option names (as its ConfigurationError names them) and the variables that set them; where several
// variables set one option, the first one set is named.
const VARIABLES_OF_OPTION: Record<string, readonly string[]> = {
  adminUsername: ['AUTH_ADMIN_USERNAME'],
  adminPassword: ['AUTH_ADMIN_PASSWORD'],
  sessionTtlSeconds: ['AUTH_SESSION_TTL_SECONDS'],
  reauthSeconds: ['AUTH_REAUTH_SECONDS'],
  queryTokens: ['AUTH_QUERY_TOKENS'],
  path: ['CONSOLE_PATH'],
  allowHttp: ['CONSOLE_ALLOW_HTTP'],
  'signupLimits.perAddress': ['AUTH_SIGNUPS_PER_ADDRESS'],
  'signupLimits.windowSeconds': ['AUTH_SIGNUP_WINDOW_SECONDS'],
  publicSignup: ['AUTH_PUBLIC_SIGNUP'],
  publicLookup: ['AUTH_PUBLIC_LOOKUP'],
  proxyMinAccessLevel: ['PROXY_MIN_ACCESS_LEVEL'],
  keyDefaultDays: ['PROXY_KEY_DEFAULT_DAYS'],
  trustedProxies: ['TRUSTED_PROXIES'],
  password: ['GEMINI_AUTH_PASSWORD', 'LLM_AUTH_PASSWORD'],
  modelAccess: ['GEMINI_MODEL_ACCESS'],
  modelAliases: ['GEMINI_MODEL_ALIASES'],
  modelsFile: ['GEMINI_MODELS_FILE'],
  pricesFile: ['GEMINI_PRICES_FILE'],
  minAccessLevel: ['PROXY_MIN_ACCESS_LEVEL'],
  backend: ['GEMINI_BACKEND'],
  credentials: ['GEMINI_CREDENTIALS', 'LLM_CREDENTIALS'],
  credentialsFile: ['GOOGLE_APPLICATION_CREDENTIALS', 'PLATFORM_APPLICATION_CREDENTIALS'],
  credentialsDir: ['GEMINI_CREDENTIALS_DIR'],
  writeBack: ['GEMINI_CREDENTIALS_WRITE_BACK'],
  projectId: ['GOOGLE_CLOUD_PROJECT', 'PLATFORM_CLOUD_PROJECT', 'GOOGLE_CLOUD_PROJECT_ID', 'GEMINI_PROJECT_ID', 'LLM_PROJECT_ID'],
  oauthClientId: ['GEMINI_OAUTH_CLIENT_ID'],
  oauthClientSecret: ['GEMINI_OAUTH_CLIENT_SECRET'],
  codeAssistEndpoint: ['CODE_ASSIST_ENDPOINT'],
  apiKey: ['GEMINI_API_KEY'],
  geminiApiEndpoint: ['GEMINI_API_ENDPOINT'],
  vertexLocation: ['GOOGLE_CLOUD_LOCATION'],
  vertexEndpoint: ['VERTEX_ENDPOINT'],
  models: ['GEMINI_MODELS'],
  limits: ['GEMINI_LIMITS'],
  'resources.byLevel': ['GEMINI_LIMITS'],
  'resources.maxCacheTtlSeconds': ['GEMINI_MAX_CACHE_TTL_SECONDS'],
  'resources.uploadBytesPerDay': ['GEMINI_UPLOAD_BYTES_PER_DAY'],
  'imageFetch.allowPrivateNetworks': ['IMAGE_FETCH_ALLOW_PRIVATE_NETWORKS'],
  'imageFetch.allowedPorts': ['IMAGE_FETCH_ALLOWED_PORTS'],
  url: ['MONGODB_URL'],
  dbName: ['MONGODB_DB'],
  file: ['AUTH_DATA_FILE'],
  'responses.secret': ['PROXY_RESPONSES_SECRET'],
  'responses.ttlDays': ['PROXY_RESPONSES_TTL_DAYS'],
  'responses.websocket.idleTimeoutSeconds': ['PROXY_RESPONSES_WEBSOCKET_IDLE_SECONDS'],
  'responses.websocket.maxLifetimeSeconds': ['PROXY_RESPONSES_WEBSOCKET_LIFETIME_SECONDS'],
  'responses.websocket.maxSocketsPerKey': ['PROXY_RESPONSES_WEBSOCKET_SOCKETS_PER_KEY'],
}

/**
 * The one line `npm start` prints for a configuration error: an EnvironmentError as it is, one the library threw at
 * construction with the variable behind its option where there is one (an upstream option is named `upstream.x`).
 */
export function configurationErrorLine (err: ConfigurationError, env: Record<string, string | undefined>): string {
  const message = err.message.replace(/\s*\n\s*/g, ' ')
  if (err instanceof EnvironmentError) return message
  const names = VARIABLES_OF_OPTION[err.option.replace(/^upstream\./, '')]
  const variable = names?.find(name => env[name] !== undefined && env[name]?.trim() !== '') ?? names?.[0]
  return variable === undefined
    ? `Invalid configuration: ${err.option}: ${message}`
    : `Invalid configuration: ${variable} (option ${err.option}): ${message}`
}
