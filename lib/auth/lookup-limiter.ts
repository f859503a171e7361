// User lookups (search-users, get-user-id) per client address (addressBucket(): an IPv6 client per /64), counted
// in the store so the limit holds across replicas: the seed leaves both open, so one address may not walk every name.
import type { AttemptStore } from '../store/types.ts'
import { fail } from '../errors.ts'
import { addressBucket } from '../http/client-address.ts'

/** Lookups one address may make per window: ample for a person or a client, a bound on enumeration. */
export const LOOKUP_LIMITS = Object.freeze({ perAddress: 120, windowSeconds: 60 })

export interface LookupLimiter {
  /** Counts a lookup from `address`; throws TOO_MANY_LOOKUPS (429 with retryAfter) past LOOKUP_LIMITS. */
  admit (address: string | undefined): Promise<void>
}

export function createLookupLimiter (attempts: AttemptStore, now: () => Date): LookupLimiter {
  const windowMs = LOOKUP_LIMITS.windowSeconds * 1000
  return {
    async admit (address) {
      const at = now()
      // Without an address (a host that passes none) every client shares one bucket.
      const count = await attempts.hit(`lookup:addr:${address === undefined ? 'unknown' : addressBucket(address)}`, windowMs, at)
      if (count.count > LOOKUP_LIMITS.perAddress) {
        throw fail('TOO_MANY_LOOKUPS', undefined, { retryAfter: Math.max(1, Math.ceil((count.resetAt.getTime() - at.getTime()) / 1000)) })
      }
    },
  }
}
