// The Hapi host: a Hapi plugin mounting the library's route tables (lib/http/contract.ts). lib/http/serve.ts
// serves each request; this file translates Hapi's request in and the HandlerResponse out. Hapi hands the raw
// body over unparsed, so every host gives the same errors; Hapi's own refusals (413, 415, 408, unknown paths
// and methods) are rewritten into the route's or the scope's error shape.
import type { Readable } from 'node:stream'
import type { Server, Request, ResponseToolkit, ResponseObject, Lifecycle, RouteDefMethods, HTTP_METHODS, Plugin } from '@hapi/hapi'
import type { HandlerResponse, Route, RouteTable } from './contract.ts'
import { isStreamBody } from './contract.ts'
import { fail } from '../errors.ts'
import { scopeOf, serveRoute, toTables, writeStreamBody } from './serve.ts'
import type { ServeOptions, Tables } from './serve.ts'
import type { TrustedProxies } from './client-address.ts'
import type { Logger } from '../logger.ts'

export interface MountOptions {
  /** Prepended to every route path and scope, e.g. `/api`. Default none. */
  prefix?: string
  logger?: Logger
  /** Proxies whose X-Forwarded-For / Forwarded names the client (lib/http/client-address.ts). Default none: the peer is the client. */
  trustedProxies?: TrustedProxies
}

export interface HapiPluginOptions extends MountOptions {
  /** The tables to mount: `[auth.routeTable, proxy.routeTable]`. */
  tables: readonly RouteTable[]
}

/** What a mounted route carries in its Hapi settings, for the error extension. */
export interface MountedRouteInfo {
  route: Route
}

// Per HTTP server (plugins see their own Server object, the listener is shared): the tables mounted on it.
const tablesByListener = new WeakMap<object, RouteTable[]>()
const BODYLESS = new Set(['GET', 'HEAD'])
const PROBE_METHODS: HTTP_METHODS[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']

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

/** Mounts route tables on a Hapi server (what hapiPlugin does); a bare route list has no scope. */
export function mountRoutes (server: Server, tables: Tables, options: MountOptions = {}): void {
  const prefix = (options.prefix ?? '').replace(/\/+$/, '')
  const serveOptions: ServeOptions = { logger: options.logger, trustedProxies: options.trustedProxies }
  const mounted = installErrorExtension(server)
  for (const table of toTables(tables)) {
    for (const route of table.routes) {
      const method = route.method.toUpperCase()
      // A getter, which Hapi's copy of every route's options (Hoek's clone) keeps as it is: a plain `{ route }` was
      // copied deep, the route's body budget and all it refers to, most of the gateway's route registration.
      const info: MountedRouteInfo = { get route () { return route } }
      server.route({
        method: method as RouteDefMethods,
        path: prefix + route.path,
        options: {
          app: { gatehouse: info },
          // The body is read by lib, not by Hapi: Hapi destroys the socket when a chunked body passes maxBytes,
          // and a client must get its 413. A declared content-length over the limit is still refused up front.
          payload: BODYLESS.has(method) ? undefined : { parse: false, output: 'stream', maxBytes: route.maxBytes },
          handler: routeHandler(route, serveOptions),
        },
      })
    }
    // Hapi prefixes the routes of a plugin registered with `routes: { prefix }`; the scope moves with them.
    if (table.scope !== '') mounted.push({ ...table, scope: (server.realm.modifiers.route.prefix ?? '') + prefix + table.scope })
  }
}

function routeHandler (route: Route, options: ServeOptions): Lifecycle.Method {
  return async (request: Request, h: ResponseToolkit) => {
    const params: Record<string, string> = {}
    const matched = request.params as Record<string, unknown>
    for (const name in matched) {
      const value = matched[name]
      if (typeof value === 'string') params[name] = value
    }
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

function installErrorExtension (server: Server): RouteTable[] {
  const known = tablesByListener.get(server.listener)
  if (known !== undefined) return known
  const tables: RouteTable[] = []
  tablesByListener.set(server.listener, tables)
  server.ext('onPreResponse', (request, h) => {
    const response = request.response
    if (!('isBoom' in response) || !response.isBoom) return h.continue
    const info = (request.route.settings.app as { gatehouse?: MountedRouteInfo } | undefined)?.gatehouse
    if (info !== undefined) {
      return toHapiResponse(h, info.route.errorResponse(frameworkError(response.output.statusCode, response.message)))
    }
    const status = response.output.statusCode
    if (status !== 404) return h.continue
    const path = request.path
    const table = scopeOf(tables, path)
    if (table === undefined) return h.continue
    const other = PROBE_METHODS.some(m => m !== request.method.toUpperCase() && server.match(m, path) != null)
    return toHapiResponse(h, table.errorResponse(fail(other ? 'METHOD_NOT_ALLOWED' : 'NOT_FOUND')))
  })
  return tables
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
