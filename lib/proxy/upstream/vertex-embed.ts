// Backend.embed on Vertex AI, which has no batchEmbedContents: gemini-embedding-001 and the text-embedding /
// text-multilingual-embedding models embed with `:predict`, other Gemini models (gemini-embedding-2) with
// `:embedContent`, one content per call. Shapes, limits and sources: docs/upstream-protocol.md, "Embeddings on Vertex AI".
import { fail } from '../../errors.ts'
import type { EmbedCall, EmbedResult, GeminiRequest } from './backend.ts'
import type { UpstreamAuth, UpstreamClient } from './client.ts'

/** Where one call goes (a VertexTarget of ./vertex-backend.ts, handed out per upstream call by the location pool's run). */
interface EmbedTarget {
  url (model: string, action: string): string
  auth: UpstreamAuth
}

/** The settings of an EmbedContentRequest beside its `content` that Vertex takes (in embedContentConfig for `:embedContent`). */
export const EMBED_SETTINGS = ['taskType', 'title', 'outputDimensionality', 'autoTruncate'] as const

/** Upstream calls of one embed call in flight at once (an embedContent or one-instance predict per input). */
export const VERTEX_EMBED_CONCURRENCY = 4
/** Instances one `:predict` call takes: Google documents one for gemini-embedding-001, 250 for the text-embedding models. */
const PREDICT_INSTANCES = (model: string): number => model === 'gemini-embedding-001' ? 1 : 250

/** Whether a model embeds with `:embedContent` (Gemini models other than gemini-embedding-001) rather than `:predict`. */
export function embedsWithEmbedContent (model: string): boolean {
  return model.includes('gemini') && model !== 'gemini-embedding-001'
}

const numbers = (v: unknown): number[] => Array.isArray(v) ? v.filter((x): x is number => typeof x === 'number') : []
const count = (v: unknown): number | undefined => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined

/** The text of an EmbedContentRequest's content, for `:predict`, which embeds text only. */
function textOf (request: GeminiRequest): string {
  const parts = (request.content as { parts?: unknown } | undefined)?.parts
  const texts = Array.isArray(parts) ? parts.map(p => (p as { text?: unknown } | null)?.text).filter((t): t is string => typeof t === 'string') : []
  if (texts.length === 0) throw fail('INVALID_INPUT', 'Vertex AI embeds only text with this model (:predict): every content needs a text part')
  return texts.join('\n')
}

/** Results of `run` for every item, in order, at most `limit` running at once; the first failure rejects and starts no more. */
async function inOrder<T, R> (items: T[], limit: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length)
  let next = 0
  let failed = false
  async function worker (): Promise<void> {
    while (next < items.length && !failed) {
      const at = next++
      try {
        results[at] = await run(items[at])
      } catch (err) {
        failed = true
        throw err
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return results
}

/** Consecutive requests sharing outputDimensionality (one `parameters` per predict call), at most `size` each. */
function predictGroups (requests: GeminiRequest[], size: number): GeminiRequest[][] {
  const groups: GeminiRequest[][] = []
  for (const request of requests) {
    const last = groups.at(-1)
    if (last !== undefined && last.length < size && last[0].outputDimensionality === request.outputDimensionality) last.push(request)
    else groups.push([request])
  }
  return groups
}

export function createVertexEmbed (client: UpstreamClient, run: <R>(attempt: (target: EmbedTarget) => Promise<R>, model?: string) => Promise<R>): (call: EmbedCall) => Promise<EmbedResult> {
  async function predict (call: EmbedCall, group: GeminiRequest[]): Promise<{ values: number[][], tokens?: number }> {
    const instances = group.map(r => ({
      content: textOf(r),
      ...(r.taskType === undefined ? {} : { task_type: r.taskType }),
      ...(r.title === undefined ? {} : { title: r.title }),
    }))
    const dimensions = group[0].outputDimensionality
    const body = { instances, ...(dimensions === undefined ? {} : { parameters: { outputDimensionality: dimensions } }) }
    const answer = await run(({ url, auth }) => client.json({ url: url(call.model, 'predict'), body, model: call.model, auth, signal: call.signal }), call.model) as { predictions?: unknown }
    const predictions = Array.isArray(answer.predictions) ? answer.predictions as Array<{ embeddings?: { values?: unknown, statistics?: { token_count?: unknown } } } | null> : []
    if (predictions.length !== group.length) throw fail('UPSTREAM_ERROR', `The upstream answered ${predictions.length} embeddings for ${group.length} inputs`)
    let tokens: number | undefined
    for (const p of predictions) {
      const n = count(p?.embeddings?.statistics?.token_count)
      if (n !== undefined) tokens = (tokens ?? 0) + n
    }
    return { values: predictions.map(p => numbers(p?.embeddings?.values)), tokens }
  }

  async function embedContent (call: EmbedCall, request: GeminiRequest): Promise<{ values: number[][], tokens?: number }> {
    // The per-request settings sit in embedContentConfig (the top-level fields are deprecated), as @google/genai sends them.
    const config: Record<string, unknown> = {}
    for (const name of EMBED_SETTINGS) if (request[name] !== undefined) config[name] = request[name]
    const body = { content: request.content, ...(Object.keys(config).length === 0 ? {} : { embedContentConfig: config }) }
    const answer = await run(({ url, auth }) => client.json({ url: url(call.model, 'embedContent'), body, model: call.model, auth, signal: call.signal }), call.model) as { embedding?: { values?: unknown }, usageMetadata?: { promptTokenCount?: unknown } }
    if (answer.embedding === null || typeof answer.embedding !== 'object') throw fail('UPSTREAM_ERROR', 'The upstream answered embedContent without an embedding')
    return { values: [numbers(answer.embedding.values)], tokens: count(answer.usageMetadata?.promptTokenCount) }
  }

  return async function embed (call) {
    const batches = embedsWithEmbedContent(call.model)
      ? await inOrder(call.requests, VERTEX_EMBED_CONCURRENCY, request => embedContent(call, request))
      : await inOrder(predictGroups(call.requests, PREDICT_INSTANCES(call.model)), VERTEX_EMBED_CONCURRENCY, group => predict(call, group))
    let promptTokens: number | undefined
    for (const b of batches) if (b.tokens !== undefined) promptTokens = (promptTokens ?? 0) + b.tokens
    return { embeddings: batches.flatMap(b => b.values.map(values => ({ values }))), promptTokens }
  }
}
