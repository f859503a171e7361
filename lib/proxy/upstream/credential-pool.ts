// Several credentials for one upstream (API keys, Code Assist credential files, Vertex locations), handed out in
// turn, under the rules of docs/upstream-protocol.md, "Credential pools". Only a credential fault
// (lib/proxy/upstream/error-reasons.ts) sets a credential aside, and a set-aside credential is re-probed on a
// schedule with backoff and comes back when it answers again; a 429 cools the credential down for the model called
// only, for a hinted delay capped at maxCredentialCooldownMs; any other error is the caller's and changes nothing.
// The pool sits around one upstream request that has not answered yet (a stream's 200 comes before any event is
// sent), so failing over never repeats a byte the client already has.
import { fail, isGatehouseError } from '../../errors.ts'
import type { GatehouseError } from '../../errors.ts'
import { SILENT_LOGGER } from '../../logger.ts'
import type { Logger } from '../../logger.ts'
import type { CredentialState, CredentialStatus, ProxyObserver, ReadyState } from './backend.ts'
import { retryDelaySeconds } from './errors.ts'
import { credentialFaultReason, failureKind } from './error-reasons.ts'

export interface CredentialPoolOptions {
  /** First cooldown in ms after a 429 without a RetryInfo delay; doubles on each further 429 in a row for that model. Default 10000. */
  credentialCooldownMs?: number
  /** Longest cooldown in ms, the cap of a hinted (RetryInfo) delay too. Default 300000 (5 min). */
  maxCredentialCooldownMs?: number
  /** First re-probe of a set-aside credential, in ms after it was set aside; doubles after each failed probe. Default 60000. */
  credentialReprobeMs?: number
  /** Longest wait between two re-probes, in ms. Default 1800000 (30 min). */
  maxCredentialReprobeMs?: number
  /** Clock of the cooldowns and re-probes. Default the wall clock. */
  now?: () => Date
  logger?: Logger
  observer?: ProxyObserver
}

export const POOL_DEFAULTS = { credentialCooldownMs: 10_000, maxCredentialCooldownMs: 300_000, credentialReprobeMs: 60_000, maxCredentialReprobeMs: 1_800_000 } as const

/** What a pooled call is about: the model it calls (a 429 cools the credential down for that model only). */
export interface PoolCall {
  /** Base model id; calls without one (files, operations) share one cooldown of their own. */
  model?: string
  /** Only the credentials it accepts are tried (a Vertex location that serves the model); the others are not counted. */
  only?: (name: string) => boolean
}

/** The cheap call that tells whether a set-aside credential answers again (a models.list, a token refresh); rejects while it does not. */
export type CredentialProbe<T> = (value: T, name: string) => Promise<void>

export interface CredentialPool<T> {
  /**
   * Runs `attempt` with the next usable credential for `call.model`; on a 429 or a credential fault, with the next
   * one, each credential at most once per call. A pool of one neither cools down nor sets aside (there is nothing to
   * fail over to): each call tries it and gets the upstream's own error, as a single credential always did. Throws
   * UPSTREAM_RATE_LIMITED (with the earliest retryAfter) when every credential left is cooling down for the model,
   * UPSTREAM_CREDENTIALS_REJECTED when every one is set aside, MODEL_NOT_FOUND when discovery found no credential
   * whose upstream lists the model, else the attempt's own error. `call.only`, when given, limits the call to the
   * credentials it accepts (a Vertex location that serves the model); the others are neither tried nor counted.
   */
  run<R>(attempt: (value: T, name: string) => Promise<R>, call?: PoolCall): Promise<R>
  /**
   * Runs `attempt` with the credential named `name` only, for a call that cannot go elsewhere (a resource created
   * through it, a Vertex cache in one location): no failing over, but the pool's rules still hold. While it cools
   * down for the model the call is not sent and throws UPSTREAM_RATE_LIMITED with its Retry-After; set aside,
   * UPSTREAM_CREDENTIALS_REJECTED; what it answers is recorded as in run, the error thrown as it is.
   */
  runOn<R>(name: string, attempt: (value: T) => Promise<R>, call?: PoolCall): Promise<R>
  /** Sets a credential aside (a readiness check found it unusable); it is re-probed like any other. */
  setAside (name: string, reason: string): void
  /** Probes now every set-aside credential whose re-probe is due; resolves when they have answered. */
  reprobe (): Promise<void>
  /** The base model ids the upstream lists for this credential (discovery), or undefined to serve every model. */
  setModels (name: string, models: ReadonlySet<string> | undefined): void
  /** Every credential's state now. */
  statuses (): CredentialStatus[]
  /** The credentials that are not set aside, in order. */
  usable (): Array<{ name: string, value: T }>
  /** Every credential, set aside or not, in order. */
  all (): Array<{ name: string, value: T }>
  /** Ready while one credential is not set aside: a cooling one comes back by itself, a set-aside one after a probe. */
  ready (): ReadyState
}

