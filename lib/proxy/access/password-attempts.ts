// Wrong proxy passwords counted per client address (IPv6 per /64, see lib/http/client-address.ts), so
// nobody can try passwords at the proxy's request rate. The counters live in this process's memory, not in
// the store: the check runs on every proxied request, and a correct password must cost no store round-trip
// (the proxy's request rate is benchmarked). With n replicas an address gets at most n times the attempts,
// which changes nothing against a password of 16 characters or more (PROXY_PASSWORD_MIN_LENGTH).
import { fail } from '../../errors.ts'
import type { Logger } from '../../logger.ts'

export interface PasswordAttemptLimits {
  /** Wrong passwords allowed per client address within the window; past them every request from it is a 429. Default 10. */
  attempts: number
  /** Window length in seconds, from the address's first wrong password; the 429s last until it ends. Default 300. */
  windowSeconds: number
}

export const DEFAULT_PASSWORD_ATTEMPT_LIMITS: Readonly<PasswordAttemptLimits> = Object.freeze({ attempts: 10, windowSeconds: 300 })

/** Addresses tracked at once; past this the expired ones go, then the oldest (bounded memory under a spray of addresses). */
const MAX_TRACKED = 10_000

interface Window { count: number, resetAt: number }

export interface PasswordAttempts {
  /** Throws PROXY_TOO_MANY_ATTEMPTS (429, Retry-After) while `bucket` is locked out, whatever the password. */
  admit (bucket: string): void
  /** Counts one wrong password from `bucket`. */
  failed (bucket: string): void
  /** Whether any address has a live count: while none has, admit need not be called at all. */
  readonly tracking: boolean
}

export function createPasswordAttempts (limits: PasswordAttemptLimits, now: () => Date, logger?: Logger): PasswordAttempts {
  const windowMs = limits.windowSeconds * 1000
  const windows = new Map<string, Window>()

  function live (bucket: string, at: number): Window | undefined {
    const window = windows.get(bucket)
    if (window === undefined || window.resetAt > at) return window
    windows.delete(bucket)
    return undefined
  }

  function makeRoom (at: number): void {
    for (const [bucket, window] of windows) if (window.resetAt <= at) windows.delete(bucket)
    // Still full: forget the oldest windows (Map order is insertion order).
    for (const bucket of windows.keys()) {
      if (windows.size < MAX_TRACKED) break
      windows.delete(bucket)
    }
  }

  return {
    get tracking () { return windows.size > 0 },
    admit (bucket) {
      const at = now().getTime()
      const window = live(bucket, at)
      if (window === undefined || window.count < limits.attempts) return
      throw fail('PROXY_TOO_MANY_ATTEMPTS', undefined, { retryAfter: Math.max(1, Math.ceil((window.resetAt - at) / 1000)) })
    },
    failed (bucket) {
      const at = now().getTime()
      let window = live(bucket, at)
      if (window === undefined) {
        if (windows.size >= MAX_TRACKED) makeRoom(at)
        window = { count: 0, resetAt: at + windowMs }
        windows.set(bucket, window)
      }
      window.count++
      if (window.count === limits.attempts) {
        logger?.warn({ address: bucket, attempts: window.count, until: new Date(window.resetAt).toISOString() }, 'Too many wrong proxy passwords: address locked out')
      }
    },
  }
}
