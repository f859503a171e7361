// The Hapi host: turns the library's route tables (lib/http/contract.ts) into Hapi routes.
// Hapi hands the raw body over unparsed, so lib parses JSON itself and every host gives the same
// errors; Hapi's own refusals (413, 415, 408, unknown paths) are rewritten into the route's error shape.
import { Readable } from 'node:stream'
import type { Server, Request, ResponseToolkit, ResponseObject, Lifecycle, RouteDefMethods, HTTP_METHODS } from '@hapi/hapi'
import type { HandlerRequest, HandlerResponse, Route } from './contract.ts'
import { authenticateRoute, isStreamBody } from './contract.ts'
import { fail, isGatehouseError } from '../errors.ts'
import { isBodyTimeout, readBody } from './read-body.ts'
import { reserveBody } from './body-budget.ts'
import { clientAddress } from './client-address.ts'
import type { TrustedProxies } from './client-address.ts'
import type { Logger } from '../logger.ts'

export interface MountOptions {
  /** Prepended to every route path, e.g. `/v1/api`. Default none. */
  prefix?: string
  /**
   * Unknown paths (or methods) under this path answer 404 (405) in this table's error shape.
   * Default: the prefix, when there is one.
   */
  scope?: string
  logger?: Logger
  /** Proxies whose X-Forwarded-For / Forwarded names the client (lib/http/client-address.ts). Default none: the peer is the client. */
  trustedProxies?: TrustedProxies
}

interface Scope {
  path: string
  errorResponse: Route['errorResponse']
}

/** What a mounted route carries in its Hapi settings, for the error extension. */
export interface MountedRouteInfo {
  route: Route
}

const scopesByServer = new WeakMap<Server, Scope[]>()
const BODYLESS = new Set(['GET', 'HEAD'])
const PROBE_METHODS: HTTP_METHODS[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']

export function mountRoutes (server: Server, routes: readonly Route[], options: MountOptions = {}): void {
  const prefix = (options.prefix ?? '').replace(/\/+$/, '')
  const logger = options.logger
  installErrorExtension(server)
  for (const route of routes) {
    const method = route.method.toUpperCase()
    const info: MountedRouteInfo = { route }
    server.route({
      method: method as RouteDefMethods,
      path: prefix + route.path,
      options: {
        app: { gatehouse: info },
        // The body is read here, not by Hapi: Hapi destroys the socket when a chunked body passes maxBytes,
        // and a client must get its 413. A declared content-length over the limit is still refused up front.
        payload: BODYLESS.has(method) ? undefined : { parse: false, output: 'stream', maxBytes: route.maxBytes },
        handler: routeHandler(route, logger, options.trustedProxies),
      },
    })
  }
  const scopePath = (options.scope ?? prefix).replace(/\/+$/, '')
  if (scopePath !== '' && routes.length > 0) {
    const scopes = scopesByServer.get(server)!
    scopes.push({ path: scopePath, errorResponse: routes[0].errorResponse })
    // Longest first, so /v1/api wins over /v1.
    scopes.sort((a, b) => b.path.length - a.path.length)
  }
}

function routeHandler (route: Route, logger?: Logger, trustedProxies?: TrustedProxies): Lifecycle.Method {
  return async (request: Request, h: ResponseToolkit) => {
    let res: HandlerResponse
    const signal = clientGone(request)
    let release: (() => void) | undefined
    const req = toHandlerRequest(request, undefined, signal, trustedProxies)
    try {
      // Credentials first, then the budget, then the body: a request without credentials, or one whose body
      // does not fit, is answered with its body still in the client's socket, not in memory.
      const refused = route.authenticate === undefined ? undefined : await authenticateRoute(route, req)
      if (refused !== undefined) return toHapiResponse(h, refused, logger)
      if (request.payload !== undefined) release = await reserveBody(route, request.headers, signal, req.remoteAddress)
      const length = Number(request.headers['content-length'])
      req.body = await readBody(request.payload, route.maxBytes, Number.isFinite(length) ? length : undefined, route.bodyRead)
      res = await route.handler(req)
    } catch (err) {
      // Catalogue errors are answers (the service logs its own operational trouble); anything else is a bug.
      if (!isGatehouseError(err)) logger?.error({ err, route: route.path, method: request.method.toUpperCase() }, 'handler failed')
      res = route.errorResponse(err)
      // The rest of a body that came too slowly stays unread: the connection cannot carry another request.
      if (isBodyTimeout(err)) res.headers = { ...res.headers, connection: 'close' }
    } finally {
      release?.()
    }
    return toHapiResponse(h, res, logger)
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

function toHandlerRequest (request: Request, body: Buffer | undefined, signal: AbortSignal, trustedProxies?: TrustedProxies): HandlerRequest {
  const headers: Record<string, string | undefined> = {}
  const given = request.headers as Record<string, string | string[] | undefined>
  for (const name in given) {
    const value = given[name]
    headers[name] = Array.isArray(value) ? value.join(', ') : value
  }
  const query: Record<string, string> = {}
  const parsed = request.query as Record<string, string | string[]>
  for (const name in parsed) {
    const value = parsed[name]
    const v = Array.isArray(value) ? value[0] : value
    if (typeof v === 'string') query[name] = v
  }
  const params: Record<string, string> = {}
  const matched = request.params as Record<string, unknown>
  for (const name in matched) {
    const value = matched[name]
    if (typeof value === 'string') params[name] = value
  }
  return {
    method: request.method.toUpperCase(),
    // The path Hapi routed on; request.url would parse the whole URL again.
    path: request.path,
    params,
    query,
    headers,
    body,
    remoteAddress: clientAddress(request.info.remoteAddress, given, trustedProxies),
    signal,
  }
}

/** Writes a HandlerResponse through Hapi: JSON bodies serialised here (a bare string is JSON too), streams piped as they come. */
function toHapiResponse (h: ResponseToolkit, res: HandlerResponse, logger?: Logger): ResponseObject {
  let response: ResponseObject
  if (isStreamBody(res.body)) {
    // Strings and byte arrays alike: a non-object-mode Readable takes both as they are.
    const body = Readable.from(res.body, { objectMode: false })
    // The status line is long gone by then: the client sees the response cut short, the log says why.
    body.on('error', err => logger?.error({ err }, 'stream failed after its first bytes'))
    response = h.response(body)
    // Proxies such as nginx buffer by default; a stream must reach the client chunk by chunk.
    response.header('x-accel-buffering', 'no')
    response.header('cache-control', 'no-cache')
  } else if (res.body === undefined) {
    response = h.response()
  } else {
    response = h.response(JSON.stringify(res.body)).type('application/json; charset=utf-8')
  }
  response.code(res.status)
  for (const [name, value] of Object.entries(res.headers ?? {})) response.header(name, value)
  return response
}

function installErrorExtension (server: Server): void {
  if (scopesByServer.has(server)) return
  const scopes: Scope[] = []
  scopesByServer.set(server, scopes)
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
    const scope = scopes.find(s => path === s.path || path.startsWith(s.path + '/'))
    if (scope === undefined) return h.continue
    const other = PROBE_METHODS.some(m => m !== request.method.toUpperCase() && server.match(m, path) != null)
    return toHapiResponse(h, scope.errorResponse(fail(other ? 'METHOD_NOT_ALLOWED' : 'NOT_FOUND')))
  })
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
