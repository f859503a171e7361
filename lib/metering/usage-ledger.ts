// The usage ledger: every proxied call is added to an in-memory row of (UTC day, user, key, model, surface),
// and the rows reach the store in one batched write at most every flushIntervalMs. A database write per call
// would cost more than the call's own bookkeeping; what is lost is bounded by the interval (README, "Usage").
import type { Store, UsageRecord } from '../store/types.ts'
import type { Logger } from '../logger.ts'
import { SILENT_LOGGER } from '../logger.ts'
import { ConfigurationError } from '../errors.ts'
import type { TokenUsage } from './token-usage.ts'

/** One finished proxy call. */
export interface UsageEntry {
  /** When the call finished; its UTC day is the row's day. */
  at: Date
  /** The key's owner, or "operator" for a call made with the operator password. */
  userId: string
  /** null: the call was not made with a user key. */
  keyId: string | null
  /** The model's base name. */
  model: string
  /** The surface's name (`chat`, `native`, and any surface added later: docs/model-proxy.md, "Adding a surface"). */
  surface: string
  /** The HTTP status answered: 4xx and 5xx count as errors of their class. */
  status: number
  /** Absent when the upstream reported none (an error, a call refused before it). */
  usage?: TokenUsage
  /** What the call cost in micro-dollars (docs/prices.md); absent when it used nothing or has no price. */
  costMicros?: number
  /** True for a call that used tokens of a model with no price in force (counted in unpricedRequests). */
  unpriced?: boolean
}

export interface UsageLedger {
  /** Adds the call to its row; never throws and never waits for the store. */
  record (entry: UsageEntry): void
  /** Writes the rows gathered so far now; rejects when the store does (the rows are kept for the next write). */
  flush (): Promise<void>
  /** Stops the timer and writes what is left; later records are ignored. */
  close (): Promise<void>
}

/** A scheduled run, as setTimeout gives one; tests pass a fake. */
export type SetTimer = (run: () => void, ms: number) => { clear (): void }

export interface UsageLedgerOptions {
  /** Where the rows go (store.usage); a whole Store will do. Required. */
  store: Pick<Store, 'usage'>
  /** Longest wait, in ms, between a call and the write holding it. Default 1000. */
  flushIntervalMs?: number
  /** Most distinct rows held between writes (unwritten ones of failed writes included); beyond it the oldest go, with a warning. Default 10000. */
  maxRows?: number
  /** Logs failed writes and dropped rows. Default: none. */
  logger?: Logger
  /** Schedules the next write. Default an unref'd setTimeout, so a pending write never keeps the process alive. */
  setTimer?: SetTimer
}

const DAY_MS = 86_400_000

const COUNTS = ['requests', 'inputTokens', 'outputTokens', 'thinkingTokens', 'cachedTokens', 'errors4xx', 'errors5xx', 'costMicros', 'unpricedRequests', 'groundedRequests', 'toolUseTokens'] as const

const defaultSetTimer: SetTimer = (run, ms) => {
  const handle = setTimeout(run, ms)
  handle.unref()
  return { clear: () => { clearTimeout(handle) } }
}

function positiveInteger (value: number | undefined, option: string, fallback: number): number {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new ConfigurationError(option, `createUsageLedger: ${option} must be a positive integer (got ${String(value)})`)
  }
  return value
}

/** A token count the store accepts: the store refuses a whole batch for one bad number, so a bad one counts 0. */
function tokens (value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.min(Math.floor(value), Number.MAX_SAFE_INTEGER) : 0
}

function addCounts (into: UsageRecord, from: UsageRecord): void {
  for (const name of COUNTS) into[name] = Math.min(into[name] + from[name], Number.MAX_SAFE_INTEGER)
}

const rowKey = (r: Pick<UsageRecord, 'day' | 'userId' | 'keyId' | 'model' | 'surface'>): string =>
  JSON.stringify([r.day, r.userId, r.keyId, r.model, r.surface])

