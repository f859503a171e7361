// The MongoDB store's owners of upstream resources: collection `resource_owners`, by resource name, dropped by TTL
// once expired (lazily, so every read checks expiry).
import type { Db } from 'mongodb'
import { checkedDate, checkedOwner, text } from '../record-checks.ts'
import type { OwnerRecord, OwnerStore } from '../types.ts'
import { escapeRegex, retryDuplicateUpsert } from './driver.ts'
import type { CollectionIndexes } from './driver.ts'

/** A resource's owner, by the resource name. */
type OwnerDoc = Omit<OwnerRecord, 'resource'> & { _id: string }

export const OWNER_INDEXES: CollectionIndexes = {
  resource_owners: [
    { key: { expiresAt: 1 }, expireAfterSeconds: 0 },
    { key: { userId: 1, expiresAt: 1 } },
  ],
}

function fromOwnerDoc (d: OwnerDoc): OwnerRecord {
  return { resource: d._id, userId: d.userId, keyId: d.keyId, createdAt: d.createdAt, expiresAt: d.expiresAt, ...(d.inputTokens === undefined ? {} : { inputTokens: d.inputTokens }) }
}

export function createOwnerStore (db: Db): OwnerStore {
  const owners = db.collection<OwnerDoc>('resource_owners')
  return {
    async put (record) {
      const { resource, ...rest } = checkedOwner(record)
      await retryDuplicateUpsert(() => owners.replaceOne({ _id: resource }, rest, { upsert: true }))
    },

    async get (resource, now) {
      // The TTL index drops expired records lazily, so expiry is checked on every read.
      const doc = await owners.findOne({ _id: text(resource, 'resource'), expiresAt: { $gt: checkedDate(now, 'now') } })
      return doc === null ? null : fromOwnerDoc(doc)
    },

    async getMany (resources, now) {
      if (!Array.isArray(resources)) throw new TypeError('resources must be an array')
      const names = [...new Set(resources.map(r => text(r, 'resource')))]
      if (names.length === 0) return []
      const docs = await owners.find({ _id: { $in: names }, expiresAt: { $gt: checkedDate(now, 'now') } }).toArray()
      return docs.map(fromOwnerDoc)
    },

    async delete (resource) {
      const result = await owners.deleteOne({ _id: text(resource, 'resource') })
      return result.deletedCount > 0
    },

    async countByUser (userId, now, exceptPrefix) {
      const filter: Record<string, unknown> = { userId: text(userId, 'userId'), expiresAt: { $gt: checkedDate(now, 'now') } }
      if (exceptPrefix !== undefined) filter._id = { $not: new RegExp('^' + escapeRegex(text(exceptPrefix, 'exceptPrefix'))) }
      return await owners.countDocuments(filter)
    },
  }
}
