// The MongoDB store's stored Responses answers: collection `responses`, by _id (the response id) and owner,
// dropped by TTL once expired (docs/responses.md, "Stored responses").
import type { Db } from 'mongodb'
import { checkedDate, checkedResponse, text } from '../record-checks.ts'
import type { ResponseStore } from '../types.ts'
import { DUPLICATE_KEY } from './driver.ts'
import type { CollectionIndexes } from './driver.ts'

interface ResponseDoc {
  _id: string
  ownerId: string
  data: string
  createdAt: Date
  expiresAt: Date
}

export const RESPONSE_INDEXES: CollectionIndexes = {
  responses: [
    { key: { expiresAt: 1 }, expireAfterSeconds: 0 },
  ],
}

export function createResponseStore (db: Db): ResponseStore {
  const responses = db.collection<ResponseDoc>('responses')
  return {
    async put (record) {
      const r = checkedResponse(record)
      const doc = { ownerId: r.ownerId, data: r.data, createdAt: r.createdAt, expiresAt: r.expiresAt }
      // Replaces only the owner's own record; an id another owner holds fails the insert on the unique _id.
      try {
        await responses.replaceOne({ _id: r.id, ownerId: r.ownerId }, doc, { upsert: true })
      } catch (err) {
        if ((err as { code?: number }).code === DUPLICATE_KEY) throw new Error(`A response with id ${r.id} is held by another owner`, { cause: err })
        throw err
      }
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
