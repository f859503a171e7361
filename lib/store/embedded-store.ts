// The embedded store: everything in memory, optionally saved to one JSON file and its journal.
// With a file, the data is loaded at start and every change is saved (./embedded-journal.ts); a change's promise
// resolves only once it is on disk, and changes made while a write runs share the next write.
// One process per file: two processes on one file would overwrite each other's saves.
import { mkdir, readFile } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import { ConfigurationError, fail } from '../errors.ts'
import { removeStaleTempFiles } from '../fs/atomic-write.ts'
import { counterId, decodeStoreFile, encodeRecord, encodeStoreFile, storeFileGeneration } from './embedded-file-format.ts'
import type { EmbeddedData, RecordKind, RetiredKey, StoredCounter } from './embedded-file-format.ts'
import { createJournalSaver, journalLine, readJournal } from './embedded-journal.ts'
import type { JournalSaver } from './embedded-journal.ts'
import { createChangeLog } from './embedded-changes.ts'
import { ATTEMPT_RETENTION_SECONDS, RETIRED_KEY_RETENTION_SECONDS, SESSION_RETENTION_SECONDS } from './retention.ts'
import type { Logger } from '../logger.ts'
import { checkedAmount, checkedDate, checkedKey, checkedLeaseLimit, checkedLimits, checkedCounterOps, checkedOwner, checkedResponse, checkedUsage, checkedUsageQuery, compareUsage, text, USAGE_COUNTS } from './record-checks.ts'
import type { AttemptCount, KeyRecord, OwnerRecord, ResponseRecord, SessionRecord, Store, UsageRecord, UserLimits, UserPatch, UserRecord } from './types.ts'

export interface EmbeddedStoreOptions {
  /** JSON file loaded at start and saved on every change; its directory is created if missing. Default: none (memory only, lost on exit). */
  file?: string
  /** pino-compatible logger (saves at debug, failed saves at error). Default: none. */
  logger?: Logger
  /** Clock used to drop sessions and attempt windows long past their end (see retention.ts). Default: the system clock. */
  now?: () => Date
  /** Most characters the stored Responses answers may total in memory; past it the largest owner's oldest are dropped. Default 67108864 (64 Mi). */
  maxResponseChars?: number
  /** Most characters one owner's stored Responses answers may total; past it that owner's oldest are dropped, no one else's. Default 8388608 (8 Mi). */
  maxResponseCharsPerOwner?: number
}

const SWEEP_INTERVAL_MS = 60_000
/** Counter windows this long or longer are kept with the file (a day's or a month's); shorter ones in memory only. */
const KEPT_WINDOW_MS = 3_600_000
const DEFAULT_MAX_RESPONSE_CHARS = 64 * 1024 * 1024
/** Two of the largest records (RESPONSE_RECORD_MAX_CHARS): a tenant's conversations cannot crowd out the others'. */
const DEFAULT_MAX_RESPONSE_CHARS_PER_OWNER = 8 * 1024 * 1024
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

function copySession (s: SessionRecord): SessionRecord {
  return { tokenHash: s.tokenHash, userId: s.userId, device: s.device, createdAt: new Date(s.createdAt), expiresAt: new Date(s.expiresAt) }
}

function copyAttempt (a: AttemptCount): AttemptCount {
  return { count: a.count, resetAt: new Date(a.resetAt) }
}

function copyKey (k: KeyRecord): KeyRecord {
  return {
    ...k,
    createdAt: new Date(k.createdAt),
    expiresAt: k.expiresAt === null ? null : new Date(k.expiresAt),
    lastUsedAt: k.lastUsedAt === null ? null : new Date(k.lastUsedAt),
    models: k.models === null ? null : [...k.models],
  }
}

function copyOwner (o: OwnerRecord): OwnerRecord {
  return { ...o, createdAt: new Date(o.createdAt), expiresAt: new Date(o.expiresAt) }
}

function usageKey (r: UsageRecord): string {
  return JSON.stringify([r.day, r.userId, r.keyId, r.model, r.surface])
}

