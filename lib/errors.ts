// One catalogue of errors. Each has a stable code, an HTTP status and a default message.
// Services throw GatehouseError; one mapper per surface (auth, chat-completions, native)
// turns it into that surface's documented error body.
import type { Logger } from './logger.ts'

export const ERRORS = {
  // accounts and sessions
  INVALID_INPUT: { status: 400, message: 'Invalid input' },
  USER_AGENT_REQUIRED: { status: 400, message: 'The user-agent header is required' },
  USERNAME_TAKEN: { status: 400, message: 'Username already exists' },
  WEAK_PASSWORD: { status: 400, message: 'This password is too easy to guess; choose another' },
  NO_ACTIVE_SESSION: { status: 400, message: 'No active sessions' },
  LAST_HUSH_USER: { status: 400, message: 'The last hush user cannot be demoted' },
  LAST_ENABLED_HUSH_USER: { status: 400, message: 'The last enabled hush user cannot be disabled' },
  TOO_MANY_KEYS: { status: 400, message: 'This user holds as many API keys as allowed (100); delete one first' },
  INVALID_CREDENTIALS: { status: 401, message: 'Invalid credentials' },
  SESSION_NOT_FOUND: { status: 401, message: 'No active sessions' },
  SESSION_EXPIRED: { status: 401, message: 'Token expired' },
  DEVICE_MISMATCH: { status: 401, message: 'Device mismatch' },
  INVALID_TOKEN: { status: 401, message: 'Invalid token' },
  CONFLICTING_TOKENS: { status: 401, message: 'The session token was sent in more than one form, with different values' },
  QUERY_TOKENS_DISABLED: { status: 401, message: 'Session tokens are not accepted in the query string: send the token in the token header or as Authorization: Bearer' },
  ACCOUNT_DISABLED: { status: 401, message: 'This account is disabled' },
  REAUTHENTICATION_REQUIRED: { status: 401, message: 'Changing a password, email or username, an access level, status or limits, creating an API key, or as an admin deleting one or ending sessions or a lockout, needs a fresh login or the current password (current_password)' },
  SIGN_IN_LINK_INVALID: { status: 401, message: 'This sign-in link does not work: it was used already or replaced by a newer one. Ask an admin for a new link' },
  SIGN_IN_LINK_EXPIRED: { status: 401, message: 'This sign-in link has expired. Ask an admin for a new link' },
  INVALID_CURRENT_PASSWORD: { status: 401, message: 'current_password is not the current password' },
  INSUFFICIENT_PERMISSIONS: { status: 403, message: 'Insufficient permissions' },
  SIGNUP_CLOSED: { status: 403, message: 'Sign-up is closed here: ask an admin to add you' },
  USER_NOT_FOUND: { status: 404, message: 'User not found' },
  USERNAME_NOT_FOUND: { status: 404, message: 'Username not found' },
  KEY_NOT_FOUND: { status: 404, message: 'API key not found' },
  TOO_MANY_ATTEMPTS: { status: 429, message: 'Too many failed login attempts; try again later' },
  TOO_MANY_SIGNUPS: { status: 429, message: 'Too many sign-ups from this address; try again later' },
  TOO_MANY_LOOKUPS: { status: 429, message: 'Too many user lookups from this address; try again later' },
  // console
  CROSS_SITE_REQUEST: { status: 403, message: 'Refused: this request did not come from the console page (Sec-Fetch-Site or Origin)' },
  CONSOLE_NEEDS_HTTPS: { status: 403, message: 'Signing in here needs HTTPS: over plain HTTP on this host name the browser drops the console\'s Secure cookie. Open the console over HTTPS (TLS at the gateway or its ingress) or at http://localhost, or, on a trusted network only, set CONSOLE_ALLOW_HTTP=true (createConsole\'s allowHttp)' },
  CONSOLE_NOT_BUILT: { status: 503, message: 'The console was not built: run npm run build:console' },
  // shared
  NOT_FOUND: { status: 404, message: 'Not found' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'Method not allowed' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'Request body too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'Content-Type must be application/json' },
  INVALID_JSON: { status: 400, message: 'Invalid JSON in request body' },
  JSON_TOO_DEEP: { status: 400, message: 'The JSON is nested too deeply' },
  JSON_TOO_MANY_VALUES: { status: 400, message: 'The JSON holds too many values' },
  INTERNAL: { status: 500, message: 'Internal error' },
  // proxy
  PROXY_PASSWORD_UNSET: { status: 503, message: 'The proxy is not configured: set GEMINI_AUTH_PASSWORD' },
  PROXY_UNAUTHENTICATED: { status: 401, message: "Invalid authentication credentials. Use a Bearer token, HTTP Basic auth, the 'key' query parameter, or the 'x-goog-api-key' header." },
  PROXY_TOO_MANY_ATTEMPTS: { status: 429, message: 'Too many wrong proxy passwords or keys from this address; try again later (a valid one is accepted meanwhile)' },
  RATE_LIMITED: { status: 429, message: 'Rate limit reached; retry after the time in Retry-After' },
  MODEL_NOT_FOUND: { status: 404, message: 'Model not found' },
  MODEL_NOT_ALLOWED: { status: 403, message: 'This key may not use that model' },
  EXPLICIT_CACHING_UNSUPPORTED: { status: 400, message: 'This model takes no explicit context caches (cachedContents); it caches repeated prompts implicitly' },
  MODEL_UNPRICED: { status: 403, message: 'This model has no known price, so a dollar budget cannot be enforced on it; ask the operator to add its price' },
  RESOURCE_NOT_ALLOWED: { status: 403, message: "This key's access level may not use that kind of upstream resource; ask the operator" },
  TOOL_NOT_ALLOWED: { status: 403, message: "This key's access level may not use that built-in tool; ask the operator" },
  TOO_MANY_RESOURCES: { status: 429, message: 'This user owns as many upstream resources as allowed; delete some first' },
  UPLOAD_QUOTA_EXCEEDED: { status: 429, message: 'This user uploaded as many bytes today as allowed; retry after the time in Retry-After' },
  TOO_MANY_SOCKETS: { status: 426, message: 'This key holds as many open WebSockets as allowed; send the request over HTTP, or close one first' },
  WEBSOCKET_UNAVAILABLE: { status: 426, message: 'This host takes no WebSocket upgrade: send the request over HTTP' },
  TOO_MANY_PARTS: { status: 400, message: 'Too many content parts in one request' },
  IMAGE_FETCH_FAILED: { status: 400, message: 'Could not fetch the image URL' },
  UPSTREAM_NOT_CONFIGURED: { status: 503, message: 'No upstream credentials are configured' },
  UPSTREAM_CREDENTIALS_REJECTED: { status: 503, message: 'Upstream credentials rejected' },
  UPSTREAM_CREDENTIALS_UNUSABLE: { status: 503, message: 'Upstream credentials are unusable (invalid_grant): re-authenticate and restart' },
  UPSTREAM_SETUP_FAILED: { status: 503, message: 'Upstream project discovery or onboarding failed' },
  UPSTREAM_BAD_REQUEST: { status: 400, message: 'Upstream rejected the request' },
  UPSTREAM_PERMISSION_DENIED: { status: 403, message: 'Upstream denied permission' },
  UPSTREAM_NOT_FOUND: { status: 404, message: 'Model not found or not enabled for this account' },
  UPSTREAM_RATE_LIMITED: { status: 429, message: 'Upstream rate limit reached' },
  UPSTREAM_UNAVAILABLE: { status: 503, message: 'Upstream unavailable' },
  UPSTREAM_ERROR: { status: 502, message: 'Upstream error' },
  UPSTREAM_TIMEOUT: { status: 504, message: 'Upstream timed out' },
  // gateway
  REQUEST_TIMEOUT: { status: 408, message: 'Request body not received in time' },
  SERVER_BUSY: { status: 503, message: 'The gateway is holding as many large request bodies as its memory allows; retry shortly' },
  // proxy upstream: the client went away, so the upstream call was cancelled (nginx's 499)
  CLIENT_CLOSED_REQUEST: { status: 499, message: 'The client closed the request' },
} as const satisfies Record<string, { status: number, message: string }>

export type ErrorCode = keyof typeof ERRORS

export interface ErrorExtra {
  /** Seconds, sent as Retry-After. */
  retryAfter?: number
  /** An upstream error body to pass through unchanged on the native surface. */
  upstreamBody?: unknown
  /** The upstream HTTP status behind this error, when there is one. */
  upstreamStatus?: number
  /** The request field at fault, for the chat-completions surface's `param` (OpenAI's). */
  param?: string | null
  cause?: unknown
}

// The brand isGatehouseError checks: Symbol.for is one symbol per process, so an error made by a second
// copy of this module (two installed versions, a bundled copy) is recognised too, where instanceof is not.
const BRAND = Symbol.for('gatehouse.error')

export class GatehouseError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly retryAfter?: number
  readonly upstreamBody?: unknown
  readonly upstreamStatus?: number
  /** The request field at fault (OpenAI's `param`); set by the chat-completions surface when it knows the field. */
  param?: string | null

  constructor (code: ErrorCode, message?: string, extra: ErrorExtra = {}) {
    super(message ?? ERRORS[code].message, extra.cause === undefined ? undefined : { cause: extra.cause })
    this.name = 'GatehouseError'
    this.code = code
    this.status = ERRORS[code].status
    this.retryAfter = extra.retryAfter
    this.upstreamBody = extra.upstreamBody
    this.upstreamStatus = extra.upstreamStatus
    this.param = extra.param
  }
}
// On the prototype, not each error: no own property that logs or deep comparisons would see.
Object.defineProperty(GatehouseError.prototype, BRAND, { value: true })

