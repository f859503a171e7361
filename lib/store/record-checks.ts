// Checks both adapters apply to the values of the newer store parts before storing them, so a value
// shaped like a query operator, or a count that is not a count, is refused the same way everywhere.
import { RESPONSE_RECORD_MAX_CHARS, SETTING_NAMES } from './types.ts'
import type { CounterOp, NewKeyRecord, OwnerRecord, ResponseRecord, SettingName, SettingRecord, UsageQuery, UsageRecord, UserLimits } from './types.ts'

const DAY = /^\d{4}-\d{2}-\d{2}$/
const LIMIT_FIELDS = ['rpm', 'tpm', 'tokensPerDay', 'concurrent', 'usdPerDayMicros', 'usdPerMonthMicros'] as const
const USAGE_COUNTS = ['requests', 'inputTokens', 'outputTokens', 'thinkingTokens', 'cachedTokens', 'errors4xx', 'errors5xx', 'costMicros', 'unpricedRequests', 'groundedRequests', 'toolUseTokens'] as const
/** Counts added after rows were first stored: absent in an older row or file, they count 0. */
const LATER_COUNTS: ReadonlySet<string> = new Set(['costMicros', 'unpricedRequests', 'groundedRequests', 'toolUseTokens'])

/** Refuses anything but a string, so an object such as `{ $ne: '' }` can never act as a query operator. */
export function text (value: unknown, name: string): string {
  if (typeof value !== 'string') throw new TypeError(`${name} must be a string`)
  return value
}

function date (value: unknown, name: string): Date {
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) throw new TypeError(`${name} must be a valid Date`)
  return value
}

function count (value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new TypeError(`${name} must be a non-negative safe integer`)
  return value
}

export function day (value: unknown, name: string): string {
  if (typeof value !== 'string' || !DAY.test(value)) throw new TypeError(`${name} must be a day as YYYY-MM-DD`)
  return value
}

/** A copy holding only the record's own fields, each checked. */
export function checkedKey (k: NewKeyRecord): NewKeyRecord {
  if (k.models !== null && (!Array.isArray(k.models) || k.models.some(m => typeof m !== 'string'))) {
    throw new TypeError('models must be null or an array of strings')
  }
  const cap = k.usdPerMonthMicros
  return {
    ...(cap === undefined || cap === null ? {} : { usdPerMonthMicros: count(cap, 'usdPerMonthMicros') }),
    keyId: text(k.keyId, 'keyId'),
    userId: text(k.userId, 'userId'),
    name: text(k.name, 'name'),
    digest: text(k.digest, 'digest'),
    prefix: text(k.prefix, 'prefix'),
    createdAt: date(k.createdAt, 'createdAt'),
    expiresAt: k.expiresAt === null ? null : date(k.expiresAt, 'expiresAt'),
    models: k.models === null ? null : [...k.models],
  }
}

export function checkedDate (value: unknown, name: string): Date {
  return date(value, name)
}

/** A copy with only the known fields that are present; each a non-negative safe integer or null. */
export function checkedLimits (limits: UserLimits): UserLimits {
  if (limits === null || typeof limits !== 'object') throw new TypeError('limits must be an object')
  const out: UserLimits = {}
  for (const field of LIMIT_FIELDS) {
    const value = limits[field]
    if (value === undefined) continue
    out[field] = value === null ? null : count(value, field)
  }
  return out
}

export function checkedAmount (value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new TypeError('amount must be a safe integer')
  return value
}

/** counters.batch's operations, every one checked before any is applied: a read, or an add with its expiry. */
export function checkedCounterOps (ops: unknown): Array<{ key: string, start: Date, add?: { amount: number, expiresAt: Date } }> {
  if (!Array.isArray(ops)) throw new TypeError('ops must be an array')
  return ops.map((op: CounterOp) => {
    if (op === null || typeof op !== 'object') throw new TypeError('each op must be an object')
    const key = text(op.key, 'key')
    const start = date(op.windowStart, 'windowStart')
    return op.amount === undefined ? { key, start } : { key, start, add: { amount: checkedAmount(op.amount), expiresAt: date(op.expiresAt, 'expiresAt') } }
  })
}

