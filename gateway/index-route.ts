// `GET /`: a browser goes to the console when it is on; any other client gets a small JSON index of where things
// are (README, "The two commands"), not the 404 of an unknown path.
import type { HandlerRequest, HandlerResponse, Route, RouteTable } from '../lib/index.ts'
import { opsError } from './probes.ts'

export interface IndexOptions {
  /** The route tables the gateway mounts: the index names only the entry points they serve. */
  tables: readonly RouteTable[]
  /** The console's path (its table's scope, `/console`); undefined when it is off. */
  consolePath?: string
  /** The backend that serves the proxy (GEMINI_BACKEND's name); undefined when none is configured. */
  backend?: string
  /** Whether /metrics is on this port (METRICS_PORT unset). */
  metricsHere: boolean
}

// The entry points a newcomer looks for, each kept only when a mounted table serves it.
const ENTRY_POINTS: Record<string, string> = {
  chat_completions: '/v1/chat/completions',
  responses: '/v1/responses',
  messages: '/v1/messages',
  models: '/v1/models',
  gemini: '/v1beta/models',
  accounts: '/v1/api',
}

const PROBES = { live: '/livez', ready: '/readyz', health: '/health' }

function served (tables: readonly RouteTable[], path: string): boolean {
  return tables.some(table => table.scope === path || table.routes.some(route => route.path === path))
}

export function createIndexRoute (options: IndexOptions): Route {
  const consoleUrl = options.consolePath === undefined ? undefined : `${options.consolePath}/`
  const body = {
    service: 'gatehouse',
    backend: options.backend ?? null,
    console: consoleUrl ?? null,
    api: Object.fromEntries(Object.entries(ENTRY_POINTS).filter(([, path]) => served(options.tables, path))),
    probes: PROBES,
    metrics: options.metricsHere ? '/metrics' : null,
    docs: 'README.md and docs/ in the gatehouse package',
  }
  return {
    method: 'GET',
    path: '/',
    maxBytes: 0,
    errorResponse: opsError,
    handler: async (req: HandlerRequest): Promise<HandlerResponse> => {
      // Relative, so a prefix an ingress strips (`/team/` reaching the gateway as `/`) stays in the browser's URL.
      if (consoleUrl !== undefined && (req.headers.accept ?? '').includes('text/html')) {
        return { status: 302, headers: { location: consoleUrl.slice(1), vary: 'accept' }, body: undefined }
      }
      return { status: 200, headers: { vary: 'accept' }, body }
    },
  }
}
