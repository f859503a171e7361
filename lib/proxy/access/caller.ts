// Who a proxy request runs as: the operator password or a user's API key (docs/model-proxy.md, "Password").
import type { AccessLevel } from '../../store/types.ts'

/** The default lowest access level that may create keys and call the proxy with them (createAuthService's
 * proxyMinAccessLevel, createProxy's minAccessLevel; PROXY_MIN_ACCESS_LEVEL). */
export const DEFAULT_PROXY_MIN_ACCESS_LEVEL: AccessLevel = 'member'

/** A request let in with a user's API key. */
export interface KeyCaller {
  kind: 'key'
  userId: string
  keyId: string
  accessLevel: AccessLevel
  models: readonly string[] | null
  /** The key's own monthly cap in micro-dollars (its usd_per_month); absent or null: none. */
  usdPerMonthMicros?: number | null
}

/** Who a proxy request runs as: the operator password (no limits, every model) or a user's key. */
export type ProxyCaller = { kind: 'operator' } | KeyCaller

/** What the proxy asks the accounts service. createAuthService's result implements it. */
export interface KeyResolver {
  /** The caller this secret is a live key of; undefined when it is no key, or revoked, expired, its owner disabled or
   *  below the minimum access level. An answer may be up to KEY_CACHE_MS (4000) stale, so a revocation holds on every
   *  replica within 5 s. */
  resolveKey (secret: string): Promise<KeyCaller | undefined>
}

/** Every user API key starts with this; other presented values are only compared with the operator password. */
export const KEY_PREFIX = 'ghk_'