export function checkedLeaseLimit (value: unknown): number {
  return count(value, 'limit')
}

export function checkedUsage (r: UsageRecord): UsageRecord {
  const out: UsageRecord = {
    day: day(r.day, 'day'),
    userId: text(r.userId, 'userId'),
    keyId: r.keyId === null ? null : text(r.keyId, 'keyId'),
    model: text(r.model, 'model'),
    surface: text(r.surface, 'surface'),
    requests: 0,
    inputTokens: 0,
    outputTokens: 0,
    thinkingTokens: 0,
    cachedTokens: 0,
    errors4xx: 0,
    errors5xx: 0,
    costMicros: 0,
    unpricedRequests: 0,
    groundedRequests: 0,
    toolUseTokens: 0,
  }
  for (const field of USAGE_COUNTS) out[field] = r[field] === undefined && LATER_COUNTS.has(field) ? 0 : count(r[field], field)
  return out
}

export function checkedUsageQuery (q: UsageQuery): UsageQuery {
  const out: UsageQuery = { from: day(q.from, 'from'), to: day(q.to, 'to') }
  if (q.userId !== undefined) out.userId = text(q.userId, 'userId')
  if (q.limit !== undefined) {
    if (!Number.isSafeInteger(q.limit) || q.limit < 1) throw new TypeError(`limit must be a positive safe integer (got ${String(q.limit)})`)
    out.limit = q.limit
  }
  return out
}

export { USAGE_COUNTS }

/** A copy of an owner record with every field checked (the resource and ids non-empty strings, valid dates). */
export function checkedOwner (r: OwnerRecord): OwnerRecord {
  if (r === null || typeof r !== 'object') throw new TypeError('an owner record must be an object')
  const out: OwnerRecord = { resource: text(r.resource, 'resource'), userId: text(r.userId, 'userId'), keyId: text(r.keyId, 'keyId'), createdAt: new Date(date(r.createdAt, 'createdAt')), expiresAt: new Date(date(r.expiresAt, 'expiresAt')) }
  if (out.resource === '' || out.userId === '' || out.keyId === '') throw new TypeError('resource, userId and keyId must not be empty')
  if (r.inputTokens !== undefined) out.inputTokens = count(r.inputTokens, 'inputTokens')
  return out
}

/** The order query answers in: day, userId, keyId (null first), model, surface. */
export function compareUsage (a: UsageRecord, b: UsageRecord): number {
  const keys = (r: UsageRecord): string[] => [r.day, r.userId, r.keyId === null ? '' : '\u0001' + r.keyId, r.model, r.surface]
  const ka = keys(a)
  const kb = keys(b)
  for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i] < kb[i] ? -1 : 1
  return 0
}

/** A copy of a stored response with its fields checked, its data within RESPONSE_RECORD_MAX_CHARS. */
export function checkedResponse (r: ResponseRecord): ResponseRecord {
  if (r === null || typeof r !== 'object') throw new TypeError('record must be an object')
  const data = text(r.data, 'data')
  if (data.length > RESPONSE_RECORD_MAX_CHARS) throw new TypeError(`data must hold at most ${RESPONSE_RECORD_MAX_CHARS} characters`)
  if (text(r.id, 'id') === '') throw new TypeError('id must not be empty')
  return { id: r.id, ownerId: text(r.ownerId, 'ownerId'), data, createdAt: date(r.createdAt, 'createdAt'), expiresAt: date(r.expiresAt, 'expiresAt') }
}

/** A setting's name: one of SETTING_NAMES, never a query operator. */
export function settingName (value: unknown): SettingName {
  if (!(SETTING_NAMES as readonly unknown[]).includes(value)) throw new TypeError(`setting name must be one of ${SETTING_NAMES.join(', ')}`)
  return value as SettingName
}

/** A setting as both adapters store it: a known name, a boolean, who set it and when. */
export function checkedSetting (r: SettingRecord): SettingRecord {
  if (typeof r.value !== 'boolean') throw new TypeError('setting value must be true or false')
  return { name: settingName(r.name), value: r.value, setBy: text(r.setBy, 'setBy'), setAt: date(r.setAt, 'setAt') }
}
