// The gateway: one Hapi server mounting the library's route tables, plus probes, metrics, request logs,
// request ids and graceful shutdown. Built from a validated config; never reads process.env.
import { randomUUID } from 'node:crypto'
import type http from 'node:http'
import type { AddressInfo } from 'node:net'
import Hapi from '@hapi/hapi'
import type { Logger as PinoLogger } from 'pino'
import type { Server, Request } from '@hapi/hapi'
import type { GatewayConfig } from './config.ts'
import { createLogger, preRedacted, redactString } from './logger.ts'
import type { Logger } from './logger.ts'
import { createMetrics } from './metrics.ts'
import type { Metrics } from './metrics.ts'
import { DEFAULT_MODELS, clientAddress, hapiPlugin, hapiRouteTemplate, instrumentStore, mountRoutes, parseTrustedProxies } from '../lib/index.ts'
import type { RouteTable } from '../lib/index.ts'
import type { Store, TrustedProxies } from '../lib/index.ts'
import { openStore } from './store.ts'
import { createProbes } from './probes.ts'
import { createIndexRoute } from './index-route.ts'
import type { ReadinessCheck } from './probes.ts'
import { createServices } from './services.ts'
import { nameRequestSpans } from './tracing.ts'
import type { Services } from './services.ts'
// node:http as CommonJS has it: an ESM import of it reads every export, and its WebSocket getter alone loads Node's
// bundled undici (16 MB of RSS at start, measured with bench/footprint.ts).
const { createServer } = process.getBuiltinModule('node:http')

export interface GatewayOptions {
  /** Where logs go. Default: a pino JSON logger on stdout at config.logLevel (see logger.ts). */
  logger?: PinoLogger
  /** A store to use instead of the one the config describes (tests). The gateway still closes it. */
  store?: Store
  /** Extra route tables mounted beside the services' (tests mount slow streams through this). Default none. */
  extraRoutes?: readonly RouteTable[]
  /** The accounts service's and the rate limiter's clock (createAuthService's and createRateLimiter's `now`). Default the system clock; tests pass a fake one. */
  now?: () => Date
  /** Waits out a login delay (createAuthService's `sleep`). Default a timer; tests pass one that moves their fake clock. */
  sleep?: (ms: number) => Promise<void>
}

export interface Gateway {
  server: Server
  /** `http://host:port` once started (127.0.0.1 shown for a wildcard host). */
  readonly url: string
  /** Where /metrics is served: `${url}/metrics`, or on METRICS_PORT when set. */
  readonly metricsUrl: string
  logger: PinoLogger
  metrics: Metrics
  /** The store, instrumented for metrics. */
  store: Store
  /** Starts listening; resolves with the URL. */
  start (): Promise<string>
  /**
   * Graceful stop: readiness turns 503 at once, the listener stops accepting, in-flight requests and streams
   * get config.shutdownTimeoutSeconds, then the services and the store are flushed and closed. Idempotent.
   */
  stop (): Promise<void>
}

const REQUEST_ID = /^[\w.:@/+=-]{1,128}$/

