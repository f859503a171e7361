// The Anthropic Messages request body, checked by hand: the fields the translation reads must have the types
// Anthropic documents (a 400 naming the field otherwise); every other field, and content blocks of types the
// gateway does not translate, are accepted and ignored, since Claude Code adds fields of its own
// (docs/messages.md, "Request").
import { fail } from '../../errors.ts'
import type { GatehouseError } from '../../errors.ts'
import type { ReasoningEffort } from '../models/thinking.ts'

export interface TextBlock { type: 'text', text: string }
export interface ImageBlock {
  type: 'image'
  source: { type: 'base64', media_type: string, data: string } | { type: 'url', url: string }
}
export interface DocumentBlock {
  type: 'document'
  source: { type: 'base64', media_type: string, data: string } | { type: 'text', media_type?: string, data: string } | { type: 'url', url: string } | { type: 'content', content: string | Block[] }
}
export interface ToolUseBlock { type: 'tool_use', id: string, name: string, input: Record<string, unknown> }
export interface ToolResultBlock { type: 'tool_result', tool_use_id: string, content?: string | Block[], is_error?: boolean }
export interface ThinkingBlock { type: 'thinking', thinking: string, signature?: string }
export interface RedactedThinkingBlock { type: 'redacted_thinking', data: string }
/** A block of a type the gateway does not translate (server tool results, citations, …): skipped. */
export interface OtherBlock { type: string }
export type Block = TextBlock | ImageBlock | DocumentBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock | RedactedThinkingBlock | OtherBlock

export interface AnthropicMessage {
  /** `system`: an instruction in its place in the conversation, as Claude Code sends its environment block. */
  role: 'user' | 'assistant' | 'system'
  content: string | Block[]
  /** Per-turn settings (beta per-turn-control-2026-07-01): the last message's effort decides the call's. */
  output_config?: { effort?: typeof EFFORTS[number] | null }
}

export interface AnthropicTool {
  type?: string
  name: string
  description?: string
  input_schema?: Record<string, unknown>
}

export type ToolChoice = { type: 'auto' | 'any' | 'none', disable_parallel_tool_use?: boolean } | { type: 'tool', name: string, disable_parallel_tool_use?: boolean }

/** `display`: `omitted` returns thinking blocks with their signatures and no text. */
export type ThinkingParam = { type: 'enabled', budget_tokens: number, display?: string } | { type: 'adaptive', display?: string } | { type: 'disabled' }

export const EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'] as const satisfies readonly ReasoningEffort[]

export interface MessagesRequest {
  model: string
  /** Required by messages.create, absent from count_tokens. */
  max_tokens?: number
  messages: AnthropicMessage[]
  system?: string | TextBlock[]
  stream?: boolean
  stop_sequences?: string[]
  temperature?: number
  top_p?: number
  top_k?: number
  tools?: AnthropicTool[]
  tool_choice?: ToolChoice
  thinking?: ThinkingParam
  output_config?: { effort?: typeof EFFORTS[number] | null, format?: { type: 'json_schema', schema: Record<string, unknown> } | null }
}

/** The top-level fields the translation reads; any other is ignored (docs/messages.md, "Request"). */
const READ_FIELDS = new Set(['model', 'max_tokens', 'messages', 'system', 'stream', 'stop_sequences', 'temperature', 'top_p', 'top_k', 'tools', 'tool_choice', 'thinking', 'output_config'])

/** The top-level fields of a checked body that the gateway ignores (Claude Code's betas add some), for a debug line. */
export function ignoredFields (body: MessagesRequest): string[] {
  return Object.keys(body).filter(k => !READ_FIELDS.has(k))
}

/** Most messages in one request, the same bound as a chat-completions request's. */
export const MAX_MESSAGES = 2048
/** Most tools in one request. */
export const MAX_TOOLS = 512

function invalid (message: string, param: string): GatehouseError {
  return fail('INVALID_INPUT', message, { param })
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)
const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v)

