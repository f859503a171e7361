// The embedded store's data file: JSON with a format name, a version, and ISO-8601 dates.
// Reading checks every field, so a hand-edited or damaged file stops start-up instead of
// loading half a database that the next save would then write back.
import { ACCESS_LEVELS } from './types.ts'
import { checkedLimits, checkedOwner, checkedSetting, checkedUsage } from './record-checks.ts'
import type { AccessLevel, AttemptCount, KeyRecord, OwnerRecord, SessionRecord, SettingRecord, UsageRecord, UserLimits, UserRecord } from './types.ts'

const FILE_FORMAT = 'gatehouse-embedded-store'
const FILE_VERSION = 1

export interface StoredAttempt extends AttemptCount {
  key: string
}

export interface StoredLimits {
  userId: string
  limits: UserLimits
}

/** A counter window the file keeps (one of an hour or longer: a day's tokens, a month's dollars). */
export interface StoredCounter {
  key: string
  windowStart: Date
  total: number
  expiresAt: Date
}

/** A deleted key's name, kept for usage (KeyStore.names). */
export interface RetiredKey {
  keyId: string
  name: string
  deletedAt: Date
}

export interface EmbeddedData {
  retiredKeys: RetiredKey[]
  users: UserRecord[]
  sessions: SessionRecord[]
  attempts: StoredAttempt[]
  keys: KeyRecord[]
  limits: StoredLimits[]
  settings: SettingRecord[]
  usage: UsageRecord[]
  owners: OwnerRecord[]
  counters: StoredCounter[]
}

/** The record kinds the file holds, each a list under its own name. */
export type RecordKind = keyof EmbeddedData

/** Each kind's record as it is written: dates as ISO-8601 text. */
const ENCODERS: { [K in RecordKind]: (record: EmbeddedData[K][number]) => unknown } = {
  users: u => ({ ...u, dateJoined: u.dateJoined.toISOString() }),
  sessions: s => ({ ...s, createdAt: s.createdAt.toISOString(), expiresAt: s.expiresAt.toISOString() }),
  attempts: a => ({ key: a.key, count: a.count, resetAt: a.resetAt.toISOString() }),
  keys: k => ({
    ...k,
    createdAt: k.createdAt.toISOString(),
    expiresAt: k.expiresAt?.toISOString() ?? null,
    lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
  }),
  limits: l => l,
  settings: s => ({ ...s, setAt: s.setAt.toISOString() }),
  usage: r => r,
  owners: o => ({ ...o, createdAt: o.createdAt.toISOString(), expiresAt: o.expiresAt.toISOString() }),
  counters: c => ({ key: c.key, windowStart: c.windowStart.toISOString(), total: c.total, expiresAt: c.expiresAt.toISOString() }),
  retiredKeys: k => ({ keyId: k.keyId, name: k.name, deletedAt: k.deletedAt.toISOString() }),
}

/** The field (or fields, for usage rows) that names a record of each kind: the journal's key (./embedded-journal.ts). */
const ID_OF: Record<RecordKind, (raw: Record<string, unknown>) => string> = {
  users: r => String(r.id),
  sessions: r => String(r.tokenHash),
  attempts: r => String(r.key),
  keys: r => String(r.keyId),
  limits: r => String(r.userId),
  settings: r => String(r.name),
  usage: r => usageRowKey(r),
  owners: r => String(r.resource),
  counters: r => counterId(String(r.key), Date.parse(String(r.windowStart))),
  retiredKeys: r => String(r.keyId),
}

/** A counter window's identity: its key and the start of its window (epoch ms). */
export function counterId (key: string, start: number): string {
  return `${key}\n${start}`
}

/** A usage row's identity: its day, user, key, model and surface. */
export function usageRowKey (r: { day?: unknown, userId?: unknown, keyId?: unknown, model?: unknown, surface?: unknown }): string {
  return JSON.stringify([r.day, r.userId, r.keyId, r.model, r.surface])
}

export function encodeRecord<K extends RecordKind> (kind: K, record: EmbeddedData[K][number]): unknown {
  return (ENCODERS[kind] as (record: EmbeddedData[K][number]) => unknown)(record)
}

