// The chat-completions request body, validated with joi. Unknown fields are accepted and ignored
// (clients send `user`, `metadata`, `store`, ...), wrong types are a 400 in the OpenAI error shape
// with `param` naming the field. No type conversion: "0.5" is not a temperature.
import Joi from 'joi'
import { REASONING_EFFORTS } from './model-thinking.ts'
import type { ReasoningEffort } from './model-thinking.ts'
import { FUNCTION_NAME, WEB_SEARCH_TOOL_TYPES } from './tool-declarations.ts'
import type { OpenAITool, OpenAIToolChoice } from './tool-declarations.ts'
import { invalidParam } from './chat-error-body.ts'

export interface TextPart { type: 'text', text: string }
export interface ImagePart { type: 'image_url', image_url: string | { url: string, detail?: string } }
export interface AudioPart { type: 'input_audio', input_audio: { data: string, format: string } }
export interface FilePart { type: 'file', file: { file_data?: string, file_id?: string, filename?: string } }
export interface RefusalPart { type: 'refusal', refusal: string }
export type ContentPart = TextPart | ImagePart | AudioPart | FilePart | RefusalPart

export interface ToolCall {
  id: string
  type?: 'function'
  function: { name: string, arguments?: string }
}

export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool' | 'function'
  content?: string | ContentPart[] | null
  name?: string
  tool_calls?: ToolCall[] | null
  tool_call_id?: string
}

export interface ChatRequest {
  model: string
  messages: ChatMessage[]
  stream?: boolean | null
  stream_options?: { include_usage?: boolean | null } | null
  temperature?: number | null
  top_p?: number | null
  top_k?: number | null
  max_tokens?: number | null
  max_completion_tokens?: number | null
  stop?: string | string[] | null
  n?: number | null
  seed?: number | null
  presence_penalty?: number | null
  frequency_penalty?: number | null
  response_format?: { type: 'text' | 'json_object' | 'json_schema', json_schema?: { name?: string, schema?: Record<string, unknown>, strict?: boolean | null } } | null
  reasoning_effort?: ReasoningEffort | null
  tools?: OpenAITool[] | null
  tool_choice?: OpenAIToolChoice | null
  logprobs?: boolean | null
  top_logprobs?: number | null
  modalities?: string[] | null
}

export interface ChatSchemaLimits {
  /** Most messages in one request. Default 2048. */
  maxMessages: number
  /** Most content parts in one message. Default 1000. */
  maxParts: number
  /** Most tools in one request. Default 512. */
  maxTools: number
}

export const DEFAULT_CHAT_LIMITS: ChatSchemaLimits = { maxMessages: 2048, maxParts: 1000, maxTools: 512 }

const PART_TYPES = ['text', 'image_url', 'input_audio', 'file', 'refusal']

