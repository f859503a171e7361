// POST /v1/chat/completions: validate, translate, call the upstream through the governed lifecycle
// (lib/proxy/call/lifecycle.ts), translate back.
// The upstream status is known before anything is sent (Backend.stream resolves only on a 200),
// so an upstream 4xx/5xx is that status with a chat-completions error body, even for stream:true.
import { randomUUID } from 'node:crypto'
import type { Handler, HandlerResponse } from '../../http/contract.ts'
import { readJsonBody } from '../../http/json-body.ts'
import { CORS_HEADERS } from '../access/client-auth.ts'
import { chatErrorBody } from './error-body.ts'
import { withParam } from './error-body.ts'
import { isGatehouseError } from '../../errors.ts'
import { beginModelCall } from '../call/lifecycle.ts'
import { toChatCompletion } from './response-from-gemini.ts'
import { chatStreamTranslator } from './stream.ts'
import { imageUrlCount, toGeminiRequest } from './request-to-gemini.ts'
import { SSE_HEADERS } from '../routes-stream.ts'
import type { ProxyContext } from '../context.ts'
import type { ChatRequest } from './request-schema.ts'
import { longDecoding } from '../models/continuation.ts'

/** `validate` checks a body against the chat limits createProxy was given (lib/proxy/chat/request-schema.ts). */
export function createChatCompletionsHandler (ctx: ProxyContext, validate: (body: unknown) => ChatRequest): Handler {
  return async function chatCompletions (req): Promise<HandlerResponse> {
    const caller = await ctx.checkAuth(req)
    const body = validate(readJsonBody(req))
    const call = await beginModelCall(ctx, req, caller, {
      surface: 'chat',
      model: body.model,
      maxOutputTokens: body.max_completion_tokens ?? body.max_tokens,
      modelRefused: err => isGatehouseError(err) ? withParam(err, 'model') : err,
      upstream: (backend, model) => longDecoding(backend, model.spec),
      imageUrls: imageUrlCount(body),
    })
    const model = call.model
    const meta = { id: `chatcmpl-${randomUUID()}`, created: Math.floor(Date.now() / 1000), model: model.requested }
    const request = await toGeminiRequest(body, model, call.content)
    if (body.stream !== true) {
      const completion = await call.generate(request, response => toChatCompletion(response, meta))
      return { status: 200, headers: { ...CORS_HEADERS, ...call.headers }, body: completion }
    }
    const stream = await call.stream(request, chatStreamTranslator({
      ...meta,
      includeUsage: body.stream_options?.include_usage === true,
      errorBody: err => chatErrorBody(err).body,
    }))
    return { status: 200, headers: { ...SSE_HEADERS, ...call.headers }, body: stream }
  }
}
