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
import { createCredentialPool } from './credential-pool.ts'

import { DEFAULT_GEMINI_API_ENDPOINT } from '../../option-rules.ts'
export { DEFAULT_GEMINI_API_ENDPOINT } from '../../option-rules.ts'

export interface GeminiApiBackendOptions extends UpstreamClientOptions {
  /** API key (GEMINI_API_KEY), sent as x-goog-api-key; several separated by commas are a pool (`key#1`, `key#2`, ...). Default unset. */
  apiKey?: string
  /** Base URL. Default `https://generativelanguage.googleapis.com` (GEMINI_API_ENDPOINT). */
  geminiApiEndpoint?: string
}

/** The keys of a GEMINI_API_KEY value: one, or several separated by commas (blanks ignored). */
export function apiKeyList (value: string | undefined): string[] {
  return (value ?? '').split(',').map(k => k.trim()).filter(k => k !== '')
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
  const keys = apiKeyList(options.apiKey)
  const client = createUpstreamClient(options)
  const pool = createCredentialPool(keys.map((key, i): { name: string, value: UpstreamAuth } => ({
    name: `key#${i + 1}`,
    value: { headers: async () => ({ 'x-goog-api-key': key }) },
  })), options)
  const url = (model: string, action: string): string => `${base}/v1beta/models/${encodeURIComponent(model)}:${action}`

  return {
    name: 'gemini-api',
    async generate (call) {
      // The public API has no session_id; sending one would be an unknown field (400).
      return asResponse(await pool.run(auth => client.json({ url: url(call.model, 'generateContent'), body: call.request, model: call.model, auth, signal: call.signal, expectObject: true })))
    },
    async stream (call) {
      return geminiEventStream(await pool.run(auth => client.stream({ url: url(call.model, 'streamGenerateContent?alt=sse'), body: call.request, model: call.model, auth, signal: call.signal }, events => events.map(asResponse))))
    },
    async countTokens (call) {
      const nested = call.request.generateContentRequest
      const body = nested !== null && typeof nested === 'object'
        ? { generateContentRequest: { ...nested, model: `models/${call.model}`, contents: contentsToCount(call.request) } }
        : { contents: contentsToCount(call.request) }
      const answer = await pool.run(auth => client.json({ url: url(call.model, 'countTokens'), body, model: call.model, auth, signal: call.signal })) as Record<string, unknown>
      return { ...answer, totalTokens: typeof answer.totalTokens === 'number' ? answer.totalTokens : 0 }
    },
    // A credential from the pool per forwarded call; the upstream's answer, a 429 included, goes back as it is:
    // a streamed body cannot be sent twice, so there is no failover here.
    async forward (req) {
      return await pool.run(auth => forwardTo(client, base, auth)(req))
    },
    async embed (call) {
      const requests = call.requests.map(r => ({ ...r, model: `models/${call.model}` }))
      const answer = await pool.run(auth => client.json({ url: url(call.model, 'batchEmbedContents'), body: { requests }, model: call.model, auth, signal: call.signal })) as Record<string, unknown>
      return embedResult(answer, requests.length)
    },
    async ready () {
      return keys.length === 0 ? { ok: false, reason: 'GEMINI_API_KEY is not set' } : pool.ready()
    },
    async close () {
      await client.close()
    },
  }
}
