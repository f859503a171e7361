// The Hapi host: a Hapi plugin mounting the library's route tables (lib/http/contract.ts). The library's router picks
// the route and lib/http/serve.ts serves it, as for node:http and fetch; this file translates Hapi's request in and
// the HandlerResponse out. Hapi hands the raw body over unparsed, so every host gives the same errors; Hapi's own
// refusals (a malformed content-type, a body too slow, unknown paths under a scope) are rewritten into the route's
// or the scope's error shape.
import type { Duplex, Readable } from 'node:stream'
import type { IncomingMessage } from 'node:http'
import type { Server, Request, ResponseToolkit, ResponseObject, Plugin } from '@hapi/hapi'
import type { HandlerResponse, Route, RouteTable, SocketObserver } from './contract.ts'
import { isStreamBody } from './contract.ts'
import { fail } from '../errors.ts'
import { hapiBoom } from '../load-package.ts'
import { createDispatcher, serveRoute, toTables, unknownRouteResponse, writeStreamBody } from './serve.ts'
import type { Dispatch, ServeOptions, Tables } from './serve.ts'
import type { TrustedProxies } from './client-address.ts'
import { serveUpgrade } from './upgrade.ts'
import type { Logger } from '../logger.ts'

export interface MountOptions {
  /** Prepended to every route path and scope, e.g. `/api`. Default none. */
  prefix?: string
  logger?: Logger
  /** Proxies whose X-Forwarded-For / Forwarded names the client (lib/http/client-address.ts). Default none: the peer is the client. */
  trustedProxies?: TrustedProxies
  /**
   * Called with the template of the table route a request takes (prefixes included), as its handling starts and in
   * its async context: to name a trace span after the route rather than after the wildcard Hapi matched, say. Default none.
   */
  onRoute?: (template: string, request: Request) => void
  /** Told about WebSocket routes' sockets and the requests served on them (the gateway's request log and metrics). Default none. */
  sockets?: SocketObserver
}

export interface HapiPluginOptions extends MountOptions {
  /** The tables to mount: `[auth.routeTable, proxy.routeTable]`. */
  tables: readonly RouteTable[]
}

/**
 * What the adapter keeps per HTTP server (plugins see their own Server object, the listener is shared): every table
 * mounted on it, with paths and scopes as the server sees them (Hapi realm prefix and `prefix` included), and the
 * path roots that have their Hapi route.
 */
interface Mounted {
  tables: RouteTable[]
  /** The route a request's full path takes, across every mount on this server (lib/http/router.ts). */
  dispatch: (method: string, path: string) => Dispatch
  /** The table route, the serving options and the onRoute hook of its mount, by the prefixed copy the dispatcher holds. */
  served: Map<Route, Served>
  /** Full paths of the wildcard routes registered with Hapi. */
  roots: Set<string>
}

/** Marks the Hapi routes this adapter registered (their settings.app), for the error extension and routeTemplate. */
const CATCH_ALL = 'gatehouse'
// The matched table route's template, kept on the Hapi request for logs and metrics (hapiRouteTemplate).
const TEMPLATE = Symbol('gatehouse.routeTemplate')
type WithTemplate = Request & { [TEMPLATE]?: string }

interface Served { route: Route, options: ServeOptions, onRoute?: MountOptions['onRoute'] }

const mountedByListener = new WeakMap<object, Mounted>()

/**
 * The Hapi plugin: `await server.register({ plugin: hapiPlugin, options: { tables: [auth.routeTable,
 * proxy.routeTable] } })`. Register it more than once (other tables, another prefix) as needed.
 */
export const hapiPlugin: Plugin<HapiPluginOptions> = {
  name: 'gatehouse',
  multiple: true,
  register (server, options) {
    mountRoutes(server, options.tables, options)
  },
}

/**
 * Mounts route tables on a Hapi server (what hapiPlugin does); a bare route list has no scope. Hapi gets one
 * wildcard route per first path segment the tables use (`/v1/{gatehouse*}`), and the library's router picks the
 * table route, as it does for node:http and fetch: Hapi validates and copies every route it registers, which cost
 * the gateway a tenth of its start and 8 MB of idle memory for 77 routes (bench/README.md, "Footprint (issue 24)").
 */
