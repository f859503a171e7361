// The Responses surface's routes (docs/responses.md): create, and a stored response read, deleted and its input
// items listed, each only by its owner (another caller's id is a 404). They answer in OpenAI's error shape
// (error-body.ts), failures of a model call ended by the route table's metering wrapper.
import type { Handler, HandlerRequest, HandlerResponse, Route } from '../../http/contract.ts'
import { CORS_HEADERS, preflightResponse } from '../access/client-auth.ts'
import type { ProxyContext } from '../context.ts'
import type { ResponsesSettings } from './settings.ts'
import { beginRequest } from '../call/lifecycle.ts'
import type { MeteredCall } from '../access/metering.ts'
import { createResponsesErrorResponse } from './error-body.ts'
import { createResponsesHandler } from './handler.ts'
import { invalidParam } from './request-schema.ts'
import { loadResponse, ownerOf, responseNotFound } from './stored.ts'
import { responsesSocket } from './websocket.ts'
import { socketCounts } from './socket-limits.ts'
import type { ProxyCaller } from '../access/caller.ts'
import { fail } from '../../errors.ts'
import { readJsonBody } from '../../http/json-body.ts'

type Mapper = (err: unknown, req?: HandlerRequest) => HandlerResponse

/** input_items' page: `limit` 1-100 (default 20), `order` asc or desc (default desc), `after` an item id. */
function page (items: Array<Record<string, unknown>>, query: Record<string, string | undefined>): Record<string, unknown> {
  const limit = query.limit === undefined ? 20 : Number(query.limit)
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 100) throw invalidParam("Invalid 'limit': expected an integer from 1 to 100.", 'limit')
  const order = query.order ?? 'desc'
  if (order !== 'asc' && order !== 'desc') throw invalidParam("Invalid 'order': expected asc or desc.", 'order')
  let list = order === 'asc' ? items : [...items].reverse()
  if (query.after !== undefined) {
    const at = list.findIndex(item => item.id === query.after)
    list = at < 0 ? [] : list.slice(at + 1)
  }
  const data = list.slice(0, limit)
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: list.length > limit }
}

/**
 * `governedRoute` builds a route under the lifecycle's deny by default (lib/proxy/routes.ts); each read of a stored
 * response is a request on no model, counted and recorded (beginRequest).
 */
export function responsesRoutes (ctx: ProxyContext, settings: ResponsesSettings, metered: (mapper: Mapper) => Mapper, governedRoute: (method: string, path: string, handler: Handler, errorResponse: Mapper) => Route): Route[] {
  const errorResponse = metered(createResponsesErrorResponse())
  const route = (method: string, path: string, handler: Handler): Route => governedRoute(method, path, handler, errorResponse)
  const preflight: Handler = async req => preflightResponse(req)
  const { store, now } = settings
  const stored = async (req: HandlerRequest): Promise<{ owner: string, id: string, request: MeteredCall }> => {
    const caller = await ctx.checkAuth(req)
    return { owner: ownerOf(caller), id: req.params.id ?? '', request: await beginRequest(ctx, req, caller, 'responses') }
  }
  const create = route('POST', '/v1/responses', createResponsesHandler(ctx, settings))
  // Codex's warm-up create (`generate: false`) over the socket: key and body checked, no call made, and not counted
  // against the requests per minute (docs/responses.md, "WebSocket transport"): the turn it prepares is.
  const warmup = route('POST', '/v1/responses', async req => {
    await ctx.checkAuth(req)
    const body = settings.validate(readJsonBody(req))
    return { status: 200, body: { model: body.model } }
  })
  // The WebSocket transport (websocket.ts): each response.create frame is served on the POST routes above; a key's
  // open sockets are capped at the upgrade (socket-limits.ts), so a refused one is a plain 429 Codex answers over HTTP.
  const get = route('GET', '/v1/responses', async () => { throw fail('METHOD_NOT_ALLOWED', 'GET /v1/responses is the WebSocket transport: upgrade the request, or POST a response') })
  const counts = socketCounts(settings.websocket.maxSocketsPerKey)
  const callers = new WeakMap<HandlerRequest, ProxyCaller>()
  const socket: Route = {
    ...get,
    async authenticate (req) {
      const refused = await get.authenticate?.(req)
      if (refused !== undefined) return refused
      const caller = await ctx.checkAuth(req)
      counts.check(caller)
      callers.set(req, caller)
      return undefined
    },
    upgrade: responsesSocket(create, warmup, {
      limits: settings.websocket,
      drains: settings.sockets,
      hold: req => { const caller = callers.get(req); return caller === undefined ? () => {} : counts.hold(caller) },
    }, { logger: ctx.logger }),
  }
  return [
    create,
    route('OPTIONS', '/v1/responses', preflight),
    route('POST', '/v1/responses/compact', createResponsesHandler(ctx, settings, true)),
    route('OPTIONS', '/v1/responses/compact', preflight),
    socket,
    route('GET', '/v1/responses/{id}', async req => {
      const { owner, id, request } = await stored(req)
      const { response } = await loadResponse(store, id, owner, now())
      request.end(200)
      return { status: 200, headers: { ...CORS_HEADERS, ...request.headers }, body: response }
    }),
    route('DELETE', '/v1/responses/{id}', async req => {
      const { owner, id, request } = await stored(req)
      if (store === undefined || !await store.delete(id, owner)) throw responseNotFound(id)
      request.end(200)
      return { status: 200, headers: { ...CORS_HEADERS, ...request.headers }, body: { id, object: 'response', deleted: true } }
    }),
    route('OPTIONS', '/v1/responses/{id}', preflight),
    route('GET', '/v1/responses/{id}/input_items', async req => {
      const { owner, id, request } = await stored(req)
      const { input } = await loadResponse(store, id, owner, now())
      const body = page(input, req.query)
      request.end(200)
      return { status: 200, headers: { ...CORS_HEADERS, ...request.headers }, body }
    }),
    route('OPTIONS', '/v1/responses/{id}/input_items', preflight),
  ]
}
