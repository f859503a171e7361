// Health probes (docs/model-proxy.md, "Health and readiness"): /health, /livez (the event loop answers), /readyz (every
// readiness check passes and the gateway is not shutting down; 503 names the failing checks).
// /readyz needs no credentials, so its body holds check names and states only: why a check fails
// (a store address, an upstream error) goes to the log, at most once a minute per check.
import { isGatehouseError } from '../lib/index.ts'
import type { HandlerResponse, Logger, Route } from '../lib/index.ts'

export interface ReadinessCheck {
  /** Shown in the /readyz body with its state, `ok` or `failing`: `store`, `upstream`. */
  name: string
  /** How long this check may take before it counts as failed. Default: the probe's checkTimeoutMs. */
  timeoutMs?: number
  /** Resolves when ready; rejects (or resolves `{ ok: false, reason }`) otherwise. */
  check (): Promise<void | { ok: boolean, reason?: string }>
}

export interface ProbeOptions {
  checks: readonly ReadinessCheck[]
  isDraining: () => boolean
  /** How long one check may take before it counts as failed. Default 2000 ms. */
  checkTimeoutMs?: number
  /** Where the reasons of failing checks go. Default: nowhere. */
  logger?: Logger
  /** Shortest time between two log lines about one failing check, in ms. Default 60000. */
  logIntervalMs?: number
  /** The clock, in ms. Default `Date.now`; tests pass a fake one. */
  now?: () => number
}

/** A check's failures since its last log line; the line itself carries the latest reason. */
interface FailureLog {
  loggedAt: number
  unlogged: number
}

/**
 * Logs why checks fail without letting /readyz callers flood the log: a failing check's reason at most once per
 * interval (with how many failures went unlogged since), and one line when a logged failure has cleared.
 */
function createFailureLog (logger: Logger | undefined, intervalMs: number, now: () => number): (name: string, reason: string | undefined) => void {
  const failing = new Map<string, FailureLog>()
  return (name, reason) => {
    const entry = failing.get(name)
    if (reason === undefined) {
      if (entry !== undefined) {
        failing.delete(name)
        logger?.info({ check: name }, 'readiness check passes again')
      }
      return
    }
    const at = now()
    if (entry === undefined || at - entry.loggedAt >= intervalMs) {
      logger?.warn({ check: name, reason, ...(entry !== undefined && entry.unlogged > 0 ? { unloggedFailures: entry.unlogged } : {}) }, 'readiness check failing')
      failing.set(name, { loggedAt: at, unlogged: 0 })
    } else {
      entry.unlogged++
    }
  }
}

/** The error shape of the gateway's own routes (probes, `GET /`). */
export function opsError (err: unknown): HandlerResponse {
  const status = isGatehouseError(err) ? err.status : 500
  return { status, body: { status: 'error', message: isGatehouseError(err) ? err.message : 'Internal error' } }
}

async function runCheck (check: ReadinessCheck, timeoutMs: number): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<string>(resolve => { timer = setTimeout(() => resolve(`timed out after ${timeoutMs} ms`), timeoutMs) })
  try {
    return await Promise.race([
      check.check().then(
        r => r !== undefined && r !== null && r.ok === false ? (r.reason ?? 'not ready') : undefined,
        (err: unknown) => err instanceof Error ? err.message : String(err)),
      timeout,
    ])
  } finally {
    clearTimeout(timer)
  }
}

export function createProbes (options: ProbeOptions): { routes: Route[] } {
  const timeoutMs = options.checkTimeoutMs ?? 2000
  const logFailure = createFailureLog(options.logger, options.logIntervalMs ?? 60_000, options.now ?? Date.now)
  const base = { maxBytes: 1024, errorResponse: opsError }
  const routes: Route[] = [
    { ...base, method: 'GET', path: '/health', handler: async () => ({ status: 200, body: { status: 'healthy', service: 'gatehouse' } }) },
    // Answering at all proves the event loop turns; nothing here may wait on a dependency.
    { ...base, method: 'GET', path: '/livez', handler: async () => ({ status: 200, body: { status: 'alive' } }) },
    {
      ...base,
      method: 'GET',
      path: '/readyz',
      handler: async () => {
        if (options.isDraining()) return { status: 503, body: { status: 'unavailable', failing: ['shutdown'], checks: { shutdown: 'draining' } } }
        const results = await Promise.all(options.checks.map(async c => [c.name, await runCheck(c, c.timeoutMs ?? timeoutMs)] as const))
        const checks: Record<string, string> = {}
        const failing: string[] = []
        for (const [name, problem] of results) {
          checks[name] = problem === undefined ? 'ok' : 'failing'
          if (problem !== undefined) failing.push(name)
          logFailure(name, problem)
        }
        // Draining may have begun while the checks ran.
        if (options.isDraining()) return { status: 503, body: { status: 'unavailable', failing: ['shutdown'], checks: { ...checks, shutdown: 'draining' } } }
        return failing.length === 0
          ? { status: 200, body: { status: 'ready', checks } }
          : { status: 503, body: { status: 'unavailable', failing, checks } }
      },
    },
  ]
  return { routes }
}
