// Long decode (docs/model-proxy.md, "Gemini 4"): a model whose file entry has `limits.perCall` gives at most that
// much output per upstream call; when an answer stops there with tokens left, the call ends with finishReason
// CONTINUATION and a continuationToken, and the same request sent again with that token at its top level goes on
// where it stopped. maxOutputTokens counts every call together, so the upstream itself stops at what the client
// asked. A chat-completions client knows nothing of this: its backend here follows the tokens and hands back one
// answer (merged when unary, one stream of every call's events when streamed).
import type { Backend, GeminiRequest, GeminiResponse, UpstreamCall } from '../upstream/backend.ts'
import type { ModelSpec } from './data.ts'

/** Most calls one answer may take: a 1,048,576-token window in calls of at least 32,768 tokens, and one to spare. */
const MAX_CALLS = 33

interface Usage { prompt: number, toolUsePrompt: number, candidates: number, thoughts: number }

function firstCandidate (response: GeminiResponse | undefined): Record<string, any> | undefined {
  const candidates = response?.candidates
  return Array.isArray(candidates) && candidates.length > 0 && typeof candidates[0] === 'object' && candidates[0] !== null ? candidates[0] : undefined
}

/** The token to go on with (the candidate's, on a CONTINUATION or a checkpoint event), removed from the event. */
function takeToken (event: GeminiResponse): { token?: string, continues: boolean } {
  const candidate = firstCandidate(event)
  if (candidate === undefined) return { continues: false }
  const token = typeof candidate.continuationToken === 'string' ? candidate.continuationToken : undefined
  delete candidate.continuationToken
  const continues = candidate.finishReason === 'CONTINUATION'
  if (continues) delete candidate.finishReason
  return { token, continues }
}

function addUsage (total: Usage, meta: unknown, first: boolean): Usage {
  if (meta === null || typeof meta !== 'object') return total
  const u = meta as Record<string, unknown>
  const n = (v: unknown): number => typeof v === 'number' ? v : 0
  return {
    prompt: first ? n(u.promptTokenCount) : total.prompt,
    toolUsePrompt: first ? n(u.toolUsePromptTokenCount) : total.toolUsePrompt,
    candidates: total.candidates + n(u.candidatesTokenCount),
    thoughts: total.thoughts + n(u.thoughtsTokenCount),
  }
}

/** The usageMetadata of every call together, in Google's shape (the hub reads it: lib/proxy/gemini/hub.ts). */
function summedUsageMetadata (total: Usage, meta: Record<string, unknown>): Record<string, unknown> {
  return {
    ...meta,
    promptTokenCount: total.prompt,
    candidatesTokenCount: total.candidates,
    ...(total.thoughts > 0 ? { thoughtsTokenCount: total.thoughts } : {}),
    ...(total.toolUsePrompt > 0 ? { toolUsePromptTokenCount: total.toolUsePrompt } : {}),
    totalTokenCount: total.prompt + total.toolUsePrompt + total.candidates + total.thoughts,
  }
}

function next (call: UpstreamCall, token: string): UpstreamCall {
  const request: GeminiRequest = { ...call.request, continuationToken: token }
  return { ...call, request }
}

/** Unary: every call's parts in one candidate, the usage summed, the last call's finishReason. */
async function generateAll (backend: Backend, call: UpstreamCall): Promise<GeminiResponse> {
  let merged: GeminiResponse | undefined
  let usage: Usage = { prompt: 0, toolUsePrompt: 0, candidates: 0, thoughts: 0 }
  for (let calls = 0, current = call; ; calls++) {
    const response = await backend.generate(current)
    const { token, continues } = takeToken(response)
    usage = addUsage(usage, response.usageMetadata, merged === undefined)
    if (merged === undefined) merged = response
    else {
      const into = firstCandidate(merged)
      const from = firstCandidate(response)
      if (into !== undefined && from !== undefined) {
        const parts = [...(into.content?.parts ?? []), ...(from.content?.parts ?? [])]
        into.content = { ...(into.content ?? { role: 'model' }), parts }
        if (from.finishReason === undefined) delete into.finishReason
        else into.finishReason = from.finishReason
      }
    }
    if (response.usageMetadata !== undefined) merged.usageMetadata = summedUsageMetadata(usage, response.usageMetadata)
    if (!continues || token === undefined || calls + 1 >= MAX_CALLS) return merged
    current = next(call, token)
  }
}

/** Streamed: every call's events in turn, the usage of each event summed over the calls before it. */
async function * streamAll (backend: Backend, call: UpstreamCall, first: AsyncIterable<GeminiResponse>): AsyncIterable<GeminiResponse> {
  let events = first
  let before: Usage = { prompt: 0, toolUsePrompt: 0, candidates: 0, thoughts: 0 }
  for (let calls = 1; ; calls++) {
    let token: string | undefined
    let continues = false
    let hop: Usage = before
    for await (const event of events) {
      const taken = takeToken(event)
      if (taken.token !== undefined) token = taken.token
      if (taken.continues) continues = true
      if (event.usageMetadata !== undefined) {
        hop = addUsage(before, event.usageMetadata, calls === 1)
        event.usageMetadata = summedUsageMetadata(hop, event.usageMetadata)
      }
      yield event
    }
    before = hop
    if (!continues || token === undefined || calls >= MAX_CALLS) return
    events = await backend.stream(next(call, token))
  }
}

/**
 * The backend a chat-completions call uses for `spec`: `backend` itself for a model without a per-call output cap,
 * else one whose generate and stream follow continuation tokens to the end of the answer.
 */
export function longDecoding (backend: Backend, spec: ModelSpec | undefined): Backend {
  if (spec?.limits.perCall === undefined) return backend
  return {
    name: backend.name,
    generate: async call => await generateAll(backend, call),
    stream: async call => streamAll(backend, call, await backend.stream(call)),
    countTokens: async call => await backend.countTokens(call),
    ready: async () => await backend.ready(),
    close: async () => { await backend.close() },
  }
}
