// Anthropic's Messages API over Gemini (docs/messages.md): POST /v1/messages and /v1/messages/count_tokens, declared
// to the pipeline (lib/proxy/call/run-model-call.ts). The upstream status is known before anything is sent
// (Backend.stream resolves only on a 200), so an upstream failure is that status in Anthropic's error shape, even
// for stream:true.
import { randomBytes } from 'node:crypto'
import type { HandlerRequest } from '../../http/contract.ts'
import { readJsonBody } from '../../http/json-body.ts'
import { isGatehouseError } from '../../errors.ts'
import type { CountOperation, GenerateOperation, Parsed, SurfaceDeclaration } from '../call/surface.ts'
import type { ProxyContext } from '../context.ts'
import { checkMessagesRequest, ignoredFields } from './request-schema.ts'
import type { MessagesRequest } from './request-schema.ts'
import { imageUrlCount, toCountTokensRequest, toGeminiRequest } from './request-to-gemini.ts'
import { toAnthropicMessage } from './response-from-gemini.ts'
import { messagesStreamTranslator } from './stream.ts'
import { createMessagesErrorResponse, messagesErrorBody } from './error-body.ts'

/** Parts of a request without a limit of its own (ctx.maxTotalParts), as chat completions count them. */
const DEFAULT_MAX_BLOCKS = 4096

interface MessageMeta { id: string, model: string, omitThinking: boolean }

/** What the gateway leaves out of a request, at debug: the fields it ignores and the betas the client asked for. */
function noteIgnored (ctx: ProxyContext, req: HandlerRequest, body: MessagesRequest): void {
  if (ctx.logger === undefined) return
  const fields = ignoredFields(body)
  const betas = req.headers['anthropic-beta']
  if (fields.length > 0 || betas !== undefined) ctx.logger.debug({ fields, betas }, 'Messages: fields and betas ignored')
}

function messagesOperation (ctx: ProxyContext): GenerateOperation<Parsed<MessagesRequest>, MessageMeta> {
  return {
    kind: 'generate',
    parse (req) {
      const body = checkMessagesRequest(readJsonBody(req), true, ctx.maxTotalParts ?? DEFAULT_MAX_BLOCKS)
      noteIgnored(ctx, req, body)
      return { model: body.model, stream: body.stream === true, maxOutputTokens: body.max_tokens, imageUrls: imageUrlCount(body), body }
    },
    async toGemini ({ body }, call) {
      const omitThinking = body.thinking !== undefined && body.thinking !== null && 'display' in body.thinking && body.thinking.display === 'omitted'
      const meta = { id: `msg_${randomBytes(12).toString('hex')}`, model: call.model.requested, omitThinking }
      return { request: await toGeminiRequest(body, call.model, call.content), meta }
    },
    fromGemini: (response, meta) => toAnthropicMessage(response, meta),
    streamTranslator: meta => messagesStreamTranslator({ ...meta, errorBody: err => messagesErrorBody(err).body }),
  }
}

function countTokensOperation (ctx: ProxyContext): CountOperation<Parsed<MessagesRequest>> {
  return {
    kind: 'countTokens',
    parse (req) {
      const body = checkMessagesRequest(readJsonBody(req), false, ctx.maxTotalParts ?? DEFAULT_MAX_BLOCKS)
      return { model: body.model, body }
    },
    toGemini: async ({ body }, call) => await toCountTokensRequest(body, call.content),
    fromGemini: counted => ({ input_tokens: typeof counted.totalTokens === 'number' ? counted.totalTokens : 0 }),
  }
}

export const messagesSurface: SurfaceDeclaration = {
  name: 'messages',
  errorResponse: createMessagesErrorResponse,
  // A refusal of the model names the field, as Anthropic's errors do in their message.
  modelRefused: err => {
    if (isGatehouseError(err)) err.param = 'model'
    return err
  },
  answersWhole: true,
  routes: ctx => [
    { method: 'POST', path: '/v1/messages', call: messagesOperation(ctx) },
    { method: 'POST', path: '/v1/messages/count_tokens', call: countTokensOperation(ctx) },
  ],
}