export function mountRoutes (server: Server, tables: Tables, options: MountOptions = {}): void {
  const prefix = (options.prefix ?? '').replace(/\/+$/, '')
  const realm = server.realm.modifiers.route.prefix ?? ''
  const serveOptions: ServeOptions = { logger: options.logger, trustedProxies: options.trustedProxies, sockets: options.sockets }
  const mounted = mountedOn(server)
  for (const table of toTables(tables)) {
    const routes = table.routes.map(route => {
      const full: Route = { ...route, path: realm + prefix + route.path }
      mounted.served.set(full, { route, options: serveOptions, onRoute: options.onRoute })
      return full
    })
    // Hapi prefixes the routes of a plugin registered with `routes: { prefix }`; the scope moves with them.
    mounted.tables.push({ ...table, routes, scope: table.scope === '' ? '' : realm + prefix + table.scope })
    for (const route of table.routes) {
      const first = (prefix + route.path).split('/')[1] ?? ''
      // The root itself, or a template starting with a parameter, can take any path: its wildcard goes at the top.
      const path = first === '' || first.startsWith('{') ? '/{gatehouse*}' : `/${first}/{gatehouse*}`
      if (mounted.roots.has(realm + path)) continue
      mounted.roots.add(realm + path)
      server.route({
        method: '*',
        path,
        options: {
          app: { [CATCH_ALL]: true },
          // The body is read by lib within the matched route's limits, as in every host: Hapi would destroy the
          // socket when a chunked body passes maxBytes, and a client must get its 413.
          payload: { parse: false, output: 'stream', maxBytes: Number.MAX_SAFE_INTEGER },
          handler: (request, h) => serveHapi(mounted, request, h),
        },
      })
    }
  }
  mounted.dispatch = createDispatcher(mounted.tables)
}

/**
 * The path template of the route that took a Hapi request, for logs and metrics: the table route's (prefixes
 * included) for a request on mounted tables, Hapi's own for the server's other routes; undefined when no route
 * took it (Hapi's 404, or a path under a mounted root that no table route matches).
 */
export function hapiRouteTemplate (request: Request): string | undefined {
  const template = (request as WithTemplate)[TEMPLATE]
  if (template !== undefined) return template
  if ((request.route.method as string) === '_special' || isCatchAll(request)) return undefined
  return request.route.path
}

function isCatchAll (request: Request): boolean {
  return (request.route.settings.app as Record<string, unknown> | undefined)?.[CATCH_ALL] === true
}

async function serveHapi (mounted: Mounted, request: Request, h: ResponseToolkit): Promise<ResponseObject | symbol> {
  const method = request.method.toUpperCase()
  const found = mounted.dispatch(method, request.path)
  if (found.route === undefined) {
    // Outside every scope: Hapi's own 404, as for any path no route takes.
    if (!found.inScope) throw hapiBoom().notFound()
    return toHapiResponse(h, unknownRouteResponse(mounted.tables, request.path, found.methodNotAllowed))
  }
  const { route, options, onRoute } = mounted.served.get(found.route) as Served
  ;(request as WithTemplate)[TEMPLATE] = found.route.path
  onRoute?.(found.route.path, request)
  return await serveMatched(route, found.params, options, request, h)
}

async function serveMatched (route: Route, params: Record<string, string>, options: ServeOptions, request: Request, h: ResponseToolkit): Promise<ResponseObject | symbol> {
  const signal = clientGone(request)
  const response = await serveRoute(route, {
    method: request.method.toUpperCase(),
    // The path Hapi routed on; request.url would parse the whole URL again.
    path: request.path,
    params,
    query: request.query as Record<string, unknown>,
    headers: request.headers as Record<string, string | string[] | undefined>,
    peerAddress: request.info.remoteAddress,
    body: request.payload as Readable | undefined,
    signal,
  }, options)
  if (!isStreamBody(response.body)) return toHapiResponse(h, response)
  // Written to the raw response, one write per chunk, rather than through Readable.from and Hapi's response
  // stream (two stream layers per chunk). The handler returns once the stream has ended: h.abandon then tells
  // Hapi the response is done, and its 'response' event (the gateway's request log) fires at the true end;
  // request.response is then the abandon symbol, and the status is request.raw.res.statusCode. Hapi's graceful
  // stop waits for the raw response's 'finish', so streams in flight still get their time.
  await writeStreamBody(request.raw.res, response.status, response.headers, response.body, signal, options.logger)
  return h.abandon
}