function schemaFor (limits: ChatSchemaLimits): Joi.ObjectSchema {
  const opt = (s: Joi.Schema): Joi.Schema => s.allow(null)
  const part = Joi.object({
    type: Joi.string().valid(...PART_TYPES).required(),
    text: Joi.when('type', { is: 'text', then: Joi.string().allow('').required() }),
    image_url: Joi.when('type', {
      is: 'image_url',
      then: Joi.alternatives(Joi.string(), Joi.object({ url: Joi.string().required(), detail: Joi.string().allow(null) }).unknown(true)).required(),
    }),
    input_audio: Joi.when('type', {
      is: 'input_audio',
      then: Joi.object({ data: Joi.string().required(), format: Joi.string().required() }).unknown(true).required(),
    }),
    file: Joi.when('type', {
      is: 'file',
      then: Joi.object({ file_data: Joi.string(), file_id: Joi.string(), filename: Joi.string() }).or('file_data', 'file_id').unknown(true).required(),
    }),
    refusal: Joi.when('type', { is: 'refusal', then: Joi.string().allow('').required() }),
  }).unknown(true)

  const content = Joi.alternatives(Joi.string().allow(''), Joi.array().items(part).max(limits.maxParts))
  const toolCall = Joi.object({
    id: Joi.string().required(),
    type: Joi.string().valid('function'),
    function: Joi.object({ name: Joi.string().required(), arguments: Joi.string().allow('') }).unknown(true).required(),
  }).unknown(true)

  const message = Joi.object({
    role: Joi.string().valid('system', 'developer', 'user', 'assistant', 'tool', 'function').required(),
    content: Joi.when('role', {
      is: 'assistant',
      then: content.allow(null),
      otherwise: Joi.when('role', { is: 'function', then: content.allow(null).required(), otherwise: content.required() }),
    }),
    name: opt(Joi.string()),
    tool_calls: Joi.when('role', { is: 'assistant', then: opt(Joi.array().items(toolCall).max(limits.maxTools)), otherwise: Joi.any() }),
    tool_call_id: Joi.when('role', { is: 'tool', then: Joi.string().required(), otherwise: Joi.any() }),
  }).unknown(true)

  const tool = Joi.object({
    type: Joi.string().valid('function', ...WEB_SEARCH_TOOL_TYPES).required(),
    function: Joi.when('type', {
      is: 'function',
      then: Joi.object({
        name: Joi.string().pattern(FUNCTION_NAME).required().messages({
          'string.pattern.base': '{{#label}} must start with a letter or underscore and hold at most 64 letters, digits, _ . : or -',
        }),
        description: opt(Joi.string().allow('')),
        parameters: opt(Joi.object().unknown(true)),
        strict: opt(Joi.boolean()),
      }).unknown(true).required(),
    }),
  }).unknown(true)

  return Joi.object({
    model: Joi.string().min(1).required(),
    messages: Joi.array().items(message).min(1).max(limits.maxMessages).required(),
    stream: opt(Joi.boolean()),
    stream_options: opt(Joi.object({ include_usage: opt(Joi.boolean()) }).unknown(true)),
    temperature: opt(Joi.number().min(0).max(2)),
    top_p: opt(Joi.number().min(0).max(1)),
    top_k: opt(Joi.number().integer().min(1)),
    max_tokens: opt(Joi.number().integer().min(1)),
    max_completion_tokens: opt(Joi.number().integer().min(1)),
    stop: opt(Joi.alternatives(Joi.string(), Joi.array().items(Joi.string()).max(5))),
    n: opt(Joi.number().integer().min(1).max(8)),
    seed: opt(Joi.number().integer()),
    presence_penalty: opt(Joi.number().min(-2).max(2)),
    frequency_penalty: opt(Joi.number().min(-2).max(2)),
    response_format: opt(Joi.object({
      type: Joi.string().valid('text', 'json_object', 'json_schema').required(),
      json_schema: Joi.when('type', {
        is: 'json_schema',
        then: Joi.object({ name: Joi.string(), schema: Joi.object().unknown(true), strict: opt(Joi.boolean()) }).unknown(true).required(),
      }),
    }).unknown(true)),
    reasoning_effort: opt(Joi.string().valid(...REASONING_EFFORTS)),
    tools: opt(Joi.array().items(tool).max(limits.maxTools)),
    tool_choice: opt(Joi.alternatives(
      Joi.string().valid('none', 'auto', 'required'),
      Joi.object({ type: Joi.string().valid('function').required(), function: Joi.object({ name: Joi.string().required() }).unknown(true).required() }).unknown(true),
    )),
    logprobs: opt(Joi.boolean()),
    top_logprobs: opt(Joi.number().integer().min(0).max(20)),
    modalities: opt(Joi.array().items(Joi.string().valid('text', 'image', 'audio'))),
  }).unknown(true)
}

/** `messages.3.content` → `messages[3].content`, as OpenAI names params. */
function paramName (path: ReadonlyArray<string | number>): string {
  return path.map((p, i) => typeof p === 'number' ? `[${p}]` : (i === 0 ? p : `.${p}`)).join('')
}

export function createChatRequestValidator (limits: Partial<ChatSchemaLimits> = {}): (body: unknown) => ChatRequest {
  const schema = schemaFor({ ...DEFAULT_CHAT_LIMITS, ...limits })
  return function validateChatRequest (body) {
    if (body === undefined) throw invalidParam('The request body is empty; send a JSON object with `model` and `messages`', null)
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalidParam('The request body must be a JSON object', null)
    const { error, value } = schema.validate(body, { convert: false, abortEarly: true, errors: { wrap: { label: '`' } } })
    if (error !== undefined) {
      const detail = error.details[0]
      const param = paramName(detail.path)
      throw invalidParam(detail.message.replace(/`[^`]*`/, `\`${param}\``), param === '' ? null : param)
    }
    return value as ChatRequest
  }
}
