// The MongoDB store's counter windows: collection `rate_counters`, each window one document changed only by an
// atomic $inc upsert (never read-modify-write, so replicas share them), dropped by TTL once expired.
import type { Db } from 'mongodb'
import { checkedAmount, checkedCounterOps, checkedDate, text } from '../record-checks.ts'
import type { CounterStore } from '../types.ts'
import { retryDuplicateUpsert } from './driver.ts'
import type { CollectionIndexes } from './driver.ts'

interface CounterDoc {
  /** The key and the window start, as `${key}@${windowStart ms}`: the last "@" splits them. */
  _id: string
  total: number
  expiresAt: Date
}

export const COUNTER_INDEXES: CollectionIndexes = {
  rate_counters: [
    { key: { expiresAt: 1 }, expireAfterSeconds: 0 },
  ],
}

function counterId (key: string, windowStart: Date): string {
  return `${text(key, 'key')}@${checkedDate(windowStart, 'windowStart').getTime()}`
}

export function createCounterStore (db: Db): CounterStore {
  const counters = db.collection<CounterDoc>('rate_counters')

  /** One counter window's add: a single atomic upsert that returns the new total (no read-modify-write). */
  async function addCounter (_id: string, inc: number, end: Date): Promise<number> {
    const doc = await retryDuplicateUpsert(() => counters.findOneAndUpdate(
      { _id },
      { $inc: { total: inc }, $max: { expiresAt: end } },
      { upsert: true, returnDocument: 'after' },
    ))
    if (doc === null) throw new Error('rate_counters upsert returned no document')
    return doc.total
  }

  return {
    async add (key, windowStart, amount, expiresAt) {
      return await addCounter(counterId(key, windowStart), checkedAmount(amount), checkedDate(expiresAt, 'expiresAt'))
    },

    async get (key, windowStart) {
      const doc = await counters.findOne({ _id: counterId(key, windowStart) })
      return doc?.total ?? 0
    },

    async batch (ops) {
      // Checked before any is sent; then each window is its own atomic operation, all sent at once.
      return await Promise.all(checkedCounterOps(ops).map(async ({ key, start, add }) => {
        const _id = counterId(key, start)
        return add !== undefined ? await addCounter(_id, add.amount, add.expiresAt) : (await counters.findOne({ _id }))?.total ?? 0
      }))
    },
  }
}
