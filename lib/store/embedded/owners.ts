// The embedded store's owners of upstream resources, by resource name; dropped by the sweep once expired.
import { checkedDate, checkedOwner, text } from '../record-checks.ts'
import type { Tables, Writes } from './state.ts'
import type { OwnerRecord, OwnerStore } from '../types.ts'

type Owners = Tables['owners']

function copyOwner (o: OwnerRecord): OwnerRecord {
  return { ...o, createdAt: new Date(o.createdAt), expiresAt: new Date(o.expiresAt) }
}

export function sweepOwners (owners: Owners, now: number): void {
  for (const [resource, o] of owners) if (o.expiresAt.getTime() <= now) owners.delete(resource)
}

export function createOwnerStore (owners: Owners, w: Writes): OwnerStore {
  return {
    async put (record) {
      const checked = checkedOwner(record)
      w.beginChange()
      owners.set(checked.resource, checked)
      await w.commit()
    },

    async get (resource, now) {
      const o = owners.get(text(resource, 'resource'))
      return o === undefined || o.expiresAt <= checkedDate(now, 'now') ? null : copyOwner(o)
    },

    async getMany (resources, now) {
      if (!Array.isArray(resources)) throw new TypeError('resources must be an array')
      const at = checkedDate(now, 'now')
      const found: OwnerRecord[] = []
      for (const resource of new Set(resources.map(r => text(r, 'resource')))) {
        const o = owners.get(resource)
        if (o !== undefined && o.expiresAt > at) found.push(copyOwner(o))
      }
      return found
    },

    async delete (resource) {
      text(resource, 'resource')
      w.beginChange()
      if (!owners.delete(resource)) return false
      await w.commit()
      return true
    },

    async countByUser (userId, now, exceptPrefix) {
      text(userId, 'userId')
      const at = checkedDate(now, 'now')
      const except = exceptPrefix === undefined ? undefined : text(exceptPrefix, 'exceptPrefix')
      let n = 0
      for (const o of owners.values()) if (o.userId === userId && o.expiresAt > at && (except === undefined || !o.resource.startsWith(except))) n++
      return n
    },
  }
}
