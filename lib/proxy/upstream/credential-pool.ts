// Several credentials for one upstream (API keys, Code Assist credential files, Vertex locations), handed
// out in turn. A 429 cools the credential down and the call fails over to the next one; a 401/403 sets it
// aside; only when every credential is cooling down does the client get a 429, with the earliest
// Retry-After. The pool sits around one upstream request that has not answered yet (a stream's 200 comes
// before any event is sent), so failing over never repeats a byte the client already has.
import { fail, isGatehouseError } from '../../errors.ts'
import type { GatehouseError } from '../../errors.ts'
import { SILENT_LOGGER } from '../../logger.ts'
import type { Logger } from '../../logger.ts'
import type { CredentialState, CredentialStatus, ProxyObserver, ReadyState } from './backend.ts'
import { retryDelaySeconds } from './errors.ts'


export interface CredentialPoolOptions {
  /** First cooldown in ms after a 429 without a RetryInfo delay; doubles on each further 429 in a row. Default 10000. */
  credentialCooldownMs?: number
  /** Longest such cooldown in ms. Default 300000 (5 min). */
  maxCredentialCooldownMs?: number
  /** Clock of the cooldowns. Default the wall clock. */
  now?: () => Date
  logger?: Logger
  observer?: ProxyObserver
}

export const POOL_DEFAULTS = { credentialCooldownMs: 10_000, maxCredentialCooldownMs: 300_000 } as const

export interface CredentialPool<T> {
  /**
   * Runs `attempt` with the next usable credential; on a 429 or a 401/403 from it, with the next one, each
   * credential at most once per call. A pool of one neither cools down nor sets aside (there is nothing to
   * fail over to): each call tries it and gets the upstream's own error, as a single credential always did. Throws UPSTREAM_RATE_LIMITED (with the earliest retryAfter) when every
   * credential left is cooling down, UPSTREAM_CREDENTIALS_REJECTED when every one is set aside, else the
   * attempt's own error. `only`, when given, limits the call to the credentials it accepts (a Vertex location that
   * serves the model); the others are neither tried nor counted.
   */
  run<R>(attempt: (value: T, name: string) => Promise<R>, only?: (name: string) => boolean): Promise<R>
  /**
   * Runs `attempt` with the credential named `name` only, for a call that cannot go elsewhere (a Vertex cache lives
   * in one location): no failing over, but the pool's rules still hold. While it cools down the call is not sent
   * and throws UPSTREAM_RATE_LIMITED with its Retry-After; set aside, UPSTREAM_CREDENTIALS_REJECTED; a 429 from it
   * cools it down and a 401/403 sets it aside for every later call (in a pool of several), the error thrown as it is.
   */
  runOn<R>(name: string, attempt: (value: T) => Promise<R>): Promise<R>
  /** Sets a credential aside (a readiness check found it unusable). */
  setAside (name: string, reason: string): void
  /** Every credential's state now. */
  statuses (): CredentialStatus[]
  /** The credentials that are not set aside, in order. */
  usable (): Array<{ name: string, value: T }>
  /** Ready while one credential is not set aside: a cooling one comes back by itself. */
  ready (): ReadyState
}

interface Member<T> {
  name: string
  value: T
  until: number
  streak: number
  reason?: string
}

/** A 401 or 403 (or a refresh answered invalid_grant): this credential will not work until someone fixes it. */
export function rejectsCredential (err: GatehouseError): boolean {
  return err.upstreamStatus === 401 || err.upstreamStatus === 403 ||
    err.code === 'UPSTREAM_CREDENTIALS_UNUSABLE' || err.code === 'UPSTREAM_CREDENTIALS_REJECTED'
}

