// POST /v1/messages and /v1/messages/count_tokens: Anthropic's Messages API over Gemini (docs/messages.md), on the
// one governed lifecycle (lib/proxy/call/lifecycle.ts). The upstream status is known before anything is sent
// (Backend.stream resolves only on a 200), so an upstream failure is that status in Anthropic's error shape, even
// for stream:true.
import { randomBytes } from 'node:crypto'
import type { Handler, HandlerRequest, HandlerResponse } from '../../http/contract.ts'
import { readJsonBody } from '../../http/json-body.ts'
import { CORS_HEADERS } from '../access/client-auth.ts'
import { SSE_HEADERS } from '../routes-stream.ts'
import type { ProxyContext } from '../context.ts'
import { isGatehouseError } from '../../errors.ts'
import { beginModelCall } from '../call/lifecycle.ts'
import { longDecoding } from '../models/continuation.ts'
import { checkMessagesRequest, ignoredFields } from './request-schema.ts'
import type { MessagesRequest } from './request-schema.ts'
import { imageUrlCount, toCountTokensRequest, toGeminiRequest } from './request-to-gemini.ts'
import { toAnthropicMessage } from './response-from-gemini.ts'
import { messagesStreamTranslator } from './stream.ts'
import { messagesErrorBody } from './error-body.ts'

/** Parts of a request without a limit of its own (ctx.maxTotalParts), as chat completions count them. */
const DEFAULT_MAX_BLOCKS = 4096

/** A refusal of the model names the field, as Anthropic's errors do in their message. */
const modelRefused = (err: unknown): unknown => {
  if (isGatehouseError(err)) err.param = 'model'
  return err
}

/** What the gateway leaves out of a request, at debug: the fields it ignores and the betas the client asked for. */
function noteIgnored (ctx: ProxyContext, req: HandlerRequest, body: MessagesRequest): void {
  if (ctx.logger === undefined) return
  const fields = ignoredFields(body)
  const betas = req.headers['anthropic-beta']
  if (fields.length > 0 || betas !== undefined) ctx.logger.debug({ fields, betas }, 'Messages: fields and betas ignored')
}

export function createMessagesHandler (ctx: ProxyContext): Handler {
  return async function messages (req): Promise<HandlerResponse> {
    const caller = await ctx.checkAuth(req)
    const body = checkMessagesRequest(readJsonBody(req), true, ctx.maxTotalParts ?? DEFAULT_MAX_BLOCKS)
    noteIgnored(ctx, req, body)
    const call = await beginModelCall(ctx, req, caller, { surface: 'messages', model: body.model, maxOutputTokens: body.max_tokens, upstream: (backend, model) => longDecoding(backend, model.spec), modelRefused, imageUrls: imageUrlCount(body) })
    const omitThinking = body.thinking !== undefined && body.thinking !== null && 'display' in body.thinking && body.thinking.display === 'omitted'
    const meta = { id: `msg_${randomBytes(12).toString('hex')}`, model: call.model.requested, omitThinking }
    const request = await toGeminiRequest(body, call.model, call.content)
    if (body.stream !== true) {
      const message = await call.generate(request, response => toAnthropicMessage(response, meta))
      return { status: 200, headers: { ...CORS_HEADERS, ...call.headers }, body: message }
    }
    const stream = await call.stream(request, messagesStreamTranslator({ ...meta, errorBody: err => messagesErrorBody(err).body }))
    return { status: 200, headers: { ...SSE_HEADERS, ...call.headers }, body: stream }
  }
}

export function createCountTokensHandler (ctx: ProxyContext): Handler {
  return async function countTokens (req): Promise<HandlerResponse> {
    const caller = await ctx.checkAuth(req)
    const body = checkMessagesRequest(readJsonBody(req), false, ctx.maxTotalParts ?? DEFAULT_MAX_BLOCKS)
    // Counting spends no tokens: a request, nothing to charge.
    const call = await beginModelCall(ctx, req, caller, { surface: 'messages', model: body.model, noOutput: true, unreported: 'nothing', modelRefused })
    const counted = await call.countTokens(await toCountTokensRequest(body, call.content))
    const total = counted.totalTokens
    return { status: 200, headers: { ...CORS_HEADERS, ...call.headers }, body: { input_tokens: typeof total === 'number' ? total : 0 } }
  }
}
