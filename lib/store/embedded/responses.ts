// The embedded store's stored Responses answers, in memory only (docs/responses.md, "Stored responses"): conversation
// bodies are large and Codex, the main client, stores nothing. Each owner's total is bounded, past it that owner's
// oldest go first; so is the whole, past it the largest owner's oldest go (a Set keeps insertion order, and a
// replaced record moves to the end), so no tenant's records push out another's.
import { checkedDate, checkedResponse, text } from '../record-checks.ts'
import type { Writes } from './state.ts'
import type { ResponseRecord, ResponseStore } from '../types.ts'

export interface ResponseTable {
  get: (id: string) => ResponseRecord | undefined
  /** Stores the record (its id not held), then drops the oldest past either bound. */
  keep: (r: ResponseRecord) => void
  /** Returns true when a record was removed. */
  drop: (id: string) => boolean
  /** Drops the records expired at `now`. */
  sweep: (now: number) => void
}

export function createResponseTable (maxChars: number, maxCharsPerOwner: number): ResponseTable {
  const responses = new Map<string, ResponseRecord>()
  const byOwner = new Map<string, { chars: number, ids: Set<string> }>()
  let chars = 0

  function drop (id: string): boolean {
    const r = responses.get(id)
    if (r === undefined) return false
    responses.delete(id)
    chars -= r.data.length
    const owned = byOwner.get(r.ownerId)
    if (owned !== undefined) {
      owned.ids.delete(id)
      owned.chars -= r.data.length
      if (owned.ids.size === 0) byOwner.delete(r.ownerId)
    }
    return true
  }

  function keep (r: ResponseRecord): void {
    responses.set(r.id, r)
    chars += r.data.length
    let owned = byOwner.get(r.ownerId)
    if (owned === undefined) byOwner.set(r.ownerId, owned = { chars: 0, ids: new Set() })
    owned.ids.add(r.id)
    owned.chars += r.data.length
    while (owned.chars > maxCharsPerOwner && owned.ids.size > 0) drop(owned.ids.values().next().value as string)
    while (chars > maxChars) {
      let largest: { chars: number, ids: Set<string> } | undefined
      for (const o of byOwner.values()) if (largest === undefined || o.chars > largest.chars) largest = o
      if (largest === undefined) break
      drop(largest.ids.values().next().value as string)
    }
  }

  return {
    get: id => responses.get(id),
    keep,
    drop,
    sweep (now) {
      for (const [id, r] of responses) if (r.expiresAt.getTime() <= now) drop(id)
    },
  }
}

export function createResponseStore (table: ResponseTable, w: Writes): ResponseStore {
  return {
    async put (record) {
      const r = checkedResponse(record)
      w.beginChange()
      const held = table.get(r.id)
      if (held !== undefined && held.ownerId !== r.ownerId) throw new Error(`A response with id ${r.id} is held by another owner`)
      table.drop(r.id)
      table.keep(r)
    },

    async get (id, ownerId, now) {
      const owner = text(ownerId, 'ownerId')
      const at = checkedDate(now, 'now')
      const r = table.get(text(id, 'id'))
      if (r === undefined || r.ownerId !== owner || r.expiresAt <= at) return null
      return { ...r }
    },

    async delete (id, ownerId) {
      const owner = text(ownerId, 'ownerId')
      const r = table.get(text(id, 'id'))
      if (r === undefined || r.ownerId !== owner) return false
      w.beginChange()
      return table.drop(id)
    },
  }
}