/** The whole file; `generation` names the journal the snapshot folds in (./embedded-journal.ts). */
export function encodeStoreFile (data: EmbeddedData, generation = 0): string {
  const top: Record<string, unknown> = { format: FILE_FORMAT, version: FILE_VERSION, generation }
  for (const kind of Object.keys(ENCODERS) as RecordKind[]) top[kind] = (data[kind] as Array<EmbeddedData[typeof kind][number]>).map(r => encodeRecord(kind, r))
  return JSON.stringify(top, null, 2) + '\n'
}

/** One change of a journal: the record of `kind` named `id` as it now is, or null once removed. */
export interface JournalEntry {
  kind: RecordKind
  id: string
  value: unknown
}

/**
 * Parses and checks a data file's text, with the journal's entries (in order) applied to its lists first;
 * throws an Error saying what is wrong and where.
 */
export function decodeStoreFile (text: string, journal: readonly JournalEntry[] = []): EmbeddedData {
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (err) {
    throw new Error(`not valid JSON (${(err as Error).message})`, { cause: err })
  }
  const top = objectAt(raw, 'the top level')
  if (top.format !== FILE_FORMAT) throw new Error(`"format" is not "${FILE_FORMAT}"`)
  if (top.version !== FILE_VERSION) {
    throw new Error(`"version" is ${JSON.stringify(top.version)}; this Gatehouse reads version ${FILE_VERSION}`)
  }
  if (journal.length > 0) applyJournal(top, journal)
  return decodeLists(top)
}

/** The generation a data file's snapshot folds in (0 in files written before the journal). */
export function storeFileGeneration (text: string): number {
  const m = /"generation":\s*(\d+)/.exec(text.slice(0, 200))
  return m === null ? 0 : Number(m[1])
}

function applyJournal (top: Record<string, unknown>, journal: readonly JournalEntry[]): void {
  const lists = new Map<RecordKind, Map<string, unknown>>()
  for (const { kind, id, value } of journal) {
    if (!(kind in ENCODERS)) throw new Error(`the journal names no record kind "${kind}"`)
    let byId = lists.get(kind)
    if (byId === undefined) {
      const given = top[kind] === undefined ? [] : arrayAt(top, kind)
      byId = new Map(given.map((r, i) => [ID_OF[kind](objectAt(r, `${kind}[${i}]`)), r]))
      lists.set(kind, byId)
    }
    if (value === null) byId.delete(id)
    else byId.set(id, value)
  }
  for (const [kind, byId] of lists) top[kind] = [...byId.values()]
}

