// OpenAI's chat completions and embeddings over Gemini (docs/model-proxy.md): the surface's declaration, run by the
// pipeline (lib/proxy/call/run-model-call.ts). The upstream status is known before anything is sent (Backend.stream
// resolves only on a 200), so an upstream 4xx/5xx is that status with a chat-completions error body, even for
// stream:true.
import { randomUUID } from 'node:crypto'
import { readJsonBody } from '../../http/json-body.ts'
import { isGatehouseError } from '../../errors.ts'
import type { GenerateOperation, Parsed, SurfaceDeclaration } from '../call/surface.ts'
import { chatErrorBody, createChatErrorResponse, withParam } from './error-body.ts'
import { embeddingsOperation } from './embeddings.ts'
import type { ChatRequest } from './request-schema.ts'
import { imageUrlCount, toGeminiRequest } from './request-to-gemini.ts'
import { toChatCompletion } from './response-from-gemini.ts'
import { chatStreamTranslator } from './stream.ts'

interface ChatMeta { id: string, created: number, model: string, includeUsage: boolean }

/** POST /v1/chat/completions; `validate` checks a body against the chat limits createProxy was given (request-schema.ts). */
function completionsOperation (validate: (body: unknown) => ChatRequest): GenerateOperation<Parsed<ChatRequest>, ChatMeta> {
  return {
    kind: 'generate',
    parse (req) {
      const body = validate(readJsonBody(req))
      return { model: body.model, stream: body.stream === true, maxOutputTokens: body.max_completion_tokens ?? body.max_tokens, imageUrls: imageUrlCount(body), body }
    },
    async toGemini ({ body }, call) {
      const meta = { id: `chatcmpl-${randomUUID()}`, created: Math.floor(Date.now() / 1000), model: call.model.requested, includeUsage: body.stream_options?.include_usage === true }
      return { request: await toGeminiRequest(body, call.model, call.content), meta }
    },
    fromGemini: (response, meta) => toChatCompletion(response, meta),
    streamTranslator: meta => chatStreamTranslator({ ...meta, errorBody: err => chatErrorBody(err).body }),
  }
}

export function chatSurface (validate: (body: unknown) => ChatRequest): SurfaceDeclaration {
  return {
    name: 'chat',
    errorResponse: createChatErrorResponse,
    modelRefused: err => isGatehouseError(err) ? withParam(err, 'model') : err,
    answersWhole: true,
    routes: ctx => [
      { method: 'POST', path: '/v1/chat/completions', call: completionsOperation(validate) },
      { method: 'POST', path: '/v1/embeddings', call: embeddingsOperation(ctx) },
    ],
  }
}
