// Defaults and rules of lib's options, shared by the modules that apply them; a host that checks its own input
// before building anything (the gateway's environment) reads them through OPTION_RULES on the package entry.
import { PROXY_PASSWORD_MIN_LENGTH } from './proxy/access/client-auth.ts'
import { createModelPolicy } from './proxy/access/model-policy.ts'
import type { ModelAccess } from './proxy/access/model-policy.ts'
import type { AccessLevel } from './store/types.ts'
import { parseLimitsJson } from './metering/limits-rule.ts'

/** createAuthService's adminUsername default. */
export const DEFAULT_ADMIN_USERNAME = 'system'
/** createAuthService's sessionTtlSeconds default. */
export const DEFAULT_SESSION_TTL_SECONDS = 3600
/** createAuthService's reauthSeconds default. */
export const DEFAULT_REAUTH_SECONDS = 600
/** createAuthService's keyDefaultDays default: a key lives 90 days unless its creator says otherwise. */
export const DEFAULT_KEY_DEFAULT_DAYS = 90
/** The longest life of a key in days (a key's expires_in_days, createAuthService's keyDefaultDays). */
export const KEY_EXPIRES_DAYS_MAX = 3650
/** The smallest secret accepted (createProxy's responses.secret). */
export const RESPONSES_SECRET_MIN_LENGTH = 16
/** Days a stored response is kept (PROXY_RESPONSES_TTL_DAYS), as OpenAI keeps them. */
export const DEFAULT_RESPONSES_TTL_DAYS = 30
/** createConsole's path default (CONSOLE_PATH). */
export const DEFAULT_CONSOLE_PATH = '/console'
/** createAuthService's queryTokens default. */
export const DEFAULT_QUERY_TOKENS = true
export { DEFAULT_PROXY_MIN_ACCESS_LEVEL } from './proxy/access/caller.ts'
export const USERNAME_MIN = 3
export const USERNAME_MAX = 32
/** The characters of a username, whatever its length. */
export const USERNAME_CHARS = /^[A-Za-z0-9_.-]+$/
/** Usernames, the system user's included: 3-32 letters, digits, `_`, `.` or `-`. */
export const USERNAME_PATTERN = new RegExp(`^[A-Za-z0-9_.-]{${USERNAME_MIN},${USERNAME_MAX}}$`)
export const USERNAME_RULE = '3-32 letters, digits, "_", "." or "-"'
export const PASSWORD_MIN = 8
export const PASSWORD_MAX = 256

/** createBackend's codeAssistEndpoint default. */
export const DEFAULT_CODE_ASSIST_ENDPOINT = 'https://cloudcode-pa.googleapis.com'
/** createBackend's geminiApiEndpoint default. */
export const DEFAULT_GEMINI_API_ENDPOINT = 'https://generativelanguage.googleapis.com'

/** createBackend's vertexLocation default: Vertex AI's global endpoint. */
export const DEFAULT_VERTEX_LOCATION = 'global'
/** A Vertex AI location: `global` or a region such as `us-central1` (it becomes part of a host name). */
export const VERTEX_LOCATION_PATTERN = /^[a-z][a-z0-9-]{0,62}$/

/** VERTEX_LOCATION_PATTERN in words, for error messages: one location or a comma-separated pool of them. */
export const VERTEX_LOCATION_RULE = "'global' or a region name such as 'us-central1' (lower-case letters, digits and '-'), or several separated by commas for a pool"

/** The locations of a vertexLocation value (GOOGLE_CLOUD_LOCATION): one, or several separated by commas (blanks ignored). */
export function vertexLocationList (value: string): string[] {
  return value.split(',').map(l => l.trim()).filter(l => l !== '')
}

/**
 * Why a vertexLocation value cannot be used, as the end of a sentence that names it, or undefined. When the Vertex
 * backend uses the locations (`context.vertex`, default true), several need a project (express mode always calls the
 * global endpoint) and no endpoint override (it would send every location to its one host); `names` are the
 * settings the message names for those two.
 */
export function vertexLocationProblem (value: unknown, context: { vertex?: boolean, hasProject: boolean, hasEndpoint: boolean }, names: { project: string, endpoint: string }): string | undefined {
  const list = typeof value === 'string' ? vertexLocationList(value) : []
  const shown = typeof value === 'string' ? ` (got ${JSON.stringify(value)})` : ''
  if (list.length === 0 || !list.every(l => VERTEX_LOCATION_PATTERN.test(l))) return `must be ${VERTEX_LOCATION_RULE}${shown}`
  if (new Set(list).size !== list.length) return `names a location twice${shown}`
  if (context.vertex === false) return undefined
  if (list.length > 1 && !context.hasProject) return `lists several locations, but express mode (no ${names.project}) always calls the global endpoint: set one location or ${names.project}${shown}`
  if (list.length > 1 && context.hasEndpoint) return `lists several locations, but ${names.endpoint} would send them all to its one host: set one location with ${names.endpoint}${shown}`
  return undefined
}

