// POST /v1/responses: validate, continue from a stored response, translate, call the upstream, translate back,
// keep the answer when asked (docs/responses.md). The translation is in the pure modules beside this one; this is
// the glue of one call on the governed lifecycle (lib/proxy/call/lifecycle.ts). A stored answer is written before its
// last event (response.completed) goes out, so an immediate follow-up finds it.
import { randomBytes } from 'node:crypto'
import type { Handler, HandlerResponse } from '../../http/contract.ts'
import { readJsonBody } from '../../http/json-body.ts'
import { isGatehouseError } from '../../errors.ts'
import { CORS_HEADERS } from '../access/client-auth.ts'
import { beginModelCall } from '../call/lifecycle.ts'
import { longDecoding } from '../models/continuation.ts'
import { SSE_HEADERS } from '../routes-stream.ts'
import type { ProxyContext } from '../context.ts'
import type { ResponsesSettings } from './settings.ts'
import { failedResponseError } from './error-body.ts'
import { imageUrlCount, inputItems, isCompactionTurn, toGeminiRequest } from './request-to-gemini.ts'
import { createResponseBuilder } from './response-from-gemini.ts'
import type { ResponseBuilder, ResponseMeta } from './response-from-gemini.ts'
import { responsesStreamTranslator } from './stream.ts'
import { loadResponse, ownerOf, saveResponse, withIds } from './stored.ts'
import type { InputItem } from './request-schema.ts'

/**
 * POST /v1/responses, or with `compact` POST /v1/responses/compact (Codex's remote compaction v1): the input
 * summarised into one compaction item, answered whole as `{output}` with the input's user messages before it.
 */
export function createResponsesHandler (ctx: ProxyContext, settings: ResponsesSettings, compact = false): Handler {
  return async function responses (req): Promise<HandlerResponse> {
    const caller = await ctx.checkAuth(req)
    const checked = settings.validate(readJsonBody(req))
    const body = compact ? { ...checked, stream: false, store: false, input: [...inputItems(checked), { type: 'compaction_trigger' }] } : checked
    const owner = ownerOf(caller)
    const previousId = body.previous_response_id ?? undefined
    const previous = previousId === undefined ? undefined : await loadResponse(settings.store, previousId, owner, settings.now(), 'previous_response_id')
    const input = withIds([...(previous?.input ?? []), ...(previous?.response.output ?? []) as InputItem[], ...inputItems(body)])
    const call = await beginModelCall(ctx, req, caller, {
      surface: 'responses',
      model: body.model,
      maxOutputTokens: body.max_output_tokens,
      upstream: (backend, model) => longDecoding(backend, model.spec),
      modelRefused: err => { if (isGatehouseError(err)) err.param = 'model'; return err },
      imageUrls: imageUrlCount(input),
    })
    const model = call.model
    const store = body.store !== false && settings.store !== undefined
    const save = async (builder: ResponseBuilder): Promise<void> => {
      if (store) await saveResponse(settings.store, { response: builder.complete(), input }, owner, settings.now(), settings.ttlMs, ctx.logger)
    }
    const compaction = isCompactionTurn(input)
    const { request, tools } = await toGeminiRequest(body, input, model, {
      ...call.content,
      compaction,
      sealer: settings.sealer,
      owner,
      onUnopenedReasoning: () => ctx.logger?.debug({ model: body.model }, 'a reasoning item\'s encrypted_content did not open: ignored'),
    })
    const meta: ResponseMeta = { id: `resp_${randomBytes(24).toString('hex')}`, createdAt: Math.floor(Date.now() / 1000), model: model.requested, request: body, tools, sealer: settings.sealer, owner, errorObject: failedResponseError, compaction }
    if (body.stream !== true) {
      const builder = await call.generate(request, response => {
        const built = createResponseBuilder(meta)
        built.add(response)
        return built
      })
      await save(builder)
      const answer = builder.complete()
      const kept = compact ? input.filter(item => (item.type ?? 'message') === 'message' && item.role === 'user') : []
      return { status: 200, headers: { ...CORS_HEADERS, ...call.headers }, body: compact ? { output: [...kept, ...answer.output] } : answer }
    }
    const builder = createResponseBuilder(meta)
    const stream = await call.stream(request, responsesStreamTranslator(builder), store ? async () => await save(builder) : undefined)
    return { status: 200, headers: { ...SSE_HEADERS, ...call.headers }, body: stream }
  }
}
