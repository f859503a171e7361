// The public Gemini API backend: an API key, no envelope, no onboarding. A sanctioned path to the same
// models with the same client-facing features as the Code Assist backend.
import { geminiEventStream } from './backend.ts'
import type { Backend, EmbedResult, GeminiResponse } from './backend.ts'
import { fail } from '../../errors.ts'
import { createUpstreamClient } from './client.ts'
import type { UpstreamAuth } from './client.ts'
import { contentsToCount } from './count-tokens.ts'
import { forwardTo } from './forward.ts'
import type { UpstreamClientOptions } from './options.ts'

import { DEFAULT_GEMINI_API_ENDPOINT } from '../../option-rules.ts'
export { DEFAULT_GEMINI_API_ENDPOINT } from '../../option-rules.ts'

export interface GeminiApiBackendOptions extends UpstreamClientOptions {
  /** API key (GEMINI_API_KEY), sent as x-goog-api-key. */
  apiKey?: string
  /** Base URL. Default `https://generativelanguage.googleapis.com` (GEMINI_API_ENDPOINT). */
  geminiApiEndpoint?: string
}

function asResponse (value: unknown): GeminiResponse {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value as GeminiResponse : { candidates: [] }
}

/** A batchEmbedContents answer (https://ai.google.dev/api/embeddings#method:-models.batchembedcontents): `{embeddings:[{values}]}`, one per request. */
function embedResult (answer: Record<string, unknown>, expected: number): EmbedResult {
  const list = Array.isArray(answer.embeddings) ? answer.embeddings as unknown[] : []
  const embeddings = list.map(e => {
    const values = (e as { values?: unknown } | null)?.values
    return { values: Array.isArray(values) ? values.filter((v): v is number => typeof v === 'number') : [] }
  })
  if (embeddings.length !== expected) throw fail('UPSTREAM_ERROR', `The upstream answered ${embeddings.length} embeddings for ${expected} inputs`)
  const usage = answer.usageMetadata as { promptTokenCount?: unknown } | undefined
  return { embeddings, promptTokens: typeof usage?.promptTokenCount === 'number' ? usage.promptTokenCount : undefined }
}

export function createGeminiApiBackend (options: GeminiApiBackendOptions): Backend {
  const base = (options.geminiApiEndpoint ?? DEFAULT_GEMINI_API_ENDPOINT).replace(/\/+$/, '')
  const apiKey = options.apiKey ?? ''
  const client = createUpstreamClient(options)
  const auth: UpstreamAuth = { headers: async () => ({ 'x-goog-api-key': apiKey }) }
  const url = (model: string, action: string): string => `${base}/v1beta/models/${encodeURIComponent(model)}:${action}`

  return {
    name: 'gemini-api',
    async generate (call) {
      // The public API has no session_id; sending one would be an unknown field (400).
      return asResponse(await client.json({ url: url(call.model, 'generateContent'), body: call.request, model: call.model, auth, signal: call.signal, expectObject: true }))
    },
    async stream (call) {
      return geminiEventStream(await client.stream({ url: url(call.model, 'streamGenerateContent?alt=sse'), body: call.request, model: call.model, auth, signal: call.signal }, events => events.map(asResponse)))
    },
    async countTokens (call) {
      const nested = call.request.generateContentRequest
      const body = nested !== null && typeof nested === 'object'
        ? { generateContentRequest: { ...nested, model: `models/${call.model}`, contents: contentsToCount(call.request) } }
        : { contents: contentsToCount(call.request) }
      const answer = await client.json({ url: url(call.model, 'countTokens'), body, model: call.model, auth, signal: call.signal }) as Record<string, unknown>
      return { ...answer, totalTokens: typeof answer.totalTokens === 'number' ? answer.totalTokens : 0 }
    },
    forward: forwardTo(client, base, auth),
    async embed (call) {
      const requests = call.requests.map(r => ({ ...r, model: `models/${call.model}` }))
      const answer = await client.json({ url: url(call.model, 'batchEmbedContents'), body: { requests }, model: call.model, auth, signal: call.signal }) as Record<string, unknown>
      return embedResult(answer, requests.length)
    },
    async ready () {
      return apiKey === '' ? { ok: false, reason: 'GEMINI_API_KEY is not set' } : { ok: true }
    },
    async close () {
      await client.close()
    },
  }
}
