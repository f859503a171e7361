// The handler contract: the seam between the library and any host server
// (the Hapi gateway, node:http, Express, Fastify, fetch-style runtimes).
import type { BodyBudget } from './body-budget.ts'

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
  /** Client address, used by the login limiter. */
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

export type Handler = (req: HandlerRequest) => Promise<HandlerResponse>

/** Which documented error shape a route answers with. */
export type Surface = 'auth' | 'chat' | 'native' | 'ops'

export interface Route {
  /** Upper-case HTTP method, or '*' for any. */
  method: string
  /** Hapi template syntax: /admin/user/{user_id}, /v1beta/{path*}. */
  path: string
  handler: Handler
  surface: Surface
  /** Largest accepted request body in bytes; beyond it the host answers 413 through errorResponse. */
  maxBytes: number
  /**
   * Shared by the routes that take large bodies: hosts reserve a body's declared size here before reading it
   * and give it back once the handler has answered (see lib/http/body-budget.ts). Hosts that read bodies
   * themselves (a framework's body parser) cannot, and are then not protected by it.
   */
  bodyBudget?: BodyBudget
  /** Turns any error (a GatehouseError or a host's own) into this route's error response. */
  errorResponse: (err: unknown) => HandlerResponse
}

export function isStreamBody (body: unknown): body is StreamBody {
  return body != null && typeof body === 'object' && Symbol.asyncIterator in body
}
