import { setTimeout as sleepFor } from 'node:timers/promises'
import type { AccessLevel, Store } from '../store/types.ts'
import { ACCESS_LEVELS } from '../store/types.ts'
import type { Logger } from '../logger.ts'
import { USERNAME_PATTERN, USERNAME_RULE, PASSWORD_MIN, PASSWORD_MAX, DEFAULT_ADMIN_USERNAME, DEFAULT_SESSION_TTL_SECONDS, DEFAULT_REAUTH_SECONDS, DEFAULT_QUERY_TOKENS, DEFAULT_PROXY_MIN_ACCESS_LEVEL, DEFAULT_KEY_DEFAULT_DAYS, KEY_EXPIRES_DAYS_MAX } from '../option-rules.ts'
import { ConfigurationError } from '../errors.ts'
import { defaultHashConcurrency } from './passwords.ts'
import type { Argon2Params } from './passwords.ts'
import { weakPasswordReason } from './password-policy.ts'
import { resolveLimitsOption } from '../metering/limits-rule.ts'
import type { LimitsByLevel } from '../metering/limits-rule.ts'
import { createModelPolicy } from '../proxy/access/model-policy.ts'
import type { ModelAccess, ModelPolicy } from '../proxy/access/model-policy.ts'

/** argon2id cost parameters, declared beside the hasher that takes them. */
export type { Argon2Params }

/** What the service reports as it runs; the gateway turns these into Prometheus counters. */
export type AuthEvent = 'session_created' | 'session_ended' | 'session_expired' | 'login_success' | 'login_failure' | 'login_lockout'

/**
 * Failed-login limits (lib/auth/login-limiter.ts); counters live in the store so they hold across replicas.
 * A client address is counted by addressBucket() (an IPv6 client per /64).
 */
export interface LoginLimits {
  /** Failed logins allowed for one username from one client address within the window; then that address gets 429 for it. Default 5. */
  perUsername: number
  /** Failed logins allowed from one client address, all usernames together, within the window; then it gets 429. Default 30. */
  perAddress: number
  /** Window length in seconds, from the first failure. Default 900 (15 minutes). */
  windowSeconds: number
  /** Failed logins for one username, from all addresses, before its logins are delayed (never refused). Default 5. */
  delayAfter: number
  /** Longest such delay in seconds (0.5 s at first, doubling per further failure), at most 10. Default 4. */
  maxDelaySeconds: number
}

/** Sign-up limits (lib/auth/signup-limiter.ts), per client address as addressBucket() counts it; counters live in the store. */
export interface SignupLimits {
  /** Sign-ups allowed from one client address within the window; then it gets 429. Default 10. */
  perAddress: number
  /** Window length in seconds, from the first sign-up. Default 3600 (1 hour). */
  windowSeconds: number
}

export interface AuthServiceOptions {
  /** Where users, sessions and login-attempt counters live. Required; the caller closes it. */
  store: Store
  /** Path prefix of every route. Default `/v1/api`. */
  basePath?: string
  /** Session lifetime in seconds, from login. Default 3600. */
  sessionTtlSeconds?: number
  /** A session younger than this (seconds) may change password, email or username, create an API key, or make an admin write or delete, without `current_password`; 0: never. Default 600. */
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
  /** Failed-login limits. Default { perUsername: 5, perAddress: 30, windowSeconds: 900, delayAfter: 5, maxDelaySeconds: 4 }. */
  loginLimits?: Partial<LoginLimits>
  /** Sign-up limits. Default { perAddress: 10, windowSeconds: 3600 }. */
  signupLimits?: Partial<SignupLimits>
  /** Anyone may sign up (`POST /auth/signup`); false: 403 SIGNUP_CLOSED, and admins add users in the console. Default true. */
  publicSignup?: boolean
  /** Anyone may look users up (search-users, get-user-id), as the seed has it; false: only a signed-in caller. Default true. */
  publicLookup?: boolean
  /** The clock. Default `() => new Date()`; tests pass a fake one. */
  now?: () => Date
  /** Waits out a login delay. Default a timer; tests pass one that moves their fake clock. */
  sleep?: (ms: number) => Promise<void>
  /** Logger for unexpected errors and start-up notes. Default: none. Passwords, hashes and tokens are never logged. */
  logger?: Logger
  /** Called on every session and login event. Default: none. */
  onEvent?: (event: AuthEvent) => void
  /** Largest accepted request body in bytes (413 beyond it). Default 65536. */
  maxBodyBytes?: number
  /** Lowest access level whose users may create API keys and whose keys resolveKey accepts. Default `member`. */
  proxyMinAccessLevel?: AccessLevel
  /** Days an API key lives when its creator gives no `expires_in_days`, 0 to 3650; 0: keys without one never expire. Default 90. */
  keyDefaultDays?: number
  /** Proxy rate limits by access level (lib/metering/limits-rule.ts), shown as `effective` by GET /admin/user/{user_id}/limits. Default {}: unlimited. */
  limits?: LimitsByLevel
  /** The model policy's patterns by access level (createProxy's modelAccess): a new key's `models` must fit its owner's. Default: every model. */
  modelAccess?: ModelAccess
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
  signupLimits: SignupLimits
  publicSignup: boolean
  publicLookup: boolean
  now: () => Date
  sleep: (ms: number) => Promise<void>
  logger: Logger | undefined
  emit: (event: AuthEvent) => void
  maxBodyBytes: number
  proxyMinAccessLevel: AccessLevel
  keyDefaultDays: number
  limits: LimitsByLevel
  modelPolicy: ModelPolicy
}

