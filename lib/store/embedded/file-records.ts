// The embedded store's records as its data file and journal hold them (../embedded-file-format.ts): loading them
// into the tables, the whole snapshot, and the journal lines of what changed since the last save.
import { encodeRecord } from '../embedded-file-format.ts'
import type { EmbeddedData, RecordKind } from '../embedded-file-format.ts'
import { journalLine } from '../embedded-journal.ts'
import { addToWindow, keptCounter, keptCounters } from './counters.ts'
import { addKey } from './keys.ts'
import { addSession } from './sessions.ts'
import type { Tables } from './state.ts'
import { addUsage } from './usage.ts'
import { addUser } from './users.ts'

/** Puts the file's records into the tables (before the change log starts, so nothing is noted). */
export function loadTables (t: Tables, data: EmbeddedData): void {
  for (const u of data.users) addUser(t, u)
  for (const s of data.sessions) addSession(t, s)
  for (const a of data.attempts) t.attempts.set(a.key, { count: a.count, resetAt: a.resetAt })
  for (const k of data.keys) addKey(t, k)
  for (const l of data.limits) t.limits.set(l.userId, l.limits)
  for (const s of data.settings) t.settings.set(s.name, s)
  for (const r of data.usage) addUsage(t, r)
  for (const o of data.owners) t.owners.set(o.resource, o)
  for (const c of data.counters) addToWindow(t, c.key, c.windowStart.getTime(), c.total, c.expiresAt.getTime())
  for (const k of data.retiredKeys) t.retiredKeys.set(k.keyId, k)
}

export function snapshot (t: Tables): EmbeddedData {
  return {
    users: [...t.users.values()],
    sessions: [...t.sessions.values()],
    attempts: [...t.attempts].map(([key, a]) => ({ key, count: a.count, resetAt: a.resetAt })),
    keys: [...t.keys.values()],
    limits: [...t.limits].map(([userId, l]) => ({ userId, limits: l })),
    settings: [...t.settings.values()],
    usage: [...t.usage.values()],
    owners: [...t.owners.values()],
    counters: keptCounters(t.counters),
    retiredKeys: [...t.retiredKeys.values()],
  }
}

/** The record of `kind` named `id` as the file holds it (attempts and limits carry their key), or undefined. */
function fileRecord (t: Tables, kind: RecordKind, id: string): unknown {
  switch (kind) {
    case 'attempts': { const a = t.attempts.get(id); return a === undefined ? undefined : { key: id, count: a.count, resetAt: a.resetAt } }
    case 'limits': { const l = t.limits.get(id); return l === undefined ? undefined : { userId: id, limits: l } }
    case 'settings': return t.settings.get(id)
    case 'users': return t.users.get(id)
    case 'sessions': return t.sessions.get(id)
    case 'keys': return t.keys.get(id)
    case 'usage': return t.usage.get(id)
    case 'owners': return t.owners.get(id)
    case 'counters': return keptCounter(t.counters, id)
    case 'retiredKeys': return t.retiredKeys.get(id)
  }
}

/** The journal lines of the records changed since the last save. */
export function changedLines (t: Tables): string[] {
  const lines: string[] = []
  for (const [kind, ids] of t.log.drain()) {
    for (const id of ids) {
      const record = fileRecord(t, kind, id)
      lines.push(journalLine({ kind, id, value: record === undefined ? null : encodeRecord(kind, record as never) }))
    }
  }
  return lines
}