/** Shorthand: `throw fail('USERNAME_TAKEN')`. */
export function fail (code: ErrorCode, message?: string, extra?: ErrorExtra): GatehouseError {
  return new GatehouseError(code, message, extra)
}

/** True for a GatehouseError, also one made by another copy of this module. */
export function isGatehouseError (err: unknown): err is GatehouseError {
  return err instanceof GatehouseError || (err !== null && typeof err === 'object' && (err as Record<symbol, unknown>)[BRAND] === true)
}

/**
 * Logs a failure where it ends (the serving path, lib/http/serve.ts; a stream's end, lib/proxy/routes-stream.ts),
 * once, as docs/errors.md says: an error outside the catalogue (a bug) as an error with `bugMessage`, a catalogue
 * 5xx as a warning (except PROXY_PASSWORD_UNSET: configuration, not trouble), a catalogue 4xx (a refusal) at info
 * with its code, field and message; a host's own 4xx is an answer, not logged.
 */
export function logFailure (logger: Logger | undefined, err: unknown, fields: Record<string, unknown>, bugMessage: string): void {
  if (logger === undefined) return
  if (isGatehouseError(err)) {
    if (err.status >= 500 && err.code !== 'PROXY_PASSWORD_UNSET') logger.warn({ ...fields, code: err.code, status: err.status, upstreamStatus: err.upstreamStatus }, err.message)
    // A refusal says why in one line, so an operator never sees a bare 400; the message holds no secret or body.
    else if (err.status < 500) logger.info({ ...fields, code: err.code, status: err.status, ...(err.param == null ? {} : { param: err.param }) }, err.message)
  } else if (hostClientStatus(err) === undefined) {
    logger.error({ ...fields, err }, bugMessage)
  }
}

