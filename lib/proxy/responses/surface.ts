// OpenAI's Responses API over Gemini (docs/responses.md), declared to the pipeline: create (./create.ts) and its
// compact form, the WebSocket transport (./websocket.ts), and a stored response read, deleted and its input items
// listed, each only by its owner (another caller's id is a 404), in OpenAI's error shape (./error-body.ts).
import type { HandlerRequest, HandlerResponse } from '../../http/contract.ts'
import { CORS_HEADERS } from '../access/client-auth.ts'
import { isGatehouseError, fail } from '../../errors.ts'
import { readJsonBody } from '../../http/json-body.ts'
import type { MeteredCall } from '../access/metering.ts'
import { beginRequest } from '../call/lifecycle.ts'
import type { SurfaceDeclaration, SurfaceRoute } from '../call/surface.ts'
import type { ProxyContext } from '../context.ts'
import type { ResponsesSettings } from './settings.ts'
import { createResponsesErrorResponse } from './error-body.ts'
import { createOperation } from './create.ts'
import { invalidParam } from './request-schema.ts'
import { loadResponse, ownerOf, responseNotFound } from './stored.ts'
import { responsesSocket } from './websocket.ts'

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

/** The routes on stored responses: each a request on no model, counted and recorded (beginRequest). */
function storedRoutes (ctx: ProxyContext, settings: ResponsesSettings): SurfaceRoute[] {
  const { store, now } = settings
  const stored = async (req: HandlerRequest): Promise<{ owner: string, id: string, request: MeteredCall }> => {
    const caller = await ctx.checkAuth(req)
    return { owner: ownerOf(caller), id: req.params.id ?? '', request: await beginRequest(ctx, req, caller, 'responses') }
  }
  const answer = (request: MeteredCall, body: unknown): HandlerResponse => {
    request.end(200)
    return { status: 200, headers: { ...CORS_HEADERS, ...request.headers }, body }
  }
  return [
    {
      method: 'GET',
      path: '/v1/responses/{id}',
      handler: async req => {
        const { owner, id, request } = await stored(req)
        return answer(request, (await loadResponse(store, id, owner, now())).response)
      },
    },
    {
      method: 'DELETE',
      path: '/v1/responses/{id}',
      noPreflight: true,
      handler: async req => {
        const { owner, id, request } = await stored(req)
        if (store === undefined || !await store.delete(id, owner)) throw responseNotFound(id)
        return answer(request, { id, object: 'response', deleted: true })
      },
    },
    {
      method: 'GET',
      path: '/v1/responses/{id}/input_items',
      handler: async req => {
        const { owner, id, request } = await stored(req)
        return answer(request, page((await loadResponse(store, id, owner, now())).input, req.query))
      },
    },
  ]
}

export function responsesSurface (settings: ResponsesSettings): SurfaceDeclaration {
  return {
    name: 'responses',
    errorResponse: createResponsesErrorResponse,
    modelRefused: err => {
      if (isGatehouseError(err)) err.param = 'model'
      return err
    },
    answersWhole: true,
    routes (ctx) {
      const create: SurfaceRoute = { method: 'POST', path: '/v1/responses', call: createOperation(ctx, settings) }
      // Codex's warm-up create (`generate: false`) over the socket: checked and counted as a request on no model, no call made.
      const warmup: SurfaceRoute = {
        method: 'POST',
        path: '/v1/responses',
        handler: async req => {
          const caller = await ctx.checkAuth(req)
          const body = settings.validate(readJsonBody(req))
          const request = await beginRequest(ctx, req, caller, 'responses')
          request.end(200)
          return { status: 200, headers: { ...request.headers }, body: { model: body.model } }
        },
      }
      return [
        create,
        { method: 'POST', path: '/v1/responses/compact', call: createOperation(ctx, settings, true) },
        {
          method: 'GET',
          path: '/v1/responses',
          noPreflight: true,
          handler: async () => { throw fail('METHOD_NOT_ALLOWED', 'GET /v1/responses is the WebSocket transport: upgrade the request, or POST a response') },
          // Each response.create frame is served on the POST routes above.
          upgrade: built => responsesSocket(built(create), built(warmup), { logger: ctx.logger }),
        },
        ...storedRoutes(ctx, settings),
      ]
    },
  }
}
