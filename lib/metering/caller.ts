// The proxy's caller types, copied from the shared design of issue 13 until lib/proxy/access/caller.ts (its owner)
// is merged; then this file re-exports from there.
import type { AccessLevel } from '../store/types.ts'

/** A request let in with a user's API key. */
export interface KeyCaller { kind: 'key', userId: string, keyId: string, accessLevel: AccessLevel, models: readonly string[] | null }
