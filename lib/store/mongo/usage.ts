// The MongoDB store's usage rows: collection `usage`, one document per (day, userId, keyId, model, surface) (a unique
// index), counted up only by bulkWrites of $inc upserts, so replicas share them exactly.
import type { Db, ObjectId } from 'mongodb'
import { checkedUsage, checkedUsageQuery, compareUsage, USAGE_COUNTS } from '../record-checks.ts'
import type { UsageRecord, UsageStore } from '../types.ts'
import { driver, DUPLICATE_KEY, UPSERT_TRIES } from './driver.ts'
import type { CollectionIndexes } from './driver.ts'

type UsageDoc = UsageRecord & { _id?: ObjectId }

export const USAGE_INDEXES: CollectionIndexes = {
  usage: [
    // Unique, so concurrent first records of one row can never make two.
    { key: { day: 1, userId: 1, keyId: 1, model: 1, surface: 1 }, unique: true },
    { key: { userId: 1, day: 1 } },
  ],
}

function fromUsageDoc (d: UsageDoc): UsageRecord {
  const row: UsageRecord = { day: d.day, userId: d.userId, keyId: d.keyId ?? null, model: d.model, surface: d.surface, requests: 0, inputTokens: 0, outputTokens: 0, thinkingTokens: 0, cachedTokens: 0, errors4xx: 0, errors5xx: 0, costMicros: 0, unpricedRequests: 0, groundedRequests: 0, toolUseTokens: 0 }
  for (const field of USAGE_COUNTS) row[field] = d[field] ?? 0
  return row
}

function upsertOf (r: UsageRecord): { updateOne: { filter: object, update: object, upsert: true } } {
  return {
    updateOne: {
      filter: { day: r.day, userId: r.userId, keyId: r.keyId, model: r.model, surface: r.surface },
      update: { $inc: Object.fromEntries(USAGE_COUNTS.map(field => [field, r[field]])) },
      upsert: true,
    },
  }
}

export function createUsageStore (db: Db): UsageStore {
  const usage = db.collection<UsageDoc>('usage')
  return {
    async record (batch) {
      if (!Array.isArray(batch)) throw new TypeError('batch must be an array')
      let pending = batch.map(checkedUsage)
      for (let attempt = 1; pending.length > 0; attempt++) {
        try {
          await usage.bulkWrite(pending.map(upsertOf), { ordered: false })
          return
        } catch (err) {
          // Concurrent first records of one row race to insert; only the losers (E11000) are sent again,
          // so no record is counted twice.
          if (!(err instanceof driver().MongoBulkWriteError) || attempt >= UPSERT_TRIES) throw err
          const failed = err.writeErrors as Array<{ index: number, code: number }> | { index: number, code: number }
          const list = Array.isArray(failed) ? failed : [failed]
          if (list.some(e => e.code !== DUPLICATE_KEY)) throw err
          pending = list.map(e => pending[e.index])
        }
      }
    },

    async query (q) {
      const { from, to, userId, limit } = checkedUsageQuery(q)
      const filter = userId === undefined ? { day: { $gte: from, $lte: to } } : { userId, day: { $gte: from, $lte: to } }
      // Sorted by the database (null sorts before any string, as compareUsage puts a null keyId first), so a
      // limit keeps the first rows; the unique index holds this order.
      const docs = await usage.find(filter, { projection: { _id: 0 }, sort: { day: 1, userId: 1, keyId: 1, model: 1, surface: 1 }, ...(limit === undefined ? {} : { limit }) }).toArray()
      return docs.map(fromUsageDoc).sort(compareUsage)
    },
  }
}
