// Sign-ups per client address (addressBucket(): an IPv6 client per /64), counted in the store so the limit
// holds across replicas. Each sign-up costs an argon2 hash and a stored account: one address may not make
// either cheap to abuse.
import type { AttemptStore } from '../store/types.ts'
import type { SignupLimits } from './options.ts'
import { fail } from '../errors.ts'
import { addressBucket } from '../http/client-address.ts'

export interface SignupLimiter {
  /** Counts a sign-up from `address`; throws TOO_MANY_SIGNUPS (429 with retryAfter) past the limit. */
  admit (address: string | undefined): Promise<void>
}

export function createSignupLimiter (attempts: AttemptStore, limits: SignupLimits, now: () => Date): SignupLimiter {
  const windowMs = limits.windowSeconds * 1000
  return {
    async admit (address) {
      const at = now()
      // Without an address (a host that passes none) every client shares one bucket.
      const count = await attempts.hit(`signup:addr:${address === undefined ? 'unknown' : addressBucket(address)}`, windowMs, at)
      if (count.count > limits.perAddress) {
        throw fail('TOO_MANY_SIGNUPS', undefined, { retryAfter: Math.max(1, Math.ceil((count.resetAt.getTime() - at.getTime()) / 1000)) })
      }
    },
  }
}
