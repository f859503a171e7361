// Prometheus metrics (prom-client), on a registry of the gateway's own so two gateways in one process
// (tests) never share counters. Every label has a bounded set of values: route templates, method names
// from a fixed list, status classes, catalogue model names, store operation names. No user ids, no raw paths.
import { Registry, Counter, Histogram, Gauge, collectDefaultMetrics } from 'prom-client'
import { ACCESS_LEVELS } from '../lib/index.ts'
import type { AccessLevel, AuthEvent, CredentialStatus, ProxyObserver, StoreObserver, BodyBudget, UsageEntry } from '../lib/index.ts'

export type { ProxyObserver }

/** What the auth service reports through its onEvent option. */
export type AuthObserver = (event: AuthEvent) => void

/** Which limit refused a call (the library's RATE_LIMITED refusals, LimitName). */
export type LimitName = 'requests' | 'tokens' | 'tokens_per_day' | 'concurrent' | 'usd_per_day' | 'usd_per_month' | 'key_usd_per_month'

/** What the proxy's metering reports: each finished call, each call refused by a limit. */
export interface MeteringObserver {
  /** A finished proxy call, as the usage ledger records it; `accessLevel` is the key owner's, or 'operator'. */
  onCall (entry: UsageEntry, accessLevel: AccessLevel | 'operator'): void
  /** A call refused by a rate limit. */
  onLimited (limit: LimitName): void
}

export interface Metrics {
  registry: Registry
  /** Records one finished HTTP request. `method` upper-case; `route` the template (`unmatched` when none). */
  observeRequest (method: string, route: string, status: number, seconds: number): void
  /** A WebSocket upgraded on `route` (its template) opened or closed. */
  socketOpened (route: string): void
  socketClosed (route: string): void
  /** Records one request served over a WebSocket: as its method and route in the HTTP series, and apart. */
  observeSocketRequest (method: string, route: string, status: number, seconds: number): void
  /** Given to createProxy({ observer }). */
  proxy: ProxyObserver
  /** Given to createAuthService({ onEvent }). */
  auth: AuthObserver
  /** Given to instrumentStore(store, observer). */
  store: StoreObserver
  /** Given to the proxy's metering: model tokens and requests by access level, rate-limit refusals. */
  metering: MeteringObserver
  /** Reports the proxy routes' budget of request bodies in flight (capacity, reserved bytes, waiting requests). */
  watchBodyBudget (budget: BodyBudget): void
  /** Reads, on each scrape, the served base models with no price in force (the proxy's upstream().unpriced). */
  watchUnpriced (unpriced: () => readonly string[]): void
  /** The Prometheus text exposition. */
  render (): Promise<{ contentType: string, body: string }>
}

export interface MetricsOptions {
  /** Model base names used as label values; any other model counts as `other`. */
  models: readonly string[]
  /** Also collect the process and Node.js runtime metrics. Default true. */
  defaultMetrics?: boolean
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])
// Requests range from sub-millisecond probes to minute-long model streams.
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300]
const TOKEN_KINDS = [['input', 'inputTokens'], ['output', 'outputTokens'], ['thinking', 'thinkingTokens'], ['cached', 'cachedTokens']] as const
const ACCESS_LABELS = new Set<string>([...ACCESS_LEVELS, 'operator'])
const LIMITS = new Set<string>(['requests', 'tokens', 'tokens_per_day', 'concurrent', 'usd_per_day', 'usd_per_month', 'key_usd_per_month'] satisfies LimitName[])
const CREDENTIAL_STATES = ['ready', 'cooling', 'set_aside'] as const
/** Store observations handed to the histogram at once, at most (see storeDuration). */
const STORE_BATCH = 256
const STORE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

/**
 * Increments of a counter on the request path, summed per label set in a Map and handed to prom-client on each scrape
 * (its `collect`): prom-client hashes and checks the labels on every inc, which costs more than the sum.
 */
class PendingSums {
  private readonly sums = new Map<string, { labels: Record<string, string>, n: number }>()

  /** `key` names the label set (its values joined); `labels` is kept on the first add of a key. */
  add (key: string, labels: Record<string, string>, n = 1): void {
    const known = this.sums.get(key)
    if (known !== undefined) known.n += n
    else this.sums.set(key, { labels, n })
  }

  flushInto (counter: Counter<string>): void {
    for (const entry of this.sums.values()) {
      if (entry.n > 0) counter.inc(entry.labels, entry.n)
      entry.n = 0
    }
  }
}

