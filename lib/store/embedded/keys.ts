// The embedded store's user keys: by keyId, their ids by digest, and the names of deleted ones (KeyStore.names).
import { checkedDate, checkedKey, text } from '../record-checks.ts'
import { RETIRED_KEY_RETENTION_SECONDS } from '../retention.ts'
import type { Tables, Writes } from './state.ts'
import type { KeyRecord, KeyStore } from '../types.ts'

type KeyTables = Pick<Tables, 'keys' | 'keyIdByDigest' | 'retiredKeys' | 'log'>

function copyKey (k: KeyRecord): KeyRecord {
  return {
    ...k,
    createdAt: new Date(k.createdAt),
    expiresAt: k.expiresAt === null ? null : new Date(k.expiresAt),
    lastUsedAt: k.lastUsedAt === null ? null : new Date(k.lastUsedAt),
    models: k.models === null ? null : [...k.models],
  }
}

function byCreatedThenKeyId (a: KeyRecord, b: KeyRecord): number {
  const byDate = a.createdAt.getTime() - b.createdAt.getTime()
  if (byDate !== 0) return byDate
  return a.keyId < b.keyId ? -1 : a.keyId > b.keyId ? 1 : 0
}

export function addKey (t: Pick<Tables, 'keys' | 'keyIdByDigest'>, k: KeyRecord): void {
  t.keys.set(k.keyId, k)
  t.keyIdByDigest.set(k.digest, k.keyId)
}

/** Drops the names of keys deleted more than RETIRED_KEY_RETENTION_SECONDS ago (../retention.ts). */
export function sweepRetiredKeys (retiredKeys: Tables['retiredKeys'], now: number): void {
  for (const [keyId, k] of retiredKeys) if (k.deletedAt.getTime() + RETIRED_KEY_RETENTION_SECONDS * 1000 <= now) retiredKeys.delete(keyId)
}

/** Removes the key, keeping its name for usage (KeyStore.names); false when there is none. */
function retireKey (t: KeyTables, keyId: string, clock: () => Date): boolean {
  const k = t.keys.get(keyId)
  if (k === undefined) return false
  t.keys.delete(keyId)
  t.keyIdByDigest.delete(k.digest)
  t.retiredKeys.set(keyId, { keyId, name: k.name, deletedAt: clock() })
  return true
}

export function createKeyStore (t: KeyTables, w: Writes, clock: () => Date): KeyStore {
  const { keys, keyIdByDigest, retiredKeys } = t
  const removeKey = (keyId: string): boolean => retireKey(t, keyId, clock)
  return {
    async create (key) {
      const record: KeyRecord = { ...checkedKey(key), lastUsedAt: null }
      w.beginChange()
      if (keys.has(record.keyId)) throw new Error(`A key with id ${record.keyId} already exists`)
      if (keyIdByDigest.has(record.digest)) throw new Error('This key digest already belongs to another key')
      addKey(t, record)
      await w.commit()
    },

    async findByDigest (digest) {
      const keyId = keyIdByDigest.get(text(digest, 'digest'))
      return keyId === undefined ? null : copyKey(keys.get(keyId)!)
    },

    async get (keyId) {
      const k = keys.get(text(keyId, 'keyId'))
      return k === undefined ? null : copyKey(k)
    },

    async listByUser (userId) {
      text(userId, 'userId')
      return [...keys.values()].filter(k => k.userId === userId).sort(byCreatedThenKeyId).map(copyKey)
    },

    async delete (keyId) {
      text(keyId, 'keyId')
      w.beginChange()
      if (!removeKey(keyId)) return false
      await w.commit()
      return true
    },

    async deleteForUser (userId, keyId) {
      text(userId, 'userId')
      text(keyId, 'keyId')
      w.beginChange()
      if (keys.get(keyId)?.userId !== userId) return false
      removeKey(keyId)
      await w.commit()
      return true
    },

    async deleteAllForUser (userId) {
      text(userId, 'userId')
      w.beginChange()
      const doomed = [...keys.values()].filter(k => k.userId === userId)
      for (const k of doomed) removeKey(k.keyId)
      if (doomed.length > 0) await w.commit()
      return doomed.length
    },

    async names (keyIds) {
      const out = new Map<string, string>()
      for (const keyId of keyIds) {
        const name = keys.get(text(keyId, 'keyId'))?.name ?? retiredKeys.get(keyId)?.name
        if (name !== undefined) out.set(keyId, name)
      }
      return out
    },

    async touch (keyId, lastUsedAt) {
      const at = checkedDate(lastUsedAt, 'lastUsedAt')
      const k = keys.get(text(keyId, 'keyId'))
      if (k === undefined || (k.lastUsedAt !== null && k.lastUsedAt >= at)) return
      w.beginChange()
      k.lastUsedAt = new Date(at)
      t.log.changed('keys', k.keyId)
      await w.commit()
    },
  }
}
