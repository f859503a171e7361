// The embedded store's sessions: by token digest, and per user one per device.
import { SESSION_RETENTION_SECONDS } from '../retention.ts'
import type { Tables, Writes } from './state.ts'
import type { SessionRecord, SessionStore } from '../types.ts'

type SessionTables = Pick<Tables, 'sessions' | 'sessionsByUser'>

function copySession (s: SessionRecord): SessionRecord {
  return { tokenHash: s.tokenHash, userId: s.userId, device: s.device, createdAt: new Date(s.createdAt), expiresAt: new Date(s.expiresAt) }
}

export function addSession (t: SessionTables, s: SessionRecord): void {
  t.sessions.set(s.tokenHash, s)
  let devices = t.sessionsByUser.get(s.userId)
  if (devices === undefined) {
    devices = new Map()
    t.sessionsByUser.set(s.userId, devices)
  }
  devices.set(s.device, s.tokenHash)
}

function removeSession (t: SessionTables, tokenHash: string): boolean {
  const s = t.sessions.get(tokenHash)
  if (s === undefined) return false
  t.sessions.delete(tokenHash)
  const devices = t.sessionsByUser.get(s.userId)
  devices?.delete(s.device)
  if (devices?.size === 0) t.sessionsByUser.delete(s.userId)
  return true
}

/** Drops sessions past their expiry by more than SESSION_RETENTION_SECONDS (../retention.ts). */
export function sweepSessions (t: SessionTables, now: number): void {
  for (const s of t.sessions.values()) {
    if (s.expiresAt.getTime() + SESSION_RETENTION_SECONDS * 1000 <= now) removeSession(t, s.tokenHash)
  }
}

export function createSessionStore (t: SessionTables, w: Writes): SessionStore {
  const { sessions, sessionsByUser } = t
  return {
    async put (session) {
      const record = copySession(session)
      w.beginChange()
      const holder = sessions.get(record.tokenHash)
      if (holder !== undefined && (holder.userId !== record.userId || holder.device !== record.device)) {
        throw new Error('This token digest already belongs to another session')
      }
      const previous = sessionsByUser.get(record.userId)?.get(record.device)
      if (previous !== undefined) removeSession(t, previous)
      addSession(t, record)
      await w.commit()
    },

    async findByTokenHash (tokenHash) {
      const s = sessions.get(tokenHash)
      return s === undefined ? null : copySession(s)
    },

    async delete (tokenHash) {
      w.beginChange()
      if (!removeSession(t, tokenHash)) return false
      await w.commit()
      return true
    },

    async deleteByUser (userId, keepTokenHash) {
      w.beginChange()
      const doomed = [...sessionsByUser.get(userId)?.values() ?? []].filter(h => h !== keepTokenHash)
      for (const tokenHash of doomed) removeSession(t, tokenHash)
      if (doomed.length > 0) await w.commit()
      return doomed.length
    },

    async listByUser (userId) {
      return [...sessionsByUser.get(userId)?.values() ?? []].map(tokenHash => copySession(sessions.get(tokenHash)!))
    },
  }
}
