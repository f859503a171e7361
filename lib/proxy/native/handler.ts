// The native routes: `/v1beta/models` and `/v1beta/models/{id}` from the catalog, and
// `POST /v1beta/models/{model}:generateContent | :streamGenerateContent | :countTokens` to the upstream.
// The same paths under `/v1/` too: @google/genai 3.x calls `/v1/models/...` unless told otherwise.
// Any other path is passed through to the backend (./pass-through.ts); other methods 405, all in Google's error shape.
import type { Handler, HandlerRequest, HandlerResponse } from '../../http/contract.ts'
import { readJsonBody } from '../../http/json-body.ts'
import { fail } from '../../errors.ts'
import { CORS_HEADERS, preflightResponse } from '../access/client-auth.ts'
import { allowedModel, modelFilter } from '../access/model-policy.ts'
import { parseModelName } from '../models/name.ts'
import { nativeErrorBody } from './error-body.ts'
import { parseNativePath } from './path.ts'
import { passThrough } from './pass-through.ts'
import { countTokensRequest, prepareNativeRequest } from './request.ts'
import { nativeStreamTranslator } from './stream.ts'
import { SSE_HEADERS, openUpstreamStream, sseBody } from '../routes-stream.ts'
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
    if (target.kind === 'list') {
      if (req.method !== 'GET') throw fail('METHOD_NOT_ALLOWED', 'Only GET lists models')
      return { status: 200, headers: { ...CORS_HEADERS }, body: ctx.catalog.nativeList(allows) }
    }
    if (target.action === undefined) {
      if (req.method !== 'GET') throw fail('METHOD_NOT_ALLOWED', `Use GET to read a model, or POST to models/${target.model}:generateContent`)
      const model = ctx.catalog.get(target.model)
      // A model the caller may not use is not listed, so it is not found either.
      if (model === undefined || (allows !== undefined && !allows(parseModelName(model.name).base))) {
        throw fail('NOT_FOUND', `models/${target.model} is not found; GET /v1beta/models lists the available ones`)
      }
      return { status: 200, headers: { ...CORS_HEADERS }, body: model }
    }
    if (req.method !== 'POST') throw fail('METHOD_NOT_ALLOWED', `${target.action} takes POST`)

    const model = allowedModel(ctx, caller, target.model)
    const body = readJsonBody(req)
    // Tenant isolation (lib/proxy/access/ownership.ts): a cache or file of someone else's is a 404 before any upstream call.
    await ctx.ownership.checkReferences(caller, body)
    const backend = ctx.backend
    const sessionId = req.headers['x-session-id']

    if (target.action === 'countTokens') {
      const request = countTokensRequest(body)
      const call = await ctx.metering.begin(req, caller, 'native', model.base)
      const counted = await backend.countTokens({ model: model.base, request, signal: req.signal })
      // Counting spends no tokens: a request, nothing to charge.
      call.succeeded(undefined)
      return { status: 200, headers: { ...CORS_HEADERS, ...call.headers }, body: counted }
    }
    const request = prepareNativeRequest(body, model, ctx.safetySettings)
    const call = await ctx.metering.begin(req, caller, 'native', model.base)
    if (target.action === 'generateContent') {
      const response = await backend.generate({ model: model.base, request, signal: req.signal, sessionId })
      call.succeeded(response)
      return { status: 200, headers: { ...CORS_HEADERS, ...call.headers }, body: response }
    }
    const upstream = await openUpstreamStream(backend, { model: model.base, request, sessionId }, req.signal)
    const { translator, onStop } = call.streamed(nativeStreamTranslator(err => nativeErrorBody(err).body), upstream.abort)
    return {
      status: 200,
      headers: { ...SSE_HEADERS, ...call.headers },
      body: sseBody(upstream.events, translator, {
        keepAliveMs: ctx.keepAliveMs,
        observer: ctx.observer,
        onStop,
        logger: ctx.logger,
      }),
    }
  }
}
