// The MongoDB store's failed-login windows: collection `login_attempts`, by key, kept a while past their end by TTL.
import type { Db } from 'mongodb'
import { text } from '../record-checks.ts'
import { ATTEMPT_RETENTION_SECONDS } from '../retention.ts'
import type { AttemptStore } from '../types.ts'
import { escapeRegex, retryDuplicateUpsert } from './driver.ts'
import type { CollectionIndexes } from './driver.ts'

interface AttemptDoc {
  _id: string
  count: number
  resetAt: Date
}

export const ATTEMPT_INDEXES: CollectionIndexes = {
  login_attempts: [
    { key: { resetAt: 1 }, expireAfterSeconds: ATTEMPT_RETENTION_SECONDS },
  ],
}

export function createAttemptStore (db: Db): AttemptStore {
  const attempts = db.collection<AttemptDoc>('login_attempts')
  return {
    async hit (key, windowMs, now) {
      // One atomic pipeline update: count up inside a live window, else start a new one at `now`.
      const live = { $gt: ['$resetAt', now] }
      const doc = await retryDuplicateUpsert(() => attempts.findOneAndUpdate(
        { _id: text(key, 'key') },
        [{
          $set: {
            count: { $cond: [live, { $add: ['$count', 1] }, 1] },
            resetAt: { $cond: [live, '$resetAt', new Date(now.getTime() + windowMs)] },
          },
        }],
        { upsert: true, returnDocument: 'after' },
      ))
      if (doc === null) throw new Error('login_attempts upsert returned no document')
      return { count: doc.count, resetAt: doc.resetAt }
    },

    async get (key, now) {
      const doc = await attempts.findOne({ _id: text(key, 'key') })
      return doc !== null && doc.resetAt > now ? { count: doc.count, resetAt: doc.resetAt } : { count: 0, resetAt: new Date(now) }
    },

    async clear (key) {
      await attempts.deleteOne({ _id: text(key, 'key') })
    },

    async clearPrefix (prefix) {
      // An anchored literal prefix: answered from the _id index.
      await attempts.deleteMany({ _id: { $regex: '^' + escapeRegex(text(prefix, 'prefix')) } })
    },
  }
}