export function createCredentialPool<T> (entries: ReadonlyArray<{ name: string, value: T }>, options: CredentialPoolOptions = {}): CredentialPool<T> {
  const baseMs = options.credentialCooldownMs ?? POOL_DEFAULTS.credentialCooldownMs
  const maxMs = options.maxCredentialCooldownMs ?? POOL_DEFAULTS.maxCredentialCooldownMs
  const now = (): number => (options.now?.() ?? new Date()).getTime()
  const logger = options.logger ?? SILENT_LOGGER
  const members: Array<Member<T>> = entries.map(e => ({ name: e.name, value: e.value, until: 0, streak: 0 }))
  let cursor = 0

  const stateOf = (m: Member<T>, at: number): CredentialState => m.reason !== undefined ? 'set_aside' : m.until > at ? 'cooling' : 'ready'

  function next (tried: Set<Member<T>>, only?: (name: string) => boolean): Member<T> | undefined {
    const at = now()
    for (let k = 0; k < members.length; k++) {
      const i = (cursor + k) % members.length
      const m = members[i]
      if (tried.has(m) || stateOf(m, at) !== 'ready' || (only !== undefined && !only(m.name))) continue
      cursor = i + 1
      return m
    }
    return undefined
  }

  function coolDown (m: Member<T>, err: GatehouseError): void {
    const hinted = retryDelaySeconds(err.upstreamBody as Parameters<typeof retryDelaySeconds>[0])
    const ms = hinted !== undefined ? hinted * 1000 : Math.min(maxMs, baseMs * 2 ** m.streak)
    m.streak++
    m.until = now() + ms
    options.observer?.credentialCooldown?.(m.name)
    logger.warn({ credential: m.name, cooldownMs: Math.round(ms) }, 'Upstream credential rate limited: cooling down, failing over')
  }

  function setAside (m: Member<T>, reason: string): void {
    m.reason = reason
    logger.error({ credential: m.name, reason }, 'Upstream credential rejected: set aside until restart')
  }

  /** The attempt's 429 or 401/403 recorded against `m` (a pool of one keeps none); true when it was one of those. */
  function record (m: Member<T>, err: GatehouseError): boolean {
    // A pool of one has nothing to fail over to: its calls go out and fail as a single credential's always did.
    if (members.length === 1) return false
    if (err.upstreamStatus === 429) coolDown(m, err)
    else if (rejectsCredential(err)) setAside(m, err.message)
    else return false
    return true
  }

  function rateLimited (cooling: Array<Member<T>>, at: number, limited: GatehouseError | undefined, message: (retryAfter: number) => string): GatehouseError {
    const earliest = Math.min(...cooling.map(m => m.until))
    const retryAfter = Math.max(1, Math.ceil((earliest - at) / 1000))
    return fail('UPSTREAM_RATE_LIMITED', message(retryAfter), { upstreamStatus: 429, upstreamBody: limited?.upstreamBody, retryAfter })
  }

  const pool: CredentialPool<T> = {
    async run (attempt, only) {
      const tried = new Set<Member<T>>()
      let limited: GatehouseError | undefined
      for (let m = next(tried, only); m !== undefined; m = next(tried, only)) {
        tried.add(m)
        try {
          const result = await attempt(m.value, m.name)
          m.streak = 0
          return result
        } catch (err) {
          if (!isGatehouseError(err) || !record(m, err)) throw err
          if (err.upstreamStatus === 429) limited = err
        }
      }
      const at = now()
      const cooling = members.filter(m => stateOf(m, at) === 'cooling' && (only === undefined || only(m.name)))
      if (cooling.length > 0) throw rateLimited(cooling, at, limited, retryAfter => `Every upstream credential is rate limited; the first is usable again in ${retryAfter} s`)
      throw fail('UPSTREAM_CREDENTIALS_REJECTED', `Every upstream credential is set aside: ${members.map(m => `${m.name}: ${m.reason ?? 'unusable'}`).join('; ')}`)
    },
    async runOn (name, attempt) {
      const m = members.find(m => m.name === name)
      if (m === undefined) throw new TypeError(`No upstream credential named ${name}`)
      const at = now()
      const state = stateOf(m, at)
      if (state === 'cooling') throw rateLimited([m], at, undefined, retryAfter => `The upstream credential ${name} is rate limited; usable again in ${retryAfter} s`)
      if (state === 'set_aside') throw fail('UPSTREAM_CREDENTIALS_REJECTED', `The upstream credential ${name} is set aside: ${m.reason ?? 'unusable'}`)
      try {
        const result = await attempt(m.value)
        m.streak = 0
        return result
      } catch (err) {
        if (isGatehouseError(err)) record(m, err)
        throw err
      }
    },
    setAside (name, reason) {
      const m = members.find(m => m.name === name)
      if (m !== undefined && m.reason === undefined && members.length > 1) setAside(m, reason)
    },
    statuses () {
      const at = now()
      return members.map(m => {
        const state = stateOf(m, at)
        return state === 'set_aside' ? { name: m.name, state, reason: m.reason } : state === 'cooling' ? { name: m.name, state, until: m.until } : { name: m.name, state }
      })
    },
    usable () {
      return members.filter(m => m.reason === undefined).map(m => ({ name: m.name, value: m.value }))
    },
    ready () {
      if (members.some(m => m.reason === undefined)) return { ok: true }
      return { ok: false, reason: `Every upstream credential is set aside: ${members.map(m => `${m.name}: ${m.reason ?? ''}`).join('; ')}` }
    },
  }
  options.observer?.credentialPool?.(() => pool.statuses())
  return pool
}
