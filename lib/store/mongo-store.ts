// The MongoDB store, on the official driver. Collections: users, sessions, login_attempts, api_keys,
// user_limits, rate_counters, leases, usage, resource_owners, responses. Every query has an index; usernames are unique on their
// lower-cased key; sessions, attempt windows, rate windows, lease sets, resource owners and stored responses carry TTL indexes (deletion
// is lazy, so callers still check expiry on every read). Counters, leases and usage change only by
// single atomic updates, never read-modify-write, so any number of replicas can share them.
// User-supplied values only ever reach a query as plain strings: each one is checked to be a
// string, and the search fragment is regex-escaped.
import type { Db, MongoClient, MongoServerError, ObjectId } from 'mongodb'
import { ConfigurationError, fail } from '../errors.ts'
import { ATTEMPT_RETENTION_SECONDS, RETIRED_KEY_RETENTION_SECONDS, SESSION_RETENTION_SECONDS } from './retention.ts'
import type { Logger } from '../logger.ts'
import { checkedAmount, checkedDate, checkedKey, checkedLeaseLimit, checkedLimits, checkedCounterOps, checkedOwner, checkedResponse, checkedUsage, checkedUsageQuery, compareUsage, text, USAGE_COUNTS } from './record-checks.ts'
import type { AccessLevel, KeyRecord, OwnerRecord, SessionRecord, Store, UsageRecord, UserLimits, UserPatch, UserRecord } from './types.ts'
import { optionalPackage } from '../load-package.ts'

export interface MongoStoreOptions {
  /** Connection string; used when `client` is not given. */
  url?: string
  /** An existing client to use instead of `url`; the store leaves it open on close. */
  client?: MongoClient
  /** Database name. */
  dbName: string
  /** pino-compatible logger. Default: none. */
  logger?: Logger
}

/** A user as stored: the record, with its id as the document's ObjectId. */
type UserDoc = Omit<UserRecord, 'id'> & { _id: ObjectId }

interface SessionDoc extends SessionRecord {
  _id?: ObjectId
}

interface AttemptDoc {
  _id: string
  count: number
  resetAt: Date
}

type KeyDoc = Omit<KeyRecord, 'keyId'> & { _id: string }
/** A deleted key's name (KeyStore.names), dropped RETIRED_KEY_RETENTION_SECONDS after deletedAt. */
interface RetiredKeyDoc { _id: string, name: string, deletedAt: Date }

interface ResponseDoc {
  _id: string
  ownerId: string
  data: string
  createdAt: Date
  expiresAt: Date
}

interface LimitsDoc extends UserLimits {
  _id: string
}

interface CounterDoc {
  /** The key and the window start, as `${key}@${windowStart ms}`: the last "@" splits them. */
  _id: string
  total: number
  expiresAt: Date
}

interface LeaseDoc {
  _id: string
  leases: Array<{ id: string, exp: Date }>
  /** The latest expiry among the leases: the TTL drops the document once all have expired. */
  expiresAt: Date | null
}

type UsageDoc = UsageRecord & { _id?: ObjectId }

/** A resource's owner, by the resource name. */
type OwnerDoc = Omit<OwnerRecord, 'resource'> & { _id: string }

// The driver (with bson) is loaded on first use: it costs about 28 MB of memory that users of the
// embedded store should not pay just because the library exports both adapters.
let driver: typeof import('mongodb')

const HEX_ID = /^[0-9a-f]{24}$/i
const DUPLICATE_KEY = 11000
const UPSERT_TRIES = 3

function escapeRegex (s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

function isDuplicateKey (err: unknown): err is MongoServerError {
  return err instanceof driver.MongoServerError && err.code === DUPLICATE_KEY
}

function isUsernameClash (err: unknown): boolean {
  return isDuplicateKey(err) && (err.keyPattern?.usernameKey !== undefined || err.message.includes('usernameKey'))
}

/** Concurrent upserts of one key can race to insert; the losers fail with E11000 and succeed on retry. */
async function retryDuplicateUpsert<T> (run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run()
    } catch (err) {
      if (!isDuplicateKey(err) || attempt >= UPSERT_TRIES) throw err
    }
  }
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