function decodeLists (top: Record<string, unknown>): EmbeddedData {
  const data: EmbeddedData = {
    users: arrayAt(top, 'users').map((v, i) => readUser(objectAt(v, `users[${i}]`), `users[${i}]`)),
    sessions: arrayAt(top, 'sessions').map((v, i) => readSession(objectAt(v, `sessions[${i}]`), `sessions[${i}]`)),
    attempts: arrayAt(top, 'attempts').map((v, i) => readAttempt(objectAt(v, `attempts[${i}]`), `attempts[${i}]`)),
    // Absent in files written before keys, limits and usage existed.
    keys: optionalArrayAt(top, 'keys').map((v, i) => readKey(objectAt(v, `keys[${i}]`), `keys[${i}]`)),
    limits: optionalArrayAt(top, 'limits').map((v, i) => readLimits(objectAt(v, `limits[${i}]`), `limits[${i}]`)),
    // Absent in files written before admins could change settings.
    settings: optionalArrayAt(top, 'settings').map((v, i) => readSetting(objectAt(v, `settings[${i}]`), `settings[${i}]`)),
    usage: optionalArrayAt(top, 'usage').map((v, i) => readUsage(objectAt(v, `usage[${i}]`), `usage[${i}]`)),
    // Absent in files written before resource owners were recorded.
    owners: optionalArrayAt(top, 'owners').map((v, i) => readOwner(objectAt(v, `owners[${i}]`), `owners[${i}]`)),
    // Absent in files written before long counter windows were kept.
    counters: optionalArrayAt(top, 'counters').map((v, i) => readCounter(objectAt(v, `counters[${i}]`), `counters[${i}]`)),
    // Absent in files written before deleted keys' names were kept.
    retiredKeys: optionalArrayAt(top, 'retiredKeys').map((v, i) => readRetiredKey(objectAt(v, `retiredKeys[${i}]`), `retiredKeys[${i}]`)),
  }
  assertUnique(data.users.map(u => u.id), 'users', 'id')
  assertUnique(data.users.map(u => u.usernameKey), 'users', 'usernameKey')
  assertUnique(data.sessions.map(s => s.tokenHash), 'sessions', 'tokenHash')
  assertUnique(data.sessions.map(s => `${s.userId}\n${s.device}`), 'sessions', 'userId and device')
  assertUnique(data.attempts.map(a => a.key), 'attempts', 'key')
  assertUnique(data.keys.map(k => k.keyId), 'keys', 'keyId')
  assertUnique(data.keys.map(k => k.digest), 'keys', 'digest')
  assertUnique(data.limits.map(l => l.userId), 'limits', 'userId')
  assertUnique(data.settings.map(s => s.name), 'settings', 'name')
  assertUnique(data.owners.map(o => o.resource), 'owners', 'resource')
  assertUnique(data.counters.map(c => counterId(c.key, c.windowStart.getTime())), 'counters', 'key and windowStart')
  assertUnique(data.usage.map(usageRowKey), 'usage', 'day, userId, keyId, model and surface')
  return data
}

function readUser (o: Record<string, unknown>, where: string): UserRecord {
  const id = stringAt(o, 'id', where)
  if (!/^[0-9a-f]{24}$/.test(id)) throw new Error(`${where}.id is not 24 lower-case hex digits`)
  const accessLevel = stringAt(o, 'accessLevel', where)
  if (!(ACCESS_LEVELS as readonly string[]).includes(accessLevel)) throw new Error(`${where}.accessLevel is not one of ${ACCESS_LEVELS.join(', ')}`)
  const email = o.email === null ? null : stringAt(o, 'email', where)
  // Absent in files written before accounts could be disabled: those users are enabled.
  if (o.disabled !== undefined && typeof o.disabled !== 'boolean') throw new Error(`${where}.disabled is not true or false`)
  const user: UserRecord = {
    id,
    username: stringAt(o, 'username', where),
    usernameKey: stringAt(o, 'usernameKey', where),
    passwordHash: stringAt(o, 'passwordHash', where),
    email,
    accessLevel: accessLevel as AccessLevel,
    dateJoined: dateAt(o, 'dateJoined', where),
  }
  if (o.disabled === true) user.disabled = true
  return user
}

function readSession (o: Record<string, unknown>, where: string): SessionRecord {
  return {
    tokenHash: stringAt(o, 'tokenHash', where),
    userId: stringAt(o, 'userId', where),
    device: stringAt(o, 'device', where),
    createdAt: dateAt(o, 'createdAt', where),
    expiresAt: dateAt(o, 'expiresAt', where),
  }
}

function readAttempt (o: Record<string, unknown>, where: string): StoredAttempt {
  const count = o.count
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1) throw new Error(`${where}.count is not a positive integer`)
  return { key: stringAt(o, 'key', where), count, resetAt: dateAt(o, 'resetAt', where) }
}

/** A key's monthly cap, absent in files written before key budgets existed. */
function readKeyCap (cap: unknown, where: string): Pick<KeyRecord, 'usdPerMonthMicros'> {
  if (cap === undefined || cap === null) return {}
  if (typeof cap !== 'number' || !Number.isSafeInteger(cap) || cap < 0) throw new Error(`${where}.usdPerMonthMicros is not a non-negative whole number`)
  return { usdPerMonthMicros: cap }
}

