// The embedded store's failed-login windows, by key.
import { ATTEMPT_RETENTION_SECONDS } from '../retention.ts'
import type { Tables, Writes } from './state.ts'
import type { AttemptCount, AttemptStore } from '../types.ts'

function copyAttempt (a: AttemptCount): AttemptCount {
  return { count: a.count, resetAt: new Date(a.resetAt) }
}

/** Drops windows ended more than ATTEMPT_RETENTION_SECONDS ago (../retention.ts). */
export function sweepAttempts (attempts: Tables['attempts'], now: number): void {
  for (const [key, a] of attempts) {
    if (a.resetAt.getTime() + ATTEMPT_RETENTION_SECONDS * 1000 <= now) attempts.delete(key)
  }
}

export function createAttemptStore (attempts: Tables['attempts'], w: Writes): AttemptStore {
  return {
    async hit (key, windowMs, now) {
      w.beginChange()
      const current = attempts.get(key)
      const next = current !== undefined && current.resetAt > now
        ? { count: current.count + 1, resetAt: current.resetAt }
        : { count: 1, resetAt: new Date(now.getTime() + windowMs) }
      attempts.set(key, next)
      await w.commit()
      return copyAttempt(next)
    },

    async get (key, now) {
      const current = attempts.get(key)
      return current !== undefined && current.resetAt > now ? copyAttempt(current) : { count: 0, resetAt: new Date(now) }
    },

    async clear (key) {
      w.beginChange()
      if (attempts.delete(key)) await w.commit()
    },

    async clearPrefix (prefix) {
      w.beginChange()
      let removed = false
      for (const key of attempts.keys()) if (key.startsWith(prefix) && attempts.delete(key)) removed = true
      if (removed) await w.commit()
    },
  }
}