export async function createGateway (config: GatewayConfig, options: GatewayOptions = {}): Promise<Gateway> {
  for (const name of ['now', 'sleep'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') throw new TypeError(`createGateway: options.${name} must be a function (got ${typeof options[name]})`)
  }
  const logger = options.logger ?? createLogger({ level: config.logLevel })
  // The URL and where a generated admin password is must reach the operator even at LOG_LEVEL=warn or error.
  const announce = config.logLevel === 'silent' ? logger : logger.child({}, { level: 'info' })
  const metrics = createMetrics({ models: config.geminiModels ?? DEFAULT_MODELS })
  const store = instrumentStore(options.store ?? await openStore(config, logger), metrics.store)
  const server = Hapi.server({
    host: config.host,
    port: config.port,
    // Streams must reach the client chunk by chunk; compression belongs to the ingress.
    compression: false,
    routes: { response: { emptyStatusCode: 200 } },
    // Read the client address when the request arrives: once the socket is gone it can no longer be read.
    info: { remote: true },
    router: { stripTrailingSlash: false },
  })
  // Longer than the idle timeout of common load balancers (60 s), so they never reuse a closed connection.
  server.listener.keepAliveTimeout = 65_000
  server.listener.headersTimeout = 66_000

  let draining = false
  const checks: ReadinessCheck[] = [{ name: 'store', check: () => store.ping() }]
  let services: Services | undefined
  let metricsServer: http.Server | undefined

  const trustedProxies = config.trustedProxies === undefined ? undefined : parseTrustedProxies(config.trustedProxies)

  installRequestIds(server)
  installRequestLog(server, logger, metrics, trustedProxies)
  mountRoutes(server, createProbes({ checks, isDraining: () => draining, logger }).routes, { logger, trustedProxies, onRoute: nameRequestSpans })
  if (config.metricsPort === undefined) {
    server.route({
      method: 'GET',
      path: '/metrics',
      handler: async (_request, h) => {
        const { contentType, body } = await metrics.render()
        return h.response(body).type(contentType)
      },
    })
  }

  let url = ''
  let metricsUrl = ''
  let started = false
  let stopping: Promise<void> | undefined

  async function start (): Promise<string> {
    if (started) return url
    services = await createServices(config, { store, logger, metrics, now: options.now, sleep: options.sleep })
    checks.push(...services.readiness)
    await server.register({ plugin: hapiPlugin, options: { tables: [...services.routeTables, ...options.extraRoutes ?? []], logger, trustedProxies, onRoute: nameRequestSpans } })
    const index = createIndexRoute({ tables: services.routeTables, consolePath: services.consolePath, backend: services.backend, metricsHere: config.metricsPort === undefined })
    mountRoutes(server, [index], { logger, trustedProxies, onRoute: nameRequestSpans })
    await server.start()
    started = true
    url = displayUrl(config.host, server.info.port as number)
    metricsUrl = `${url}/metrics`
    if (config.metricsPort !== undefined) {
      metricsServer = await startMetricsServer(config.host, config.metricsPort, metrics, logger)
      metricsUrl = `${displayUrl(config.host, (metricsServer.address() as AddressInfo).port)}/metrics`
    }
    // The console's URL is what a newcomer opens first, and the backend what serves them: the start line names both.
    const consoleUrl = services.consolePath === undefined ? undefined : `${url}${services.consolePath}/`
    const backend = services.backend ?? 'none'
    announce.info({ url, metricsUrl, backend, consoleUrl: consoleUrl ?? null }, `Gatehouse listening on ${url} (backend: ${backend}${consoleUrl === undefined ? '' : `, console: ${consoleUrl}`})`)
    if (services.adminPasswordFile !== undefined) {
      // On the start that created the system user. The password itself never reaches the log: it is in a file
      // only this process's user can read, and the store keeps only its argon2 hash.
      const file = services.adminPasswordFile
      announce.warn({ username: services.adminUsername, file }, `Created system user "${services.adminUsername}"; its generated password is in ${file} (readable only by this process's user)`)
    }
    return url
  }

  async function stop (): Promise<void> {
    stopping ??= (async () => {
      draining = true
      if (started) {
        logger.info({ timeoutSeconds: config.shutdownTimeoutSeconds }, 'shutting down: draining in-flight requests')
        await server.stop({ timeout: config.shutdownTimeoutSeconds * 1000 })
      }
      await services?.close()
      if (metricsServer !== undefined) await new Promise(resolve => metricsServer!.close(resolve))
      await store.flush()
      await store.close()
      logger.info('stopped')
    })()
    return stopping
  }

  return {
    server,
    get url () { return url },
    get metricsUrl () { return metricsUrl },
    logger,
    metrics,
    store,
    start,
    stop,
  }
}

function displayUrl (host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`
}

/** /metrics alone on its own port (METRICS_PORT), so it can stay inside the cluster network. */
async function startMetricsServer (host: string, port: number, metrics: Metrics, logger: Logger): Promise<http.Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' }).end('{"error":"Not found"}')
      return
    }
    metrics.render().then(({ contentType, body }) => {
      res.writeHead(200, { 'content-type': contentType }).end(req.method === 'HEAD' ? undefined : body)
    }, (err: unknown) => {
      logger.error({ err }, 'metrics rendering failed')
      res.writeHead(500).end()
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => { server.off('error', reject); resolve() })
  })
  return server
}

// Kept on the request itself rather than in a WeakMap keyed by it: a WeakMap entry costs more to add than the id
// (a UUID included), and young-generation collections must walk every live one.
const REQUEST_ID_KEY = Symbol('gatehouse.requestId')
type WithRequestId = http.IncomingMessage & { [REQUEST_ID_KEY]?: string }

/**
 * Gives every request an id (the client's x-request-id when it is sane, else a UUID), answered in the
 * x-request-id header and logged. Done on the Node request event, ahead of Hapi: a Hapi onRequest extension
 * would cost a tenth of a small request's time. Set on the raw response, so it survives any replacement of
 * the Hapi response object.
 */
function installRequestIds (server: Server): void {
  server.listener.prependListener('request', (req: WithRequestId, res: http.ServerResponse) => {
    const given = req.headers['x-request-id']
    const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID()
    req[REQUEST_ID_KEY] = id
    res.setHeader('x-request-id', id)
  })
}

/** The route template for logs and metrics: never the raw path (unbounded, may carry ids). */
function routeTemplate (request: Request): string {
  return hapiRouteTemplate(request) ?? 'unmatched'
}

function installRequestLog (server: Server, logger: Logger, metrics: Metrics, trustedProxies: TrustedProxies | undefined): void {
  server.events.on('response', (request) => {
    const response = request.response as { statusCode?: number, output?: { statusCode: number } } | symbol | null
    // A streamed response is written to the raw response and abandoned (by the library's hapiPlugin): its status is there.
    const status = typeof response === 'symbol' ? request.raw.res.statusCode : response?.statusCode ?? response?.output?.statusCode ?? 0
    const seconds = (Date.now() - request.info.received) / 1000
    const route = routeTemplate(request)
    const method = request.method.toUpperCase()
    metrics.observeRequest(method, route, status, seconds)
    const aborted = !request.raw.res.writableFinished
    const entry = preRedacted({
      reqId: (request.raw.req as WithRequestId)[REQUEST_ID_KEY],
      method,
      route,
      // The request target as received (request.url would parse it into a URL object on every request),
      // with ?token= and similar values redacted.
      url: redactString(request.raw.req.url ?? ''),
      status,
      durationMs: Math.round(seconds * 10000) / 10,
      remoteAddress: clientAddress(request.info.remoteAddress, request.raw.req.headers, trustedProxies),
      ...(aborted ? { aborted: true } : {}),
    })
    if (status >= 500) logger.error(entry, 'request')
    else logger.info(entry, 'request')
  })
}
