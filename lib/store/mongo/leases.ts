// The MongoDB store's concurrency leases: collection `leases`, one document per key holding its leases, changed
// only by one atomic pipeline update each; the TTL drops a document once all its leases have expired.
import type { Db } from 'mongodb'
import { checkedDate, checkedLeaseLimit, text } from '../record-checks.ts'
import type { LeaseStore } from '../types.ts'
import { retryDuplicateUpsert } from './driver.ts'
import type { CollectionIndexes } from './driver.ts'

interface LeaseDoc {
  _id: string
  leases: Array<{ id: string, exp: Date }>
  /** The latest expiry among the leases: the TTL drops the document once all have expired. */
  expiresAt: Date | null
}

export const LEASE_INDEXES: CollectionIndexes = {
  leases: [
    { key: { expiresAt: 1 }, expireAfterSeconds: 0 },
  ],
}

/** The leases of the document still live at `now`, other than `leaseId`: an aggregation expression. */
function otherLiveLeases (leaseId: string, now: Date): object {
  return {
    $filter: {
      input: { $ifNull: ['$leases', []] },
      // $literal: a lease id starting with "$" is a value, never a field path.
      cond: { $and: [{ $gt: ['$$this.exp', now] }, { $ne: ['$$this.id', { $literal: leaseId }] }] },
    },
  }
}

/**
 * The pipeline stage of acquire: drop expired leases (and this one's old entry), then add this lease only while
 * fewer than `max` others are live. ($ifNull: on a new document MongoDB's $max skips the missing field, but the
 * test stand-in does not.)
 */
function acquireStage (lease: string, max: number, at: Date, end: Date): object {
  return {
    $set: {
      leases: {
        $let: {
          vars: { live: otherLiveLeases(lease, at) },
          in: {
            $cond: [
              { $lt: [{ $size: '$$live' }, max] },
              { $concatArrays: ['$$live', [{ id: { $literal: lease }, exp: end }]] },
              '$$live',
            ],
          },
        },
      },
      expiresAt: { $max: [{ $ifNull: ['$expiresAt', end] }, end] },
    },
  }
}

export function createLeaseStore (db: Db): LeaseStore {
  const leases = db.collection<LeaseDoc>('leases')
  return {
    async acquire (key, leaseId, limit, now, expiresAt) {
      const id = text(key, 'key')
      const lease = text(leaseId, 'leaseId')
      const max = checkedLeaseLimit(limit)
      const at = checkedDate(now, 'now')
      const end = checkedDate(expiresAt, 'expiresAt')
      // One atomic pipeline update; whether the lease went in is read from the result.
      const doc = await retryDuplicateUpsert(() => leases.findOneAndUpdate(
        { _id: id },
        [acquireStage(lease, max, at, end)],
        { upsert: true, returnDocument: 'after' },
      ))
      if (doc === null) throw new Error('leases upsert returned no document')
      return doc.leases.some(l => l.id === lease && l.exp.getTime() === end.getTime())
    },

    async renew (key, leaseId, now, expiresAt) {
      const lease = text(leaseId, 'leaseId')
      const at = checkedDate(now, 'now')
      const end = checkedDate(expiresAt, 'expiresAt')
      const result = await leases.updateOne(
        { _id: text(key, 'key'), leases: { $elemMatch: { id: lease, exp: { $gt: at } } } },
        [{
          $set: {
            leases: {
              $map: {
                input: '$leases',
                in: { $cond: [{ $eq: ['$$this.id', { $literal: lease }] }, { id: '$$this.id', exp: end }, '$$this'] },
              },
            },
            expiresAt: { $max: [{ $ifNull: ['$expiresAt', end] }, end] },
          },
        }],
      )
      return result.matchedCount > 0
    },

    async release (key, leaseId) {
      const lease = text(leaseId, 'leaseId')
      await leases.updateOne({ _id: text(key, 'key') }, { $pull: { leases: { id: lease } } })
    },

    async count (key, now) {
      const at = checkedDate(now, 'now')
      const doc = await leases.findOne({ _id: text(key, 'key') })
      return doc?.leases.filter(l => l.exp > at).length ?? 0
    },
  }
}
