// The native routes: `/v1beta/models` and `/v1beta/models/{id}` from the catalog, and
// `POST /v1beta/models/{model}:generateContent | :streamGenerateContent | :countTokens` to the upstream.
// The same paths under `/v1/` too: @google/genai 3.x calls `/v1/models/...` unless told otherwise.
// Any other path is passed through to the backend (./pass-through.ts); other methods 405, all in Google's error shape.
import type { Handler, HandlerRequest, HandlerResponse } from '../../http/contract.ts'
import { readJsonBody } from '../../http/json-body.ts'
import { fail } from '../../errors.ts'
import { CORS_HEADERS, preflightResponse } from '../access/client-auth.ts'
import { modelFilter } from '../access/model-policy.ts'
import { beginModelCall, beginRequest } from '../call/lifecycle.ts'
import { parseModelName } from '../models/name.ts'
import { nativeErrorBody } from './error-body.ts'
import { parseNativePath } from './path.ts'
import { passThrough } from './pass-through.ts'
import { countTokensRequest, prepareNativeRequest } from './request.ts'
import { nativeStreamTranslator } from './stream.ts'
import { SSE_HEADERS } from '../routes-stream.ts'
import type { ProxyContext } from '../context.ts'

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

export function createNativeHandler (ctx: ProxyContext): Handler {
  return async function nativeHandler (req): Promise<HandlerResponse> {
    if (req.method === 'OPTIONS') return preflightResponse(req)
    const caller = await ctx.checkAuth(req)
    const allows = modelFilter(ctx, caller)
    const target = parseNativePath(pathAfterVersion(req))
    if (target.kind === 'other') return await passThrough(ctx, req, caller)
    if (target.kind === 'list' || target.action === undefined) {
      if (req.method !== 'GET') {
        throw fail('METHOD_NOT_ALLOWED', target.kind === 'list' ? 'Only GET lists models' : `Use GET to read a model, or POST to models/${target.model}:generateContent`)
      }
      const named = target.kind === 'model' ? target.model : undefined
      const model = named === undefined ? undefined : ctx.catalog.get(named)
      // An id the catalog does not list is the upstream's to answer, under the model policy (./pass-through.ts).
      if (named !== undefined && model === undefined) return await passThrough(ctx, req, caller)
      const request = await beginRequest(ctx, req, caller, 'native')
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
    const body = readJsonBody(req)
    // Tenant isolation (lib/proxy/access/ownership.ts): a cache or file of someone else's is a 404 before any upstream call.
    await ctx.ownership.checkReferences(caller, body)

    if (target.action === 'countTokens') {
      const request = countTokensRequest(body)
      // Counting spends no tokens: a request, nothing to charge.
      const call = await beginModelCall(ctx, req, caller, { surface: 'native', model: target.model, noOutput: true, unreported: 'nothing' })
      return { status: 200, headers: { ...CORS_HEADERS, ...call.headers }, body: await call.countTokens(request) }
    }
    const maxOutputTokens = (body as { generationConfig?: { maxOutputTokens?: unknown } } | undefined)?.generationConfig?.maxOutputTokens
    const call = await beginModelCall(ctx, req, caller, { surface: 'native', model: target.model, maxOutputTokens })
    const request = prepareNativeRequest(body, call.model, ctx.safetySettings)
    if (target.action === 'generateContent') {
      return { status: 200, headers: { ...CORS_HEADERS, ...call.headers }, body: await call.generate(request, response => response) }
    }
    const stream = await call.stream(request, nativeStreamTranslator(err => nativeErrorBody(err).body))
    return { status: 200, headers: { ...SSE_HEADERS, ...call.headers }, body: stream }
  }
}