export function createUsageLedger (options: UsageLedgerOptions): UsageLedger {
  const usage = options.store?.usage
  if (usage === undefined || typeof usage.record !== 'function') {
    throw new ConfigurationError('store', 'createUsageLedger: options.store must have a usage part (createEmbeddedStore() or createMongoStore())')
  }
  const flushIntervalMs = positiveInteger(options.flushIntervalMs, 'flushIntervalMs', 1000)
  const maxRows = positiveInteger(options.maxRows, 'maxRows', 10_000)
  const logger = options.logger ?? SILENT_LOGGER
  const setTimer = options.setTimer ?? defaultSetTimer

  // Insertion order is age order: the first rows are the ones dropped at the bound.
  let pending = new Map<string, UsageRecord>()
  let dropped = 0
  let timer: { clear (): void } | undefined
  let closed = false
  // Writes run one at a time, so a slow store never gets two batches of one row at once.
  let writing: Promise<void> = Promise.resolve()

  function admit (key: string, row: UsageRecord, into: Map<string, UsageRecord>): void {
    const held = into.get(key)
    if (held !== undefined) {
      addCounts(held, row)
      return
    }
    if (into.size >= maxRows) {
      const oldest = into.keys().next().value as string
      into.delete(oldest)
      if (dropped++ === 0) logger.warn({ maxRows }, 'usage ledger: too many unwritten rows, dropping the oldest')
    }
    into.set(key, row)
  }

  function schedule (): void {
    if (timer !== undefined || closed) return
    timer = setTimer(() => {
      timer = undefined
      flush().catch(() => { /* logged by write; the rows wait for the next timer */ })
    }, flushIntervalMs)
  }

  async function write (): Promise<void> {
    if (pending.size === 0) return
    const batch = pending
    pending = new Map()
    if (dropped > 0) {
      logger.warn({ dropped, maxRows }, 'usage ledger: usage rows were dropped since the last write')
      dropped = 0
    }
    try {
      await usage.record([...batch.values()])
    } catch (err) {
      // Put the batch back in front of what came since, so its rows stay the oldest and merge with newer counts.
      const merged = new Map<string, UsageRecord>()
      for (const [key, row] of batch) admit(key, row, merged)
      for (const [key, row] of pending) admit(key, row, merged)
      pending = merged
      logger.warn({ err, rows: pending.size }, 'usage ledger: writing usage failed; retrying with the next write')
      if (!closed) schedule()
      throw err
    }
  }

  function flush (): Promise<void> {
    timer?.clear()
    timer = undefined
    const next = writing.then(write)
    writing = next.catch(() => {})
    return next
  }

  // The UTC day of the last call, kept: nearly every call falls on the same day as the one before it.
  let dayStart = NaN
  let dayText = ''
  const dayOf = (at: number): string => {
    if (!(at >= dayStart && at < dayStart + DAY_MS)) {
      dayStart = at - (((at % DAY_MS) + DAY_MS) % DAY_MS)
      dayText = new Date(at).toISOString().slice(0, 10)
    }
    return dayText
  }

  return {
    record (entry) {
      if (closed) return
      const at = entry.at instanceof Date ? entry.at.getTime() : NaN
      if (!Number.isFinite(at)) return
      const status = entry.status
      const row: UsageRecord = {
        day: dayOf(at),
        userId: entry.userId,
        keyId: entry.keyId,
        model: entry.model,
        surface: entry.surface,
        requests: 1,
        inputTokens: tokens(entry.usage?.inputTokens),
        outputTokens: tokens(entry.usage?.outputTokens),
        thinkingTokens: tokens(entry.usage?.thinkingTokens),
        cachedTokens: tokens(entry.usage?.cachedTokens),
        errors4xx: status >= 400 && status < 500 ? 1 : 0,
        errors5xx: status >= 500 ? 1 : 0,
        costMicros: tokens(entry.costMicros),
        unpricedRequests: entry.unpriced === true ? 1 : 0,
        // A call is grounded when its answer ran search queries: then it paid search fees (billableSearches).
        groundedRequests: tokens(entry.usage?.searchQueries) > 0 ? 1 : 0,
        toolUseTokens: tokens(entry.usage?.toolUseTokens),
      }
      admit(rowKey(row), row, pending)
      schedule()
    },
    flush,
    async close () {
      if (closed) return await writing
      closed = true
      try {
        await flush()
      } catch (err) {
        logger.error({ err, rows: pending.size }, 'usage ledger: the last usage could not be written and is lost')
        throw err
      }
    },
  }
}
