import type { HandlerResponse } from './contract.ts'
import { isStreamBody } from './contract.ts'
import { createDispatcher, serveRoute, toTables, unknownRouteResponse } from './serve.ts'
import type { Tables } from './serve.ts'
import type { Logger } from '../logger.ts'
import { fail } from '../errors.ts'

export interface FetchHandlerOptions {
  /** Client address for a request (the login limiter uses it); fetch Requests do not carry one. */
  remoteAddress?: (request: Request) => string | undefined
  /** Told about handler errors outside the catalogue (bugs). Default none. */
  logger?: Logger
}

/**
 * A fetch-style handler `(Request) => Promise<Response>` serving route tables (lib/http/serve.ts does the
 * serving), for runtimes and frameworks built on the Fetch API. Unmatched paths answer 404 in their scope's shape.
 * It takes no WebSocket upgrade (Route.upgrade): a Fetch Request cannot be upgraded, Deno's upgradeWebSocket and
 * Bun's server.upgrade being runtime APIs outside it; a handshake on such a route gets a 426 (WEBSOCKET_UNAVAILABLE).
 */
export function createFetchHandler (tables: Tables, options: FetchHandlerOptions = {}) {
  const list = toTables(tables)
  const dispatch = createDispatcher(list)
  const serveOptions = { logger: options.logger }
  return async function gatehouseFetch (request: Request): Promise<Response> {
    const url = new URL(request.url)
    const method = request.method.toUpperCase()
    const found = dispatch(method, url.pathname)
    if (found.route === undefined) return toResponse(unknownRouteResponse(list, url.pathname, found.methodNotAllowed), method)
    if (found.route.upgrade !== undefined && /\bwebsocket\b/i.test(request.headers.get('upgrade') ?? '')) return toResponse(found.route.errorResponse(fail('WEBSOCKET_UNAVAILABLE', UPGRADE_REFUSED)), method)
    return toResponse(await serveRoute(found.route, {
      method,
      path: url.pathname,
      params: found.params,
      query: url.searchParams,
      headers: Object.fromEntries(request.headers),
      remoteAddress: options.remoteAddress?.(request),
      body: request.body,
      signal: request.signal,
    }, serveOptions), method)
  }
}

/** The answer to a WebSocket handshake here (docs/responses.md, "WebSocket transport"): a 426, on which Codex uses POST at once. */
export const UPGRADE_REFUSED = 'This host (createFetchHandler) takes no WebSocket upgrade: send the request over HTTP (POST), or serve these routes with createNodeListener or hapiPlugin'

/** The Fetch API Response; a HEAD answer carries the GET answer's status and headers but no body, as node:http and Hapi send it. */
function toResponse (response: HandlerResponse, method: string): Response {
  const headers = new Headers(response.headers)
  const { body } = response
  if (method === 'HEAD') {
    if (isStreamBody(body)) void body[Symbol.asyncIterator]().return?.()
    else if (body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json; charset=utf-8')
    return new Response(null, { status: response.status, headers })
  }
  if (isStreamBody(body)) {
    const encoder = new TextEncoder()
    const iterator = body[Symbol.asyncIterator]()
    const stream = new ReadableStream<Uint8Array>({
      async pull (controller) {
        const { value, done } = await iterator.next()
        if (done === true) controller.close()
        else controller.enqueue(typeof value === 'string' ? encoder.encode(value) : value)
      },
      async cancel () { await iterator.return?.() }
    })
    return new Response(stream, { status: response.status, headers })
  }
  if (body === undefined) return new Response(null, { status: response.status, headers })
  if (!headers.has('content-type')) headers.set('content-type', 'application/json; charset=utf-8')
  return new Response(JSON.stringify(body), { status: response.status, headers })
}
