// The embedded store's accounts: users by id, and their ids by usernameKey (unique).
import { fail } from '../../errors.ts'
import type { Tables, Writes } from './state.ts'
import type { UserPatch, UserRecord, UserStore } from '../types.ts'

type UserTables = Pick<Tables, 'users' | 'userIdByKey'>

const HEX_ID = /^[0-9a-f]{24}$/i

function copyUser (u: UserRecord): UserRecord {
  const copy: UserRecord = {
    id: u.id,
    username: u.username,
    usernameKey: u.usernameKey,
    passwordHash: u.passwordHash,
    email: u.email,
    accessLevel: u.accessLevel,
    dateJoined: new Date(u.dateJoined),
  }
  if (u.disabled === true) copy.disabled = true
  return copy
}

function byJoinDateThenId (a: UserRecord, b: UserRecord): number {
  const byDate = a.dateJoined.getTime() - b.dateJoined.getTime()
  if (byDate !== 0) return byDate
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}

function patched (current: UserRecord, patch: UserPatch): UserRecord {
  const next = copyUser(current)
  if (patch.username !== undefined) next.username = patch.username
  if (patch.usernameKey !== undefined) next.usernameKey = patch.usernameKey
  if (patch.passwordHash !== undefined) next.passwordHash = patch.passwordHash
  if (patch.email !== undefined) next.email = patch.email
  if (patch.accessLevel !== undefined) next.accessLevel = patch.accessLevel
  if (patch.disabled === true) next.disabled = true
  else if (patch.disabled === false) delete next.disabled
  return next
}

export function addUser (t: UserTables, u: UserRecord): void {
  t.users.set(u.id, u)
  t.userIdByKey.set(u.usernameKey, u.id)
}

export function createUserStore (t: UserTables, w: Writes): UserStore {
  const { users, userIdByKey } = t
  return {
    async insert (user) {
      if (!HEX_ID.test(user.id)) throw new TypeError('user id must be 24 hex digits')
      const record = copyUser({ ...user, id: user.id.toLowerCase() })
      w.beginChange()
      if (userIdByKey.has(record.usernameKey)) throw fail('USERNAME_TAKEN')
      if (users.has(record.id)) throw new Error(`A user with id ${record.id} already exists`)
      addUser(t, record)
      await w.commit()
    },

    async findById (id) {
      const u = HEX_ID.test(id) ? users.get(id.toLowerCase()) : undefined
      return u === undefined ? null : copyUser(u)
    },

    async findByUsernameKey (usernameKey) {
      const id = userIdByKey.get(usernameKey)
      return id === undefined ? null : copyUser(users.get(id)!)
    },

    async searchUsernames (fragment, limit) {
      if (limit <= 0) return []
      return [...users.values()]
        .filter(u => u.usernameKey.includes(fragment))
        .sort((a, b) => a.usernameKey < b.usernameKey ? -1 : a.usernameKey > b.usernameKey ? 1 : 0)
        .slice(0, limit)
        .map(u => u.username)
    },

    async list (limit, offset) {
      if (limit <= 0) return []
      return [...users.values()].sort(byJoinDateThenId).slice(offset, offset + limit).map(copyUser)
    },

    async update (id, patch) {
      const current = HEX_ID.test(id) ? users.get(id.toLowerCase()) : undefined
      if (current === undefined) return null
      const next = patched(current, patch)
      w.beginChange()
      if (next.usernameKey !== current.usernameKey && userIdByKey.has(next.usernameKey)) throw fail('USERNAME_TAKEN')
      userIdByKey.delete(current.usernameKey)
      addUser(t, next)
      await w.commit()
      return copyUser(next)
    },

    async countByAccessLevel (level) {
      let n = 0
      for (const u of users.values()) if (u.accessLevel === level && u.disabled !== true) n++
      return n
    },
  }
}
