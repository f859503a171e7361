import type { AttemptCount, AttemptStore } from '../store/types.ts'
import type { AuthEvent, LoginLimits } from './options.ts'
import { fail } from '../errors.ts'

export interface LoginLimiter {
  /**
   * Called before the password is checked; throws 429 when the username or the address is locked out.
   * The attempt is counted against the username up front, so parallel guesses cannot all slip past
   * the limit before the first failure is recorded; a success clears it again.
   */
  admit (usernameKey: string, address: string | undefined): Promise<void>
  /** After a wrong password for this account from this address. */
  failed (usernameKey: string, address: string | undefined): Promise<void>
  /** After a correct password: clears this account's failures. */
  succeeded (usernameKey: string, address: string | undefined): Promise<void>
  /** Admin action: clears this account's lockout. */
  clearUser (usernameKey: string): Promise<void>
}

export interface LoginLimiterOptions {
  attempts: AttemptStore
  limits: LoginLimits
  now: () => Date
  emit: (event: AuthEvent) => void
}

const userKey = (usernameKey: string): string => `login:user:${usernameKey}`
const addressKey = (address: string): string => `login:addr:${address}`

export function createLoginLimiter ({ attempts, limits, now, emit }: LoginLimiterOptions): LoginLimiter {
  const windowMs = limits.windowSeconds * 1000

  function lockedOut (count: AttemptCount, at: Date): Error {
    emit('login_lockout')
    const retryAfter = Math.max(1, Math.ceil((count.resetAt.getTime() - at.getTime()) / 1000))
    return fail('TOO_MANY_ATTEMPTS', undefined, { retryAfter })
  }

  return {
    async admit (usernameKey, address) {
      const at = now()
      if (address !== undefined) {
        const byAddress = await attempts.get(addressKey(address), at)
        if (byAddress.count >= limits.perAddress) throw lockedOut(byAddress, at)
      }
      const byUser = await attempts.hit(userKey(usernameKey), windowMs, at)
      if (byUser.count > limits.perUsername) throw lockedOut(byUser, at)
    },
    async failed (_usernameKey, address) {
      if (address !== undefined) await attempts.hit(addressKey(address), windowMs, now())
    },
    async succeeded (usernameKey) {
      await attempts.clear(userKey(usernameKey))
    },
    async clearUser (usernameKey) {
      await attempts.clear(userKey(usernameKey))
    },
  }
}