/** Aborted when the client leaves before its response is complete. */
function clientGone (request: Request): AbortSignal {
  const controller = new AbortController()
  const raw = request.raw
  // 'close' also fires after a normal end; only an unfinished response means the client left.
  raw.res.once('close', () => { if (!raw.res.writableFinished) controller.abort(new Error('client disconnected')) })
  return controller.signal
}

/** Writes a HandlerResponse without a streamed body through Hapi: JSON bodies serialised here (a bare string is JSON too). */
function toHapiResponse (h: ResponseToolkit, res: HandlerResponse): ResponseObject {
  let response: ResponseObject
  if (res.body === undefined) {
    response = h.response()
  } else {
    response = h.response(JSON.stringify(res.body)).type('application/json; charset=utf-8')
  }
  response.code(res.status)
  for (const [name, value] of Object.entries(res.headers ?? {})) response.header(name, value)
  return response
}

/** What is mounted on this server's listener; on the first mount, the error extension that serves all of them. */
function mountedOn (server: Server): Mounted {
  const known = mountedByListener.get(server.listener)
  if (known !== undefined) return known
  const mounted: Mounted = { tables: [], dispatch: createDispatcher([]), served: new Map(), roots: new Set() }
  mountedByListener.set(server.listener, mounted)
  // Hapi does not take upgrades; a table route's (Route.upgrade) are served on the raw listener (lib/http/upgrade.ts).
  server.listener.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://localhost')
    const found = mounted.dispatch('GET', url.pathname)
    // Another upgrade listener's paths are its own.
    if (found.route === undefined && !found.inScope && server.listener.listenerCount('upgrade') > 1) return
    const served = found.route === undefined ? undefined : mounted.served.get(found.route)
    const host = { method: 'GET', path: url.pathname, params: found.route === undefined ? {} : found.params, query: url.searchParams, headers: req.headers, peerAddress: req.socket.remoteAddress }
    void serveUpgrade(mounted.tables, served === undefined ? found : { ...found, route: served.route } as Dispatch, host, socket, head, served?.options ?? {})
  })
  server.ext('onPreResponse', (request, h) => {
    const response = request.response
    if (!('isBoom' in response) || !response.isBoom) return h.continue
    const status = response.output.statusCode
    const found = mounted.dispatch(request.method.toUpperCase(), request.path)
    // Hapi refused a request to a table route before its handler ran (a malformed content-type, say): the route's shape.
    if (found.route !== undefined && isCatchAll(request)) {
      ;(request as WithTemplate)[TEMPLATE] = found.route.path
      const { route } = mounted.served.get(found.route) as Served
      return toHapiResponse(h, route.errorResponse(frameworkError(status, response.message)))
    }
    // Another route's 404 (Hapi's own included) under a table's scope: the scope's 404, or 405 for a table path.
    if (status !== 404 || found.route !== undefined || !found.inScope) return h.continue
    return toHapiResponse(h, unknownRouteResponse(mounted.tables, request.path, found.methodNotAllowed))
  })
  return mounted
}

/** Maps Hapi's refusals of a request (before the handler ran) onto the error catalogue. */
function frameworkError (status: number, message: string): unknown {
  switch (status) {
    case 413: return fail('PAYLOAD_TOO_LARGE')
    case 415: return fail('UNSUPPORTED_MEDIA_TYPE')
    case 408: return fail('REQUEST_TIMEOUT')
    case 404: return fail('NOT_FOUND')
    case 400: return /content-type/i.test(message) ? fail('UNSUPPORTED_MEDIA_TYPE') : fail('INVALID_INPUT', 'Malformed request body')
  }
  return status < 500 ? fail('INVALID_INPUT') : fail('INTERNAL')
}
