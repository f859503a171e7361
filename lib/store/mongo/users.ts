// The MongoDB store's accounts: collection `users`, the id as the document's ObjectId, usernames unique on their
// lower-cased key.
import type { Db, ObjectId } from 'mongodb'
import { fail } from '../../errors.ts'
import { text } from '../record-checks.ts'
import type { AccessLevel, UserPatch, UserRecord, UserStore } from '../types.ts'
import { driver, escapeRegex, isDuplicateKey } from './driver.ts'
import type { CollectionIndexes } from './driver.ts'

/** A user as stored: the record, with its id as the document's ObjectId. */
type UserDoc = Omit<UserRecord, 'id'> & { _id: ObjectId }

const HEX_ID = /^[0-9a-f]{24}$/i

export const USER_INDEXES: CollectionIndexes = {
  users: [
    { key: { usernameKey: 1 }, unique: true },
    { key: { dateJoined: 1, _id: 1 } },
    { key: { accessLevel: 1 } },
  ],
}

function isUsernameClash (err: unknown): boolean {
  return isDuplicateKey(err) && (err.keyPattern?.usernameKey !== undefined || err.message.includes('usernameKey'))
}

function toUserDoc (u: UserRecord): UserDoc {
  if (!HEX_ID.test(text(u.id, 'id'))) throw new TypeError('user id must be 24 hex digits')
  const doc: UserDoc = {
    _id: driver().ObjectId.createFromHexString(u.id),
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

function userIdFilter (id: string): { _id: ObjectId } | undefined {
  return HEX_ID.test(text(id, 'id')) ? { _id: driver().ObjectId.createFromHexString(id) } : undefined
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

export function createUserStore (db: Db): UserStore {
  const users = db.collection<UserDoc>('users')
  return {
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
  }
}
