// Per-user rate limits that hold across replicas: every count lives in the store (store.counters, store.leases),
// so two processes on one store refuse the same user at the same threshold. The limits are the caller's access
// level's (option byLevel, GEMINI_LIMITS) with the user's override (store.limits) laid over them field by field;
// the dollar budgets among them, and a key's own monthly cap, are lib/metering/budgets.ts's.
import { randomUUID } from 'node:crypto'
import type { CounterOp, CounterStore, LeaseStore, LimitStore } from '../store/types.ts'
import { ConfigurationError, GatehouseError } from '../errors.ts'
import type { KeyCaller } from '../proxy/access/caller.ts'
import { effectiveLimits, levelEntry, resolveLimitsOption, UNLIMITED } from './limits-rule.ts'
import type { LimitsByLevel, RateLimits } from './limits-rule.ts'
import type { TokenUsage } from './token-usage.ts'
import { budgetHeaders, budgetMessage, budgetsAt, reserveOps, settleOps, spentBudget, unpricedRefusal } from './budgets.ts'
import type { BudgetName, CallPrice } from './budgets.ts'


/** Which limit refused a call: the label of gatehouse_rate_limited_total. */
export type LimitName = 'requests' | 'tokens' | 'tokens_per_day' | 'concurrent' | BudgetName

/** Who is admitted: the user and level whose limits apply, and the key with its own monthly cap, if any. */
export type LimitedCaller = Pick<KeyCaller, 'userId' | 'accessLevel'> & Partial<Pick<KeyCaller, 'keyId' | 'usdPerMonthMicros'>>

export interface Admission {
  /** The x-ratelimit-* headers (OpenAI's names) for the response; an unlimited dimension has none. */
  headers: Record<string, string>
  /** Trues the reservation up to the call's tokens (from the upstream's usage; undefined: none were spent, the whole
   *  reservation is released) and its dollar reservation up to `costMicros` (the usage row's cost; absent: 0), and
   *  frees its concurrency slot. Idempotent; called on completion, error and client abort. */
  settle (usage: TokenUsage | undefined, costMicros?: number): Promise<void>
}

export interface RateLimiter {
  /**
   * Admits a key caller's call, reserving `tokens` (its input estimate plus the output it may ask for) in the token
   * windows, or throws RateLimitedError (RATE_LIMITED, 429, Retry-After seconds, which limit). A call is admitted
   * while each window is under its limit, so calls in flight together overrun a limit by at most one reservation.
   * `price`: a model call's reservation in micro-dollars, reserved in the dollar budgets the same way; absent, the
   * call costs nothing (a request on no model). Under a dollar budget a model without a price is MODEL_UNPRICED.
   */
  admit (caller: LimitedCaller, tokens: number, price?: CallPrice): Promise<Admission>
  /**
   * A key's request refused before its call began (an unknown model, one the policy refuses, a body that does not
   * parse): spends no request or token of the minute, the headers telling what is left; the refusals count in their
   * own window, and the one past rpm of a minute is refused (RATE_LIMITED). Nothing to settle.
   */
  refusal? (caller: Pick<KeyCaller, 'userId' | 'accessLevel'>): Promise<Admission>
  /**
   * A key's read of the model list (`GET /v1/models`, clients ask it at start): spends no request of the minute but
   * counts in its own window of MODEL_LIST_ALLOWANCE × rpm, the one past it refused (RATE_LIMITED). Nothing to settle.
   */
  listing? (caller: Pick<KeyCaller, 'userId' | 'accessLevel'>): Promise<Admission>
  /** Read-only: the user's limits in effect and what the current windows hold, counting nothing (the console's "what is left"). */
  standing? (caller: Pick<KeyCaller, 'userId' | 'accessLevel'>): Promise<Standing>
}

/** A user's limits in effect (null: unlimited) and what they have used of each in its current window. */
export interface Standing {
  limits: Required<RateLimits>
  used: { rpm: number, tpm: number, tokensPerDay: number, concurrent: number, usdPerDayMicros: number, usdPerMonthMicros: number }
}

/** How many model-list reads a minute a key has for each request of its rpm (RateLimiter.listing). */
export const MODEL_LIST_ALLOWANCE = 10

/** RATE_LIMITED with the limit that refused and the headers to send with the 429. */
export class RateLimitedError extends GatehouseError {
  readonly limit: LimitName
  readonly headers: Record<string, string>
  constructor (limit: LimitName, message: string, retryAfter: number, headers: Record<string, string>) {
    super('RATE_LIMITED', message, { retryAfter })
    this.limit = limit
    this.headers = headers
  }
}