export const DEFAULT_ARGON2: Readonly<Argon2Params> = Object.freeze({ memoryCost: 19456, timeCost: 2, parallelism: 1 })
export const DEFAULT_LOGIN_LIMITS: Readonly<LoginLimits> = Object.freeze({ perUsername: 5, perAddress: 30, windowSeconds: 900, delayAfter: 5, maxDelaySeconds: 4 })
export const DEFAULT_SIGNUP_LIMITS: Readonly<SignupLimits> = Object.freeze({ perAddress: 10, windowSeconds: 3600 })
/** Login delays stay short: a delay is what the owner of an attacked account waits too. */
const MAX_LOGIN_DELAY_SECONDS = 10

/** `partial` without its undefined entries, so they leave the defaults in place (the gateway passes unset settings so). */
function given<T extends object> (partial: Partial<T> | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(partial ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>
}

function positiveInteger (value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new ConfigurationError(name, `createAuthService: ${name} must be a positive integer (got ${String(value)})`)
  return value
}

/** Applies defaults and rejects a bad configuration at start-up, with a message saying what to fix. */
export function resolveOptions (options: AuthServiceOptions): ResolvedAuthOptions {
  const { store } = options
  if (store == null || typeof store.users !== 'object' || typeof store.sessions !== 'object' || typeof store.attempts !== 'object' || typeof store.keys !== 'object') {
    throw new ConfigurationError('store', 'createAuthService: options.store is required (createEmbeddedStore() or createMongoStore())')
  }
  const basePath = (options.basePath ?? '/v1/api').replace(/\/+$/, '')
  if (basePath !== '' && !basePath.startsWith('/')) throw new ConfigurationError('basePath', `createAuthService: basePath must start with "/" (got ${JSON.stringify(options.basePath)})`)
  const adminUsername = options.adminUsername ?? DEFAULT_ADMIN_USERNAME
  if (!USERNAME_PATTERN.test(adminUsername)) throw new ConfigurationError('adminUsername', `createAuthService: adminUsername must be ${USERNAME_RULE}`)
  const { adminPassword } = options
  if (adminPassword !== undefined && (adminPassword.length < PASSWORD_MIN || adminPassword.length > PASSWORD_MAX)) {
    throw new ConfigurationError('adminPassword', `createAuthService: adminPassword must be ${PASSWORD_MIN}-${PASSWORD_MAX} characters`)
  }
  // The system user holds level hush: a guessable password there is worse than anywhere, so it stops start-up.
  const weak = adminPassword === undefined ? undefined : weakPasswordReason(adminPassword, adminUsername)
  if (weak !== undefined) throw new ConfigurationError('adminPassword', `createAuthService: adminPassword is refused (${weak}); leave it unset to have one generated`)
  const argon2 = { ...DEFAULT_ARGON2, ...options.argon2 }
  positiveInteger(argon2.memoryCost, 'argon2.memoryCost')
  positiveInteger(argon2.timeCost, 'argon2.timeCost')
  positiveInteger(argon2.parallelism, 'argon2.parallelism')
  if (argon2.memoryCost < 8 * argon2.parallelism) throw new ConfigurationError('argon2.memoryCost', 'createAuthService: argon2.memoryCost must be at least 8 KiB per lane')
  const loginLimits = { ...DEFAULT_LOGIN_LIMITS, ...given(options.loginLimits) }
  positiveInteger(loginLimits.perUsername, 'loginLimits.perUsername')
  positiveInteger(loginLimits.perAddress, 'loginLimits.perAddress')
  positiveInteger(loginLimits.windowSeconds, 'loginLimits.windowSeconds')
  positiveInteger(loginLimits.delayAfter, 'loginLimits.delayAfter')
  const delay = loginLimits.maxDelaySeconds
  if (typeof delay !== 'number' || !(delay >= 0 && delay <= MAX_LOGIN_DELAY_SECONDS)) {
    throw new ConfigurationError('loginLimits.maxDelaySeconds', `createAuthService: loginLimits.maxDelaySeconds must be a number from 0 to ${MAX_LOGIN_DELAY_SECONDS} (got ${String(delay)})`)
  }
  const signupLimits = { ...DEFAULT_SIGNUP_LIMITS, ...given(options.signupLimits) }
  positiveInteger(signupLimits.perAddress, 'signupLimits.perAddress')
  positiveInteger(signupLimits.windowSeconds, 'signupLimits.windowSeconds')
  const publicSignup = options.publicSignup ?? true
  if (typeof publicSignup !== 'boolean') throw new ConfigurationError('publicSignup', `createAuthService: publicSignup must be true or false (got ${String(options.publicSignup)})`)
  const publicLookup = options.publicLookup ?? true
  if (typeof publicLookup !== 'boolean') throw new ConfigurationError('publicLookup', `createAuthService: publicLookup must be true or false (got ${String(options.publicLookup)})`)
  const { onEvent, logger } = options
  const reauthSeconds = options.reauthSeconds ?? DEFAULT_REAUTH_SECONDS
  if (!Number.isSafeInteger(reauthSeconds) || reauthSeconds < 0) throw new ConfigurationError('reauthSeconds', `createAuthService: reauthSeconds must be a whole number of seconds, 0 or more (got ${String(options.reauthSeconds)})`)
  const queryTokens = options.queryTokens ?? DEFAULT_QUERY_TOKENS
  if (typeof queryTokens !== 'boolean') throw new ConfigurationError('queryTokens', `createAuthService: queryTokens must be true or false (got ${String(options.queryTokens)})`)
  const proxyMinAccessLevel = options.proxyMinAccessLevel ?? DEFAULT_PROXY_MIN_ACCESS_LEVEL
  if (!(ACCESS_LEVELS as readonly unknown[]).includes(proxyMinAccessLevel)) {
    throw new ConfigurationError('proxyMinAccessLevel', `createAuthService: proxyMinAccessLevel must be one of ${ACCESS_LEVELS.join(', ')} (got ${String(options.proxyMinAccessLevel)})`)
  }
  const keyDefaultDays = options.keyDefaultDays ?? DEFAULT_KEY_DEFAULT_DAYS
  if (!Number.isSafeInteger(keyDefaultDays) || keyDefaultDays < 0 || keyDefaultDays > KEY_EXPIRES_DAYS_MAX) {
    throw new ConfigurationError('keyDefaultDays', `createAuthService: keyDefaultDays must be a whole number of days from 0 (no expiry) to ${KEY_EXPIRES_DAYS_MAX} (got ${String(options.keyDefaultDays)})`)
  }
  return {
    store,
    basePath,
    sessionTtlMs: positiveInteger(options.sessionTtlSeconds ?? DEFAULT_SESSION_TTL_SECONDS, 'sessionTtlSeconds') * 1000,
    reauthMs: reauthSeconds * 1000,
    queryTokens,
    adminUsername,
    adminPassword,
    argon2,
    argon2Concurrency: positiveInteger(options.argon2Concurrency ?? defaultHashConcurrency(), 'argon2Concurrency'),
    loginLimits,
    signupLimits,
    publicSignup,
    publicLookup,
    now: options.now ?? (() => new Date()),
    sleep: options.sleep ?? (ms => sleepFor(ms)),
    logger,
    // A failing metrics hook must never fail a login.
    emit: onEvent === undefined
      ? () => {}
      : (event) => {
          try { onEvent(event) } catch (err) { logger?.warn({ err, event }, 'auth onEvent hook threw') }
        },
    maxBodyBytes: positiveInteger(options.maxBodyBytes ?? 65536, 'maxBodyBytes'),
    proxyMinAccessLevel,
    keyDefaultDays,
    limits: resolveLimitsOption(options.limits),
    modelPolicy: createModelPolicy(options.modelAccess, proxyMinAccessLevel, 'createAuthService'),
  }
}
