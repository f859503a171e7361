// The one serving path: everything between a host's request and the HandlerResponse it writes out. The node,
// fetch and Hapi adapters only translate their request in and the response out; the sequence (credentials →
// body budget → body read within limits → handler → error mapping → release) and the choice of error shape for
// requests no route takes live here, once.
import { Readable } from 'node:stream'
import { once } from 'node:events'
import type { ServerResponse } from 'node:http'
import type { HandlerRequest, HandlerResponse, Route, RouteTable, SocketObserver, StreamBody } from './contract.ts'
import { isStreamBody } from './contract.ts'
import { createRouter } from './router.ts'
import { ERRORS, fail, isGatehouseError, logFailure } from '../errors.ts'
import { isBodyTimeout, readBody, streamBody } from './read-body.ts'
import { reserveBody } from './body-budget.ts'
import { clientAddress } from './client-address.ts'
import type { TrustedProxies } from './client-address.ts'
import type { Logger } from '../logger.ts'

/** What a host knows of a request, in its own terms. */
export interface HostRequest {
  /** Upper-case method. */
  method: string
  /** Path without the query string, as received. */
  path: string
  params: Record<string, string>
  /** The query: URLSearchParams, or an object of values (a framework's parsed query). */
  query: URLSearchParams | Record<string, unknown>
  /** Header names lower-cased (as Node and the Fetch API give them); repeated values as a list. */
  headers: Record<string, string | string[] | undefined>
  /** The socket's peer; with trustedProxies a forwarding header may name the client instead. */
  peerAddress?: string
  /** The client's address when the host has it from elsewhere (fetch runtimes); used as is. */
  remoteAddress?: string
  /** The unread body (a Node Readable or a web ReadableStream); null or undefined when there is none. */
  body?: Readable | ReadableStream<Uint8Array> | null
  /** A body a framework has parsed already (express.json()): used as is, neither reserved nor read. */
  parsedBody?: unknown
  /** Aborted when the client goes away. */
  signal?: AbortSignal
}

export interface ServeOptions {
  /** Proxies whose X-Forwarded-For / Forwarded names the client (lib/http/client-address.ts). Default none. */
  trustedProxies?: TrustedProxies
  /** Told once about each failure (lib/errors.ts logFailure: bugs as errors, catalogue 5xx as warnings); the mappers log nothing. Default none. */
  logger?: Logger
  /** Told about WebSocket routes' sockets and the requests served on them (lib/http/upgrade.ts). Default none. */
  sockets?: SocketObserver
}

/** Route tables as hosts accept them: one, several, or a bare route list (a table without a scope). */
export type Tables = RouteTable | readonly RouteTable[] | readonly Route[]

/** The answer in the default shape for a request outside every table's scope. */
export function defaultErrorResponse (err: unknown): HandlerResponse {
  if (isGatehouseError(err)) return { status: err.status, body: { detail: err.message } }
  return { status: 500, body: { detail: ERRORS.INTERNAL.message } }
}

export function toTables (tables: Tables): RouteTable[] {
  if (!Array.isArray(tables)) return [tables as RouteTable]
  const list = tables as ReadonlyArray<RouteTable | Route>
  if (list.every(t => 'routes' in t)) return [...list as RouteTable[]]
  return [{ scope: '', routes: list as Route[], errorResponse: defaultErrorResponse }]
}

/** The table whose scope holds `path` (the longest), or undefined. */
export function scopeOf (tables: readonly RouteTable[], path: string): RouteTable | undefined {
  let best: RouteTable | undefined
  for (const table of tables) {
    const scope = table.scope.replace(/\/+$/, '')
    if (scope === '' || !(path === scope || path.startsWith(scope + '/'))) continue
    if (best === undefined || scope.length > best.scope.replace(/\/+$/, '').length) best = table
  }
  return best
}

/** The answer to a request no route takes: 404, or 405 when the path exists under another method, in the scope's shape. */
export function unknownRouteResponse (tables: readonly RouteTable[], path: string, methodNotAllowed: boolean): HandlerResponse {
  const err = fail(methodNotAllowed ? 'METHOD_NOT_ALLOWED' : 'NOT_FOUND')
  return (scopeOf(tables, path)?.errorResponse ?? defaultErrorResponse)(err)
}

export type Dispatch = { route: Route, params: Record<string, string> } | { route: undefined, methodNotAllowed: boolean, inScope: boolean }

/** Routing for hosts without a router of their own (node:http, fetch): Hapi's template rules (lib/http/router.ts). */
export function createDispatcher (tables: readonly RouteTable[]): (method: string, path: string) => Dispatch {
  const router = createRouter(tables.flatMap(t => t.routes))
  return (method, path) => {
    const found = router.match(method, path)
    if (found.route !== undefined) return found
    return { route: undefined, methodNotAllowed: found.methodNotAllowed, inScope: scopeOf(tables, path) !== undefined }
  }
}

export function firstQueryValues (query: HostRequest['query']): Record<string, string> {
  const first: Record<string, string> = {}
  if (query instanceof URLSearchParams) {
    for (const [key, value] of query) if (!(key in first)) first[key] = value
    return first
  }
  for (const key in query) {
    const value = query[key]
    const v = Array.isArray(value) ? value[0] : value
    if (typeof v === 'string') first[key] = v
  }
  return first
}

export function joinedHeaders (given: HostRequest['headers']): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {}
  for (const name in given) {
    const value = given[name]
    headers[name] = Array.isArray(value) ? value.join(', ') : value
  }
  return headers
}

