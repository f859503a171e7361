// The proxy's route table: chat-completions routes answer in the OpenAI error shape, native routes
// in Google's. Every route checks the proxy password or a user's key except CORS preflights, first in the authenticate hook
// hosts run before reading the body (Route.authenticate), then in the handler (at once for a request that
// passed the hook).
import type { Handler, HandlerRequest, HandlerResponse, Route, RouteTable } from '../http/contract.ts'
import type { ProxyContext } from './context.ts'
import type { ChatRequest } from './chat/request-schema.ts'
import type { ResponsesSettings } from './responses/settings.ts'
import { createChatCompletionsHandler } from './chat/handler.ts'
import { createChatErrorResponse, withParam } from './chat/error-body.ts'
import { CORS_HEADERS, preflightResponse } from './access/client-auth.ts'
import { fail, isGatehouseError } from '../errors.ts'
import { RateLimitedError } from '../metering/rate-limiter.ts'
import { modelFilter } from './access/model-policy.ts'
import { parseModelName } from './models/name.ts'
import { createNativeErrorResponse } from './native/error-body.ts'
import { createNativeHandler, isPassThrough } from './native/handler.ts'
import { createEmbeddingsHandler } from './chat/embeddings.ts'
import { beginRequest, governed } from './call/lifecycle.ts'
import type { Surface } from './access/metering.ts'
import { createCountTokensHandler, createMessagesHandler } from './messages/handler.ts'
import { createMessagesErrorResponse } from './messages/error-body.ts'
import { responsesRoutes } from './responses/routes.ts'
import { interactionsRoutes } from './interactions/routes.ts'
import { codexModelList } from './models/codex-list.ts'

/**
 * Whether a request to a path both styles use (`/v1/models`) comes from a Google-style client:
 * @google/genai sends x-goog-api-client, and Google-style keys (x-goog-api-key, ?key=) mean the same.
 */
function isGoogleClient (req: HandlerRequest): boolean {
  return req.headers['x-goog-api-client'] !== undefined || req.headers['x-goog-api-key'] !== undefined ||
    req.headers['x-vendor-api-key'] !== undefined || req.query.key !== undefined
}

/** The settings of the surfaces that have their own, built by createProxy and handed to those surfaces only. */
export interface SurfaceSettings {
  validateChat: (body: unknown) => ChatRequest
  responses: ResponsesSettings
}