function fromUsageDoc (d: UsageDoc): UsageRecord {
  const row: UsageRecord = { day: d.day, userId: d.userId, keyId: d.keyId ?? null, model: d.model, surface: d.surface, requests: 0, inputTokens: 0, outputTokens: 0, thinkingTokens: 0, cachedTokens: 0, errors4xx: 0, errors5xx: 0, costMicros: 0, unpricedRequests: 0 }
  for (const field of USAGE_COUNTS) row[field] = d[field] ?? 0
  return row
}

function fromOwnerDoc (d: OwnerDoc): OwnerRecord {
  return { resource: d._id, userId: d.userId, keyId: d.keyId, createdAt: d.createdAt, expiresAt: d.expiresAt, ...(d.inputTokens === undefined ? {} : { inputTokens: d.inputTokens }) }
}

function counterId (key: string, windowStart: Date): string {
  return `${text(key, 'key')}@${checkedDate(windowStart, 'windowStart').getTime()}`
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

function toUserDoc (u: UserRecord): UserDoc {
  if (!HEX_ID.test(text(u.id, 'id'))) throw new TypeError('user id must be 24 hex digits')
  const doc: UserDoc = {
    _id: driver.ObjectId.createFromHexString(u.id),
    username: text(u.username, 'username'),
    usernameKey: text(u.usernameKey, 'usernameKey'),
    passwordHash: text(u.passwordHash, 'passwordHash'),
    email: u.email === null ? null : text(u.email, 'email'),
    accessLevel: text(u.accessLevel, 'accessLevel') as AccessLevel,
    dateJoined: u.dateJoined,
  }
  if (u.disabled === true) doc.disabled = true
  return doc
}

function fromUserDoc (d: UserDoc): UserRecord {
  const user: UserRecord = {
    id: d._id.toHexString(),
    username: d.username,
    usernameKey: d.usernameKey,
    passwordHash: d.passwordHash,
    email: d.email,
    accessLevel: d.accessLevel,
    dateJoined: d.dateJoined,
  }
  // Users stored before accounts could be disabled have no field: enabled.
  if (d.disabled === true) user.disabled = true
  return user
}

function fromSessionDoc (d: SessionDoc): SessionRecord {
  return { tokenHash: d.tokenHash, userId: d.userId, device: d.device, createdAt: d.createdAt, expiresAt: d.expiresAt }
}

function userIdFilter (id: string): { _id: ObjectId } | undefined {
  return HEX_ID.test(text(id, 'id')) ? { _id: driver.ObjectId.createFromHexString(id) } : undefined
}

function patchFields (patch: UserPatch): Partial<UserDoc> {
  const set: Partial<UserDoc> = {}
  if (patch.username !== undefined) set.username = text(patch.username, 'username')
  if (patch.usernameKey !== undefined) set.usernameKey = text(patch.usernameKey, 'usernameKey')
  if (patch.passwordHash !== undefined) set.passwordHash = text(patch.passwordHash, 'passwordHash')
  if (patch.email !== undefined) set.email = patch.email === null ? null : text(patch.email, 'email')
  if (patch.accessLevel !== undefined) set.accessLevel = text(patch.accessLevel, 'accessLevel') as AccessLevel
  if (patch.disabled !== undefined) set.disabled = patch.disabled === true
  return set
}

async function createIndexes (db: Db): Promise<void> {
  await Promise.all([
    db.collection('users').createIndexes([
      { key: { usernameKey: 1 }, unique: true },
      { key: { dateJoined: 1, _id: 1 } },
      { key: { accessLevel: 1 } },
    ]),
    db.collection('sessions').createIndexes([
      { key: { tokenHash: 1 }, unique: true },
      // Unique, so put's upsert on (userId, device) can never leave two sessions for one device.
      { key: { userId: 1, device: 1 }, unique: true },
      { key: { expiresAt: 1 }, expireAfterSeconds: SESSION_RETENTION_SECONDS },
    ]),
    db.collection('login_attempts').createIndexes([
      { key: { resetAt: 1 }, expireAfterSeconds: ATTEMPT_RETENTION_SECONDS },
    ]),
    // Keys are found by _id (keyId), by digest (the proxy's hot path) and by owner.
    db.collection('api_keys').createIndexes([
      { key: { digest: 1 }, unique: true },
      { key: { userId: 1, createdAt: 1 } },
    ]),
    // user_limits is read and written by _id (the user id) only.
    db.collection('rate_counters').createIndexes([
      { key: { expiresAt: 1 }, expireAfterSeconds: 0 },
    ]),
    db.collection('leases').createIndexes([
      { key: { expiresAt: 1 }, expireAfterSeconds: 0 },
    ]),
    db.collection('resource_owners').createIndexes([
      { key: { expiresAt: 1 }, expireAfterSeconds: 0 },
      { key: { userId: 1, expiresAt: 1 } },
    ]),
    db.collection('usage').createIndexes([
      // Unique, so concurrent first records of one row can never make two.
      { key: { day: 1, userId: 1, keyId: 1, model: 1, surface: 1 }, unique: true },
      { key: { userId: 1, day: 1 } },
    ]),
    // Stored responses are read by _id (the response id) and owner; MongoDB drops them once expired.
    db.collection('responses').createIndexes([
      { key: { expiresAt: 1 }, expireAfterSeconds: 0 },
    ]),
    db.collection('retired_keys').createIndexes([
      { key: { deletedAt: 1 }, expireAfterSeconds: RETIRED_KEY_RETENTION_SECONDS },
    ]),
  ])
}

export async function createMongoStore (options: MongoStoreOptions): Promise<Store> {
  if (options.client === undefined && options.url === undefined) throw new ConfigurationError('url', 'createMongoStore needs `url` or `client`')
  if (typeof options.dbName !== 'string' || options.dbName === '') throw new ConfigurationError('dbName', 'createMongoStore needs `dbName`')
  driver ??= await optionalPackage('mongodb', 'createMongoStore', async () => await import('mongodb'))
  const ownClient = options.client === undefined
  const client = options.client ?? new driver.MongoClient(options.url!, { appName: 'gatehouse' })
  const db = client.db(options.dbName)
  try {
    if (ownClient) await client.connect()
    await createIndexes(db)
  } catch (err) {
    if (ownClient) await client.close().catch(() => {})
    throw new Error(`Cannot start the MongoDB store (database "${options.dbName}"): ${(err as Error).message}`, { cause: err })
  }
  options.logger?.debug({ db: options.dbName }, 'mongodb store: indexes ready')

  const users = db.collection<UserDoc>('users')
  const sessions = db.collection<SessionDoc>('sessions')
  const attempts = db.collection<AttemptDoc>('login_attempts')
  const keys = db.collection<KeyDoc>('api_keys')
  const limits = db.collection<LimitsDoc>('user_limits')
  const counters = db.collection<CounterDoc>('rate_counters')
  const leases = db.collection<LeaseDoc>('leases')
  const usage = db.collection<UsageDoc>('usage')
  const owners = db.collection<OwnerDoc>('resource_owners')
  const responses = db.collection<ResponseDoc>('responses')
  const retiredKeys = db.collection<RetiredKeyDoc>('retired_keys')
  /** Keeps the names of the keys `filter` finds before they are deleted: usage still names them (KeyStore.names). */
  async function retire (filter: { _id?: string, userId: string } | { _id: string }): Promise<void> {
    const doomed = await keys.find(filter, { projection: { _id: 1, name: 1 } }).toArray()
    if (doomed.length === 0) return
    const deletedAt = new Date()
    await Promise.all(doomed.map(d => retiredKeys.updateOne({ _id: d._id }, { $set: { name: d.name, deletedAt } }, { upsert: true })))
  }
  let closed = false

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
    kind: 'mongodb',

    users: {
      async insert (user) {
        try {
          await users.insertOne(toUserDoc(user))
        } catch (err) {
          if (isUsernameClash(err)) throw fail('USERNAME_TAKEN', undefined, { cause: err })
          throw err
        }
      },

      async findById (id) {
        const filter = userIdFilter(id)
        const doc = filter === undefined ? null : await users.findOne(filter)
        return doc === null ? null : fromUserDoc(doc)
      },

      async findByUsernameKey (usernameKey) {
        const doc = await users.findOne({ usernameKey: text(usernameKey, 'usernameKey') })
        return doc === null ? null : fromUserDoc(doc)
      },

      async searchUsernames (fragment, limit) {
        if (limit <= 0) return []
        const docs = await users.find(
          { usernameKey: { $regex: escapeRegex(text(fragment, 'fragment')) } },
          { projection: { _id: 0, username: 1 }, sort: { usernameKey: 1 }, limit },
        ).toArray()
        return docs.map(d => d.username)
      },

      async list (limit, offset) {
        if (limit <= 0) return []
        const docs = await users.find({}, { sort: { dateJoined: 1, _id: 1 }, skip: offset, limit }).toArray()
        return docs.map(fromUserDoc)
      },

      async update (id, patch) {
        const filter = userIdFilter(id)
        if (filter === undefined) return null
        const set = patchFields(patch)
        if (Object.keys(set).length === 0) {
          const doc = await users.findOne(filter)
          return doc === null ? null : fromUserDoc(doc)
        }
        try {
          const doc = await users.findOneAndUpdate(filter, { $set: set }, { returnDocument: 'after' })
          return doc === null ? null : fromUserDoc(doc)
        } catch (err) {
          if (isUsernameClash(err)) throw fail('USERNAME_TAKEN', undefined, { cause: err })
          throw err
        }
      },

      async countByAccessLevel (level) {
        return await users.countDocuments({ accessLevel: text(level, 'accessLevel') as AccessLevel, disabled: { $ne: true } })
      },
    },

    sessions: {
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
    },

    attempts: {
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
    },

    keys: {
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
    },

    limits: {
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
    },

    counters: {
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
    },

    leases: {
      async acquire (key, leaseId, limit, now, expiresAt) {
        const id = text(key, 'key')
        const lease = text(leaseId, 'leaseId')
        const max = checkedLeaseLimit(limit)
        const at = checkedDate(now, 'now')
        const end = checkedDate(expiresAt, 'expiresAt')
        // One atomic pipeline update: drop expired leases (and this one's old entry), then add this lease
        // only while fewer than `limit` others are live. Whether it went in is read from the result.
        // ($ifNull: on a new document MongoDB's $max skips the missing field, but the test stand-in does not.)
        const doc = await retryDuplicateUpsert(() => leases.findOneAndUpdate(
          { _id: id },
          [
            {
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
            },
          ],
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
    },

    responses: {
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
    },

    usage: {
      async record (batch) {
        if (!Array.isArray(batch)) throw new TypeError('batch must be an array')
        let pending = batch.map(checkedUsage)
        for (let attempt = 1; pending.length > 0; attempt++) {
          const ops = pending.map(r => ({
            updateOne: {
              filter: { day: r.day, userId: r.userId, keyId: r.keyId, model: r.model, surface: r.surface },
              update: { $inc: Object.fromEntries(USAGE_COUNTS.map(field => [field, r[field]])) },
              upsert: true,
            },
          }))
          try {
            await usage.bulkWrite(ops, { ordered: false })
            return
          } catch (err) {
            // Concurrent first records of one row race to insert; only the losers (E11000) are sent again,
            // so no record is counted twice.
            if (!(err instanceof driver.MongoBulkWriteError) || attempt >= UPSERT_TRIES) throw err
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
    },

    owners: {
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
    },

    async ping () {
      await db.command({ ping: 1 })
    },

    async flush () {},

    async close () {
      if (closed) return
      closed = true
      if (ownClient) await client.close()
    },
  }
}