/** The Vertex AI host of a location: `aiplatform.googleapis.com` for `global`, `R-aiplatform.googleapis.com` for region R. */
export function vertexHost (location: string): string {
  return location === DEFAULT_VERTEX_LOCATION ? 'https://aiplatform.googleapis.com' : `https://${location}-aiplatform.googleapis.com`
}

export type BackendKind = 'code-assist' | 'gemini-api' | 'vertex'
export const BACKEND_KINDS: readonly BackendKind[] = Object.freeze(['code-assist', 'gemini-api', 'vertex'])

/** What the backend choice depends on: an explicit choice, OAuth credentials (value or file), an API key, a project. */
export interface BackendInputs {
  backend?: BackendKind
  hasOAuth: boolean
  hasKey: boolean
  /** A Google Cloud project is set (Vertex with application-default credentials; without one Vertex runs in express mode). */
  hasProject?: boolean
}

/** Backend selection: the explicit choice (Vertex is never guessed), else Code Assist with OAuth credentials, else the Gemini API with a key, else none. */
export function chooseBackend ({ backend, hasOAuth, hasKey }: BackendInputs): BackendKind | undefined {
  return backend ?? (hasOAuth ? 'code-assist' : hasKey ? 'gemini-api' : undefined)
}

/** Why the chosen backend cannot work (it lacks what it needs), or undefined. Messages name the gateway's variables. */
export function backendProblem (inputs: BackendInputs): string | undefined {
  const kind = chooseBackend(inputs)
  if (kind === 'code-assist' && !inputs.hasOAuth) return 'GEMINI_BACKEND is code-assist but neither GEMINI_CREDENTIALS nor GOOGLE_APPLICATION_CREDENTIALS (nor GEMINI_CREDENTIALS_DIR) is set'
  if (kind === 'gemini-api' && !inputs.hasKey) return 'GEMINI_BACKEND is gemini-api but GEMINI_API_KEY is not set'
  if (kind === 'vertex' && inputs.hasProject !== true && !inputs.hasKey) {
    return 'GEMINI_BACKEND is vertex but neither GOOGLE_CLOUD_PROJECT (application-default credentials) nor GEMINI_API_KEY (express mode) is set'
  }
  return undefined
}

/** True for a TCP port a URL may name (1-65535): the rule of imageFetch.allowedPorts (IMAGE_FETCH_ALLOWED_PORTS). */
export function isPort (value: unknown): boolean {
  return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= 65535
}

/** True for an absolute http(s) URL, the form every endpoint option takes. */
export function isHttpUrl (value: unknown): boolean {
  if (typeof value !== 'string' || !URL.canParse(value)) return false
  const { protocol } = new URL(value)
  return protocol === 'http:' || protocol === 'https:'
}

/**
 * The rules of lib's options a host may check its own input against before it builds anything, so its errors can
 * name its own settings (the gateway's environment variables). The library applies the same rules at construction.
 */
export const OPTION_RULES = Object.freeze({
  /** Usernames, the system user's (adminUsername) included. */
  usernamePattern: USERNAME_PATTERN,
  /** USERNAME_PATTERN in words, for error messages. */
  usernameRule: USERNAME_RULE,
  /** Shortest and longest password (adminPassword and every account's). */
  passwordMin: PASSWORD_MIN,
  passwordMax: PASSWORD_MAX,
  /** The longest keyDefaultDays (PROXY_KEY_DEFAULT_DAYS); 0 is none. */
  keyExpiresDaysMax: KEY_EXPIRES_DAYS_MAX,
  /** Shortest proxy password (createProxy's password). */
  proxyPasswordMinLength: PROXY_PASSWORD_MIN_LENGTH,
  /** Shortest secret of createProxy's responses.secret. */
  responsesSecretMinLength: RESPONSES_SECRET_MIN_LENGTH,
  /** createProxy's responses.ttlDays default. */
  defaultResponsesTtlDays: DEFAULT_RESPONSES_TTL_DAYS,
  /** The values of createBackend's backend. */
  backendKinds: BACKEND_KINDS,
  chooseBackend,
  backendProblem,
  /** The rule of one location of createBackend's vertexLocation (GOOGLE_CLOUD_LOCATION). */
  vertexLocationPattern: VERTEX_LOCATION_PATTERN,
  /** The whole rule of vertexLocation: a location or a pool of them, and what several locations need. */
  vertexLocationProblem,
  isPort,
  /** Throws createProxy's ConfigurationError (option `modelAccess...` or `minAccessLevel`) for options it would refuse. */
  checkModelAccess (modelAccess: unknown, minAccessLevel?: AccessLevel): void {
    createModelPolicy(modelAccess as ModelAccess, minAccessLevel)
  },
  /** GEMINI_LIMITS' JSON (snake_case fields) to the option `limits`; throws ConfigurationError naming the field. */
  parseLimits: parseLimitsJson,
})
