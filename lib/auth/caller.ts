// Who a proxy request runs as. The shared design of issue 13 puts these types in lib/proxy/access/caller.ts;
// until that file is merged they are declared here, identically, and this file then re-exports them from there.
import type { AccessLevel } from '../store/types.ts'

/** A request let in with a user's API key. */
export interface KeyCaller { kind: 'key', userId: string, keyId: string, accessLevel: AccessLevel, models: readonly string[] | null }

/** What the proxy asks the accounts service. createAuthService's result implements it. */
export interface KeyResolver {
  /** The caller this secret is a live key of; undefined when it is no key, or revoked, expired, its owner disabled or
   *  below the minimum access level. An answer may be up to KEY_CACHE_MS (4000) stale, so a revocation holds on every
   *  replica within 5 s. */
  resolveKey (secret: string): Promise<KeyCaller | undefined>
}
