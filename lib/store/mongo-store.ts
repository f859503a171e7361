// The MongoDB store, on the official driver. Collections: users, sessions, login_attempts.
// Every query has an index; usernames are unique on their lower-cased key; sessions and attempt
// windows carry TTL indexes (deletion is lazy, so callers still check expiry on every read).
// User-supplied values only ever reach a query as plain strings: each one is checked to be a
// string, and the search fragment is regex-escaped.
import type { Db, MongoClient, MongoServerError, ObjectId } from 'mongodb'
import { ConfigurationError, fail } from '../errors.ts'
import { ATTEMPT_RETENTION_SECONDS, SESSION_RETENTION_SECONDS } from './retention.ts'
import type { Logger } from '../logger.ts'
import type { AccessLevel, SessionRecord, Store, UserPatch, UserRecord } from './types.ts'

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

// The driver (with bson) is loaded on first use: it costs about 28 MB of memory that users of the
// embedded store should not pay just because the library exports both adapters.
let driver: typeof import('mongodb')

const HEX_ID = /^[0-9a-f]{24}$/i
const DUPLICATE_KEY = 11000
const UPSERT_TRIES = 3

/** Refuses anything but a string, so an object such as `{ $ne: '' }` can never act as a query operator. */
function text (value: unknown, name: string): string {
  if (typeof value !== 'string') throw new TypeError(`${name} must be a string`)
  return value
}

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
  ])
}

export async function createMongoStore (options: MongoStoreOptions): Promise<Store> {
  if (options.client === undefined && options.url === undefined) throw new ConfigurationError('url', 'createMongoStore needs `url` or `client`')
  if (typeof options.dbName !== 'string' || options.dbName === '') throw new ConfigurationError('dbName', 'createMongoStore needs `dbName`')
  driver ??= await import('mongodb')
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
  let closed = false

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
