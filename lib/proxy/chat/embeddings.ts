// POST /v1/embeddings in the OpenAI shape, answered by the backend's embed (the Gemini API's batchEmbedContents:
// one EmbedContentRequest per input, `dimensions` as outputDimensionality; docs/upstream-protocol.md).
// Limits: `input` is a non-empty string or 1 to MAX_EMBEDDING_INPUTS non-empty strings (token arrays are refused);
// the body's size is the route's.
import { readJsonBody } from '../../http/json-body.ts'
import { fail } from '../../errors.ts'
import { withParam } from './error-body.ts'
import type { EmbedOperation, Parsed } from '../call/surface.ts'
import type { ProxyContext } from '../context.ts'
import { MAX_EMBEDDING_INPUTS } from '../upstream/backend.ts'

export interface EmbeddingsRequest {
  model: string
  input: string[]
  dimensions?: number
  encodingFormat: 'float' | 'base64'
}

function invalid (message: string, param: string | null): Error {
  return withParam(fail('INVALID_INPUT', message), param)
}

export function parseEmbeddingsRequest (body: unknown): EmbeddingsRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalid('The request body must be a JSON object', null)
  const b = body as Record<string, unknown>
  if (typeof b.model !== 'string' || b.model === '') throw invalid('`model` must be a non-empty string', 'model')
  const input = typeof b.input === 'string' ? [b.input] : b.input
  if (!Array.isArray(input) || input.length === 0 || input.length > MAX_EMBEDDING_INPUTS || !input.every(i => typeof i === 'string' && i !== '')) {
    throw invalid(`\`input\` must be a non-empty string or a list of 1 to ${MAX_EMBEDDING_INPUTS} non-empty strings`, 'input')
  }
  if (b.dimensions !== undefined && !(Number.isSafeInteger(b.dimensions) && (b.dimensions as number) >= 1)) throw invalid('`dimensions` must be a positive whole number', 'dimensions')
  const format = b.encoding_format ?? 'float'
  if (format !== 'float' && format !== 'base64') throw invalid('`encoding_format` must be "float" or "base64"', 'encoding_format')
  return { model: b.model, input: input as string[], dimensions: b.dimensions as number | undefined, encodingFormat: format }
}

/** OpenAI's base64 encoding: the vector's float32 values, little-endian. */
function base64Vector (values: number[]): string {
  const bytes = Buffer.alloc(values.length * 4)
  values.forEach((v, i) => bytes.writeFloatLE(v, i * 4))
  return bytes.toString('base64')
}

/** POST /v1/embeddings on the backend's embed; a backend without one answers 404 before the call begins. */
export function embeddingsOperation (ctx: ProxyContext): EmbedOperation<Parsed<EmbeddingsRequest>> {
  return {
    kind: 'embed',
    parse (req) {
      const body = parseEmbeddingsRequest(readJsonBody(req))
      const backend = ctx.backend
      if (backend.embed === undefined) throw fail('NOT_FOUND', `The ${backend.name ?? 'configured'} backend has no embeddings; POST /v1/embeddings needs the gemini-api or vertex backend`)
      return { model: body.model, body }
    },
    toGemini: ({ body }) => body.input.map(text => ({
      content: { parts: [{ text }] },
      ...(body.dimensions === undefined ? {} : { outputDimensionality: body.dimensions }),
    })),
    fromGemini (result, { body }, call) {
      // The upstream's count when it gives one, else the usual 4 characters per token.
      const promptTokens = result.promptTokens ?? body.input.reduce((n, text) => n + Math.ceil(text.length / 4), 0)
      return {
        object: 'list',
        data: result.embeddings.map((e, index) => ({
          object: 'embedding',
          index,
          embedding: body.encodingFormat === 'base64' ? base64Vector(e.values) : e.values,
        })),
        model: call.model.requested,
        usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
      }
    },
  }
}
