// The embedded store's per-user limit overrides, by user id.
import { checkedLimits, text } from '../record-checks.ts'
import type { Tables, Writes } from './state.ts'
import type { LimitStore } from '../types.ts'

export function createLimitStore (limits: Tables['limits'], w: Writes): LimitStore {
  return {
    async get (userId) {
      const l = limits.get(text(userId, 'userId'))
      return l === undefined ? null : { ...l }
    },

    async set (userId, override) {
      text(userId, 'userId')
      const record = checkedLimits(override)
      w.beginChange()
      limits.set(userId, record)
      await w.commit()
    },

    async clear (userId) {
      text(userId, 'userId')
      w.beginChange()
      if (!limits.delete(userId)) return false
      await w.commit()
      return true
    },
  }
}
