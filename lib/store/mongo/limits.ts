// The MongoDB store's per-user limit overrides: collection `user_limits`, read and written by _id (the user id)
// only, so it needs no index of its own.
import type { Db } from 'mongodb'
import { checkedLimits, text } from '../record-checks.ts'
import type { LimitStore, UserLimits } from '../types.ts'
import { retryDuplicateUpsert } from './driver.ts'

interface LimitsDoc extends UserLimits {
  _id: string
}

export function createLimitStore (db: Db): LimitStore {
  const limits = db.collection<LimitsDoc>('user_limits')
  return {
    async get (userId) {
      const doc = await limits.findOne({ _id: text(userId, 'userId') })
      if (doc === null) return null
      const { _id, ...override } = doc
      return checkedLimits(override)
    },

    async set (userId, override) {
      const id = text(userId, 'userId')
      await retryDuplicateUpsert(() => limits.replaceOne({ _id: id }, checkedLimits(override), { upsert: true }))
    },

    async clear (userId) {
      const result = await limits.deleteOne({ _id: text(userId, 'userId') })
      return result.deletedCount > 0
    },
  }
}