function byCreatedThenKeyId (a: KeyRecord, b: KeyRecord): number {
  const byDate = a.createdAt.getTime() - b.createdAt.getTime()
  if (byDate !== 0) return byDate
  return a.keyId < b.keyId ? -1 : a.keyId > b.keyId ? 1 : 0
}

function byJoinDateThenId (a: UserRecord, b: UserRecord): number {
  const byDate = a.dateJoined.getTime() - b.dateJoined.getTime()
  if (byDate !== 0) return byDate
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}

export async function createEmbeddedStore (options: EmbeddedStoreOptions = {}): Promise<Store> {
  if (options.file !== undefined && (typeof options.file !== 'string' || options.file === '')) {
    throw new ConfigurationError('file', `createEmbeddedStore: file must be a non-empty path (got ${JSON.stringify(options.file)})`)
  }
  if (options.now !== undefined && typeof options.now !== 'function') throw new ConfigurationError('now', 'createEmbeddedStore: now must be a function returning a Date')
  for (const name of ['maxResponseChars', 'maxResponseCharsPerOwner'] as const) {
    const value = options[name]
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 1)) {
      throw new ConfigurationError(name, `createEmbeddedStore: ${name} must be a positive integer (got ${String(value)})`)
    }
  }
  const clock = options.now ?? (() => new Date())
  // The lists the file saves note what changed, so a save writes only that (./embedded-changes.ts).
  const log = createChangeLog()
  const users = log.tracked<UserRecord>('users')
  const userIdByKey = new Map<string, string>()
  const sessions = log.tracked<SessionRecord>('sessions')
  /** userId -> device -> tokenHash */
  const sessionsByUser = new Map<string, Map<string, string>>()
  const attempts = log.tracked<AttemptCount>('attempts')
  const keys = log.tracked<KeyRecord>('keys')
  const retiredKeys = log.tracked<RetiredKey>('retiredKeys')
  const keyIdByDigest = new Map<string, string>()
  const limits = log.tracked<UserLimits>('limits')
  const usage = log.tracked<UsageRecord>('usage')
  /** resource name -> its owner; saved with the file, dropped by the sweep once expired. */
  const owners = log.tracked<OwnerRecord>('owners')
  // Leases and the short counter windows (a minute's requests and tokens) live in memory only: a restart ends
  // every request holding a lease, and a minute's window is soon over. Windows of an hour or more (a day's tokens,
  // a day's or month's dollars) are kept with the file, carried by the next save rather than awaited.
  /** key -> windowStart ms -> window */
  const counters = new Map<string, Map<number, { total: number, expiresAt: number }>>()
  /** key -> leaseId -> expiry ms */
  const leases = new Map<string, Map<string, number>>()
  // Stored responses too live in memory only (docs/responses.md, "Stored responses"): conversation bodies are large
  // and the file is written whole on every change; Codex, the main client, stores nothing. Each owner's total is
  // bounded, past it that owner's oldest go first; so is the whole, past it the largest owner's oldest go (a Set
  // keeps insertion order, and a replaced record moves to the end), so no tenant's records push out another's.
  const responses = new Map<string, ResponseRecord>()
  const responsesMaxChars = options.maxResponseChars ?? DEFAULT_MAX_RESPONSE_CHARS
  const responsesMaxPerOwner = options.maxResponseCharsPerOwner ?? DEFAULT_MAX_RESPONSE_CHARS_PER_OWNER
  const responsesByOwner = new Map<string, { chars: number, ids: Set<string> }>()
  let responseChars = 0
  let lastSweep = 0
  let closed = false
  let saver: JournalSaver | undefined

  function addUser (u: UserRecord): void {
    users.set(u.id, u)
    userIdByKey.set(u.usernameKey, u.id)
  }

  function addSession (s: SessionRecord): void {
    sessions.set(s.tokenHash, s)
    let devices = sessionsByUser.get(s.userId)
    if (devices === undefined) {
      devices = new Map()
      sessionsByUser.set(s.userId, devices)
    }
    devices.set(s.device, s.tokenHash)
  }

  function addKey (k: KeyRecord): void {
    keys.set(k.keyId, k)
    keyIdByDigest.set(k.digest, k.keyId)
  }

  function removeKey (keyId: string): boolean {
    const k = keys.get(keyId)
    if (k === undefined) return false
    keys.delete(keyId)
    keyIdByDigest.delete(k.digest)
    retiredKeys.set(keyId, { keyId, name: k.name, deletedAt: clock() })
    return true
  }

  function addUsage (r: UsageRecord): void {
    const id = usageKey(r)
    const row = usage.get(id)
    if (row === undefined) {
      usage.set(id, { ...r })
      return
    }
    for (const field of USAGE_COUNTS) row[field] += r[field]
    log.changed('usage', id)
  }

  /** The live leases of `key` at `now`, expired ones dropped. */
  function liveLeases (key: string, now: number): Map<string, number> | undefined {
    const held = leases.get(key)
    if (held === undefined) return undefined
    for (const [id, expiresAt] of held) if (expiresAt <= now) held.delete(id)
    if (held.size === 0) leases.delete(key)
    return held.size === 0 ? undefined : held
  }

  function removeSession (tokenHash: string): boolean {
    const s = sessions.get(tokenHash)
    if (s === undefined) return false
    sessions.delete(tokenHash)
    const devices = sessionsByUser.get(s.userId)
    devices?.delete(s.device)
    if (devices?.size === 0) sessionsByUser.delete(s.userId)
    return true
  }

  function dropResponse (id: string): boolean {
    const r = responses.get(id)
    if (r === undefined) return false
    responses.delete(id)
    responseChars -= r.data.length
    const owned = responsesByOwner.get(r.ownerId)
    if (owned !== undefined) {
      owned.ids.delete(id)
      owned.chars -= r.data.length
      if (owned.ids.size === 0) responsesByOwner.delete(r.ownerId)
    }
    return true
  }

  function keepResponse (r: ResponseRecord): void {
    responses.set(r.id, r)
    responseChars += r.data.length
    let owned = responsesByOwner.get(r.ownerId)
    if (owned === undefined) responsesByOwner.set(r.ownerId, owned = { chars: 0, ids: new Set() })
    owned.ids.add(r.id)
    owned.chars += r.data.length
    while (owned.chars > responsesMaxPerOwner && owned.ids.size > 0) dropResponse(owned.ids.values().next().value as string)
    while (responseChars > responsesMaxChars) {
      let largest: { chars: number, ids: Set<string> } | undefined
      for (const o of responsesByOwner.values()) if (largest === undefined || o.chars > largest.chars) largest = o
      if (largest === undefined) break
      dropResponse(largest.ids.values().next().value as string)
    }
  }

  /** Drops records long past their end, at most once a minute; the next save carries the removals. */
  function sweep (): void {
    const now = clock().getTime()
    if (Math.abs(now - lastSweep) < SWEEP_INTERVAL_MS) return
    lastSweep = now
    for (const s of sessions.values()) {
      if (s.expiresAt.getTime() + SESSION_RETENTION_SECONDS * 1000 <= now) removeSession(s.tokenHash)
    }
    for (const [key, a] of attempts) {
      if (a.resetAt.getTime() + ATTEMPT_RETENTION_SECONDS * 1000 <= now) attempts.delete(key)
    }
    for (const [key, windows] of counters) {
      for (const [start, w] of windows) {
        if (w.expiresAt > now) continue
        windows.delete(start)
        if (w.expiresAt - start >= KEPT_WINDOW_MS) log.changed('counters', counterId(key, start))
      }
      if (windows.size === 0) counters.delete(key)
    }
    for (const key of [...leases.keys()]) liveLeases(key, now)
    for (const [resource, o] of owners) if (o.expiresAt.getTime() <= now) owners.delete(resource)
    for (const [keyId, k] of retiredKeys) if (k.deletedAt.getTime() + RETIRED_KEY_RETENTION_SECONDS * 1000 <= now) retiredKeys.delete(keyId)
    for (const [id, r] of responses) if (r.expiresAt.getTime() <= now) dropResponse(id)
  }

  function snapshot (): EmbeddedData {
    return {
      users: [...users.values()],
      sessions: [...sessions.values()],
      attempts: [...attempts].map(([key, a]) => ({ key, count: a.count, resetAt: a.resetAt })),
      keys: [...keys.values()],
      limits: [...limits].map(([userId, l]) => ({ userId, limits: l })),
      usage: [...usage.values()],
      owners: [...owners.values()],
      counters: keptCounters(),
      retiredKeys: [...retiredKeys.values()],
    }
  }

  /** The counter windows the file keeps: those of an hour or longer, not yet expired. */
  function keptCounters (): StoredCounter[] {
    const kept: StoredCounter[] = []
    for (const [key, windows] of counters) {
      for (const [start, w] of windows) if (w.expiresAt - start >= KEPT_WINDOW_MS) kept.push({ key, windowStart: new Date(start), total: w.total, expiresAt: new Date(w.expiresAt) })
    }
    return kept
  }

  /** A kept counter window named by counterId, as the file holds it. */
  function keptCounter (id: string): StoredCounter | undefined {
    const at = id.lastIndexOf('\n')
    const key = id.slice(0, at)
    const start = Number(id.slice(at + 1))
    const w = counters.get(key)?.get(start)
    return w === undefined ? undefined : { key, windowStart: new Date(start), total: w.total, expiresAt: new Date(w.expiresAt) }
  }

  /** The record of `kind` named `id` as the file holds it (attempts and limits carry their key), or undefined. */
  function fileRecord (kind: RecordKind, id: string): unknown {
    switch (kind) {
      case 'attempts': { const a = attempts.get(id); return a === undefined ? undefined : { key: id, count: a.count, resetAt: a.resetAt } }
      case 'limits': { const l = limits.get(id); return l === undefined ? undefined : { userId: id, limits: l } }
      case 'users': return users.get(id)
      case 'sessions': return sessions.get(id)
      case 'keys': return keys.get(id)
      case 'usage': return usage.get(id)
      case 'owners': return owners.get(id)
      case 'counters': return keptCounter(id)
      case 'retiredKeys': return retiredKeys.get(id)
    }
  }

  /** The journal lines of the records changed since the last save. */
  function changedLines (): string[] {
    const lines: string[] = []
    for (const [kind, ids] of log.drain()) {
      for (const id of ids) {
        const record = fileRecord(kind, id)
        lines.push(journalLine({ kind, id, value: record === undefined ? null : encodeRecord(kind, record as never) }))
      }
    }
    return lines
  }

  /** Called synchronously after each in-memory change; resolves when the change is durable. */
  function commit (): Promise<void> {
    return saver === undefined ? Promise.resolve() : saver.save()
  }

  /** Adds to a counter window (arguments checked, beginChange done); returns its new total. */
  function addTo (key: string, start: number, add: number, end: number): number {
    let windows = counters.get(key)
    if (windows === undefined) {
      windows = new Map()
      counters.set(key, windows)
    }
    const w = windows.get(start) ?? { total: 0, expiresAt: end }
    w.total += add
    w.expiresAt = Math.max(w.expiresAt, end)
    windows.set(start, w)
    if (w.expiresAt - start >= KEPT_WINDOW_MS) log.changed('counters', counterId(key, start))
    return w.total
  }

  /** Every mutation starts here: refuse once closed, and sweep old records along the way. */
  function beginChange (): void {
    if (closed) throw new Error('The embedded store is closed')
    sweep()
  }

  if (options.file !== undefined) {
    const file = resolve(options.file)
    const { data, generation } = await loadDataFile(file, options.logger)
    for (const u of data?.users ?? []) addUser(u)
    for (const s of data?.sessions ?? []) addSession(s)
    for (const a of data?.attempts ?? []) attempts.set(a.key, { count: a.count, resetAt: a.resetAt })
    for (const k of data?.keys ?? []) addKey(k)
    for (const l of data?.limits ?? []) limits.set(l.userId, l.limits)
    for (const r of data?.usage ?? []) addUsage(r)
    for (const o of data?.owners ?? []) owners.set(o.resource, o)
    for (const c of data?.counters ?? []) addTo(c.key, c.windowStart.getTime(), c.total, c.expiresAt.getTime())
    for (const k of data?.retiredKeys ?? []) retiredKeys.set(k.keyId, k)
    log.start()
    sweep()
    saver = createJournalSaver(file, generation, { snapshot: next => encodeStoreFile(snapshot(), next), changes: changedLines }, options.logger)
    // A new file is written now, so a path that cannot be written fails at start, not at the first sign-up.
    if (data === undefined) await saver.save()
  }

  return {
    kind: 'embedded',

    users: {
      async insert (user) {
        if (!HEX_ID.test(user.id)) throw new TypeError('user id must be 24 hex digits')
        const record = copyUser({ ...user, id: user.id.toLowerCase() })
        beginChange()
        if (userIdByKey.has(record.usernameKey)) throw fail('USERNAME_TAKEN')
        if (users.has(record.id)) throw new Error(`A user with id ${record.id} already exists`)
        addUser(record)
        await commit()
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

      async update (id, patch: UserPatch) {
        const current = HEX_ID.test(id) ? users.get(id.toLowerCase()) : undefined
        if (current === undefined) return null
        const next = copyUser(current)
        if (patch.username !== undefined) next.username = patch.username
        if (patch.usernameKey !== undefined) next.usernameKey = patch.usernameKey
        if (patch.passwordHash !== undefined) next.passwordHash = patch.passwordHash
        if (patch.email !== undefined) next.email = patch.email
        if (patch.accessLevel !== undefined) next.accessLevel = patch.accessLevel
        if (patch.disabled === true) next.disabled = true
        else if (patch.disabled === false) delete next.disabled
        beginChange()
        if (next.usernameKey !== current.usernameKey && userIdByKey.has(next.usernameKey)) throw fail('USERNAME_TAKEN')
        userIdByKey.delete(current.usernameKey)
        addUser(next)
        await commit()
        return copyUser(next)
      },

      async countByAccessLevel (level) {
        let n = 0
        for (const u of users.values()) if (u.accessLevel === level && u.disabled !== true) n++
        return n
      },
    },

    sessions: {
      async put (session) {
        const record = copySession(session)
        beginChange()
        const holder = sessions.get(record.tokenHash)
        if (holder !== undefined && (holder.userId !== record.userId || holder.device !== record.device)) {
          throw new Error('This token digest already belongs to another session')
        }
        const previous = sessionsByUser.get(record.userId)?.get(record.device)
        if (previous !== undefined) removeSession(previous)
        addSession(record)
        await commit()
      },

      async findByTokenHash (tokenHash) {
        const s = sessions.get(tokenHash)
        return s === undefined ? null : copySession(s)
      },

      async delete (tokenHash) {
        beginChange()
        if (!removeSession(tokenHash)) return false
        await commit()
        return true
      },

      async deleteByUser (userId, keepTokenHash) {
        beginChange()
        const doomed = [...sessionsByUser.get(userId)?.values() ?? []].filter(h => h !== keepTokenHash)
        for (const tokenHash of doomed) removeSession(tokenHash)
        if (doomed.length > 0) await commit()
        return doomed.length
      },

      async listByUser (userId) {
        return [...sessionsByUser.get(userId)?.values() ?? []].map(tokenHash => copySession(sessions.get(tokenHash)!))
      },
    },

    attempts: {
      async hit (key, windowMs, now) {
        beginChange()
        const current = attempts.get(key)
        const next = current !== undefined && current.resetAt > now
          ? { count: current.count + 1, resetAt: current.resetAt }
          : { count: 1, resetAt: new Date(now.getTime() + windowMs) }
        attempts.set(key, next)
        await commit()
        return copyAttempt(next)
      },

      async get (key, now) {
        const current = attempts.get(key)
        return current !== undefined && current.resetAt > now ? copyAttempt(current) : { count: 0, resetAt: new Date(now) }
      },

      async clear (key) {
        beginChange()
        if (attempts.delete(key)) await commit()
      },

      async clearPrefix (prefix) {
        beginChange()
        let removed = false
        for (const key of attempts.keys()) if (key.startsWith(prefix) && attempts.delete(key)) removed = true
        if (removed) await commit()
      },
    },

    keys: {
      async create (key) {
        const record: KeyRecord = { ...checkedKey(key), lastUsedAt: null }
        beginChange()
        if (keys.has(record.keyId)) throw new Error(`A key with id ${record.keyId} already exists`)
        if (keyIdByDigest.has(record.digest)) throw new Error('This key digest already belongs to another key')
        addKey(record)
        await commit()
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
        beginChange()
        if (!removeKey(keyId)) return false
        await commit()
        return true
      },

      async deleteForUser (userId, keyId) {
        text(userId, 'userId')
        text(keyId, 'keyId')
        beginChange()
        if (keys.get(keyId)?.userId !== userId) return false
        removeKey(keyId)
        await commit()
        return true
      },

      async deleteAllForUser (userId) {
        text(userId, 'userId')
        beginChange()
        const doomed = [...keys.values()].filter(k => k.userId === userId)
        for (const k of doomed) removeKey(k.keyId)
        if (doomed.length > 0) await commit()
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
        beginChange()
        k.lastUsedAt = new Date(at)
        log.changed('keys', k.keyId)
        await commit()
      },
    },

    limits: {
      async get (userId) {
        const l = limits.get(text(userId, 'userId'))
        return l === undefined ? null : { ...l }
      },

      async set (userId, override) {
        text(userId, 'userId')
        const record = checkedLimits(override)
        beginChange()
        limits.set(userId, record)
        await commit()
      },

      async clear (userId) {
        text(userId, 'userId')
        beginChange()
        if (!limits.delete(userId)) return false
        await commit()
        return true
      },
    },

    counters: {
      async add (key, windowStart, amount, expiresAt) {
        text(key, 'key')
        const start = checkedDate(windowStart, 'windowStart').getTime()
        const add = checkedAmount(amount)
        const end = checkedDate(expiresAt, 'expiresAt').getTime()
        beginChange()
        return addTo(key, start, add, end)
      },

      async get (key, windowStart) {
        const start = checkedDate(windowStart, 'windowStart').getTime()
        return counters.get(text(key, 'key'))?.get(start)?.total ?? 0
      },

      async batch (ops) {
        const checked = checkedCounterOps(ops)
        if (checked.some(op => op.add !== undefined)) beginChange()
        return checked.map(({ key, start, add }) => add === undefined
          ? counters.get(key)?.get(start.getTime())?.total ?? 0
          : addTo(key, start.getTime(), add.amount, add.expiresAt.getTime()))
      },
    },

    leases: {
      async acquire (key, leaseId, limit, now, expiresAt) {
        text(key, 'key')
        text(leaseId, 'leaseId')
        const max = checkedLeaseLimit(limit)
        const at = checkedDate(now, 'now').getTime()
        const end = checkedDate(expiresAt, 'expiresAt').getTime()
        beginChange()
        const held = liveLeases(key, at) ?? new Map<string, number>()
        if (!held.has(leaseId) && held.size >= max) return false
        held.set(leaseId, end)
        leases.set(key, held)
        return true
      },

      async renew (key, leaseId, now, expiresAt) {
        text(key, 'key')
        text(leaseId, 'leaseId')
        const at = checkedDate(now, 'now').getTime()
        const end = checkedDate(expiresAt, 'expiresAt').getTime()
        const held = liveLeases(key, at)
        if (held?.has(leaseId) !== true) return false
        held.set(leaseId, end)
        return true
      },

      async release (key, leaseId) {
        text(leaseId, 'leaseId')
        const held = leases.get(text(key, 'key'))
        held?.delete(leaseId)
        if (held?.size === 0) leases.delete(key)
      },

      async count (key, now) {
        text(key, 'key')
        return liveLeases(key, checkedDate(now, 'now').getTime())?.size ?? 0
      },
    },

    responses: {
      async put (record) {
        const r = checkedResponse(record)
        beginChange()
        const held = responses.get(r.id)
        if (held !== undefined && held.ownerId !== r.ownerId) throw new Error(`A response with id ${r.id} is held by another owner`)
        dropResponse(r.id)
        keepResponse(r)
      },

      async get (id, ownerId, now) {
        const owner = text(ownerId, 'ownerId')
        const at = checkedDate(now, 'now')
        const r = responses.get(text(id, 'id'))
        if (r === undefined || r.ownerId !== owner || r.expiresAt <= at) return null
        return { ...r }
      },

      async delete (id, ownerId) {
        const owner = text(ownerId, 'ownerId')
        const r = responses.get(text(id, 'id'))
        if (r === undefined || r.ownerId !== owner) return false
        beginChange()
        return dropResponse(id)
      },
    },

    usage: {
      async record (batch) {
        if (!Array.isArray(batch)) throw new TypeError('batch must be an array')
        const records = batch.map(checkedUsage)
        if (records.length === 0) return
        beginChange()
        for (const r of records) addUsage(r)
        await commit()
      },

      async query (q) {
        const { from, to, userId, limit } = checkedUsageQuery(q)
        return [...usage.values()]
          .filter(r => r.day >= from && r.day <= to && (userId === undefined || r.userId === userId))
          .sort(compareUsage)
          .slice(0, limit)
          .map(r => ({ ...r }))
      },
    },

    owners: {
      async put (record) {
        const checked = checkedOwner(record)
        beginChange()
        owners.set(checked.resource, checked)
        await commit()
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
        beginChange()
        if (!owners.delete(resource)) return false
        await commit()
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
    },

    async ping () {
      if (closed) throw new Error('The embedded store is closed')
    },

    async flush () {
      await saver?.flush()
    },

    async close () {
      closed = true
      // Kept counter windows ride on the next save; at close that is this one.
      if (saver !== undefined && log.pending()) await commit()
      await saver?.flush()
      await saver?.close()
    },
  }
}

/**
 * The file's data with its journal applied and its generation, or no data when there is no file yet. Anything else
 * wrong stops start-up, file and journal untouched.
 */
async function loadDataFile (file: string, logger: Logger | undefined): Promise<{ data: EmbeddedData | undefined, generation: number }> {
  try {
    await mkdir(dirname(file), { recursive: true })
  } catch (err) {
    throw new Error(`Cannot create the directory of the embedded store data file ${file}: ${(err as Error).message}`, { cause: err })
  }
  const stale = await removeStaleTempFiles(file).catch(() => [])
  if (stale.length > 0) logger?.warn({ file, removed: stale }, 'embedded store: removed temp files left by an interrupted save')
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new Error(`Cannot read the embedded store data file ${file}: ${(err as Error).message}`, { cause: err })
    }
    logger?.info({ file }, 'embedded store: no data file yet, starting empty')
    return { data: undefined, generation: 0 }
  }
  const generation = storeFileGeneration(text)
  let data: EmbeddedData
  try {
    data = decodeStoreFile(text, await readJournal(file, generation, logger))
  } catch (err) {
    throw new Error(`The embedded store data file ${file} is corrupt: ${(err as Error).message}. ` +
      'It was left untouched: repair it, or move it away to start empty.', { cause: err })
  }
  logger?.info({ file, users: data.users.length, sessions: data.sessions.length }, 'embedded store: data file loaded')
  return { data, generation }
}
