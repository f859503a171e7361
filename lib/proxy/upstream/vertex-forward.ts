// Backend.forward on Vertex AI. Vertex has none of the Gemini API's other native paths under the same names, so
// nothing is forwarded raw: `models/{model}:embedContent` and `:batchEmbedContents` are answered in the Gemini API's
// shape through the backend's embed (./vertex-embed.ts), `cachedContents` translated by ./vertex-cache.ts, a model's
// details (`GET models/{model}`) read from Google's publisher model (publishers.models.get); every
// other path is a 404 naming the backend and why
// (docs/upstream-protocol.md, "Pass-through on Vertex AI"). Which paths get here, their policy and metering are
// lib/proxy/native/pass-through.ts's.
import { fail } from '../../errors.ts'
import { MAX_EMBEDDING_INPUTS } from './backend.ts'
import type { EmbedCall, EmbedResult, ForwardRequest, ForwardResponse, GeminiRequest } from './backend.ts'
import { isObject, jsonAnswer, notPassedThrough, readJsonObject } from './forward.ts'
import { EMBED_SETTINGS } from './vertex-embed.ts'

const BACKEND = 'vertex'
const API_PREFIX = /^\/(upload\/)?v1(?:beta)?\//
/** The EmbedContentRequest fields Vertex takes (the path names the model). */
const REQUEST_FIELDS = ['content', ...EMBED_SETTINGS]

/** One EmbedContentRequest of the Gemini API as embed takes it: its content and settings, without `model`. */
function embedRequest (value: unknown, where: string): GeminiRequest {
  if (!isObject(value) || !isObject(value.content)) throw fail('INVALID_INPUT', `${where} needs a \`content\` object`)
  const request: GeminiRequest = {}
  for (const name of REQUEST_FIELDS) if (value[name] !== undefined) request[name] = value[name]
  return request
}

/** Why a path that is not an embedding call is not served on Vertex. */
function unavailable (path: string, upload: boolean): Error {
  const first = path.replace(API_PREFIX, '').split('/')[0]
  const what = upload ? 'file uploads' : first === '' ? 'this path' : `\`${decodeURIComponent(first.split(':')[0])}\``
  return notPassedThrough(BACKEND, path, `Vertex AI has no ${what} under the Gemini API's paths; only model details, embedContent, batchEmbedContents and cachedContents are served there (files, uploads, batches and operations need the gemini-api backend)`)
}

/**
 * A publisher model (`publishers/google/models/{id}`, with `versionId`) as the Gemini API's Model: the publisher model
 * gives no token limits or methods, so only the name and version are said.
 */
export function modelFromPublisher (id: string, publisher: unknown): Record<string, unknown> {
  const version = isObject(publisher) && typeof publisher.versionId === 'string' ? publisher.versionId : undefined
  return { name: `models/${id}`, baseModelId: id, ...(version === undefined ? {} : { version }), displayName: id }
}

/** Reads Google's publisher model `model` (publishers.models.get); rejects as the upstream answered (404 for a model it lacks). */
export type PublisherModelRead = (model: string, signal?: AbortSignal) => Promise<unknown>

export function createVertexForward (embed: (call: EmbedCall) => Promise<EmbedResult>, caches: (req: ForwardRequest, segments: string[]) => Promise<ForwardResponse>, publisherModel: PublisherModelRead): (req: ForwardRequest) => Promise<ForwardResponse> {
  return async function forward (req) {
    const prefix = API_PREFIX.exec(req.path)
    const segments = prefix === null ? [] : req.path.slice(prefix[0].length).split('/')
    if (prefix?.[1] === undefined && segments[0] === 'cachedContents') return await caches(req, segments)
    if (prefix !== null && prefix[1] === undefined && req.method === 'GET' && segments.length === 2 && segments[0] === 'models' && !decodeURIComponent(segments[1]).includes(':')) {
      const id = decodeURIComponent(segments[1])
      return jsonAnswer(modelFromPublisher(id, await publisherModel(id, req.signal)))
    }
    const named = segments.length === 2 && segments[0] === 'models' ? /^([^:]+):(embedContent|batchEmbedContents)$/.exec(decodeURIComponent(segments[1])) : null
    if (prefix === null || prefix[1] !== undefined || named === null) throw unavailable(req.path, prefix?.[1] !== undefined)
    const [, model, action] = named
    if (req.method !== 'POST') throw fail('METHOD_NOT_ALLOWED', `${action} takes POST`)
    const body = await readJsonObject(req.body)
    if (action === 'embedContent') {
      const result = await embed({ model, requests: [embedRequest(body, 'An embedContent request')], signal: req.signal })
      return jsonAnswer({ embedding: { values: result.embeddings[0].values } })
    }
    const list = body.requests
    if (!Array.isArray(list) || list.length === 0 || list.length > MAX_EMBEDDING_INPUTS) {
      throw fail('INVALID_INPUT', `\`requests\` must be a list of 1 to ${MAX_EMBEDDING_INPUTS} EmbedContentRequests`)
    }
    const result = await embed({ model, requests: list.map((r, i) => embedRequest(r, `requests[${i}]`)), signal: req.signal })
    return jsonAnswer({ embeddings: result.embeddings.map(e => ({ values: e.values })) })
  }
}