function optionalNumber (body: Record<string, unknown>, field: string, min: number, max: number): void {
  const v = body[field]
  if (v === undefined || v === null) return
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) throw invalid(`${field} must be a number from ${min} to ${max}`, field)
}

function checkSource (source: unknown, param: string, kinds: readonly string[]): void {
  if (!isObject(source) || typeof source.type !== 'string' || !kinds.includes(source.type)) {
    throw invalid(`${param}.type must be one of ${kinds.join(', ')}`, param)
  }
  if (source.type === 'url' && typeof source.url !== 'string') throw invalid(`${param}.url must be a string`, param)
  if ((source.type === 'base64' || source.type === 'text') && typeof source.data !== 'string') throw invalid(`${param}.data must be a string`, param)
  if (source.type === 'base64' && typeof source.media_type !== 'string') throw invalid(`${param}.media_type must be a string`, param)
}

/** Checks one content block; returns how many blocks it counts for (a tool result's own blocks included). */
function checkBlock (block: unknown, param: string, nested: boolean): number {
  if (!isObject(block) || typeof block.type !== 'string') throw invalid(`${param} must be an object with a string type`, param)
  switch (block.type) {
    case 'text':
      if (typeof block.text !== 'string') throw invalid(`${param}.text must be a string`, param)
      return 1
    case 'image':
      checkSource(block.source, `${param}.source`, ['base64', 'url'])
      return 1
    case 'document':
      checkSource(block.source, `${param}.source`, ['base64', 'text', 'url', 'content'])
      return 1
    case 'tool_use':
      if (nested) break
      if (typeof block.id !== 'string' || typeof block.name !== 'string') throw invalid(`${param} needs a string id and name`, param)
      if (block.input !== undefined && !isObject(block.input)) throw invalid(`${param}.input must be an object`, param)
      return 1
    case 'tool_result': {
      if (nested) break
      if (typeof block.tool_use_id !== 'string') throw invalid(`${param}.tool_use_id must be a string`, param)
      const content = block.content
      if (content === undefined || typeof content === 'string') return 1
      if (!Array.isArray(content)) throw invalid(`${param}.content must be a string or an array of blocks`, param)
      let count = 1
      content.forEach((b, i) => { count += checkBlock(b, `${param}.content[${i}]`, true) })
      return count
    }
    case 'thinking':
      if (typeof block.thinking !== 'string') throw invalid(`${param}.thinking must be a string`, param)
      if (block.signature !== undefined && typeof block.signature !== 'string') throw invalid(`${param}.signature must be a string`, param)
      return 1
  }
  return 1
}

function checkTools (tools: unknown): void {
  if (tools === undefined || tools === null) return
  if (!Array.isArray(tools)) throw invalid('tools must be an array', 'tools')
  if (tools.length > MAX_TOOLS) throw invalid(`At most ${MAX_TOOLS} tools per request`, 'tools')
  tools.forEach((tool, i) => {
    if (!isObject(tool) || typeof tool.name !== 'string') throw invalid(`tools[${i}] needs a string name`, `tools[${i}]`)
    if (tool.input_schema !== undefined && !isObject(tool.input_schema)) throw invalid(`tools[${i}].input_schema must be an object`, `tools[${i}]`)
  })
}

function checkToolChoice (choice: unknown): void {
  if (choice === undefined || choice === null) return
  if (!isObject(choice) || !['auto', 'any', 'tool', 'none'].includes(choice.type as string)) {
    throw invalid('tool_choice.type must be auto, any, tool or none', 'tool_choice')
  }
  if (choice.type === 'tool' && typeof choice.name !== 'string') throw invalid('tool_choice of type tool needs a name', 'tool_choice')
}

function checkThinking (thinking: unknown): void {
  if (thinking === undefined || thinking === null) return
  if (!isObject(thinking) || !['enabled', 'adaptive', 'disabled'].includes(thinking.type as string)) {
    throw invalid('thinking.type must be enabled, adaptive or disabled', 'thinking')
  }
  if (thinking.type === 'enabled' && (!isInt(thinking.budget_tokens) || thinking.budget_tokens < 1)) {
    throw invalid('thinking.budget_tokens must be a positive integer', 'thinking.budget_tokens')
  }
}