export interface RateLimiterOptions {
  /** Where counters, leases and per-user overrides live (a Store has all three). Required. */
  store: { counters: CounterStore, leases: LeaseStore, limits: LimitStore }
  /** Limits by access level (lib/metering/limits-rule.ts); a level not listed is unlimited. Default {}: no limits. */
  byLevel?: LimitsByLevel
  /** The clock. Default `() => new Date()`; tests pass a fake one. */
  now?: () => Date
  /** How long a user's override is reused before it is read again, in ms; an admin's change holds within it. Default 4000. */
  overridesCacheMs?: number
  /** A concurrency slot's lease, in seconds, renewed while the call runs: a crashed process's slots free within it. Default 60. */
  leaseSeconds?: number
  /** Called with the limit on every refusal (gatehouse_rate_limited_total{limit}). Default: none. */
  onLimited?: (limit: LimitName) => void
  /** Runs `fn` every `ms` until the returned stop is called. Default an unref'd setInterval; tests pass a manual one. */
  repeat?: (fn: () => void, ms: number) => () => void
}

const MINUTE = 60_000
const DAY = 86_400_000
/** Retry-After for a full concurrency limit: a slot frees when any call ends, which no window predicts. */
const CONCURRENT_RETRY_SECONDS = 1
/** Overrides held in memory at most; past it the cache starts again (a cache, not a bound on users). */
const OVERRIDES_CACHE_MAX = 10_000