function readKey (o: Record<string, unknown>, where: string): KeyRecord {
  const models = o.models
  if (models !== null && (!Array.isArray(models) || models.some(m => typeof m !== 'string'))) throw new Error(`${where}.models is not null or an array of strings`)
  return {
    keyId: stringAt(o, 'keyId', where),
    userId: stringAt(o, 'userId', where),
    name: stringAt(o, 'name', where),
    digest: stringAt(o, 'digest', where),
    prefix: stringAt(o, 'prefix', where),
    createdAt: dateAt(o, 'createdAt', where),
    expiresAt: o.expiresAt === null ? null : dateAt(o, 'expiresAt', where),
    lastUsedAt: o.lastUsedAt === null ? null : dateAt(o, 'lastUsedAt', where),
    models: models === null ? null : [...models as string[]],
    ...readKeyCap(o.usdPerMonthMicros, where),
  }
}

function readLimits (o: Record<string, unknown>, where: string): StoredLimits {
  try {
    return { userId: stringAt(o, 'userId', where), limits: checkedLimits(objectAt(o.limits, `${where}.limits`)) }
  } catch (err) {
    throw new Error(`${where}: ${(err as Error).message}`, { cause: err })
  }
}

function readSetting (o: Record<string, unknown>, where: string): SettingRecord {
  try {
    return checkedSetting({ name: o.name as SettingRecord['name'], value: o.value as boolean, setBy: stringAt(o, 'setBy', where), setAt: dateAt(o, 'setAt', where) })
  } catch (err) {
    throw new Error(`${where}: ${(err as Error).message}`, { cause: err })
  }
}

function readUsage (o: Record<string, unknown>, where: string): UsageRecord {
  try {
    return checkedUsage(o as unknown as UsageRecord)
  } catch (err) {
    throw new Error(`${where}: ${(err as Error).message}`, { cause: err })
  }
}

function readOwner (o: Record<string, unknown>, where: string): OwnerRecord {
  try {
    return checkedOwner({ resource: stringAt(o, 'resource', where), userId: stringAt(o, 'userId', where), keyId: stringAt(o, 'keyId', where), createdAt: dateAt(o, 'createdAt', where), expiresAt: dateAt(o, 'expiresAt', where), ...(o.inputTokens === undefined ? {} : { inputTokens: o.inputTokens as number }) })
  } catch (err) {
    throw new Error(`${where}: ${(err as Error).message}`, { cause: err })
  }
}

function readCounter (o: Record<string, unknown>, where: string): StoredCounter {
  const total = o.total
  if (typeof total !== 'number' || !Number.isSafeInteger(total) || total < 0) throw new Error(`${where}.total is not a whole number 0 or more`)
  return { key: stringAt(o, 'key', where), windowStart: dateAt(o, 'windowStart', where), total, expiresAt: dateAt(o, 'expiresAt', where) }
}

function readRetiredKey (o: Record<string, unknown>, where: string): RetiredKey {
  return { keyId: stringAt(o, 'keyId', where), name: stringAt(o, 'name', where), deletedAt: dateAt(o, 'deletedAt', where) }
}

function objectAt (value: unknown, where: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`${where} is not an object`)
  return value as Record<string, unknown>
}

function arrayAt (o: Record<string, unknown>, field: string): unknown[] {
  const value = o[field]
  if (!Array.isArray(value)) throw new Error(`"${field}" is not an array`)
  return value
}

function optionalArrayAt (o: Record<string, unknown>, field: string): unknown[] {
  return o[field] === undefined ? [] : arrayAt(o, field)
}

function stringAt (o: Record<string, unknown>, field: string, where: string): string {
  const value = o[field]
  if (typeof value !== 'string') throw new Error(`${where}.${field} is not a string`)
  return value
}

function dateAt (o: Record<string, unknown>, field: string, where: string): Date {
  const value = o[field]
  const date = typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(value) ? new Date(value) : undefined
  if (date === undefined || Number.isNaN(date.getTime())) throw new Error(`${where}.${field} is not an ISO-8601 date`)
  return date
}

function assertUnique (values: string[], list: string, what: string): void {
  const seen = new Set<string>()
  for (const [i, value] of values.entries()) {
    if (seen.has(value)) throw new Error(`${list}[${i}] repeats the ${what} of an earlier entry`)
    seen.add(value)
  }
}
