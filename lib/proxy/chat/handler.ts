// POST /v1/chat/completions: validate, translate, call the upstream, translate back.
// The upstream status is known before anything is sent (Backend.stream resolves only on a 200),
// so an upstream 4xx/5xx is that status with a chat-completions error body, even for stream:true.
import { randomUUID } from 'node:crypto'
import type { Handler, HandlerResponse } from '../../http/contract.ts'
import { readJsonBody } from '../../http/json-body.ts'
import { addressBucket } from '../../http/client-address.ts'
import { CORS_HEADERS } from '../access/client-auth.ts'
import { bodyBytes, outputReservation } from '../access/metering.ts'
import { chatErrorBody } from './error-body.ts'
import { chatModel } from './requested-model.ts'
import { toChatCompletion } from './response-from-gemini.ts'
import { chatStreamTranslator } from './stream.ts'
import { imageUrlCount, toGeminiRequest } from './request-to-gemini.ts'
import { SSE_HEADERS, openUpstreamStream, sseBody } from '../routes-stream.ts'
import type { ProxyContext } from '../context.ts'
import { longDecoding } from '../models/continuation.ts'

export function createChatCompletionsHandler (ctx: ProxyContext): Handler {
  return async function chatCompletions (req): Promise<HandlerResponse> {
    const caller = await ctx.checkAuth(req)
    const body = ctx.validateChat(readJsonBody(req))
    const model = chatModel(ctx, caller, body.model)
    const call = await ctx.metering.begin(req, caller, 'chat', model.base, outputReservation(ctx.catalog, model.base, body.max_completion_tokens ?? body.max_tokens))
    // Fetched images are held like a large body until the upstream has the request: they count against the
    // same budget, and those of one request may total no more than a request body may hold. Not when the body
    // itself was counted: this request would then wait for room that it holds itself.
    const imageUrls = ctx.fetchImage === undefined ? 0 : imageUrlCount(body)
    const budget = ctx.bodyBudget
    const releaseImages = imageUrls > 0 && budget !== undefined && bodyBytes(req.body) <= budget.smallBytes
      ? await budget.reserve(Math.min(imageUrls * (ctx.maxImageBytes ?? ctx.maxBodyBytes), ctx.maxBodyBytes), req.signal, req.remoteAddress === undefined ? undefined : addressBucket(req.remoteAddress))
      : undefined
    const meta = { id: `chatcmpl-${randomUUID()}`, created: Math.floor(Date.now() / 1000), model: model.requested }
    const sessionId = req.headers['x-session-id']
    const backend = longDecoding(ctx.backend, model.spec)
    let upstream
    try {
      const request = await toGeminiRequest(body, model, {
        safetySettings: ctx.safetySettings,
        fetchImage: ctx.fetchImage,
        maxImageUrls: ctx.maxImageUrls,
        maxImageBytes: ctx.maxBodyBytes,
        maxParts: ctx.maxTotalParts,
        signal: req.signal,
        onSearchDropped: () => ctx.logger?.debug({ model: body.model }, 'function tools present: googleSearch left out'),
      })
      if (body.stream !== true) {
        const response = await backend.generate({ model: model.base, request, signal: req.signal, sessionId })
        // Translated first: an answer that is none (a 502) ends the call as that failure.
        const completion = toChatCompletion(response, meta)
        call.succeeded(response)
        return { status: 200, headers: { ...CORS_HEADERS, ...call.headers }, body: completion }
      }
      upstream = await openUpstreamStream(backend, { model: model.base, request, sessionId }, req.signal)
    } finally {
      releaseImages?.()
    }
    const { events, abort } = upstream
    const { translator, onStop } = call.streamed(chatStreamTranslator({
      ...meta,
      includeUsage: body.stream_options?.include_usage === true,
      errorBody: err => chatErrorBody(err).body,
    }), abort)
    return {
      status: 200,
      headers: { ...SSE_HEADERS, ...call.headers },
      body: sseBody(events, translator, { keepAliveMs: ctx.keepAliveMs, observer: ctx.observer, onStop, logger: ctx.logger }),
    }
  }
}