export function proxyRoutes (ctx: ProxyContext, settings: SurfaceSettings): RouteTable & { routes: Route[] } {
  // Every failure of a model call passes here: it ends the call (its concurrency slot freed, recorded with the
  // status answered) and carries its x-ratelimit-* headers, a refusal's own included.
  const metered = (mapper: (err: unknown, req?: HandlerRequest) => HandlerResponse): (err: unknown, req?: HandlerRequest) => HandlerResponse => {
    const wrapped = (err: unknown, req?: HandlerRequest): HandlerResponse => meteredError(mapper, err, req)
    // Named as the mapper it wraps: a route's surface reads as its mapper's name.
    return Object.defineProperty(wrapped, 'name', { value: mapper.name })
  }
  const meteredError = (mapper: (err: unknown, req?: HandlerRequest) => HandlerResponse, err: unknown, req?: HandlerRequest): HandlerResponse => {
    const response = mapper(err, req)
    const call = req === undefined ? undefined : ctx.metering.callOf(req)
    if (call !== undefined) {
      call.end(response.status)
      response.headers = { ...response.headers, ...call.headers }
    } else if (err instanceof RateLimitedError) {
      response.headers = { ...response.headers, ...err.headers }
    }
    return response
  }
  const chatError = metered(createChatErrorResponse())
  const nativeError = metered(createNativeErrorResponse())
  // Preflights carry no password and need none.
  const authenticate = async (req: HandlerRequest): Promise<undefined> => {
    if (req.method !== 'OPTIONS') await ctx.checkAuth(req)
    return undefined
  }
  // Every handler runs under the lifecycle's deny by default (lib/proxy/call/lifecycle.ts, governed).
  // A request refused before its call began is recorded under the surface of its route (`name`).
  const chat = (method: string, path: string, handler: Handler, errorResponse: Route['errorResponse'] = chatError, name: Surface = 'chat'): Route =>
    ({ method, path, handler: governed(ctx, name, handler), maxBytes: ctx.maxBodyBytes, bodyBudget: ctx.bodyBudget, bodyRead: ctx.bodyRead, authenticate, errorResponse })
  // Bodies passed through (native/pass-through.ts) reach the handler as they arrive, within the same limits.
  const native = (method: string, path: string, handler: Handler): Route =>
    ({ method, path, handler: governed(ctx, 'native', handler), maxBytes: ctx.maxBodyBytes, bodyBudget: ctx.bodyBudget, bodyRead: ctx.bodyRead, streamBody: isPassThrough, authenticate, errorResponse: nativeError })
  const preflight: Handler = async req => preflightResponse(req)
  /**
   * A surface's POST route and its preflight, failing in the surface's own error shape (its mapper, metered as every
   * route's): one line per surface (docs/model-proxy.md, "Adding a surface").
   */
  const surface = (name: Surface, path: string, createHandler: (ctx: ProxyContext) => Handler, createErrorResponse: () => (err: unknown, req?: HandlerRequest) => HandlerResponse): Route[] => {
    const errorResponse = metered(createErrorResponse())
    return [chat('POST', path, createHandler(ctx), errorResponse, name), chat('OPTIONS', path, preflight, errorResponse, name)]
  }
  const nativeHandler = createNativeHandler(ctx)

  // `/v1/models` and `/v1/models/{id}` answer in the style of the client asking, and fail in it too: the handler
  // throws, and the serving path hands the request to errorResponse (Route.errorResponse). Still the chat
  // surface's mapper there (the /v1 scope's), with Google's shape for Google-style clients.
  const byClient = (chatHandler: Handler): Handler => async req => await (isGoogleClient(req) ? nativeHandler : chatHandler)(req)
  const chatErrorResponse = (err: unknown, req?: HandlerRequest): HandlerResponse =>
    req !== undefined && isGoogleClient(req) ? nativeError(err) : chatError(err)

  const routes: Route[] = [
    ...surface('chat', '/v1/chat/completions', ctx => createChatCompletionsHandler(ctx, settings.validateChat), createChatErrorResponse),
    ...surface('chat', '/v1/embeddings', createEmbeddingsHandler, createChatErrorResponse),
    ...surface('messages', '/v1/messages', createMessagesHandler, createMessagesErrorResponse),
    ...surface('messages', '/v1/messages/count_tokens', createCountTokensHandler, createMessagesErrorResponse),
    chat('GET', '/v1/models', byClient(async req => {
      const caller = await ctx.checkAuth(req)
      const request = await beginRequest(ctx, req, caller, 'chat')
      request.end(200)
      // Codex asks with ?client_version= and reads {"models": [...]} (docs/responses.md, "Codex's model list").
      const list = ctx.catalog.openaiList(modelFilter(ctx, caller))
      return { status: 200, headers: { ...CORS_HEADERS, ...request.headers }, body: req.query.client_version === undefined ? list : codexModelList(list.data, id => ctx.catalog.resolve(id)) }
    }), chatErrorResponse),
    chat('OPTIONS', '/v1/models', preflight),
    chat('GET', '/v1/models/{id}', byClient(async req => {
      const caller = await ctx.checkAuth(req)
      const request = await beginRequest(ctx, req, caller, 'chat')
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
    }), chatErrorResponse),
    native('*', '/v1/models/{path*}', nativeHandler),
    native('GET', '/v1beta/models', nativeHandler),
    native('GET', '/v1beta/models/{id}', nativeHandler),
    native('*', '/v1beta/{path*}', nativeHandler),
    native('*', '/upload/v1beta/{path*}', nativeHandler),
    ...responsesRoutes(ctx, settings.responses, metered, (method, path, handler, errorResponse) => chat(method, path, handler, errorResponse, 'responses')),
    ...interactionsRoutes(ctx, nativeError, (method, path, handler, errorResponse) => chat(method, path, handler, errorResponse, 'interactions')),
  ]
  // Unknown /v1 paths answer in the chat-completions shape; /v1beta/* is the native wildcard's.
  return { scope: '/v1', routes, errorResponse: chatError }
}
