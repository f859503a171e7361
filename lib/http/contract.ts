// The handler contract: the seam between the library and any host server
// (the Hapi gateway, node:http, Express, Fastify, fetch-style runtimes).
import type { BodyBudget } from './body-budget.ts'
import type { BodyReadLimits } from './read-body.ts'
import type { ServerWebSocket } from './websocket.ts'

/** A plain request, as any host can build it. */
export interface HandlerRequest {
  method: string
  /** Request path without the query string, as received (not decoded). */
  path: string
  /** Path parameters from the route template, decoded. */
  params: Record<string, string>
  /** Query parameters; a repeated key keeps its first value. */
  query: Record<string, string>
  /** Header names lower-cased. */
  headers: Record<string, string | undefined>
  /**
   * The body: raw bytes (Buffer/Uint8Array) or a string as received, or a value the host has
   * already parsed as JSON (Express's express.json(), Fastify). undefined when there is none.
   */
  body?: unknown
  /** Client address, used by the per-address limits (failed logins and proxy passwords, the body budget's shares). */
  remoteAddress?: string
  /** Aborted when the client goes away; handlers pass it to upstream calls. */
  signal?: AbortSignal
}

/** A streamed body: strings or bytes, written as they come (server-sent events). */
export type StreamBody = AsyncIterable<string | Uint8Array>

export interface HandlerResponse {
  status: number
  headers?: Record<string, string>
  /** A JSON value, or a StreamBody. undefined means no body. */
  body?: unknown
}

/**
 * Answers one request. Handlers refuse by throwing (a GatehouseError from lib/errors.ts); the serving path
 * (lib/http/serve.ts) maps what they throw through the route's errorResponse. A library user calling a route's
 * handler directly therefore gets the thrown GatehouseError, not an error response.
 */
export type Handler = (req: HandlerRequest) => Promise<HandlerResponse>

/** A family of routes with its own documented error shape: the account routes, ops, and each proxy surface (lib/proxy/surfaces.ts). */
export type Surface = 'auth' | 'ops' | 'chat' | 'native' | 'messages' | 'responses' | 'interactions'

export interface Route {
  /** Upper-case HTTP method, or '*' for any. */
  method: string
  /** Hapi template syntax: /admin/user/{user_id}, /v1beta/{path*}. */
  path: string
  handler: Handler
  /** Largest accepted request body in bytes; beyond it the host answers 413 through errorResponse. */
  maxBytes: number
  /**
   * The route's credential check on the request without its body (method, path, query, headers, remoteAddress;
   * `body` undefined). The serving path (lib/http/serve.ts) calls it first, before it reserves body budget or reads a byte of the body, so a
   * client without credentials holds neither memory nor a place in the budget's queue. It refuses by throwing
   * (answered with errorResponse(err)) or by returning the response to send; undefined lets the request on. The
   * handler still checks for itself (a host may call it directly), which is cheap once this has passed for the
   * same request object. Default none.
   */
  authenticate?: (req: HandlerRequest) => HandlerResponse | undefined | Promise<HandlerResponse | undefined>
  /**
   * Whether the handler gets this request's body as a StreamBody of bytes as they arrive (within maxBytes and
   * bodyRead, which its iteration throws past) instead of read whole: for bodies passed through unbuffered.
   * Asked after authenticate, before the body is touched. Default never.
   */
  streamBody?: (req: HandlerRequest) => boolean
  /** How long the host waits for the body (deadline, minimum rate: 408 past them). Default DEFAULT_BODY_READ_LIMITS (lib/http/read-body.ts). */
  bodyRead?: BodyReadLimits
  /**
   * Shared by the routes that take large bodies: hosts reserve a body's declared size here before reading it
   * and give it back once the handler has answered (see lib/http/body-budget.ts). Hosts that read bodies
   * themselves (a framework's body parser) cannot, and are then not protected by it.
   */
  bodyBudget?: BodyBudget
  /**
   * Turns any error (a GatehouseError or a host's own) into this route's error response; `req` is the request
   * when there is one (a route may answer in the shape its client asks for), absent for a host's refusal before it.
   */
  errorResponse: (err: unknown, req?: HandlerRequest) => HandlerResponse
  /**
   * Takes a WebSocket upgrade of this GET route (lib/http/upgrade.ts): hosts call it with the upgrade request once
   * `authenticate` let it on and the 101 went out; the socket is the route's from then on. Default none (no upgrade).
   */
  upgrade?: (req: HandlerRequest, socket: ServerWebSocket) => void
}

/**
 * A service's routes, as every host mounts them (createAuthService().routeTable, createProxy().routeTable).
 * The scope decides the error shape of requests no route takes, the same way in every host.
 */
export interface RouteTable {
  /**
   * Unknown paths (and known paths under another method) at or under this path answer 404 (405) through
   * errorResponse; the longest scope containing the path wins. '' for none.
   */
  scope: string
  routes: readonly Route[]
  /** The table's error shape, for requests no route takes. */
  errorResponse: (err: unknown) => HandlerResponse
}

/**
 * Runs the route's authenticate hook as hosts do before touching the body: resolves with the response that
 * refuses the request (the hook's own, or errorResponse of what it threw), or undefined to go on.
 */
export async function authenticateRoute (route: Route, req: HandlerRequest): Promise<HandlerResponse | undefined> {
  if (route.authenticate === undefined) return undefined
  try {
    return await route.authenticate(req)
  } catch (err) {
    return route.errorResponse(err, req)
  }
}

export function isStreamBody (body: unknown): body is StreamBody {
  return body != null && typeof body === 'object' && Symbol.asyncIterator in body
}
