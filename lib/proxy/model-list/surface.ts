// OpenAI's model list, `GET /v1/models` and `/v1/models/{id}`, from the catalog. Both API styles use these paths, so
// they answer in the style of the client asking and fail in it too: OpenAI's shape by default, Google's for a
// Google-style client (whose requests the native dispatcher serves). Recorded under the chat surface.
import type { HandlerRequest, HandlerResponse } from '../../http/contract.ts'
import { fail, isGatehouseError } from '../../errors.ts'
import { CORS_HEADERS } from '../access/client-auth.ts'
import { modelFilter } from '../access/model-policy.ts'
import { beginListing } from '../call/lifecycle.ts'
import type { SurfaceDeclaration } from '../call/surface.ts'
import { createChatErrorResponse, withParam } from '../chat/error-body.ts'
import { codexModelList } from '../models/codex-list.ts'
import { parseModelName } from '../models/name.ts'
import { createNativeErrorResponse } from '../native/error-body.ts'
import { nativeDispatcher } from '../native/surface.ts'

/**
 * Whether a request to a path both styles use comes from a Google-style client: @google/genai sends
 * x-goog-api-client, and Google-style keys (x-goog-api-key, ?key=) mean the same.
 */
function isGoogleClient (req: HandlerRequest): boolean {
  return req.headers['x-goog-api-client'] !== undefined || req.headers['x-goog-api-key'] !== undefined ||
    req.headers['x-vendor-api-key'] !== undefined || req.query.key !== undefined
}

function createModelListErrorResponse (): (err: unknown, req?: HandlerRequest) => HandlerResponse {
  const chat = createChatErrorResponse()
  const native = createNativeErrorResponse()
  return function modelListErrorResponse (err, req) {
    return req !== undefined && isGoogleClient(req) ? native(err) : chat(err)
  }
}

export const modelListSurface: SurfaceDeclaration = {
  name: 'chat',
  errorResponse: createModelListErrorResponse,
  routes (ctx) {
    const native = nativeDispatcher(ctx)
    return [
      {
        method: 'GET',
        path: '/v1/models',
        handler: async req => {
          if (isGoogleClient(req)) return await native(req)
          const caller = await ctx.checkAuth(req)
          const request = await beginListing(ctx, req, caller, 'chat')
          request.end(200)
          // Codex asks with ?client_version= and reads {"models": [...]} (docs/responses.md, "Codex's model list").
          const list = ctx.catalog.openaiList(modelFilter(ctx, caller))
          return { status: 200, headers: { ...CORS_HEADERS, ...request.headers }, body: req.query.client_version === undefined ? list : codexModelList(list.data, id => ctx.catalog.resolve(id)) }
        },
      },
      {
        method: 'GET',
        path: '/v1/models/{id}',
        noPreflight: true,
        handler: async req => {
          if (isGoogleClient(req)) return await native(req)
          const caller = await ctx.checkAuth(req)
          const request = await beginListing(ctx, req, caller, 'chat')
          let entry: Record<string, unknown> | undefined
          try {
            entry = ctx.catalog.openaiModel(req.params.id ?? '')
          } catch (err) {
            throw isGatehouseError(err) ? withParam(err, 'model') : err // a model the backend does not serve
          }
          // A model the caller may not use is not listed, so it is not found either.
          if (entry === undefined || !ctx.modelPolicy.allows(caller, parseModelName(entry.id as string).base)) throw withParam(fail('MODEL_NOT_FOUND', `The model \`${req.params.id}\` does not exist`), 'model')
          request.end(200)
          return { status: 200, headers: { ...CORS_HEADERS, ...request.headers }, body: entry }
        },
      },
    ]
  },
}
