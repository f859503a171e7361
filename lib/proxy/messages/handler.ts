// POST /v1/messages and /v1/messages/count_tokens: Anthropic's Messages API over Gemini (docs/messages.md).
// The upstream status is known before anything is sent (Backend.stream resolves only on a 200), so an upstream
// failure is that status in Anthropic's error shape, even for stream:true.
import { randomBytes } from 'node:crypto'
import type { Handler, HandlerRequest, HandlerResponse } from '../../http/contract.ts'
import { readJsonBody } from '../../http/json-body.ts'
import { CORS_HEADERS } from '../access/client-auth.ts'
import { allowedModel } from '../access/model-policy.ts'
import type { ProxyCaller } from '../access/caller.ts'
import type { ModelName } from '../models/name.ts'
import { SSE_HEADERS, openUpstreamStream, sseBody } from '../routes-stream.ts'
import type { ProxyContext } from '../context.ts'
import { isGatehouseError } from '../../errors.ts'
import { checkMessagesRequest } from './request-schema.ts'
import type { MessagesRequest } from './request-schema.ts'
import { toCountTokensRequest, toGeminiRequest } from './request-to-gemini.ts'
import type { MessagesTranslateOptions } from './request-to-gemini.ts'
import { toAnthropicMessage } from './response-from-gemini.ts'
import { PING, messagesStreamTranslator } from './stream.ts'
import { messagesErrorBody } from './error-body.ts'

/** Parts of a request without a limit of its own (ctx.maxTotalParts), as chat completions count them. */
const DEFAULT_MAX_BLOCKS = 4096

function modelOf (ctx: ProxyContext, caller: ProxyCaller, name: string): ModelName {
  try {
    return allowedModel(ctx, caller, name)
  } catch (err) {
    if (isGatehouseError(err)) err.param = 'model'
    throw err
  }
}

function translateOptions (ctx: ProxyContext, req: HandlerRequest, body: MessagesRequest): MessagesTranslateOptions {
  return {
    safetySettings: ctx.safetySettings,
    fetchImage: ctx.fetchImage,
    maxImageUrls: ctx.maxImageUrls,
    maxImageBytes: ctx.maxBodyBytes,
    signal: req.signal,
    onSearchDropped: () => ctx.logger?.debug({ model: body.model }, 'function tools present: googleSearch left out'),
  }
}

export function createMessagesHandler (ctx: ProxyContext): Handler {
  return async function messages (req): Promise<HandlerResponse> {
    const caller = await ctx.checkAuth(req)
    const body = checkMessagesRequest(readJsonBody(req), true, ctx.maxTotalParts ?? DEFAULT_MAX_BLOCKS)
    const model = modelOf(ctx, caller, body.model)
    const call = await ctx.metering.begin(req, caller, 'messages', model.base)
    const meta = { id: `msg_${randomBytes(12).toString('hex')}`, model: body.model }
    const request = await toGeminiRequest(body, model, translateOptions(ctx, req, body))
    const sessionId = req.headers['x-session-id']
    if (body.stream !== true) {
      const response = await ctx.backend.generate({ model: model.base, request, signal: req.signal, sessionId })
      const message = toAnthropicMessage(response, meta)
      call.succeeded(response)
      return { status: 200, headers: { ...CORS_HEADERS, ...call.headers }, body: message }
    }
    const upstream = await openUpstreamStream(ctx.backend, { model: model.base, request, sessionId }, req.signal)
    const { translator, onStop } = call.streamed(messagesStreamTranslator({ ...meta, errorBody: err => messagesErrorBody(err).body }), upstream.abort)
    return {
      status: 200,
      headers: { ...SSE_HEADERS, ...call.headers },
      body: sseBody(upstream.events, translator, { keepAliveMs: ctx.keepAliveMs, keepAlive: PING, observer: ctx.observer, onStop, logger: ctx.logger }),
    }
  }
}

export function createCountTokensHandler (ctx: ProxyContext): Handler {
  return async function countTokens (req): Promise<HandlerResponse> {
    const caller = await ctx.checkAuth(req)
    const body = checkMessagesRequest(readJsonBody(req), false, ctx.maxTotalParts ?? DEFAULT_MAX_BLOCKS)
    const model = modelOf(ctx, caller, body.model)
    const request = await toCountTokensRequest(body, translateOptions(ctx, req, body))
    const call = await ctx.metering.begin(req, caller, 'messages', model.base)
    const counted = await ctx.backend.countTokens({ model: model.base, request, signal: req.signal })
    // Counting spends no tokens: a request, nothing to charge.
    call.succeeded(undefined)
    const total = (counted as { totalTokens?: unknown }).totalTokens
    return { status: 200, headers: { ...CORS_HEADERS, ...call.headers }, body: { input_tokens: typeof total === 'number' ? total : 0 } }
  }
}