/** The 4xx status of a host server's own client error (Hapi's Boom output.statusCode, or Express's status/statusCode), if it is one. */
export function hostClientStatus (err: unknown): number | undefined {
  if (err === null || typeof err !== 'object') return undefined
  const e = err as { isBoom?: unknown, output?: { statusCode?: unknown }, status?: unknown, statusCode?: unknown }
  const status = e.isBoom === true ? e.output?.statusCode : e.status ?? e.statusCode
  return typeof status === 'number' && status >= 400 && status < 500 ? status : undefined
}

/** The catalogue's message for a host's own client error of `status` (hostClientStatus); a malformed body otherwise. */
function hostClientMessage (status: number): string {
  switch (status) {
    case 404: return ERRORS.NOT_FOUND.message
    case 405: return ERRORS.METHOD_NOT_ALLOWED.message
    case 408: return ERRORS.REQUEST_TIMEOUT.message
    case 413: return ERRORS.PAYLOAD_TOO_LARGE.message
    case 415: return ERRORS.UNSUPPORTED_MEDIA_TYPE.message
    default: return ERRORS.INVALID_JSON.message
  }
}

/**
 * How every surface answers an error from outside the catalogue: a host server's own client error keeps its status
 * with the catalogue's message for it (the host's wording may name internals); anything else is a 500 INTERNAL.
 */
export function foreignError (err: unknown): { status: number, message: string } {
  const host = hostClientStatus(err)
  return host === undefined ? { status: 500, message: ERRORS.INTERNAL.message } : { status: host, message: hostClientMessage(host) }
}

/**
 * A bad option, thrown once, at construction, by every service and store (createAuthService, createProxy,
 * createBackend, createEmbeddedStore, createMongoStore). `option` names it (dotted for nested ones, e.g.
 * `upstream.codeAssistEndpoint`). It extends TypeError so `instanceof TypeError` checks keep working, and keeps
 * TypeError's name. `code` is set where the problem was a GatehouseError before (UPSTREAM_NOT_CONFIGURED).
 */
export class ConfigurationError extends TypeError {
  readonly option: string
  declare readonly code?: ErrorCode

  constructor (option: string, message: string, extra: { code?: ErrorCode, cause?: unknown } = {}) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause })
    this.option = option
    if (extra.code !== undefined) this.code = extra.code
  }
}
