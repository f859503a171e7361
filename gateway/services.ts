// Builds the library's services from the config and hands the gateway their route tables,
// readiness checks and a close() for shutdown.
import { createAuthService, createConsole, createProxy, createRateLimiter, createUsageLedger, environmentOptions } from '../lib/index.ts'
import type { RouteTable, Store, UsageLedger } from '../lib/index.ts'
import type { GatewayConfig } from './config.ts'
import type { Logger } from './logger.ts'
import type { Metrics } from './metrics.ts'
import type { ReadinessCheck } from './probes.ts'
import { writeAdminPasswordFile } from './admin-password-file.ts'

export interface Services {
  routeTables: RouteTable[]
  readiness: ReadinessCheck[]
  /** Set when this start created the system user with a generated password: the file holding it (the path is logged, never the password). */
  adminPasswordFile?: string
  /** The system user's name (AUTH_ADMIN_USERNAME, else the library's default). */
  adminUsername: string
  /** The backend that serves the proxy, by its GEMINI_BACKEND name (`gemini-api`, `vertex`, `code-assist`); undefined when none is configured. */
  backend?: string
  /** Where the console is served (its route table's scope, e.g. `/console`); undefined when it is off. */
  consolePath?: string
  /** The usage ledger on the store (createUsageLedger: batched writes); close() flushes it. */
  usage: UsageLedger
  close (): Promise<void>
}

export interface ServiceDeps {
  store: Store
  logger: Logger
  metrics: Metrics
  /** The accounts service's (and the rate limiter's and credential pool's) clock and login-delay wait (GatewayOptions). Default the system clock and a timer. */
  now?: () => Date
  sleep?: (ms: number) => Promise<void>
}

export async function createServices (config: GatewayConfig, deps: ServiceDeps): Promise<Services> {
  const { store, logger, metrics } = deps
  // The environment's options (the library's one mapping, shared with the examples) plus this host's hooks.
  const options = environmentOptions(config)
  const auth = createAuthService({ ...options.auth, store, logger, onEvent: metrics.auth, now: deps.now, sleep: deps.sleep })
  const system = await auth.ensureSystemUser()
  const passwordFile = system.generatedPassword === undefined ? undefined : await writeAdminPasswordFile(config, system.username, system.generatedPassword)

  const upstream = options.proxy.upstream === undefined ? undefined : { ...options.proxy.upstream, now: deps.now }
  // Written in batches of at most one a second: a SIGKILL loses at most that much usage (README, "Usage").
  const usage = createUsageLedger({ store, logger })
  // Counts live in the store, so every replica on it refuses a user at the same threshold.
  const limiter = createRateLimiter({ store, byLevel: options.limits, now: deps.now, onLimited: metrics.metering.onLimited })
  const proxy = createProxy({
    ...options.proxy,
    keys: auth,
    limiter,
    usage,
    // Owners of upstream resources live in the store, so every replica holds members to their own.
    resources: { ...options.proxy.resources, owners: store.owners },
    onCall: metrics.metering.onCall,
    upstream,
    responses: { ...options.proxy.responses, store: store.responses },
    logger,
    observer: metrics.proxy,
    now: deps.now,
  })
  if (proxy.bodyBudget !== undefined) metrics.watchBodyBudget(proxy.bodyBudget)
  metrics.watchUnpriced(() => proxy.upstream().unpriced)
  if (config.proxyPassword === undefined) logger.warn('GEMINI_AUTH_PASSWORD is not set: only user keys reach the proxy')
  if (config.responsesSecret === undefined) logger.warn('PROXY_RESPONSES_SECRET is not set: Responses reasoning items are sealed with a key of this process only')

  const readiness: ReadinessCheck[] = []
  // Without an upstream the proxy only answers 503 by design; that must not keep the accounts service unready.
  if (upstream !== undefined) readiness.push({ name: 'upstream', timeoutMs: 10_000, check: () => proxy.ready() })

  // Each table's scope picks the shape of its unknown paths: /v1/api the accounts', any other /v1 the chat one.
  // The console's files are read when its page is first served, not here (docs/console.md, "Assets").
  const served = proxy.upstream()
  const webConsole = options.console === undefined ? undefined : createConsole({ ...options.console, auth, proxy, limiter })
  return {
    routeTables: webConsole === undefined ? [auth.routeTable, proxy.routeTable] : [auth.routeTable, proxy.routeTable, webConsole.routeTable],
    readiness,
    backend: served.configured ? served.backend : undefined,
    consolePath: webConsole?.routeTable.scope,
    adminPasswordFile: passwordFile?.path,
    adminUsername: system.username,
    usage,
    async close () {
      await Promise.allSettled([proxy.close(), passwordFile?.discard()])
      // After the proxy: calls finishing while it closes are still recorded. Before the store closes (gateway/server.ts).
      await usage.close().catch(() => { /* logged by the ledger */ })
    },
  }
}
