import type { IncomingMessage, ServerResponse } from 'node:http'
import { once } from 'node:events'
import type { HandlerRequest, HandlerResponse, Route } from './contract.ts'
import { authenticateRoute, isStreamBody } from './contract.ts'
import { createRouter } from './router.ts'
import { fail } from '../errors.ts'
import { isBodyTimeout, readBody } from './read-body.ts'
import type { BodyReadLimits } from './read-body.ts'
import { reserveBody } from './body-budget.ts'
import { clientAddress, parseTrustedProxies } from './client-address.ts'
import type { TrustedProxies } from './client-address.ts'

export interface NodeListenerOptions {
  /** Answer for paths no route matches when there is no `next` (default: 404 JSON). */
  notFound?: (req: IncomingMessage) => HandlerResponse
  /**
   * Proxies (addresses, CIDR ranges; a comma-separated string or a list) whose X-Forwarded-For / Forwarded
   * header names the client, for the limiters. Default none: the socket's peer is the client.
   */
  trustedProxies?: string | readonly string[]
}

type Next = (err?: unknown) => void

/**
 * A `node:http` request listener serving a route table. It also works as Express/Connect middleware:
 * unmatched paths go to `next()`, and a body already parsed by express.json() is used as is.
 */
export function createNodeListener (routes: readonly Route[], options: NodeListenerOptions = {}) {
  const router = createRouter(routes)
  const trusted = options.trustedProxies === undefined ? undefined : parseTrustedProxies(options.trustedProxies)
  return function gatehouseListener (req: IncomingMessage, res: ServerResponse, next?: Next): void {
    const url = new URL(req.url ?? '/', 'http://localhost')
    const method = (req.method ?? 'GET').toUpperCase()
    const found = router.match(method, url.pathname)
    if (found.route === undefined) {
      if (next !== undefined) return next()
      const fallback = found.nearest
      const response = fallback !== undefined
        ? fallback.errorResponse(fail(found.methodNotAllowed ? 'METHOD_NOT_ALLOWED' : 'NOT_FOUND'))
        : options.notFound?.(req) ?? { status: 404, body: { detail: 'Not found' } }
      void send(res, response)
      return
    }
    const { route, params } = found
    void serve(route, params, url, req, res, trusted).catch((err: unknown) => {
      if (res.headersSent) {
        res.destroy()
        return
      }
      const response = route.errorResponse(err)
      // The rest of a body that came too slowly stays unread: the connection cannot carry another request.
      if (isBodyTimeout(err)) response.headers = { ...response.headers, connection: 'close' }
      void send(res, response)
    })
  }
}

async function serve (route: Route, params: Record<string, string>, url: URL, req: IncomingMessage & { body?: unknown }, res: ServerResponse, trusted: TrustedProxies | undefined): Promise<void> {
  const controller = new AbortController()
  res.once('close', () => { if (!res.writableFinished) controller.abort() })
  const request: HandlerRequest = {
    method: (req.method ?? 'GET').toUpperCase(),
    path: url.pathname,
    params,
    query: firstValues(url.searchParams),
    headers: lowerCaseHeaders(req),
    body: undefined,
    remoteAddress: clientAddress(req.socket.remoteAddress, req.headers, trusted),
    signal: controller.signal
  }
  // Credentials first: a request without them is refused with its body still in the socket.
  const refused = route.authenticate === undefined ? undefined : await authenticateRoute(route, request)
  if (refused !== undefined) {
    await send(res, refused, controller.signal)
    return
  }
  // A body a framework has parsed already is in memory whatever the budget says.
  const release = req.body === undefined ? await reserveBody(route, req.headers, controller.signal, request.remoteAddress) : undefined
  try {
    request.body = await requestBody(req, route.maxBytes, route.bodyRead)
  } catch (err) {
    release?.()
    throw err
  }
  let response: HandlerResponse
  try {
    response = await route.handler(request)
  } catch (err) {
    response = route.errorResponse(err)
  } finally {
    release?.()
  }
  await send(res, response, controller.signal)
}

/** Raw body bytes, or the value a framework already parsed; 413 past `maxBytes`. */
async function requestBody (req: IncomingMessage & { body?: unknown }, maxBytes: number, limits?: BodyReadLimits): Promise<unknown> {
  if (req.body !== undefined) return req.body
  const declared = Number(req.headers['content-length'])
  if (Number.isFinite(declared) && declared > maxBytes) {
    req.resume()
    throw fail('PAYLOAD_TOO_LARGE')
  }
  return await readBody(req, maxBytes, Number.isFinite(declared) ? declared : undefined, limits)
}

function firstValues (params: URLSearchParams): Record<string, string> {
  const query: Record<string, string> = {}
  for (const [key, value] of params) if (!(key in query)) query[key] = value
  return query
}

function lowerCaseHeaders (req: IncomingMessage): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {}
  for (const [key, value] of Object.entries(req.headers)) headers[key] = Array.isArray(value) ? value.join(', ') : value
  return headers
}

async function send (res: ServerResponse, response: HandlerResponse, signal?: AbortSignal): Promise<void> {
  const headers: Record<string, string> = { ...response.headers }
  const { body } = response
  if (isStreamBody(body)) {
    res.writeHead(response.status, headers)
    res.flushHeaders()
    try {
      for await (const chunk of body) {
        if (signal?.aborted === true) break
        if (!res.write(chunk)) await once(res, 'drain', { signal })
      }
    } catch (err) {
      if (signal?.aborted !== true) res.destroy(err as Error)
      return
    }
    res.end()
    return
  }
  if (body === undefined) {
    res.writeHead(response.status, headers)
    res.end()
    return
  }
  const payload = Buffer.from(JSON.stringify(body))
  headers['content-type'] ??= 'application/json; charset=utf-8'
  headers['content-length'] = String(payload.length)
  res.writeHead(response.status, headers)
  res.end(payload)
}