/** A counter whose request-path increments are PendingSums, flushed whenever the registry is read. */
function pendingCounter<L extends string> (config: { name: string, help: string, labelNames: readonly L[], registers: Registry[] }): { counter: Counter<L>, sums: PendingSums } {
  const sums = new PendingSums()
  const counter: Counter<L> = new Counter({ ...config, collect () { sums.flushInto(counter as Counter<string>) } })
  return { counter, sums }
}

function statusClass (status: number): string {
  return status >= 100 && status < 600 ? `${Math.floor(status / 100)}xx` : 'other'
}

export function createMetrics (options: MetricsOptions): Metrics {
  const registry = new Registry()
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry })
  const knownModels = new Set(options.models)

  const requests = pendingCounter({
    name: 'gatehouse_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status class',
    labelNames: ['method', 'route', 'status_class'] as const,
    registers: [registry],
  }).sums
  const requestDuration = new Histogram({
    name: 'gatehouse_http_request_duration_seconds',
    help: 'Time from receiving a request to the end of its response (streams included)',
    labelNames: ['method', 'route', 'status_class'] as const,
    buckets: REQUEST_BUCKETS,
    registers: [registry],
  })
  const openSockets = new Gauge({
    name: 'gatehouse_websocket_connections',
    help: 'WebSockets open now, by the route template they were upgraded on',
    labelNames: ['route'] as const,
    registers: [registry],
  })
  const socketRequests = new Counter({
    name: 'gatehouse_websocket_requests_total',
    help: 'Requests served over WebSockets (a Responses turn), by the route they are served as and status class; each is also in gatehouse_http_requests_total',
    labelNames: ['method', 'route', 'status_class'] as const,
    registers: [registry],
  })
  const upstreamCalls = pendingCounter({
    name: 'gatehouse_upstream_requests_total',
    help: 'Upstream model API calls, by model base name and HTTP status (0: no answer)',
    labelNames: ['model', 'status'] as const,
    registers: [registry],
  }).sums
  const upstreamDuration = new Histogram({
    name: 'gatehouse_upstream_request_duration_seconds',
    help: 'Upstream model API call duration until the response headers, by model base name and HTTP status',
    labelNames: ['model', 'status'] as const,
    buckets: REQUEST_BUCKETS,
    registers: [registry],
  })
  const streamChunks = new Counter({
    name: 'gatehouse_stream_chunks_total',
    help: 'Chunks (server-sent events) written to streaming clients',
    registers: [registry],
  })
  const streamsOpened = new Counter({
    name: 'gatehouse_streams_total',
    help: 'Streaming responses opened',
    registers: [registry],
  })
  const activeStreams = new Gauge({
    name: 'gatehouse_active_streams',
    help: 'Streaming responses currently open',
    registers: [registry],
  })
  const sessions = new Counter({
    name: 'gatehouse_sessions_total',
    help: 'Session events: created, ended (logout, replaced, password change), expired',
    labelNames: ['event'] as const,
    registers: [registry],
  })
  const logins = new Counter({
    name: 'gatehouse_logins_total',
    help: 'Login outcomes: success, failure, lockout (refused by the failed-login limiter)',
    labelNames: ['result'] as const,
    registers: [registry],
  })
  // A proxied call with limits makes several store operations (the rate limiter's counters and leases), and
  // prom-client's observe, run between other work, costs more than an in-memory operation itself: observations are
  // kept and handed over in batches, on every scrape (so a scrape sees each one) and every STORE_BATCH of them.
  const pendingStore: Array<{ adapter: string, operation: string, outcome: string, seconds: number }> = []
  const flushStore = (): void => {
    for (const { adapter, operation, outcome, seconds } of pendingStore) storeDuration.observe({ adapter, operation, outcome }, seconds)
    pendingStore.length = 0
  }
  const storeDuration = new Histogram({
    name: 'gatehouse_store_operation_duration_seconds',
    help: 'Store operation duration, by adapter, operation and outcome',
    labelNames: ['adapter', 'operation', 'outcome'] as const,
    buckets: STORE_BUCKETS,
    registers: [registry],
    collect: flushStore,
  })

  const modelTokens = pendingCounter({
    name: 'gatehouse_model_tokens_total',
    help: 'Model tokens of proxied calls as the upstream reported them, by model base name, kind (input, output, thinking, cached) and the caller\'s access level (operator: the operator password)',
    labelNames: ['model', 'kind', 'access_level'] as const,
    registers: [registry],
  }).sums
  const modelRequests = pendingCounter({
    name: 'gatehouse_model_requests_total',
    help: 'Proxied model calls, by model base name, the caller\'s access level (operator: the operator password) and status class',
    labelNames: ['model', 'access_level', 'status_class'] as const,
    registers: [registry],
  }).sums
  // Whole micro-dollars, as the usage rows hold them: a counter of integers adds up with no drift.
  const modelSpend = pendingCounter({
    name: 'gatehouse_model_spend_microdollars_total',
    help: 'What proxied model calls cost at the price list\'s prices, in micro-dollars (1e-6 USD), by model base name and the caller\'s access level',
    labelNames: ['model', 'access_level'] as const,
    registers: [registry],
  }).sums
  const modelUnpriced = new Counter({
    name: 'gatehouse_model_unpriced_requests_total',
    help: 'Proxied model calls that used tokens of a model with no price in force (their cost is not in the spend), by model base name and access level',
    labelNames: ['model', 'access_level'] as const,
    registers: [registry],
  })
  const rateLimited = new Counter({
    name: 'gatehouse_rate_limited_total',
    help: 'Proxy calls refused by a rate limit or a dollar budget, by limit (requests, tokens, tokens_per_day, concurrent, usd_per_day, usd_per_month, key_usd_per_month)',
    labelNames: ['limit'] as const,
    registers: [registry],
  })

  let unpricedModels: (() => readonly string[]) | undefined
  // A count, not a label per model: which ones they are is in GET /v1/models (their `unpriced` flag).
  new Gauge({
    name: 'gatehouse_models_unpriced',
    help: 'Base models the proxy serves that have no price in force now (calls to them are not in the spend; docs/prices.md, "Unpriced models")',
    registers: [registry],
    collect () { this.set(unpricedModels?.().length ?? 0) },
  })

  let bodyBudget: BodyBudget | undefined
  // Read on each scrape: whether large requests are waiting for memory (and for how much) is what an operator
  // needs to size the pod's memory limit.
  new Gauge({
    name: 'gatehouse_body_budget_bytes',
    help: 'Budget of large request bodies held in memory at once: its capacity, and the bytes reserved now',
    labelNames: ['state'] as const,
    registers: [registry],
    collect () {
      this.set({ state: 'capacity' }, bodyBudget?.capacity ?? 0)
      this.set({ state: 'reserved' }, bodyBudget?.reserved ?? 0)
    },
  })
  new Gauge({
    name: 'gatehouse_body_budget_waiting_requests',
    help: 'Requests waiting for room in the body budget before their body is read',
    registers: [registry],
    collect () { this.set(bodyBudget?.waiting ?? 0) },
  })

  const credentialPools: Array<() => CredentialStatus[]> = []
  // Read on each scrape: a cooldown ends by the clock, not by an event. Labelled by display name only, never the secret.
  new Gauge({
    name: 'gatehouse_upstream_credential_state',
    help: 'Upstream credentials of the pool by name (key#1, a credentials file name) and state (ready, cooling, set_aside): 1 for the state it is in',
    labelNames: ['credential', 'state'] as const,
    registers: [registry],
    collect () {
      this.reset()
      for (const statuses of credentialPools) {
        for (const { name, state } of statuses()) {
          for (const s of CREDENTIAL_STATES) this.set({ credential: name, state: s }, s === state ? 1 : 0)
        }
      }
    },
  })
  // A credential cools down per model: the state above says `cooling` while any model does, this says which.
  new Gauge({
    name: 'gatehouse_upstream_credential_model_cooling',
    help: 'Upstream credentials cooling down after a 429, by credential and model (none for calls without one): 1 while it cools; other models still use the credential',
    labelNames: ['credential', 'model'] as const,
    registers: [registry],
    collect () {
      this.reset()
      for (const statuses of credentialPools) {
        for (const { name, models } of statuses()) {
          for (const { model } of models ?? []) this.set({ credential: name, model: model === '' ? 'none' : modelLabel(model) }, 1)
        }
      }
    },
  })
  const credentialCooldowns = new Counter({
    name: 'gatehouse_upstream_credential_cooldowns_total',
    help: 'Times an upstream credential answered 429 and was cooled down, by credential name',
    labelNames: ['credential'] as const,
    registers: [registry],
  })

  // Discovery (docs/upstream-protocol.md, "Model discovery"): counts only, as listed ids come from the upstream.
  const discoveredModels = new Gauge({
    name: 'gatehouse_model_discovery_models',
    help: 'Models of the last good model discovery round: listed by the upstream, and added (listed but missing from the model file, served with defaults)',
    labelNames: ['kind'] as const,
    registers: [registry],
  })
  const discoveryRounds = new Counter({
    name: 'gatehouse_model_discovery_rounds_total',
    help: 'Model discovery rounds by outcome (ok, failed: the last good list stays)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  })

  // Zero-valued series from the start, so dashboards and alerts see them before the first event.
  for (const event of ['created', 'ended', 'expired']) sessions.inc({ event }, 0)
  for (const result of ['success', 'failure', 'lockout']) logins.inc({ result }, 0)
  for (const limit of LIMITS) rateLimited.inc({ limit }, 0)

  const modelLabel = (model: string): string => {
    const base = model.replace(/^models\//, '')
    return knownModels.has(base) ? base : 'other'
  }
  const upstreamStatus = (status: number): string => Number.isInteger(status) && status >= 100 && status < 600 ? String(status) : '0'

  const AUTH_EVENTS: Record<AuthEvent, () => void> = {
    session_created: () => sessions.inc({ event: 'created' }),
    session_ended: () => sessions.inc({ event: 'ended' }),
    session_expired: () => sessions.inc({ event: 'expired' }),
    login_success: () => logins.inc({ result: 'success' }),
    login_failure: () => logins.inc({ result: 'failure' }),
    login_lockout: () => logins.inc({ result: 'lockout' }),
  }

  return {
    registry,
    observeRequest (method, route, status, seconds) {
      const labels = { method: METHODS.has(method) ? method : 'other', route, status_class: statusClass(status) }
      requests.add(`${labels.method} ${route} ${labels.status_class}`, labels)
      requestDuration.observe(labels, seconds)
    },
    socketOpened (route) { openSockets.inc({ route }) },
    socketClosed (route) { openSockets.dec({ route }) },
    observeSocketRequest (method, route, status, seconds) {
      this.observeRequest(method, route, status, seconds)
      socketRequests.inc({ method: METHODS.has(method) ? method : 'other', route, status_class: statusClass(status) })
    },
    proxy: {
      upstreamCall (model, status, seconds) {
        const labels = { model: modelLabel(model), status: upstreamStatus(status) }
        upstreamCalls.add(`${labels.model} ${labels.status}`, labels)
        upstreamDuration.observe(labels, seconds)
      },
      streamOpened () {
        streamsOpened.inc()
        activeStreams.inc()
      },
      streamClosed () { activeStreams.dec() },
      streamChunk (events) { streamChunks.inc(events) },
      credentialCooldown (name) { credentialCooldowns.inc({ credential: name }) },
      credentialPool (statuses) {
        credentialPools.push(statuses)
        for (const { name } of statuses()) credentialCooldowns.inc({ credential: name }, 0)
      },
      modelsDiscovered (listed, unknown) {
        discoveredModels.set({ kind: 'listed' }, listed)
        discoveredModels.set({ kind: 'added' }, unknown.length)
        discoveryRounds.inc({ outcome: 'ok' })
      },
      modelDiscoveryFailed () { discoveryRounds.inc({ outcome: 'failed' }) },
    },
    auth: event => AUTH_EVENTS[event]?.(),
    store (adapter, operation, seconds, ok) {
      pendingStore.push({ adapter, operation, outcome: ok ? 'ok' : 'error', seconds })
      if (pendingStore.length >= STORE_BATCH) flushStore()
    },
    metering: {
      onCall (entry, accessLevel) {
        const model = modelLabel(entry.model)
        // Labels are bounded sets: a caller's level (never their id), a catalogue model name.
        const access = ACCESS_LABELS.has(accessLevel) ? accessLevel : 'other'
        const statusClassOf = statusClass(entry.status)
        modelRequests.add(`${model} ${access} ${statusClassOf}`, { model, access_level: access, status_class: statusClassOf })
        for (const [kind, field] of TOKEN_KINDS) {
          const count = entry.usage?.[field]
          if (typeof count === 'number' && Number.isFinite(count) && count > 0) modelTokens.add(`${model} ${kind} ${access}`, { model, kind, access_level: access }, Math.floor(count))
        }
        const cost = entry.costMicros
        if (typeof cost === 'number' && Number.isSafeInteger(cost) && cost > 0) modelSpend.add(`${model} ${access}`, { model, access_level: access }, cost)
        if (entry.unpriced === true) modelUnpriced.inc({ model, access_level: access })
      },
      onLimited (limit) { rateLimited.inc({ limit: LIMITS.has(limit) ? limit : 'other' }) },
    },
    watchBodyBudget (budget) { bodyBudget = budget },
    watchUnpriced (unpriced) { unpricedModels = unpriced },
    async render () {
      return { contentType: registry.contentType, body: await registry.metrics() }
    },
  }
}
