// Wrong proxy passwords and keys counted per client address (IPv6 per /64, see lib/http/client-address.ts): past
// the limit the guessing address's wrong attempts are a 429 with Retry-After instead of a 401. Only wrong attempts
// are ever refused: a valid key or the right password passes from any address, so one client's stale key never
// locks out the others behind its NAT; guessing is no threat to 256-bit keys or a 16-character password
// (docs/model-proxy.md, "Password attempts"). The counters live in this process's memory, not in the store: a
// right credential never consults them, and a wrong one costs no store round-trip.
import { fail } from '../../errors.ts'
import type { Logger } from '../../logger.ts'

export interface PasswordAttemptLimits {
  /** Wrong passwords or keys answered 401 per client address within the window; past them its wrong ones are a 429. Default 10. */
  attempts: number
  /** Window length in seconds, from the address's first wrong attempt; the 429s last until it ends. Default 300. */
  windowSeconds: number
}

export const DEFAULT_PASSWORD_ATTEMPT_LIMITS: Readonly<PasswordAttemptLimits> = Object.freeze({ attempts: 10, windowSeconds: 300 })

/** Addresses tracked at once; past this the expired ones go, then the oldest (bounded memory under a spray of addresses). */
const MAX_TRACKED = 10_000

interface Window { count: number, resetAt: number, logged?: boolean }

export interface PasswordAttempts {
  /**
   * Counts one wrong password or key from `bucket`, and throws PROXY_TOO_MANY_ATTEMPTS (429, Retry-After to the
   * window's end) when it is past the limit. Never called for a right one.
   */
  failed (bucket: string): void
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
    failed (bucket) {
      const at = now().getTime()
      let window = live(bucket, at)
      if (window === undefined) {
        if (windows.size >= MAX_TRACKED) makeRoom(at)
        window = { count: 0, resetAt: at + windowMs }
        windows.set(bucket, window)
      }
      // Counted up to one past the limit: the count only says whether the limit was passed.
      if (window.count <= limits.attempts) window.count++
      if (window.count <= limits.attempts) return
      if (window.logged !== true) {
        window.logged = true
        logger?.warn({ address: bucket, attempts: limits.attempts, until: new Date(window.resetAt).toISOString() }, 'Too many wrong proxy passwords or keys: the address\'s wrong ones are refused')
      }
      throw fail('PROXY_TOO_MANY_ATTEMPTS', undefined, { retryAfter: Math.max(1, Math.ceil((window.resetAt - at) / 1000)) })
    },
  }
}
