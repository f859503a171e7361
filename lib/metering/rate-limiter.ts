// Per-user rate limits that hold across replicas: every count lives in the store (store.counters, store.leases),
// so two processes on one store refuse the same user at the same threshold. The limits are the caller's access
// level's (option byLevel, GEMINI_LIMITS) with the user's override (store.limits) laid over them field by field.
import { randomUUID } from 'node:crypto'
import type { CounterStore, LeaseStore, LimitStore } from '../store/types.ts'
import { ConfigurationError, GatehouseError } from '../errors.ts'
import type { KeyCaller } from '../proxy/access/caller.ts'
import { effectiveLimits, resolveLimitsOption } from './limits-rule.ts'
import type { LimitsByLevel, RateLimits } from './limits-rule.ts'
import type { TokenUsage } from './token-usage.ts'


/** Which limit refused a call: the label of gatehouse_rate_limited_total. */
export type LimitName = 'requests' | 'tokens' | 'tokens_per_day' | 'concurrent'

export interface Admission {
  /** The x-ratelimit-* headers (OpenAI's names) for the response; an unlimited dimension has none. */
  headers: Record<string, string>
  /** Charges the call's tokens (from the upstream's usage; undefined charges none) and frees its concurrency slot.
   *  Idempotent; called on completion, error and client abort. */
  settle (usage: TokenUsage | undefined): Promise<void>
}

export interface RateLimiter {
  /** Admits a key caller's call or throws RateLimitedError (RATE_LIMITED, 429, Retry-After seconds, which limit). */
  admit (caller: Pick<KeyCaller, 'userId' | 'accessLevel'>, estimatedInputTokens: number): Promise<Admission>
}

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

const count = (n: number): number => Number.isSafeInteger(n) && n > 0 ? n : 0
/** What a call is charged: cached tokens are part of the input, so not added again. */
const tokensOf = (usage: TokenUsage): number => count(usage.inputTokens) + count(usage.outputTokens) + count(usage.thinkingTokens)

function nonNegativeInteger (value: number, option: string): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new ConfigurationError(option, `createRateLimiter: ${option} must be a whole number, 0 or more (got ${String(value)})`)
  return value
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
  const overrides = new Map<string, { limits: RateLimits | null, until: number }>()

  async function limitsOf (userId: string, level: KeyCaller['accessLevel'], at: number): Promise<RateLimits> {
    let cached = overrides.get(userId)
    if (cached === undefined || cached.until <= at) {
      cached = { limits: await store.limits.get(userId), until: at + overridesCacheMs }
      if (overrides.size >= OVERRIDES_CACHE_MAX) overrides.clear()
      overrides.set(userId, cached)
    }
    return effectiveLimits(byLevel[level], cached.limits)
  }

  function refuse (limit: LimitName, message: string, retryAfterMs: number, headers: Record<string, string>): never {
    if (onLimited !== undefined) {
      // A failing metrics hook must never change an answer.
      try { onLimited(limit) } catch {}
    }
    throw new RateLimitedError(limit, message, Math.max(1, Math.ceil(retryAfterMs / 1000)), headers)
  }

  return {
    async admit (caller, estimatedInputTokens) {
      const { userId } = caller
      const at = now().getTime()
      const limits = await limitsOf(userId, caller.accessLevel, at)
      const minute = at - (at % MINUTE)
      const day = at - (at % DAY)
      const minuteLeft = minute + MINUTE - at
      const headers: Record<string, string> = {}
      const estimate = Math.max(0, Math.ceil(Number.isFinite(estimatedInputTokens) ? estimatedInputTokens : 0))
      const keys = { rpm: `rate:rpm:${userId}`, tpm: `rate:tpm:${userId}`, day: `rate:tpd:${userId}`, leases: `rate:concurrent:${userId}` }
      // Undoes this call's request count when a later limit refuses it: a refused call is no request served.
      let uncount = async (): Promise<void> => {}

      if (limits.rpm != null) {
        const rpm = limits.rpm
        const count = await store.counters.add(keys.rpm, new Date(minute), 1, new Date(minute + 2 * MINUTE))
        headers['x-ratelimit-limit-requests'] = String(rpm)
        headers['x-ratelimit-remaining-requests'] = String(Math.max(0, rpm - count))
        headers['x-ratelimit-reset-requests'] = resetDuration(minuteLeft)
        if (count > rpm) refuse('requests', `Rate limit reached: ${rpm} requests per minute`, minuteLeft, headers)
        uncount = async () => { await store.counters.add(keys.rpm, new Date(minute), -1, new Date(minute + 2 * MINUTE)) }
      }
      if (limits.tpm != null) {
        const tpm = limits.tpm
        const used = await store.counters.get(keys.tpm, new Date(minute))
        headers['x-ratelimit-limit-tokens'] = String(tpm)
        headers['x-ratelimit-remaining-tokens'] = String(Math.max(0, tpm - used))
        headers['x-ratelimit-reset-tokens'] = resetDuration(minuteLeft)
        if (used >= tpm || used + estimate > tpm) {
          await uncount()
          refuse('tokens', `Rate limit reached: ${tpm} tokens per minute`, minuteLeft, headers)
        }
      }
      if (limits.tokensPerDay != null) {
        const perDay = limits.tokensPerDay
        const used = await store.counters.get(keys.day, new Date(day))
        if (used >= perDay || used + estimate > perDay) {
          await uncount()
          refuse('tokens_per_day', `Rate limit reached: ${perDay} tokens per day (UTC)`, day + DAY - at, headers)
        }
      }
      let stopRenewing = (): void => {}
      const leaseId = randomUUID()
      const concurrent = limits.concurrent
      if (concurrent != null) {
        const held = await store.leases.acquire(keys.leases, leaseId, concurrent, new Date(at), new Date(at + leaseMs))
        if (!held) {
          await uncount()
          refuse('concurrent', `Rate limit reached: ${concurrent} calls at once`, CONCURRENT_RETRY_SECONDS * 1000, headers)
        }
        // Renewed well before expiry while the call runs; a crashed process stops renewing and its slot frees.
        stopRenewing = repeat(() => {
          const t = now().getTime()
          store.leases.renew(keys.leases, leaseId, new Date(t), new Date(t + leaseMs)).catch(() => {})
        }, Math.max(1000, Math.floor(leaseMs / 3)))
      }

      let settled: Promise<void> | undefined
      return {
        headers,
        settle (usage) {
          settled ??= (async () => {
            stopRenewing()
            const tasks: Array<Promise<unknown>> = []
            if (concurrent != null) tasks.push(store.leases.release(keys.leases, leaseId))
            const tokens = usage === undefined ? 0 : tokensOf(usage)
            if (tokens > 0) {
              // Charged in the window the tokens were spent in: the one the call ends in.
              const t = now().getTime()
              const m = t - (t % MINUTE)
              const d = t - (t % DAY)
              if (limits.tpm != null) tasks.push(store.counters.add(keys.tpm, new Date(m), tokens, new Date(m + 2 * MINUTE)))
              if (limits.tokensPerDay != null) tasks.push(store.counters.add(keys.day, new Date(d), tokens, new Date(d + DAY + 3_600_000)))
            }
            await Promise.all(tasks)
          })()
          return settled
        },
      }
    },
  }
}