/** A duration as OpenAI writes x-ratelimit-reset-*: `850ms`, `1s`, `6m0s`, `1h2m3s` (whole seconds above one). */
export function resetDuration (ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.ceil(ms))}ms`
  const total = Math.ceil(ms / 1000)
  const h = Math.floor(total / 3600)
  const m = Math.floor((total % 3600) / 60)
  const s = total % 60
  return h > 0 ? `${h}h${m}m${s}s` : m > 0 ? `${m}m${s}s` : `${s}s`
}

/** The largest reservation taken from one call: far above any model's window, and its totals stay safe integers. */
const MAX_RESERVATION = 2 ** 40

const SETTLED: Promise<void> = Promise.resolve()
const nothing = (): void => {}

const count = (n: number): number => Number.isSafeInteger(n) && n > 0 ? n : 0
/** What a call is charged: cached tokens are part of the input, so not added again. */
const tokensOf = (usage: TokenUsage): number => count(usage.inputTokens) + count(usage.outputTokens) + count(usage.thinkingTokens)

/** Takes back the adds of `ops` (a call a limit refused: no request served, nothing spent), in one store call. */
async function undoAdds (counters: CounterStore, ops: readonly CounterOp[]): Promise<void> {
  const back: CounterOp[] = []
  for (const op of ops) if (op.amount !== undefined) back.push({ ...op, amount: -op.amount })
  if (back.length > 0) await counters.batch(back)
}

function nonNegativeInteger (value: number, option: string): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new ConfigurationError(option, `createRateLimiter: ${option} must be a whole number, 0 or more (got ${String(value)})`)
  return value
}

/** The x-ratelimit-* headers of the minute's windows (OpenAI's names), for the limits that are set. */
function minuteHeaders (headers: Record<string, string>, limits: RateLimits, requests: number, tokens: number, minuteLeft: number): void {
  const reset = resetDuration(minuteLeft)
  if (limits.rpm != null) {
    headers['x-ratelimit-limit-requests'] = String(limits.rpm)
    headers['x-ratelimit-remaining-requests'] = String(Math.max(0, limits.rpm - requests))
    headers['x-ratelimit-reset-requests'] = reset
  }
  if (limits.tpm != null) {
    headers['x-ratelimit-limit-tokens'] = String(limits.tpm)
    headers['x-ratelimit-remaining-tokens'] = String(Math.max(0, limits.tpm - tokens))
    headers['x-ratelimit-reset-tokens'] = reset
  }
}

const defaultRepeat = (fn: () => void, ms: number): (() => void) => {
  const timer = setInterval(fn, ms)
  timer.unref()
  return () => clearInterval(timer)
}

export function createRateLimiter (options: RateLimiterOptions): RateLimiter {
  const { store, onLimited } = options
  if (store == null || typeof store.counters !== 'object' || typeof store.leases !== 'object' || typeof store.limits !== 'object') {
    throw new ConfigurationError('store', 'createRateLimiter: options.store must have counters, leases and limits (a Store)')
  }
  const byLevel = resolveLimitsOption(options.byLevel, 'byLevel')
  const now = options.now ?? (() => new Date())
  const overridesCacheMs = nonNegativeInteger(options.overridesCacheMs ?? 4000, 'overridesCacheMs')
  const leaseMs = nonNegativeInteger(options.leaseSeconds ?? 60, 'leaseSeconds') * 1000
  if (leaseMs === 0) throw new ConfigurationError('leaseSeconds', 'createRateLimiter: leaseSeconds must be at least 1')
  const repeat = options.repeat ?? defaultRepeat
  /** Per user, for one cache period: the override as read, and the limits and store keys worked out from it. */
  interface UserEntry { override: RateLimits | null, until: number, level: KeyCaller['accessLevel'], limits: RateLimits, keys: UserKeys }
  interface UserKeys { rpm: string, tpm: string, day: string, leases: string, refused: string, listing: string }
  const overrides = new Map<string, UserEntry>()

  /** The user's entry: at once from the cache within its period (no await on the hot path), else read from the store. */
  function userOf (userId: string, level: KeyCaller['accessLevel'], at: number): UserEntry | Promise<UserEntry> {
    let cached = overrides.get(userId)
    if (cached === undefined || cached.until <= at) return readUser(userId, level, at)
    if (cached.level !== level) {
      // The caller's level changed within the period (a promotion): the override stays, the level's limits follow.
      cached = { ...cached, level, limits: effectiveLimits(levelEntry(byLevel, level), cached.override) }
      overrides.set(userId, cached)
    }
    return cached
  }

  async function readUser (userId: string, level: KeyCaller['accessLevel'], at: number): Promise<UserEntry> {
    const override = await store.limits.get(userId)
    const entry = { override, until: at + overridesCacheMs, level, limits: effectiveLimits(levelEntry(byLevel, level), override), keys: { rpm: `rate:rpm:${userId}`, tpm: `rate:tpm:${userId}`, day: `rate:tpd:${userId}`, leases: `rate:concurrent:${userId}`, refused: `rate:refused:${userId}`, listing: `rate:listing:${userId}` } }
    if (overrides.size >= OVERRIDES_CACHE_MAX) overrides.clear()
    overrides.set(userId, entry)
    return entry
  }

  // Lease ids: unique across replicas by this limiter's random part, within it by a sequence (no UUID per call).
  const leasePrefix = `${randomUUID()}:`
  let leaseSeq = 0

  // Live concurrency leases (id → store key), renewed together by one repeating task while any is held, rather than
  // a timer per call: well before expiry while the call runs; a crashed process stops renewing and its slots free.
  const held = new Map<string, string>()
  let stopRenewing: (() => void) | undefined
  const renewAll = (): void => {
    const t = now().getTime()
    for (const [leaseId, key] of held) store.leases.renew(key, leaseId, new Date(t), new Date(t + leaseMs)).catch(() => {})
  }
  function hold (leaseId: string, key: string): void {
    held.set(leaseId, key)
    stopRenewing ??= repeat(renewAll, Math.max(1000, Math.floor(leaseMs / 3)))
  }
  function drop (leaseId: string): void {
    held.delete(leaseId)
    if (held.size === 0 && stopRenewing !== undefined) {
      stopRenewing()
      stopRenewing = undefined
    }
  }

  function refuse (limit: LimitName, message: string, retryAfterMs: number, headers: Record<string, string>): never {
    if (onLimited !== undefined) {
      // A failing metrics hook must never change an answer.
      try { onLimited(limit) } catch {}
    }
    throw new RateLimitedError(limit, message, Math.max(1, Math.ceil(retryAfterMs / 1000)), headers)
  }

  /**
   * A request that spends none of the minute's limits but counts in a window of its own (`kind`), `times` × rpm a
   * minute; the one past that is refused. The minute's windows are read for the headers, not added to.
   */
  async function aside (caller: Pick<KeyCaller, 'userId' | 'accessLevel'>, kind: 'refused' | 'listing', times: number, what: string): Promise<Admission> {
    const at = now().getTime()
    const user = userOf(caller.userId, caller.accessLevel, at)
    const { limits, keys } = user instanceof Promise ? await user : user
    if (limits.rpm == null && limits.tpm == null) return { headers: {}, settle: () => SETTLED }
    const minute = new Date(at - (at % MINUTE))
    const ops: CounterOp[] = [{ key: keys.rpm, windowStart: minute }, { key: keys.tpm, windowStart: minute }]
    if (limits.rpm != null) ops.push({ key: keys[kind], windowStart: minute, amount: 1, expiresAt: new Date(minute.getTime() + 2 * MINUTE) })
    const [count, tokenTotal, asideCount] = await store.counters.batch(ops)
    const headers: Record<string, string> = {}
    const minuteLeft = minute.getTime() + MINUTE - at
    minuteHeaders(headers, limits, count, tokenTotal, minuteLeft)
    if (limits.rpm != null && asideCount > limits.rpm * times) refuse('requests', `Rate limit reached: ${limits.rpm * times} ${what} per minute`, minuteLeft, headers)
    return { headers, settle: () => SETTLED }
  }

  return {
    async refusal (caller) {
      return await aside(caller, 'refused', 1, 'refused requests')
    },

    async listing (caller) {
      return await aside(caller, 'listing', MODEL_LIST_ALLOWANCE, 'model-list reads')
    },

    async standing (caller) {
      const at = now().getTime()
      const user = userOf(caller.userId, caller.accessLevel, at)
      const { limits, keys } = user instanceof Promise ? await user : user
      const minute = at - (at % MINUTE)
      // Both dollar windows are read whatever is set, so "what is left" shows spend under no budget too.
      const [day, month] = budgetsAt({ usdPerDayMicros: 0, usdPerMonthMicros: 0 }, caller.userId, undefined, at)
      const [rpm, tpm, tokensPerDay, usdPerDayMicros, usdPerMonthMicros] = await store.counters.batch([
        { key: keys.rpm, windowStart: new Date(minute) },
        { key: keys.tpm, windowStart: new Date(minute) },
        { key: keys.day, windowStart: new Date(at - (at % DAY)) },
        ...reserveOps([day, month], 0),
      ])
      const concurrent = await store.leases.count(keys.leases, new Date(at))
      return {
        limits: { ...UNLIMITED, ...limits },
        used: { rpm, tpm, tokensPerDay, concurrent, usdPerDayMicros, usdPerMonthMicros },
      }
    },

    async admit (caller, tokens, price) {
      const { userId } = caller
      const at = now().getTime()
      const user = userOf(userId, caller.accessLevel, at)
      const { limits, keys } = user instanceof Promise ? await user : user
      const budgets = budgetsAt(limits, userId, caller.keyId === undefined ? undefined : { keyId: caller.keyId, usdPerMonthMicros: caller.usdPerMonthMicros }, at)
      // Nothing is counted for a call no budget could charge: the metering layer counts it as a request it refused.
      if (budgets.length > 0 && price !== undefined && price.reservedMicros === undefined) throw unpricedRefusal(price, budgets)
      const reservedMicros = budgets.length === 0 ? 0 : Math.max(0, price?.reservedMicros ?? 0)
      const minute = at - (at % MINUTE)
      const day = at - (at % DAY)
      const minuteLeft = minute + MINUTE - at
      const headers: Record<string, string> = {}
      const reserved = Math.max(0, Math.ceil(Number.isFinite(tokens) ? Math.min(tokens, MAX_RESERVATION) : 0))

      // One store call counts the request and adds the reservation to the token windows, for the limits that are
      // set: each add is atomic and answers the window's total with it, so of calls racing for the last room
      // exactly those that found the window under its limit are let in (docs/model-proxy.md, "Limits and usage").
      // The minute's two windows share their dates: stores read them and keep none.
      const ops: CounterOp[] = []
      const minuteStart = limits.rpm != null || limits.tpm != null ? new Date(minute) : undefined
      const minuteEnd = limits.rpm != null || (limits.tpm != null && reserved > 0) ? new Date(minute + 2 * MINUTE) : undefined
      if (limits.rpm != null) ops.push({ key: keys.rpm, windowStart: minuteStart as Date, amount: 1, expiresAt: minuteEnd })
      if (limits.tpm != null) ops.push(reserved > 0 ? { key: keys.tpm, windowStart: minuteStart as Date, amount: reserved, expiresAt: minuteEnd } : { key: keys.tpm, windowStart: minuteStart as Date })
      if (limits.tokensPerDay != null) ops.push(reserved > 0 ? { key: keys.day, windowStart: new Date(day), amount: reserved, expiresAt: new Date(day + DAY + 3_600_000) } : { key: keys.day, windowStart: new Date(day) })
      const budgetsFrom = ops.length
      if (budgets.length > 0) ops.push(...reserveOps(budgets, reservedMicros))
      const totals: number[] = ops.length === 0 ? [] : await store.counters.batch(ops)
      const budgetTotals = budgets.length === 0 ? totals : totals.slice(budgetsFrom)
      let next = 0

      // Every header first: a refusal on one limit still tells the client where it stands on the other.
      const count = limits.rpm != null ? totals[next++] : 0
      const tokenTotal = limits.tpm != null ? totals[next++] : 0
      const requestsOver = limits.rpm != null && count > limits.rpm
      // A refused call takes its reservation back: what is left is then what it found.
      minuteHeaders(headers, limits, count, requestsOver ? tokenTotal - reserved : tokenTotal, minuteLeft)
      const spent = budgets.length === 0 ? undefined : spentBudget(budgets, budgetTotals, reservedMicros)
      const refusedBefore = requestsOver || (limits.tpm != null && tokenTotal - reserved >= limits.tpm) || (limits.tokensPerDay != null && totals[next] - reserved >= limits.tokensPerDay)
      if (budgets.length > 0) Object.assign(headers, budgetHeaders(budgets, budgetTotals, reservedMicros, refusedBefore || spent !== undefined))
      if (requestsOver) {
        await undoAdds(store.counters, ops)
        refuse('requests', `Rate limit reached: ${limits.rpm as number} requests per minute`, minuteLeft, headers)
      }
      if (limits.tpm != null && tokenTotal - reserved >= limits.tpm) {
        await undoAdds(store.counters, ops)
        refuse('tokens', `Rate limit reached: ${limits.tpm} tokens per minute`, minuteLeft, headers)
      }
      if (limits.tokensPerDay != null) {
        const perDay = limits.tokensPerDay
        if (totals[next] - reserved >= perDay) {
          await undoAdds(store.counters, ops)
          refuse('tokens_per_day', `Rate limit reached: ${perDay} tokens per day (UTC)`, day + DAY - at, headers)
        }
      }
      if (spent !== undefined) {
        await undoAdds(store.counters, ops)
        refuse(spent.budget.name, budgetMessage(spent.budget, spent.left), spent.budget.resetAt.getTime() - at, headers)
      }
      const concurrent = limits.concurrent
      const leaseId = concurrent != null ? leasePrefix + (leaseSeq++).toString(36) : ''
      if (concurrent != null) {
        const taken = await store.leases.acquire(keys.leases, leaseId, concurrent, new Date(at), new Date(at + leaseMs))
        if (!taken) {
          await undoAdds(store.counters, ops)
          refuse('concurrent', `Rate limit reached: ${concurrent} calls at once`, CONCURRENT_RETRY_SECONDS * 1000, headers)
        }
        hold(leaseId, keys.leases)
      }

      let settled: Promise<void> | undefined
      return {
        headers,
        settle (usage, costMicros) {
          if (settled !== undefined) return settled
          // Plain promises rather than an async closure: this runs once per call on the hot path.
          try {
            const tasks: Array<Promise<unknown>> = []
            if (concurrent != null) {
              drop(leaseId)
              tasks.push(store.leases.release(keys.leases, leaseId))
            }
            const tokens = usage === undefined ? 0 : tokensOf(usage)
            if (limits.tpm != null || limits.tokensPerDay != null || budgets.length > 0) {
              // The reservation is trued up to the usage (released, or the excess added) in the window it was made in;
              // a call that ends in a later window is charged there, the earlier one kept as it was. One store call.
              const t = now().getTime()
              const m = t - (t % MINUTE)
              const d = t - (t % DAY)
              const charges: CounterOp[] = []
              const tpmCharge = m === minute ? tokens - reserved : tokens
              const dayCharge = d === day ? tokens - reserved : tokens
              if (limits.tpm != null && tpmCharge !== 0) charges.push({ key: keys.tpm, windowStart: m === minute ? minuteStart as Date : new Date(m), amount: tpmCharge, expiresAt: m === minute && minuteEnd !== undefined ? minuteEnd : new Date(m + 2 * MINUTE) })
              if (limits.tokensPerDay != null && dayCharge !== 0) charges.push({ key: keys.day, windowStart: new Date(d), amount: dayCharge, expiresAt: new Date(d + DAY + 3_600_000) })
              if (budgets.length > 0) charges.push(...settleOps(budgets, reservedMicros, usage === undefined ? 0 : Math.max(0, costMicros ?? 0), t))
              if (charges.length > 0) tasks.push(store.counters.batch(charges))
            }
            settled = tasks.length === 0 ? SETTLED : (tasks.length === 1 ? tasks[0] : Promise.all(tasks)).then(nothing)
          } catch (err) {
            settled = Promise.reject(err)
          }
          return settled
        },
      }
    },
  }
}
