import type { Store } from '../store/types.ts'
import type { Logger } from '../logger.ts'
import { USERNAME_PATTERN, PASSWORD_MIN, PASSWORD_MAX } from './schemas.ts'
import { defaultHashConcurrency } from './passwords.ts'

/** What the service reports as it runs; the gateway turns these into Prometheus counters. */
export type AuthEvent = 'session_created' | 'session_ended' | 'session_expired' | 'login_success' | 'login_failure' | 'login_lockout'

/** argon2id cost parameters (the PHC string of every hash records the ones it was made with). */
export interface Argon2Params {
  /** Memory in KiB. Default 19456 (19 MiB, OWASP's minimum for argon2id). */
  memoryCost: number
  /** Passes over memory. Default 2 (OWASP). */
  timeCost: number
  /** Lanes. Default 1 (OWASP). */
  parallelism: number
}

/** Failed-login limits; counters live in the store so they hold across replicas. */
export interface LoginLimits {
  /** Failed logins allowed per username within the window. Default 5. */
  perUsername: number
  /** Failed logins allowed per client address within the window. Default 30. */
  perAddress: number
  /** Window length in seconds, from the first failure. Default 900 (15 minutes). */
  windowSeconds: number
}

export interface AuthServiceOptions {
  /** Where users, sessions and login-attempt counters live. Required; the caller closes it. */
  store: Store
  /** Path prefix of every route. Default `/v1/api`. */
  basePath?: string
  /** Session lifetime in seconds, from login. Default 3600. */
  sessionTtlSeconds?: number
  /** A session younger than this (seconds) may change password, email or username without `current_password`; 0: never. Default 600. */
  reauthSeconds?: number
  /** Accept session tokens in the query string (the seed's form); the token header and Authorization: Bearer always work. Default true. */
  queryTokens?: boolean
  /** Username of the system user that ensureSystemUser() keeps at level hush. Default `system`. */
  adminUsername?: string
  /** The system user's password: set when it is created, and set again by ensureSystemUser() whenever the stored one differs (its sessions end). Default undefined: a random one at creation, returned once, then left alone. */
  adminPassword?: string
  /** argon2id parameters for new hashes. Default { memoryCost: 19456, timeCost: 2, parallelism: 1 }. */
  argon2?: Partial<Argon2Params>
  /** Most argon2 computations at once; the rest queue, leaving libuv threads for file saves. Default min(CPU count + 1, 3). */
  argon2Concurrency?: number
  /** Failed-login limits. Default { perUsername: 5, perAddress: 30, windowSeconds: 900 }. */
  loginLimits?: Partial<LoginLimits>
  /** The clock. Default `() => new Date()`; tests pass a fake one. */
  now?: () => Date
  /** Logger for unexpected errors and start-up notes. Default: none. Passwords, hashes and tokens are never logged. */
  logger?: Logger
  /** Called on every session and login event. Default: none. */
  onEvent?: (event: AuthEvent) => void
  /** Largest accepted request body in bytes (413 beyond it). Default 65536. */
  maxBodyBytes?: number
}

export interface ResolvedAuthOptions {
  store: Store
  basePath: string
  sessionTtlMs: number
  reauthMs: number
  queryTokens: boolean
  adminUsername: string
  adminPassword: string | undefined
  argon2: Argon2Params
  argon2Concurrency: number
  loginLimits: LoginLimits
  now: () => Date
  logger: Logger | undefined
  emit: (event: AuthEvent) => void
  maxBodyBytes: number
}

export const DEFAULT_ARGON2: Readonly<Argon2Params> = Object.freeze({ memoryCost: 19456, timeCost: 2, parallelism: 1 })
export const DEFAULT_LOGIN_LIMITS: Readonly<LoginLimits> = Object.freeze({ perUsername: 5, perAddress: 30, windowSeconds: 900 })

function positiveInteger (value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new TypeError(`createAuthService: ${name} must be a positive integer (got ${String(value)})`)
  return value
}

/** Applies defaults and rejects a bad configuration at start-up, with a message saying what to fix. */
export function resolveOptions (options: AuthServiceOptions): ResolvedAuthOptions {
  const { store } = options
  if (store == null || typeof store.users !== 'object' || typeof store.sessions !== 'object' || typeof store.attempts !== 'object') {
    throw new TypeError('createAuthService: options.store is required (createEmbeddedStore() or createMongoStore())')
  }
  const basePath = (options.basePath ?? '/v1/api').replace(/\/+$/, '')
  if (basePath !== '' && !basePath.startsWith('/')) throw new TypeError(`createAuthService: basePath must start with "/" (got ${JSON.stringify(options.basePath)})`)
  const adminUsername = options.adminUsername ?? 'system'
  if (!USERNAME_PATTERN.test(adminUsername)) throw new TypeError('createAuthService: adminUsername must be 3-32 letters, digits, "_", "." or "-"')
  const { adminPassword } = options
  if (adminPassword !== undefined && (adminPassword.length < PASSWORD_MIN || adminPassword.length > PASSWORD_MAX)) {
    throw new TypeError(`createAuthService: adminPassword must be ${PASSWORD_MIN}-${PASSWORD_MAX} characters`)
  }
  const argon2 = { ...DEFAULT_ARGON2, ...options.argon2 }
  positiveInteger(argon2.memoryCost, 'argon2.memoryCost')
  positiveInteger(argon2.timeCost, 'argon2.timeCost')
  positiveInteger(argon2.parallelism, 'argon2.parallelism')
  if (argon2.memoryCost < 8 * argon2.parallelism) throw new TypeError('createAuthService: argon2.memoryCost must be at least 8 KiB per lane')
  const loginLimits = { ...DEFAULT_LOGIN_LIMITS, ...options.loginLimits }
  positiveInteger(loginLimits.perUsername, 'loginLimits.perUsername')
  positiveInteger(loginLimits.perAddress, 'loginLimits.perAddress')
  positiveInteger(loginLimits.windowSeconds, 'loginLimits.windowSeconds')
  const { onEvent, logger } = options
  const reauthSeconds = options.reauthSeconds ?? 600
  if (!Number.isSafeInteger(reauthSeconds) || reauthSeconds < 0) throw new TypeError(`createAuthService: reauthSeconds must be a whole number of seconds, 0 or more (got ${String(options.reauthSeconds)})`)
  const queryTokens = options.queryTokens ?? true
  if (typeof queryTokens !== 'boolean') throw new TypeError(`createAuthService: queryTokens must be true or false (got ${String(options.queryTokens)})`)
  return {
    store,
    basePath,
    sessionTtlMs: positiveInteger(options.sessionTtlSeconds ?? 3600, 'sessionTtlSeconds') * 1000,
    reauthMs: reauthSeconds * 1000,
    queryTokens,
    adminUsername,
    adminPassword,
    argon2,
    argon2Concurrency: positiveInteger(options.argon2Concurrency ?? defaultHashConcurrency(), 'argon2Concurrency'),
    loginLimits,
    now: options.now ?? (() => new Date()),
    logger,
    // A failing metrics hook must never fail a login.
    emit: onEvent === undefined
      ? () => {}
      : (event) => {
          try { onEvent(event) } catch (err) { logger?.warn({ err, event }, 'auth onEvent hook threw') }
        },
    maxBodyBytes: positiveInteger(options.maxBodyBytes ?? 65536, 'maxBodyBytes'),
  }
}
