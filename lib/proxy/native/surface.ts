// Google's native API (docs/model-proxy.md, "Native requests"), declared to the pipeline: `/v1beta/models` and
// `/v1beta/models/{id}` from the catalog, `POST /v1beta/models/{model}:generateContent | :streamGenerateContent |
// :countTokens` run as model calls (lib/proxy/call/run-model-call.ts), any other path passed through to the backend
// (./pass-through.ts, its model calls run by the pipeline too); other methods 405, all in Google's error shape. The
// same paths under `/v1/` too: @google/genai 3.x calls `/v1/models/...` unless told otherwise.
import type { Handler, HandlerRequest, HandlerResponse } from '../../http/contract.ts'
import { readJsonBody } from '../../http/json-body.ts'
import { fail } from '../../errors.ts'
import { CORS_HEADERS, preflightResponse } from '../access/client-auth.ts'
import { modelFilter } from '../access/model-policy.ts'
import { beginListing } from '../call/lifecycle.ts'
import { runModelCall } from '../call/run-model-call.ts'
import { candidateCountOf } from '../access/reservation.ts'
import type { CountOperation, GenerateOperation, Parsed, SurfaceDeclaration, SurfaceRoute } from '../call/surface.ts'
import type { ProxyContext } from '../context.ts'
import { parseModelName } from '../models/name.ts'
import { createNativeErrorResponse, nativeErrorBody } from './error-body.ts'
import { parseNativePath } from './path.ts'
import type { NativeAction } from './path.ts'
import type { ProxyCaller } from '../access/caller.ts'
import { passThrough, passThroughCall } from './pass-through.ts'
import { countTokensRequest, prepareNativeRequest } from './request.ts'
import { nativeStreamTranslator } from './stream.ts'

/** The part of the path after `/v1beta/` (or `/v1/`, @google/genai's default version), still URL-encoded. */
function pathAfterVersion (req: HandlerRequest): string {
  const m = /\/v1(?:beta)?(?:\/(.*))?$/.exec(req.path)
  return m?.[1] ?? ''
}

/** Whether a native request is passed through, so its body is streamed rather than read whole (Route.streamBody). */
export function isPassThrough (req: HandlerRequest): boolean {
  try {
    return parseNativePath(pathAfterVersion(req)).kind === 'other'
  } catch {
    return false
  }
}

/** The model and action a `models/{model}:{action}` path names (the dispatcher checked the path's kind). */
function pathAction (req: HandlerRequest): { model: string, action?: NativeAction } {
  const target = parseNativePath(pathAfterVersion(req))
  return target.kind === 'model' ? target : { model: '' }
}

/**
 * The body of a model action, after the tenant isolation check (lib/proxy/access/ownership.ts): a cache or file of
 * someone else's is a 404 before any upstream call; with the input those it names bring in (the reservation's).
 */
async function actionBody (ctx: ProxyContext, req: HandlerRequest, caller: ProxyCaller): Promise<{ body: unknown, referencedInputTokens: number }> {
  const body = readJsonBody(req)
  return { body, referencedInputTokens: await ctx.ownership.checkReferences(caller, body) }
}

function generateOperation (ctx: ProxyContext): GenerateOperation<Parsed<unknown>, undefined> {
  return {
    kind: 'generate',
    async parse (req, caller) {
      const { body, referencedInputTokens } = await actionBody(ctx, req, caller)
      const maxOutputTokens = (body as { generationConfig?: { maxOutputTokens?: unknown } } | undefined)?.generationConfig?.maxOutputTokens
      const { model, action } = pathAction(req)
      return { model, stream: action === 'streamGenerateContent', maxOutputTokens, outputCount: candidateCountOf(body), referencedInputTokens, body }
    },
    toGemini: async ({ body }, call) => ({ request: prepareNativeRequest(body, call.model, ctx.safetySettings), meta: undefined }),
    fromGemini: response => response,
    streamTranslator: () => nativeStreamTranslator(err => nativeErrorBody(err).body),
  }
}

function countOperation (ctx: ProxyContext): CountOperation<Parsed<unknown>> {
  return {
    kind: 'countTokens',
    async parse (req, caller) {
      const { body } = await actionBody(ctx, req, caller)
      return { model: pathAction(req).model, body: countTokensRequest(body) }
    },
    toGemini: ({ body }) => body as ReturnType<typeof countTokensRequest>,
    fromGemini: counted => counted,
  }
}

/** Every native path's one handler: the catalog's list and entries, the model actions, or the pass-through. */
export function nativeDispatcher (ctx: ProxyContext): Handler {
  const generate = runModelCall(ctx, nativeSurface, generateOperation(ctx))
  const count = runModelCall(ctx, nativeSurface, countOperation(ctx))
  const forwarded = runModelCall(ctx, nativeSurface, passThroughCall(ctx))
  return async function nativeHandler (req): Promise<HandlerResponse> {
    if (req.method === 'OPTIONS') return preflightResponse(req)
    const caller = await ctx.checkAuth(req)
    const target = parseNativePath(pathAfterVersion(req))
    if (target.kind === 'other') return await passThrough(ctx, req, caller, forwarded)
    if (target.kind === 'list' || target.action === undefined) {
      if (req.method !== 'GET') {
        throw fail('METHOD_NOT_ALLOWED', target.kind === 'list' ? 'Only GET lists models' : `Use GET to read a model, or POST to models/${target.model}:generateContent`)
      }
      const allows = modelFilter(ctx, caller)
      const named = target.kind === 'model' ? target.model : undefined
      const model = named === undefined ? undefined : ctx.catalog.get(named)
      // An id the catalog does not list is the upstream's to answer, under the model policy (./pass-through.ts).
      if (named !== undefined && model === undefined) return await passThrough(ctx, req, caller, forwarded)
      const request = await beginListing(ctx, req, caller, 'native')
      let body: unknown = ctx.catalog.nativeList(allows)
      if (model !== undefined) {
        // A model the caller may not use is not listed, so it is not found either.
        if (allows !== undefined && !allows(parseModelName(model.name).base)) {
          throw fail('NOT_FOUND', `models/${String(named)} is not found; GET /v1beta/models lists the available ones`)
        }
        body = model
      }
      request.end(200)
      return { status: 200, headers: { ...CORS_HEADERS, ...request.headers }, body }
    }
    if (req.method !== 'POST') throw fail('METHOD_NOT_ALLOWED', `${target.action} takes POST`)
    return await (target.action === 'countTokens' ? count : generate)(req)
  }
}

export const nativeSurface: SurfaceDeclaration = {
  name: 'native',
  errorResponse: createNativeErrorResponse,
  routes (ctx) {
    const handler = nativeDispatcher(ctx)
    // Preflights of these paths are the dispatcher's (OPTIONS reaches the wildcard routes).
    const route = (method: string, path: string): SurfaceRoute => ({ method, path, handler, noPreflight: true, streamBody: isPassThrough })
    return [
      route('*', '/v1/models/{path*}'),
      route('GET', '/v1beta/models'),
      route('GET', '/v1beta/models/{id}'),
      route('*', '/v1beta/{path*}'),
      route('*', '/upload/v1beta/{path*}'),
    ]
  },
}
