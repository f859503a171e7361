// A Gemini GenerateContentResponse → an Anthropic Message (docs/messages.md, "Response"): the first
// candidate's parts as content blocks, its finish reason as stop_reason, usageMetadata as usage.
import type { GeminiResponse } from '../upstream/backend.ts'
import { BlockAssembler, collectBlocks } from './blocks.ts'
import type { ContentBlock } from './blocks.ts'
import { isContentFilter, tokensOf } from '../gemini/hub.ts'

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal'

export interface AnthropicUsage {
  input_tokens: number
  output_tokens: number
  cache_creation_input_tokens: number
  cache_read_input_tokens: number
}

export interface AnthropicMessage {
  id: string
  type: 'message'
  role: 'assistant'
  model: string
  content: ContentBlock[]
  stop_reason: StopReason | null
  stop_sequence: string | null
  usage: AnthropicUsage
}

export interface MessageMeta {
  /** `msg_…` */
  id: string
  /** The model as requested (variant suffix included). */
  model: string
  /** Thinking blocks without their text, as `thinking.display: "omitted"` asks. */
  omitThinking?: boolean
}

/** The stop_reason of a finished answer; Gemini does not say which stop sequence ended it, so that is end_turn too. */
export function stopReasonOf (finishReason: unknown, toolUses: number, blocked: boolean): StopReason {
  if (blocked || isContentFilter(finishReason)) return 'refusal'
  if (finishReason === 'MAX_TOKENS') return 'max_tokens'
  return toolUses > 0 ? 'tool_use' : 'end_turn'
}

/** Anthropic counts cached input apart from input_tokens, and thinking inside output_tokens. */
export function anthropicUsage (usage: unknown): AnthropicUsage {
  const t = tokensOf(usage) ?? { input: 0, cached: 0, output: 0, thoughts: 0, toolUse: 0 }
  return {
    input_tokens: Math.max(0, t.input - t.cached),
    output_tokens: t.output + t.thoughts,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: t.cached,
  }
}

export function toAnthropicMessage (response: GeminiResponse, meta: MessageMeta): AnthropicMessage {
  const candidate = Array.isArray(response?.candidates) ? response.candidates[0] : undefined
  const { sink, blocks } = collectBlocks()
  const assembler = new BlockAssembler(sink, meta.omitThinking)
  assembler.parts(candidate?.content?.parts)
  assembler.end()
  const blocked = candidate === undefined && response?.promptFeedback?.blockReason !== undefined
  return {
    id: meta.id,
    type: 'message',
    role: 'assistant',
    model: meta.model,
    content: blocks,
    stop_reason: stopReasonOf(candidate?.finishReason, assembler.toolUses, blocked),
    stop_sequence: null,
    usage: anthropicUsage(response?.usageMetadata),
  }
}