/** Drops a body unread: a Node body leaves its connection usable for the answer; a web stream has none to keep. */
function dropBody (source: Readable | ReadableStream<Uint8Array>): void {
  if (source instanceof Readable) { if (!source.readableEnded && !source.destroyed) source.resume() } else source.cancel().catch(() => {})
}

/** The declared content-length, if any; one over the route's maxBytes is a 413 before a byte is read (the body dropped). */
function declaredLength (source: Readable | ReadableStream<Uint8Array>, headers: Record<string, string | undefined>, route: Route): number | undefined {
  const declared = Number(headers['content-length'])
  if (!Number.isFinite(declared)) return undefined
  if (declared > route.maxBytes) {
    dropBody(source)
    throw fail('PAYLOAD_TOO_LARGE')
  }
  return declared
}

function nodeStream (source: Readable | ReadableStream<Uint8Array>): Readable {
  return source instanceof Readable ? source : Readable.fromWeb(source as import('node:stream/web').ReadableStream<Uint8Array>)
}

/** The whole body within the route's limits: 413 past maxBytes (a declared length over it before a byte is read), 408 past bodyRead. */
async function readRequestBody (source: Readable | ReadableStream<Uint8Array>, headers: Record<string, string | undefined>, route: Route): Promise<Buffer | undefined> {
  const declared = declaredLength(source, headers, route)
  const stream = nodeStream(source)
  try {
    return await readBody(stream, route.maxBytes, declared, route.bodyRead)
  } catch (err) {
    // A web stream has no socket to keep usable: stop reading it.
    if (!(source instanceof Readable)) stream.destroy()
    throw err
  }
}

/** The body as it arrives (Route.streamBody): the same limits as readRequestBody's, applied while it is read. */
function streamRequestBody (source: Readable | ReadableStream<Uint8Array>, headers: Record<string, string | undefined>, route: Route): { body: StreamBody, dropUnread: () => void } {
  declaredLength(source, headers, route)
  const stream = nodeStream(source)
  let read = false
  return {
    body: { [Symbol.asyncIterator]: () => { read = true; return streamBody(stream, route.maxBytes, route.bodyRead) } },
    // A body the handler never read (a refusal) is drained when it has answered.
    dropUnread: () => { if (!read) dropBody(source) },
  }
}

/**
 * Serves one request on a matched route and resolves with the response to write; never rejects. Credentials
 * first (a request without them is refused with its body unread), then the body budget, then the body, then the
 * handler; whatever is thrown becomes the route's errorResponse, and a body that came too slowly also closes the
 * connection (the rest of it stays unread, so the connection cannot carry another request).
 */
export async function serveRoute (route: Route, host: HostRequest, options: ServeOptions = {}): Promise<HandlerResponse> {
  const headers = joinedHeaders(host.headers)
  const request: HandlerRequest = {
    method: host.method,
    path: host.path,
    params: host.params,
    query: firstQueryValues(host.query),
    headers,
    body: undefined,
    remoteAddress: host.remoteAddress ?? clientAddress(host.peerAddress, host.headers, options.trustedProxies),
    signal: host.signal,
  }
  let release: (() => void) | undefined
  try {
    const refused = route.authenticate === undefined ? undefined : await route.authenticate(request)
    if (refused !== undefined) return refused
    if (host.parsedBody !== undefined) {
      // In memory already, whatever the budget says.
      request.body = host.parsedBody
    } else if (host.body != null) {
      release = await reserveBody(route, headers, host.signal, request.remoteAddress)
      if (route.streamBody?.(request) === true) {
        const streamed = streamRequestBody(host.body, headers, route)
        request.body = streamed.body
        const releaseBudget = release
        release = () => {
          releaseBudget?.()
          streamed.dropUnread()
        }
      } else {
        request.body = await readRequestBody(host.body, headers, route)
      }
    }
    const response = await route.handler(request)
    // Proxies such as nginx buffer by default; a stream must reach the client chunk by chunk, every time.
    if (isStreamBody(response.body)) response.headers = { 'x-accel-buffering': 'no', 'cache-control': 'no-cache', ...response.headers }
    return response
  } catch (err) {
    logFailure(options.logger, err, { route: route.path, method: request.method }, 'handler failed')
    const response = route.errorResponse(err, request)
    return isBodyTimeout(err) ? { ...response, headers: { ...response.headers, connection: 'close' } } : response
  } finally {
    release?.()
  }
}

/**
 * Writes a streamed response straight to Node's response: one `write` per chunk the body yields (the body batches,
 * lib/proxy/routes-stream.ts), waiting for `drain` only when a write returns false. Resolves once the response has
 * ended, or was cut short: by the client leaving (`signal`; the body is closed, which cancels its source) or by the
 * body failing after the status line went out (the socket is destroyed so the client can tell, and the cause
 * logged here, once). Never rejects.
 */
export async function writeStreamBody (res: ServerResponse, status: number, headers: Record<string, string> | undefined, body: StreamBody, signal?: AbortSignal, logger?: Logger): Promise<void> {
  res.writeHead(status, headers)
  try {
    for await (const chunk of body) {
      if (signal?.aborted === true) break
      if (!res.write(chunk)) await once(res, 'drain', { signal })
    }
  } catch (err) {
    if (signal?.aborted === true || res.destroyed) return
    logger?.error({ err }, 'stream failed after its first bytes')
    res.destroy(err as Error)
    return
  }
  if (res.destroyed) return
  // 'close' follows 'finish', and also comes when the connection drops before it (when 'finish' never does).
  await new Promise<void>(resolve => { res.once('close', resolve).end() })
}
