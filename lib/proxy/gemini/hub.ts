// The Gemini JSON hub: every surface translates to a GenerateContentRequest and from a GenerateContentResponse,
// and reads an answer's parts, usage and finish reasons here, never in another surface (docs/model-proxy.md,
// "One lifecycle for every model call"). Readers take what the upstream sent as it is: a field of the wrong type
// reads as absent, never as a failure.
import type { TokenUsage } from '../../metering/token-usage.ts'

/** One turn of a conversation: a role (`user`, `model`; none in a systemInstruction) and its parts. */
export interface GeminiContent {
  role?: string
  parts: GeminiPart[]
  [field: string]: unknown
}

/** A generationConfig, the fields the proxy's rules read or set (others pass as they are). */
export interface GeminiGenerationConfig {
  maxOutputTokens?: number
  temperature?: number
  topP?: number
  topK?: number
  candidateCount?: number
  thinkingConfig?: Record<string, unknown>
  [field: string]: unknown
}

/** A GenerateContentRequest in the public Gemini API shape: what every surface translates to. */
export interface GeminiRequest {
  contents?: GeminiContent[]
  systemInstruction?: GeminiContent
  tools?: Array<Record<string, unknown>>
  toolConfig?: Record<string, unknown>
  safetySettings?: Array<Record<string, unknown>>
  generationConfig?: GeminiGenerationConfig
  [field: string]: unknown
}

/** One part of a candidate's content, the fields the proxy reads (others pass as they are). */
export interface GeminiPart {
  text?: string
  /** The part is a thought summary, not answer text. */
  thought?: boolean
  thoughtSignature?: string
  functionCall?: { name?: string, args?: unknown, id?: string } | null
  inlineData?: { mimeType?: string, data?: string } | null
  [field: string]: unknown
}

export interface GeminiCandidate {
  index?: number
  content?: { role?: string, parts?: GeminiPart[] }
  finishReason?: string
  [field: string]: unknown
}

/** usageMetadata of a GenerateContentResponse; a CachedContent's has only totalTokenCount. */
export interface GeminiUsageMetadata {
  promptTokenCount?: number
  candidatesTokenCount?: number
  thoughtsTokenCount?: number
  cachedContentTokenCount?: number
  toolUsePromptTokenCount?: number
  totalTokenCount?: number
  [field: string]: unknown
}

/** A GenerateContentResponse (or one stream event), the fields the proxy reads. */
export interface GeminiAnswer {
  candidates?: GeminiCandidate[]
  usageMetadata?: GeminiUsageMetadata
  promptFeedback?: { blockReason?: string, [field: string]: unknown }
  modelVersion?: string
  responseId?: string
  [field: string]: unknown
}

/** What a part holds, for a surface to render: answer text, thought text, a function call, inline data, or anything else. */
export type PartKind = 'text' | 'thought' | 'functionCall' | 'inlineData' | 'other'

const NO_CANDIDATES: readonly GeminiCandidate[] = Object.freeze([])
const NO_PARTS: readonly GeminiPart[] = Object.freeze([])

/** The candidates of an answer; [] when it has none (a blocked prompt, a usage-only stream event). */
export function candidatesOf (answer: unknown): readonly GeminiCandidate[] {
  const c = (answer as GeminiAnswer | null | undefined)?.candidates
  return Array.isArray(c) ? c : NO_CANDIDATES
}

/** The parts of a candidate's content; [] when it has none. */
export function partsOf (candidate: unknown): readonly GeminiPart[] {
  const p = (candidate as GeminiCandidate | null | undefined)?.content?.parts
  return Array.isArray(p) ? p : NO_PARTS
}

/** What one part is: a function call first (it may carry text too), then text (thought or not), then inline data. */
export function partKind (part: unknown): PartKind {
  if (part === null || typeof part !== 'object') return 'other'
  const p = part as GeminiPart
  if (p.functionCall !== undefined && p.functionCall !== null) return 'functionCall'
  if (typeof p.text === 'string') return p.thought === true ? 'thought' : 'text'
  if (p.inlineData !== undefined && p.inlineData !== null) return 'inlineData'
  return 'other'
}

/** The candidate's finish reason as Google names it (`STOP`, `MAX_TOKENS`, `SAFETY`, ...), or undefined while it runs. */
export function finishReasonOf (candidate: unknown): string | undefined {
  const r = (candidate as GeminiCandidate | null | undefined)?.finishReason
  return typeof r === 'string' ? r : undefined
}

/** Finish reasons that mean the answer was withheld by a content filter, whatever each surface calls that. */
const CONTENT_FILTER_REASONS: ReadonlySet<string> = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'LANGUAGE', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION'])

/** Whether a finish reason says a content filter withheld the answer. */
export function isContentFilter (reason: unknown): boolean {
  return typeof reason === 'string' && CONTENT_FILTER_REASONS.has(reason)
}

const count = (n: unknown): number => typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : 0

/**
 * Every count a usageMetadata reports, read here once for metering and for every surface's own usage. `input` is
 * what the model read: the prompt (cached tokens part of it) and the tool-use prompts Google counts apart from it.
 */
export interface GeminiTokens {
  input: number
  cached: number
  /** Answer tokens, thoughts not included. */
  output: number
  thoughts: number
  /** The part of input that was tool results fed back to the model (toolUsePromptTokenCount). */
  toolUse: number
  /** totalTokenCount as reported; undefined when absent. */
  total?: number
}

