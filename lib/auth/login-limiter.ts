// The failed-login limiter. Counters live in the store (AttemptStore), so they hold across replicas.
//
// Refusals are scoped so that nobody can lock an account's owner out from elsewhere (ASVS 6.3.1, OWASP's
// authentication cheat sheet on lockout as a denial of service):
// - per account and client address: after `perUsername` failures that address may not try that account (429);
// - per client address across accounts: after `perAddress` failures that address may not log in at all (429),
//   which stops credential stuffing from one address;
// - per account across addresses: never a refusal, only a delay before the password check, 0.5 s after
//   `delayAfter` failures and doubling per further failure up to `maxDelaySeconds`, so guessing one account from
//   many addresses is slowed while its owner, from their own address, still logs in within that bound.
// Addresses are counted by addressBucket() (an IPv6 client per /64). The delay is waited out before the argon2
// queue is joined, so a delayed request holds no hashing slot.
import type { AttemptCount, AttemptStore } from '../store/types.ts'
import type { AuthEvent, LoginLimits } from './options.ts'
import { fail } from '../errors.ts'
import { addressBucket } from '../http/client-address.ts'

export interface LoginLimiter {
  /** Before a password check (login, or a self-update's current_password). Throws TOO_MANY_ATTEMPTS
   *  (429 with retryAfter) when this account+address may not try now; may also delay progressively. */
  admit (usernameKey: string, address: string | undefined): Promise<void>
  /** After a wrong password for this account from this address. */
  failed (usernameKey: string, address: string | undefined): Promise<void>
  /** After a correct password: clears this account+address's failures. */
  succeeded (usernameKey: string, address: string | undefined): Promise<void>
  /** Admin action: clears every lockout and delay of this account (all addresses). */
  clearUser (usernameKey: string): Promise<void>
}

export interface LoginLimiterOptions {
  attempts: AttemptStore
  limits: LoginLimits
  now: () => Date
  /** Waits out a delay; tests pass one that moves their fake clock instead. */
  sleep: (ms: number) => Promise<void>
  emit: (event: AuthEvent) => void
}

/** The first delay, doubled per failure past `delayAfter`. */
const FIRST_DELAY_MS = 500

// A host that passes no client address puts every client in this one bucket.
const NO_ADDRESS = 'unknown'
// Usernames at login are free text: escaped, a ':' in one cannot reach into another account's keys.
const account = (usernameKey: string): string => usernameKey.replace(/[%:]/g, c => c === '%' ? '%25' : '%3A')
const bucket = (address: string | undefined): string => address === undefined ? NO_ADDRESS : addressBucket(address)
const accountKey = (usernameKey: string): string => `login:user:${account(usernameKey)}`
const accountAddressPrefix = (usernameKey: string): string => `login:acct:${account(usernameKey)}:`
const accountAddressKey = (usernameKey: string, address: string | undefined): string => accountAddressPrefix(usernameKey) + bucket(address)
const addressKey = (address: string | undefined): string => `login:addr:${bucket(address)}`

/** The delay before a password check when the account has `failures` failures from all addresses. */
export function loginDelayMs (failures: number, limits: LoginLimits): number {
  if (failures < limits.delayAfter) return 0
  return Math.min(limits.maxDelaySeconds * 1000, FIRST_DELAY_MS * 2 ** Math.min(failures - limits.delayAfter, 30))
}

export function createLoginLimiter ({ attempts, limits, now, sleep, emit }: LoginLimiterOptions): LoginLimiter {
  const windowMs = limits.windowSeconds * 1000

  function lockedOut (count: AttemptCount, at: Date): Error {
    emit('login_lockout')
    const retryAfter = Math.max(1, Math.ceil((count.resetAt.getTime() - at.getTime()) / 1000))
    return fail('TOO_MANY_ATTEMPTS', undefined, { retryAfter })
  }

  return {
    async admit (usernameKey, address) {
      const at = now()
      const byAddress = await attempts.get(addressKey(address), at)
      if (byAddress.count >= limits.perAddress) throw lockedOut(byAddress, at)
      // Counted before the check, so parallel guesses cannot all slip past the limit before the first
      // failure is recorded; a success clears it again.
      const here = await attempts.hit(accountAddressKey(usernameKey, address), windowMs, at)
      if (here.count > limits.perUsername) throw lockedOut(here, at)
      const delay = loginDelayMs((await attempts.get(accountKey(usernameKey), at)).count, limits)
      if (delay > 0) await sleep(delay)
    },
    async failed (usernameKey, address) {
      const at = now()
      await Promise.all([
        attempts.hit(accountKey(usernameKey), windowMs, at),
        attempts.hit(addressKey(address), windowMs, at),
      ])
    },
    async succeeded (usernameKey, address) {
      await attempts.clear(accountAddressKey(usernameKey, address))
    },
    async clearUser (usernameKey) {
      await Promise.all([
        attempts.clear(accountKey(usernameKey)),
        attempts.clearPrefix(accountAddressPrefix(usernameKey)),
      ])
    },
  }
}
