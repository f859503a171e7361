// The MongoDB store's sessions: collection `sessions`, one per (userId, device), kept a while past expiry by TTL.
import type { Db, ObjectId } from 'mongodb'
import { text } from '../record-checks.ts'
import { SESSION_RETENTION_SECONDS } from '../retention.ts'
import type { SessionRecord, SessionStore } from '../types.ts'
import { retryDuplicateUpsert } from './driver.ts'
import type { CollectionIndexes } from './driver.ts'

interface SessionDoc extends SessionRecord {
  _id?: ObjectId
}

export const SESSION_INDEXES: CollectionIndexes = {
  sessions: [
    { key: { tokenHash: 1 }, unique: true },
    // Unique, so put's upsert on (userId, device) can never leave two sessions for one device.
    { key: { userId: 1, device: 1 }, unique: true },
    { key: { expiresAt: 1 }, expireAfterSeconds: SESSION_RETENTION_SECONDS },
  ],
}

function fromSessionDoc (d: SessionDoc): SessionRecord {
  return { tokenHash: d.tokenHash, userId: d.userId, device: d.device, createdAt: d.createdAt, expiresAt: d.expiresAt }
}

export function createSessionStore (db: Db): SessionStore {
  const sessions = db.collection<SessionDoc>('sessions')
  return {
    async put (session) {
      const doc: SessionRecord = {
        tokenHash: text(session.tokenHash, 'tokenHash'),
        userId: text(session.userId, 'userId'),
        device: text(session.device, 'device'),
        createdAt: session.createdAt,
        expiresAt: session.expiresAt,
      }
      await retryDuplicateUpsert(() => sessions.replaceOne({ userId: doc.userId, device: doc.device }, doc, { upsert: true }))
    },

    async findByTokenHash (tokenHash) {
      const doc = await sessions.findOne({ tokenHash: text(tokenHash, 'tokenHash') })
      return doc === null ? null : fromSessionDoc(doc)
    },

    async delete (tokenHash) {
      const result = await sessions.deleteOne({ tokenHash: text(tokenHash, 'tokenHash') })
      return result.deletedCount > 0
    },

    async deleteByUser (userId, keepTokenHash) {
      const filter = keepTokenHash === undefined
        ? { userId: text(userId, 'userId') }
        : { userId: text(userId, 'userId'), tokenHash: { $ne: text(keepTokenHash, 'keepTokenHash') } }
      const result = await sessions.deleteMany(filter)
      return result.deletedCount
    },

    async listByUser (userId) {
      // Served by the { userId, device } index.
      const docs = await sessions.find({ userId: text(userId, 'userId') }).toArray()
      return docs.map(fromSessionDoc)
    },
  }
}
