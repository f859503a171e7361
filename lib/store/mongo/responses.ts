// The MongoDB store's stored Responses answers: collection `responses`, by _id (the response id) and owner,
// dropped by TTL once expired (docs/responses.md, "Stored responses"); past an owner's budget, its oldest go.
import type { Db } from 'mongodb'
import { checkedDate, checkedResponse, text } from '../record-checks.ts'
import type { ResponseStore } from '../types.ts'
import { DUPLICATE_KEY } from './driver.ts'
import type { CollectionIndexes } from './driver.ts'

interface ResponseDoc {
  _id: string
  ownerId: string
  data: string
  /** data's length, so an owner's total is summed from the index without reading the bodies. */
  chars: number
  createdAt: Date
  expiresAt: Date
}

export const RESPONSE_INDEXES: CollectionIndexes = {
  responses: [
    { key: { expiresAt: 1 }, expireAfterSeconds: 0 },
    { key: { ownerId: 1, createdAt: 1, chars: 1 } },
  ],
}

/** `maxCharsPerOwner`: the most characters one owner's records may total (RESPONSE_OWNER_MAX_CHARS by default). */
export function createResponseStore (db: Db, maxCharsPerOwner: number): ResponseStore {
  const responses = db.collection<ResponseDoc>('responses')

  /** Drops the owner's oldest records until its total is within the budget; the newest, just stored, goes last. */
  async function trim (ownerId: string): Promise<void> {
    const [total] = await responses.aggregate<{ chars: number }>([{ $match: { ownerId } }, { $group: { _id: null, chars: { $sum: '$chars' } } }]).toArray()
    let over = (total?.chars ?? 0) - maxCharsPerOwner
    if (over <= 0) return
    const drop: string[] = []
    for await (const doc of responses.find({ ownerId }, { projection: { _id: 1, chars: 1 }, sort: { createdAt: 1, _id: 1 } })) {
      if (over <= 0) break
      drop.push(doc._id)
      over -= doc.chars
    }
    await responses.deleteMany({ _id: { $in: drop }, ownerId })
  }

  return {
    async put (record) {
      const r = checkedResponse(record)
      const doc = { ownerId: r.ownerId, data: r.data, chars: r.data.length, createdAt: r.createdAt, expiresAt: r.expiresAt }
      // Replaces only the owner's own record; an id another owner holds fails the insert on the unique _id.
      try {
        await responses.replaceOne({ _id: r.id, ownerId: r.ownerId }, doc, { upsert: true })
      } catch (err) {
        if ((err as { code?: number }).code === DUPLICATE_KEY) throw new Error(`A response with id ${r.id} is held by another owner`, { cause: err })
        throw err
      }
      await trim(r.ownerId)
    },

    async get (id, ownerId, now) {
      const doc = await responses.findOne({ _id: text(id, 'id'), ownerId: text(ownerId, 'ownerId'), expiresAt: { $gt: checkedDate(now, 'now') } })
      return doc === null ? null : { id: doc._id, ownerId: doc.ownerId, data: doc.data, createdAt: doc.createdAt, expiresAt: doc.expiresAt }
    },

    async delete (id, ownerId) {
      const result = await responses.deleteOne({ _id: text(id, 'id'), ownerId: text(ownerId, 'ownerId') })
      return result.deletedCount === 1
    },
  }
}
