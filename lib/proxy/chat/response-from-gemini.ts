// Gemini GenerateContentResponse → chat-completions objects (docs/chat-completions.md, "Responses" and "Finish reasons").
import type { GeminiResponse } from '../upstream/backend.ts'
import { candidatesOf, finishReasonOf, isContentFilter, partKind, partsOf, tokensOf } from '../gemini/hub.ts'
import type { GeminiPart } from '../gemini/hub.ts'
import { newToolCallId } from '../tool-call-ids.ts'

export interface OpenAIToolCall {
  id: string
  type: 'function'
  function: { name: string, arguments: string }
}

export interface OpenAIUsage {
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
  prompt_tokens_details: { cached_tokens: number }
  completion_tokens_details: { reasoning_tokens: number }
}

/** What one candidate's parts say, split the way chat-completions needs it. */
export interface CandidateOutput {
  /** Answer text (parts joined with "", images as Markdown). */
  content: string
  /** Thought text. */
  reasoning: string
  toolCalls: OpenAIToolCall[]
}

/** A candidate's parts (read by the hub, lib/proxy/gemini/hub.ts) as chat-completions output. */
export function partsToOutput (parts: readonly GeminiPart[] | undefined): CandidateOutput {
  let content = ''
  let reasoning = ''
  const toolCalls: OpenAIToolCall[] = []
  for (const part of parts ?? []) {
    switch (partKind(part)) {
      case 'functionCall': {
        const call = part.functionCall as NonNullable<GeminiPart['functionCall']>
        toolCalls.push({
          id: newToolCallId(typeof part.thoughtSignature === 'string' ? part.thoughtSignature : undefined),
          type: 'function',
          function: { name: String(call.name ?? ''), arguments: JSON.stringify(call.args ?? {}) },
        })
        break
      }
      case 'thought': reasoning += part.text as string; break
      case 'text': content += part.text as string; break
      case 'inlineData': {
        const data = part.inlineData as NonNullable<GeminiPart['inlineData']>
        const mimeType = typeof data.mimeType === 'string' ? data.mimeType : 'image/png'
        // Only images have a text rendering; other inline data has no place in a chat message.
        if (mimeType.startsWith('image/') && typeof data.data === 'string') content += `![image](data:${mimeType};base64,${data.data})`
        break
      }
      default:
    }
  }
  return { content, reasoning, toolCalls }
}

export type FinishReason = 'stop' | 'length' | 'content_filter' | 'tool_calls'

/**
 * docs/chat-completions.md, "Finish reasons". `final` says whether this is the candidate's last word: OTHER, unspecified or absent reasons
 * stay null mid-stream and become `stop` at the end.
 */
export function mapFinishReason (reason: unknown, hasToolCalls: boolean, final: boolean): FinishReason | null {
  if (reason === 'MAX_TOKENS') return 'length'
  if (isContentFilter(reason)) return 'content_filter'
  if (reason === 'STOP' || reason === 'MALFORMED_FUNCTION_CALL' || reason === 'UNEXPECTED_TOOL_CALL' || final) {
    return hasToolCalls ? 'tool_calls' : 'stop'
  }
  return null
}

/** Usage (docs/chat-completions.md, "Usage"); undefined when the upstream sent no usageMetadata. */
export function toUsage (usage: unknown): OpenAIUsage | undefined {
  const t = tokensOf(usage)
  if (t === undefined) return undefined
  const completion = t.output + t.thoughts
  return {
    prompt_tokens: t.input,
    completion_tokens: completion,
    total_tokens: t.total ?? t.input + completion,
    prompt_tokens_details: { cached_tokens: t.cached },
    completion_tokens_details: { reasoning_tokens: t.thoughts },
  }
}

export interface CompletionMeta {
  id: string
  created: number
  /** The model as requested (variant suffix included). */
  model: string
}

export interface ChatCompletion {
  id: string
  object: 'chat.completion'
  created: number
  model: string
  choices: Array<{
    index: number
    message: { role: 'assistant', content: string | null, reasoning_content?: string, tool_calls?: OpenAIToolCall[], refusal: null }
    logprobs: null
    finish_reason: FinishReason
  }>
  usage?: OpenAIUsage
}

export function toChatCompletion (response: GeminiResponse, meta: CompletionMeta): ChatCompletion {
  const choices: ChatCompletion['choices'] = candidatesOf(response).map((candidate, i) => {
    const out = partsToOutput(partsOf(candidate))
    const message: ChatCompletion['choices'][number]['message'] = {
      role: 'assistant',
      content: out.content === '' && out.toolCalls.length > 0 ? null : out.content,
      refusal: null,
    }
    if (out.reasoning !== '') message.reasoning_content = out.reasoning
    if (out.toolCalls.length > 0) message.tool_calls = out.toolCalls
    return {
      index: typeof candidate?.index === 'number' ? candidate.index : i,
      message,
      logprobs: null,
      finish_reason: mapFinishReason(finishReasonOf(candidate), out.toolCalls.length > 0, true) as FinishReason,
    }
  })
  // A blocked prompt has no candidates: one empty choice, so clients reading choices[0] keep working.
  if (choices.length === 0) {
    const blocked = response?.promptFeedback?.blockReason !== undefined
    choices.push({ index: 0, message: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: blocked ? 'content_filter' : 'stop' })
  }
  const completion: ChatCompletion = { id: meta.id, object: 'chat.completion', created: meta.created, model: meta.model, choices }
  const usage = toUsage(response?.usageMetadata)
  if (usage !== undefined) completion.usage = usage
  return completion
}
