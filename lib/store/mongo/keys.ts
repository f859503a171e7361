// The MongoDB store's user keys: collection `api_keys` (by _id, by digest, by owner), and `retired_keys`, the names
// of deleted ones (KeyStore.names), dropped by TTL RETIRED_KEY_RETENTION_SECONDS after deletion.
import type { Db } from 'mongodb'
import { checkedDate, checkedKey, text } from '../record-checks.ts'
import { RETIRED_KEY_RETENTION_SECONDS } from '../retention.ts'
import type { KeyRecord, KeyStore } from '../types.ts'
import type { CollectionIndexes } from './driver.ts'

type KeyDoc = Omit<KeyRecord, 'keyId'> & { _id: string }
/** A deleted key's name (KeyStore.names), dropped RETIRED_KEY_RETENTION_SECONDS after deletedAt. */
interface RetiredKeyDoc { _id: string, name: string, deletedAt: Date }

export const KEY_INDEXES: CollectionIndexes = {
  // Keys are found by _id (keyId), by digest (the proxy's hot path) and by owner.
  api_keys: [
    { key: { digest: 1 }, unique: true },
    { key: { userId: 1, createdAt: 1 } },
  ],
  retired_keys: [
    { key: { deletedAt: 1 }, expireAfterSeconds: RETIRED_KEY_RETENTION_SECONDS },
  ],
}

function fromKeyDoc (d: KeyDoc): KeyRecord {
  return {
    keyId: d._id,
    userId: d.userId,
    name: d.name,
    digest: d.digest,
    prefix: d.prefix,
    createdAt: d.createdAt,
    expiresAt: d.expiresAt ?? null,
    lastUsedAt: d.lastUsedAt ?? null,
    models: d.models ?? null,
    ...(typeof d.usdPerMonthMicros === 'number' ? { usdPerMonthMicros: d.usdPerMonthMicros } : {}),
  }
}

export function createKeyStore (db: Db): KeyStore {
  const keys = db.collection<KeyDoc>('api_keys')
  const retiredKeys = db.collection<RetiredKeyDoc>('retired_keys')

  /** Keeps the names of the keys `filter` finds before they are deleted: usage still names them (KeyStore.names). */
  async function retire (filter: { _id?: string, userId: string } | { _id: string }): Promise<void> {
    const doomed = await keys.find(filter, { projection: { _id: 1, name: 1 } }).toArray()
    if (doomed.length === 0) return
    const deletedAt = new Date()
    await Promise.all(doomed.map(d => retiredKeys.updateOne({ _id: d._id }, { $set: { name: d.name, deletedAt } }, { upsert: true })))
  }

  return {
    async create (key) {
      const { keyId, ...rest } = checkedKey(key)
      await keys.insertOne({ _id: keyId, ...rest, lastUsedAt: null })
    },

    async findByDigest (digest) {
      const doc = await keys.findOne({ digest: text(digest, 'digest') })
      return doc === null ? null : fromKeyDoc(doc)
    },

    async get (keyId) {
      const doc = await keys.findOne({ _id: text(keyId, 'keyId') })
      return doc === null ? null : fromKeyDoc(doc)
    },

    async listByUser (userId) {
      const docs = await keys.find({ userId: text(userId, 'userId') }, { sort: { createdAt: 1, _id: 1 } }).toArray()
      return docs.map(fromKeyDoc)
    },

    async delete (keyId) {
      const filter = { _id: text(keyId, 'keyId') }
      await retire(filter)
      const result = await keys.deleteOne(filter)
      return result.deletedCount > 0
    },

    async deleteForUser (userId, keyId) {
      const filter = { _id: text(keyId, 'keyId'), userId: text(userId, 'userId') }
      await retire(filter)
      const result = await keys.deleteOne(filter)
      return result.deletedCount > 0
    },

    async deleteAllForUser (userId) {
      const filter = { userId: text(userId, 'userId') }
      await retire(filter)
      const result = await keys.deleteMany(filter)
      return result.deletedCount
    },

    async names (keyIds) {
      const ids = keyIds.map(id => text(id, 'keyId'))
      const out = new Map<string, string>()
      if (ids.length === 0) return out
      const [live, retired] = await Promise.all([
        keys.find({ _id: { $in: ids } }, { projection: { _id: 1, name: 1 } }).toArray(),
        retiredKeys.find({ _id: { $in: ids } }).toArray(),
      ])
      for (const d of retired) out.set(d._id, d.name)
      for (const d of live) out.set(d._id, d.name)
      return out
    },

    async touch (keyId, lastUsedAt) {
      const at = checkedDate(lastUsedAt, 'lastUsedAt')
      // $max keeps the latest use whatever order concurrent touches land in (null sorts below any date).
      await keys.updateOne({ _id: text(keyId, 'keyId') }, { $max: { lastUsedAt: at } })
    },
  }
}