/** The counts of a usageMetadata; undefined when there is none. A CachedContent reports only totalTokenCount: that is its input. */
export function tokensOf (u: unknown): GeminiTokens | undefined {
  if (u === undefined || u === null || typeof u !== 'object') return undefined
  const m = u as GeminiUsageMetadata
  const cachedContent = m.promptTokenCount === undefined && m.candidatesTokenCount === undefined
  const toolUse = cachedContent ? 0 : count(m.toolUsePromptTokenCount)
  const tokens: GeminiTokens = {
    input: cachedContent ? count(m.totalTokenCount) : count(m.promptTokenCount) + toolUse,
    cached: count(m.cachedContentTokenCount),
    output: count(m.candidatesTokenCount),
    thoughts: count(m.thoughtsTokenCount),
    toolUse,
  }
  if (typeof m.totalTokenCount === 'number') tokens.total = m.totalTokenCount
  return tokens
}

/** Tokens a usageMetadata reports, what limits charge and usage records; undefined when there is none. */
export function readUsageMetadata (u: unknown): TokenUsage | undefined {
  const t = tokensOf(u)
  if (t === undefined) return undefined
  const used: TokenUsage = { inputTokens: t.input, outputTokens: t.output, thinkingTokens: t.thoughts, cachedTokens: t.cached }
  if (t.toolUse > 0) used.toolUseTokens = t.toolUse
  return used
}

/**
 * An Interactions `Usage` (total_* fields) as the proxy's token usage, tool-use tokens input as above, and its
 * Google Search count (`grounding_tool_count` of type `google_search`) as search queries; undefined when it is none.
 */
export function readInteractionUsage (u: unknown): TokenUsage | undefined {
  if (u === undefined || u === null || typeof u !== 'object' || Array.isArray(u)) return undefined
  const m = u as Record<string, unknown>
  const toolUse = count(m.total_tool_use_tokens)
  const used: TokenUsage = {
    inputTokens: count(m.total_input_tokens) + toolUse,
    outputTokens: count(m.total_output_tokens),
    thinkingTokens: count(m.total_thought_tokens),
    cachedTokens: count(m.total_cached_tokens),
  }
  if (toolUse > 0) used.toolUseTokens = toolUse
  let searches = 0
  if (Array.isArray(m.grounding_tool_count)) {
    for (const c of m.grounding_tool_count as Array<{ type?: unknown, count?: unknown } | null>) if (c?.type === 'google_search') searches += count(c.count)
  }
  return searches === 0 ? used : { ...used, searchQueries: searches }
}

/**
 * The Google Search queries one Interactions step (or step delta) ran: a `google_search_call` counts the queries
 * its arguments name, at least one; any other step none.
 */
export function interactionStepSearches (step: unknown): number {
  if (step === null || typeof step !== 'object' || (step as { type?: unknown }).type !== 'google_search_call') return 0
  const queries = (step as { arguments?: { queries?: unknown } }).arguments?.queries
  return Array.isArray(queries) && queries.length > 0 ? queries.length : 1
}

/** Tokens an answer (or stream event) reports, and the search queries it ran; undefined when it carries no usageMetadata. */
export function usageOf (answer: unknown): TokenUsage | undefined {
  const used = answer === null || typeof answer !== 'object' ? undefined : readUsageMetadata((answer as GeminiAnswer).usageMetadata)
  const queries = used === undefined ? 0 : searchQueriesOf(answer)
  return queries === 0 || used === undefined ? used : { ...used, searchQueries: queries }
}

/**
 * The Google Search queries an answer's grounding ran (each candidate's groundingMetadata.webSearchQueries), which
 * Google bills per query; a stream repeats them, so the largest count of its events is the call's.
 */
export function searchQueriesOf (answer: unknown): number {
  const candidates = candidatesOf(answer)
  let n = 0
  for (let c = 0; c < candidates.length; c++) {
    n += searchQueryCount((candidates[c] as { groundingMetadata?: { webSearchQueries?: unknown } } | undefined)?.groundingMetadata?.webSearchQueries)
  }
  return n
}

/** The queries one groundingMetadata.webSearchQueries names (also read from a pass-through's bytes: usage-scan.ts). */
export function searchQueryCount (queries: unknown): number {
  return Array.isArray(queries) ? queries.length : 0
}

/** The characters of a function call the model wrote: its name and its arguments as JSON. */
function functionCallChars (call: GeminiPart['functionCall']): number {
  if (call === undefined || call === null || typeof call !== 'object') return 0
  let chars = typeof call.name === 'string' ? call.name.length : 0
  try {
    chars += call.args === undefined ? 0 : (JSON.stringify(call.args) ?? '').length
  } catch {} // arguments parsed from JSON always serialise; anything else counts its name only
  return chars
}

/**
 * Characters of answer and thought text and of function calls (name and arguments) in a batch of answers: what
 * was forwarded, the floor of a stream's output. A scan that allocates only for function calls, once per batch.
 */
export function outputChars (batch: readonly unknown[]): number {
  let chars = 0
  for (let e = 0; e < batch.length; e++) {
    const candidates = candidatesOf(batch[e])
    for (let c = 0; c < candidates.length; c++) {
      const parts = partsOf(candidates[c])
      for (let p = 0; p < parts.length; p++) {
        const part = parts[p]
        const text = part?.text
        if (typeof text === 'string') chars += text.length
        if (part?.functionCall !== undefined) chars += functionCallChars(part.functionCall)
      }
    }
  }
  return chars
}
