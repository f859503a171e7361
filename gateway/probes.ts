// Health probes (docs/model-proxy.md, "Health and readiness"): /health, /livez (the event loop answers), /readyz (every
// readiness check passes and the gateway is not shutting down; 503 names the failing checks).
import type { HandlerResponse, Route } from '../lib/http/contract.ts'
import { isGatehouseError } from '../lib/errors.ts'

export interface ReadinessCheck {
  /** Shown in the /readyz body: `store`, `upstream`. */
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
}

function opsError (err: unknown): HandlerResponse {
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
  const base = { surface: 'ops' as const, maxBytes: 1024, errorResponse: opsError }
  const routes: Route[] = [
    { ...base, method: 'GET', path: '/health', handler: async () => ({ status: 200, body: { status: 'healthy', service: 'gatehouse' } }) },
    // Answering at all proves the event loop turns; nothing here may wait on a dependency.
    { ...base, method: 'GET', path: '/livez', handler: async () => ({ status: 200, body: { status: 'alive' } }) },
    {
      ...base,
      method: 'GET',
      path: '/readyz',
      handler: async () => {
        if (options.isDraining()) return { status: 503, body: { status: 'unavailable', failing: ['shutdown'], checks: { shutdown: 'shutting down' } } }
        const results = await Promise.all(options.checks.map(async c => [c.name, await runCheck(c, c.timeoutMs ?? timeoutMs)] as const))
        const checks: Record<string, string> = {}
        const failing: string[] = []
        for (const [name, problem] of results) {
          checks[name] = problem ?? 'ok'
          if (problem !== undefined) failing.push(name)
        }
        // Draining may have begun while the checks ran.
        if (options.isDraining()) return { status: 503, body: { status: 'unavailable', failing: ['shutdown'], checks: { ...checks, shutdown: 'shutting down' } } }
        return failing.length === 0
          ? { status: 200, body: { status: 'ready', checks } }
          : { status: 503, body: { status: 'unavailable', failing, checks } }
      },
    },
  ]
  return { routes }
}