interface Cooldown {
  until: number
  streak: number
}

interface Member<T> {
  name: string
  value: T
  /** Cooldowns by model ('' for calls without one). */
  cooling: Map<string, Cooldown>
  reason?: string
  /** When the next re-probe is due, and the wait after it if it fails. */
  probeAt: number
  probeDelay: number
  probing?: Promise<void>
  models?: ReadonlySet<string>
}

export function createCredentialPool<T> (entries: ReadonlyArray<{ name: string, value: T }>, options: CredentialPoolOptions = {}, probe?: CredentialProbe<T>): CredentialPool<T> {
  const baseMs = options.credentialCooldownMs ?? POOL_DEFAULTS.credentialCooldownMs
  const maxMs = options.maxCredentialCooldownMs ?? POOL_DEFAULTS.maxCredentialCooldownMs
  const reprobeMs = options.credentialReprobeMs ?? POOL_DEFAULTS.credentialReprobeMs
  const maxReprobeMs = options.maxCredentialReprobeMs ?? POOL_DEFAULTS.maxCredentialReprobeMs
  const now = (): number => (options.now?.() ?? new Date()).getTime()
  const logger = options.logger ?? SILENT_LOGGER
  const members: Array<Member<T>> = entries.map(e => ({ name: e.name, value: e.value, cooling: new Map(), probeAt: 0, probeDelay: reprobeMs }))
  let cursor = 0

  const coolingFor = (m: Member<T>, model: string, at: number): number | undefined => {
    const until = m.cooling.get(model)?.until
    return until !== undefined && until > at ? until : undefined
  }
  const serves = (m: Member<T>, model: string | undefined): boolean => model === undefined || m.models === undefined || m.models.has(model)

  function stateOf (m: Member<T>, at: number): CredentialState {
    if (m.reason !== undefined) return 'set_aside'
    for (const c of m.cooling.values()) if (c.until > at) return 'cooling'
    return 'ready'
  }

  function next (tried: ReadonlyArray<Member<T>>, model: string | undefined, only?: (name: string) => boolean): Member<T> | undefined {
    const at = now()
    for (let k = 0; k < members.length; k++) {
      const i = (cursor + k) % members.length
      const m = members[i]
      if (tried.includes(m) || m.reason !== undefined || !serves(m, model) || (only !== undefined && !only(m.name)) || coolingFor(m, model ?? '', at) !== undefined) continue
      cursor = i + 1
      return m
    }
    return undefined
  }

  function coolDown (m: Member<T>, model: string, err: GatehouseError): void {
    const hinted = retryDelaySeconds(err.upstreamBody as Parameters<typeof retryDelaySeconds>[0])
    const at = now()
    // The streak of 429s for this model ends with its first success (run deletes the entry).
    const streak = m.cooling.get(model)?.streak ?? 0
    const ms = Math.min(maxMs, hinted !== undefined ? hinted * 1000 : baseMs * 2 ** streak)
    m.cooling.set(model, { until: at + ms, streak: streak + 1 })
    options.observer?.credentialCooldown?.(m.name)
    logger.warn({ credential: m.name, model: model === '' ? undefined : model, cooldownMs: Math.round(ms) }, 'Upstream credential rate limited for this model: cooling down, failing over')
  }

  function setAside (m: Member<T>, reason: string): void {
    m.reason = reason
    m.probeDelay = reprobeMs
    m.probeAt = now() + reprobeMs
    logger.error({ credential: m.name, reason, reprobeInMs: reprobeMs }, 'Upstream credential unusable: set aside until a re-probe finds it answering')
  }

  function reprobeOne (m: Member<T>): Promise<void> {
    if (probe === undefined || m.reason === undefined) return Promise.resolve()
    m.probing ??= (async () => {
      try {
        await probe(m.value, m.name)
        logger.info({ credential: m.name, wasSetAsideFor: m.reason }, 'Upstream credential answers again: back in the pool')
        m.reason = undefined
        m.cooling.clear()
      } catch (err) {
        m.probeDelay = Math.min(maxReprobeMs, m.probeDelay * 2)
        m.probeAt = now() + m.probeDelay
        logger.warn({ credential: m.name, reason: err instanceof Error ? err.message : String(err), nextProbeInMs: m.probeDelay }, 'Set-aside upstream credential still unusable')
      } finally {
        m.probing = undefined
      }
    })()
    return m.probing
  }

  /** True when a set-aside credential's re-probe is due: checked before every call, so it allocates nothing. */
  function anyDue (): boolean {
    let at: number | undefined
    for (const m of members) if (m.reason !== undefined && m.probeAt <= (at ??= now())) return true
    return false
  }

  /** Starts the re-probes that are due; resolves when they have answered. */
  function due (): Promise<void> {
    const at = now()
    return Promise.all(members.filter(m => m.reason !== undefined && m.probeAt <= at).map(reprobeOne)).then(() => {})
  }

  /** The attempt's 429 or credential fault recorded against `m` (a pool of one keeps none); true when it was one of those. */
  function record (m: Member<T>, err: GatehouseError, model: string): boolean {
    // A pool of one has nothing to fail over to: its calls go out and fail as a single credential's always did.
    if (members.length === 1) return false
    const kind = failureKind(err)
    if (kind === 'rate_limited') coolDown(m, model, err)
    else if (kind === 'credential') setAside(m, credentialFaultReason(err) === undefined ? err.message : `${credentialFaultReason(err) as string}: ${err.message}`)
    else return false
    return true
  }

  function rateLimited (cooling: Array<Member<T>>, model: string, at: number, limited: GatehouseError | undefined, message: (retryAfter: number) => string): GatehouseError {
    const earliest = Math.min(...cooling.map(m => coolingFor(m, model, at) as number))
    const retryAfter = Math.max(1, Math.ceil((earliest - at) / 1000))
    return fail('UPSTREAM_RATE_LIMITED', message(retryAfter), { upstreamStatus: 429, upstreamBody: limited?.upstreamBody, retryAfter })
  }

  const setAsideMessage = (list: Array<Member<T>>): string => `Every upstream credential is set aside: ${list.map(m => `${m.name}: ${m.reason ?? 'unusable'}`).join('; ')}`

  const pool: CredentialPool<T> = {
    async run (attempt, call = {}) {
      const model = call.model ?? ''
      const probing = anyDue()
      if (probing) void due()
      const tried: Array<Member<T>> = []
      let limited: GatehouseError | undefined
      let m = next(tried, call.model, call.only)
      // Nothing usable for this call: a set-aside credential whose probe is due may answer again.
      if (m === undefined && probing) {
        await due()
        m = next(tried, call.model, call.only)
      }
      for (; m !== undefined; m = next(tried, call.model, call.only)) {
        tried.push(m)
        try {
          const result = await attempt(m.value, m.name)
          m.cooling.delete(model)
          return result
        } catch (err) {
          if (!isGatehouseError(err) || !record(m, err, model)) throw err
          if (err.upstreamStatus === 429) limited = err
        }
      }
      const at = now()
      const serving = members.filter(x => serves(x, call.model) && (call.only === undefined || call.only(x.name)))
      if (serving.length === 0) throw fail('MODEL_NOT_FOUND', `The model \`${model}\` is not listed by the upstream for any configured credential`)
      const cooling = serving.filter(x => x.reason === undefined && coolingFor(x, model, at) !== undefined)
      if (cooling.length > 0) throw rateLimited(cooling, model, at, limited, retryAfter => `Every upstream credential is rate limited${model === '' ? '' : ` for ${model}`}; the first is usable again in ${retryAfter} s`)
      throw fail('UPSTREAM_CREDENTIALS_REJECTED', setAsideMessage(serving))
    },
    async runOn (name, attempt, call = {}) {
      const model = call.model ?? ''
      const m = members.find(m => m.name === name)
      if (m === undefined) throw new TypeError(`No upstream credential named ${name}`)
      if (m.reason !== undefined && m.probeAt <= now()) await reprobeOne(m)
      const at = now()
      if (m.reason !== undefined) throw fail('UPSTREAM_CREDENTIALS_REJECTED', `The upstream credential ${name} is set aside: ${m.reason}`)
      if (coolingFor(m, model, at) !== undefined) throw rateLimited([m], model, at, undefined, retryAfter => `The upstream credential ${name} is rate limited${model === '' ? '' : ` for ${model}`}; usable again in ${retryAfter} s`)
      try {
        const result = await attempt(m.value)
        m.cooling.delete(model)
        return result
      } catch (err) {
        if (isGatehouseError(err)) record(m, err, model)
        throw err
      }
    },
    setAside (name, reason) {
      const m = members.find(m => m.name === name)
      if (m !== undefined && m.reason === undefined && members.length > 1) setAside(m, reason)
    },
    reprobe: due,
    setModels (name, models) {
      const m = members.find(m => m.name === name)
      if (m !== undefined) m.models = models
    },
    statuses () {
      const at = now()
      return members.map(m => {
        const state = stateOf(m, at)
        if (state === 'set_aside') return { name: m.name, state, reason: m.reason }
        if (state === 'ready') return { name: m.name, state }
        const models = [...m.cooling].filter(([, c]) => c.until > at).map(([model, c]) => ({ model, until: c.until }))
        return { name: m.name, state, until: Math.min(...models.map(c => c.until)), models }
      })
    },
    usable () {
      return members.filter(m => m.reason === undefined).map(m => ({ name: m.name, value: m.value }))
    },
    all () {
      return members.map(m => ({ name: m.name, value: m.value }))
    },
    ready () {
      if (members.some(m => m.reason === undefined)) return { ok: true }
      return { ok: false, reason: setAsideMessage(members) }
    },
  }
  options.observer?.credentialPool?.(() => pool.statuses())
  return pool
}