function checkOutputConfig (config: unknown): void {
  if (config === undefined || config === null) return
  if (!isObject(config)) throw invalid('output_config must be an object', 'output_config')
  if (config.effort !== undefined && config.effort !== null && !(EFFORTS as readonly unknown[]).includes(config.effort)) {
    throw invalid(`output_config.effort must be one of ${EFFORTS.join(', ')}`, 'output_config.effort')
  }
  const format = config.format
  if (format !== undefined && format !== null && (!isObject(format) || format.type !== 'json_schema' || !isObject(format.schema))) {
    throw invalid('output_config.format must be {"type":"json_schema","schema":{…}}', 'output_config.format')
  }
}

/**
 * The body as a MessagesRequest, or a 400 naming the first field at fault. `needsMaxTokens` is false for
 * count_tokens; `maxBlocks` bounds the content blocks of all messages together (a tool result's blocks count).
 */
export function checkMessagesRequest (body: unknown, needsMaxTokens: boolean, maxBlocks: number): MessagesRequest {
  if (!isObject(body)) throw invalid('The body must be a JSON object', 'body')
  if (typeof body.model !== 'string' || body.model === '') throw invalid('model must be a non-empty string', 'model')
  if (needsMaxTokens || body.max_tokens !== undefined) {
    if (!isInt(body.max_tokens) || body.max_tokens < 1) throw invalid('max_tokens must be a positive integer', 'max_tokens')
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0) throw invalid('messages must be a non-empty array', 'messages')
  if (body.messages.length > MAX_MESSAGES) throw invalid(`At most ${MAX_MESSAGES} messages per request`, 'messages')
  let blocks = 0
  body.messages.forEach((m, i) => {
    const param = `messages[${i}]`
    if (!isObject(m) || (m.role !== 'user' && m.role !== 'assistant' && m.role !== 'system')) throw invalid(`${param}.role must be user, assistant or system`, param)
    if (typeof m.content === 'string') {
      blocks++
    } else if (Array.isArray(m.content)) {
      m.content.forEach((b, j) => { blocks += checkBlock(b, `${param}.content[${j}]`, m.role === 'system') })
    } else {
      throw invalid(`${param}.content must be a string or an array of blocks`, param)
    }
    // A per-turn effort the gateway does not know is left out, never a 400: the request's own effort applies.
    if (isObject(m.output_config) && !(EFFORTS as readonly unknown[]).includes(m.output_config.effort)) m.output_config = undefined
    if (blocks > maxBlocks) throw fail('TOO_MANY_PARTS', `A request may hold at most ${maxBlocks} content blocks, all messages together`, { param: 'messages' })
  })
  const system = body.system
  if (system !== undefined && system !== null && typeof system !== 'string') {
    if (!Array.isArray(system)) throw invalid('system must be a string or an array of text blocks', 'system')
    system.forEach((b, i) => {
      if (!isObject(b) || typeof b.text !== 'string') throw invalid(`system[${i}] must be a text block`, 'system')
    })
  }
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') throw invalid('stream must be a boolean', 'stream')
  const stops = body.stop_sequences
  if (stops !== undefined && stops !== null && (!Array.isArray(stops) || stops.some(s => typeof s !== 'string'))) {
    throw invalid('stop_sequences must be an array of strings', 'stop_sequences')
  }
  optionalNumber(body, 'temperature', 0, 2)
  optionalNumber(body, 'top_p', 0, 1)
  optionalNumber(body, 'top_k', 0, Number.MAX_SAFE_INTEGER)
  checkTools(body.tools)
  checkToolChoice(body.tool_choice)
  checkThinking(body.thinking)
  checkOutputConfig(body.output_config)
  return body as unknown as MessagesRequest
}
