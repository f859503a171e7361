// POST /v1/responses (and /v1/responses/compact): validate, continue from a stored response, translate, call the
// upstream, translate back, keep the answer when asked (docs/responses.md). The translation is in the pure modules
// beside this one; the pipeline runs the call (lib/proxy/call/run-model-call.ts). A stored answer is written before
// its last event (response.completed) goes out, so an immediate follow-up finds it.
import { randomBytes } from 'node:crypto'
import { readJsonBody } from '../../http/json-body.ts'
import type { GenerateOperation, Parsed } from '../call/surface.ts'
import type { ProxyContext } from '../context.ts'
import type { ResponsesSettings } from './settings.ts'
import { failedResponseError } from './error-body.ts'
import { imageUrlCount, inputItems, isCompactionTurn, toGeminiRequest } from './request-to-gemini.ts'
import { createResponseBuilder } from './response-from-gemini.ts'
import type { ResponseBuilder, ResponseMeta } from './response-from-gemini.ts'
import { responsesStreamTranslator } from './stream.ts'
import { loadResponse, ownerOf, saveResponse, withIds } from './stored.ts'
import type { InputItem, ResponsesRequest } from './request-schema.ts'

interface Create { owner: string, input: InputItem[], store: boolean }
interface Turn { builder: ResponseBuilder, save: () => Promise<void>, input: InputItem[], store: boolean }

/**
 * POST /v1/responses, or with `compact` POST /v1/responses/compact (Codex's remote compaction v1): the input
 * summarised into one compaction item, answered whole as `{output}` with the input's user messages before it.
 */
export function createOperation (ctx: ProxyContext, settings: ResponsesSettings, compact = false): GenerateOperation<Parsed<ResponsesRequest> & Create, Turn> {
  return {
    kind: 'generate',
    async parse (req, caller) {
      const checked = settings.validate(readJsonBody(req))
      const body = compact ? { ...checked, stream: false, store: false, input: [...inputItems(checked), { type: 'compaction_trigger' }] } : checked
      const owner = ownerOf(caller)
      const previousId = body.previous_response_id ?? undefined
      const previous = previousId === undefined ? undefined : await loadResponse(settings.store, previousId, owner, settings.now(), 'previous_response_id')
      const input = withIds([...(previous?.input ?? []), ...(previous?.response.output ?? []) as InputItem[], ...inputItems(body)])
      const store = body.store !== false && settings.store !== undefined
      return { model: body.model, stream: body.stream === true, maxOutputTokens: body.max_output_tokens, imageUrls: imageUrlCount(input), body, owner, input, store }
    },
    async toGemini ({ body, owner, input, store }, call) {
      const compaction = isCompactionTurn(input)
      const { request, tools } = await toGeminiRequest(body, input, call.model, {
        ...call.content,
        compaction,
        sealer: settings.sealer,
        owner,
        onUnopenedReasoning: () => ctx.logger?.debug({ model: body.model }, 'a reasoning item\'s encrypted_content did not open: ignored'),
      })
      const meta: ResponseMeta = { id: `resp_${randomBytes(24).toString('hex')}`, createdAt: Math.floor(Date.now() / 1000), model: call.model.requested, request: body, tools, sealer: settings.sealer, owner, errorObject: failedResponseError, compaction }
      const builder = createResponseBuilder(meta)
      const save = async (): Promise<void> => {
        if (store) await saveResponse(settings.store, { response: builder.complete(), input }, owner, settings.now(), settings.ttlMs, ctx.logger)
      }
      return { request, meta: { builder, save, input, store } }
    },
    fromGemini (response, { builder }) {
      builder.add(response)
      return builder
    },
    async respond (builder: ResponseBuilder, { save, input }) {
      await save()
      const answer = builder.complete()
      if (!compact) return answer
      const kept = input.filter(item => (item.type ?? 'message') === 'message' && item.role === 'user')
      return { output: [...kept, ...answer.output] }
    },
    streamTranslator: ({ builder }) => responsesStreamTranslator(builder),
    beforeStreamEnd: turn => turn.store ? turn.save : undefined,
  }
}
