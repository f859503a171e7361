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

// Validation runs on every request, so the schema is shaped for speed without changing what it accepts
// or the error it reports:
//  - the fields that depend on a part's `type` or a message's `role` are checked by one schema per type
//    or role, chosen once per item (alternatives().conditional), not by a `when` per field, which joi
//    evaluates on every item;
//  - the top-level fields are checked one by one, in schema order, and only when present: joi spends
//    most of a typical request's time visiting the absent optional ones. None refers to another, so this
//    reports the same first error as one object schema would;
//  - `messages` is first checked message by message with the schema of each one's role, the one the
//    conditional would pick, which spares the conditional's own work (and garbage) per message. Only
//    when that does not accept it does the full schema run, and that one reports the error.
const PREFS: Joi.ValidationOptions = { convert: false, abortEarly: true, errors: { wrap: { label: '`' } } }

interface Field {
  name: string
  schema: Joi.Schema
  required: boolean
  /** A quicker check that accepts only values the schema accepts (and may turn down some it would accept). */
  quick?: (value: unknown) => boolean
}

const TEXT_ROLES = new Set<unknown>(['system', 'developer', 'user', 'assistant'])

/**
 * A message with text content and nothing its role's schema would look into further: by far the most common
 * kind, and joi takes about 10 µs per message (a long conversation is sent whole on every turn). Accepts
 * only what the role's schema accepts: `name` a non-empty string when given, an assistant without tool calls.
 */
export function isPlainTextMessage (m: unknown): boolean {
  if (m === null || typeof m !== 'object') return false
  const { role, content, name, tool_calls: toolCalls } = m as Record<string, unknown>
  return typeof content === 'string' && TEXT_ROLES.has(role) &&
    (name === undefined || name === null || (typeof name === 'string' && name !== '')) &&
    (role !== 'assistant' || toolCalls === undefined || toolCalls === null)
}

/** The top-level fields in the order errors are looked for. */
function fieldsFor (limits: ChatSchemaLimits): Field[] {
  const opt = (s: Joi.Schema): Joi.Schema => s.allow(null)
  const partType = Joi.string().valid(...PART_TYPES).required()
  const partOf = (fields: Record<string, Joi.Schema>): Joi.ObjectSchema => Joi.object({ type: partType, ...fields }).unknown(true)
  const part = Joi.alternatives().conditional('.type', {
    switch: [
      { is: 'text', then: partOf({ text: Joi.string().allow('').required() }) },
      {
        is: 'image_url',
        then: partOf({ image_url: Joi.alternatives(Joi.string(), Joi.object({ url: Joi.string().required(), detail: Joi.string().allow(null) }).unknown(true)).required() }),
      },
      { is: 'input_audio', then: partOf({ input_audio: Joi.object({ data: Joi.string().required(), format: Joi.string().required() }).unknown(true).required() }) },
      {
        is: 'file',
        then: partOf({ file: Joi.object({ file_data: Joi.string(), file_id: Joi.string(), filename: Joi.string() }).or('file_data', 'file_id').unknown(true).required() }),
      },
      { is: 'refusal', then: partOf({ refusal: Joi.string().allow('').required() }) },
    ],
    otherwise: partOf({}),
  })

  const content = Joi.alternatives(Joi.string().allow(''), Joi.array().items(part).max(limits.maxParts))
  const toolCall = Joi.object({
    id: Joi.string().required(),
    type: Joi.string().valid('function'),
    function: Joi.object({ name: Joi.string().required(), arguments: Joi.string().allow('') }).unknown(true).required(),
  }).unknown(true)

  const role = Joi.string().valid('system', 'developer', 'user', 'assistant', 'tool', 'function').required()
  const name = opt(Joi.string())
  // Fields in the same order in every variant, so the first error reported does not depend on the role.
  const plainMessage = Joi.object({ role, content: content.required(), name }).unknown(true)
  const specialMessages: Array<[string, Joi.ObjectSchema]> = [
    ['assistant', Joi.object({ role, content: content.allow(null), name, tool_calls: opt(Joi.array().items(toolCall).max(limits.maxTools)) }).unknown(true)],
    ['function', Joi.object({ role, content: content.allow(null).required(), name }).unknown(true)],
    ['tool', Joi.object({ role, content: content.required(), name, tool_call_id: Joi.string().required() }).unknown(true)],
  ]
  const message = Joi.alternatives().conditional('.role', {
    switch: specialMessages.map(([is, then]) => ({ is, then })),
    otherwise: plainMessage,
  })
  const messageByRole = new Map<unknown, Joi.Schema>()
  for (const [roleName, schema] of [...specialMessages, ['system', plainMessage], ['developer', plainMessage], ['user', plainMessage]] as const) {
    messageByRole.set(roleName, schema.prefs(PREFS))
  }
  const quickMessages = (value: unknown): boolean => {
    if (!Array.isArray(value) || value.length < 1 || value.length > limits.maxMessages) return false
    for (const m of value) {
      if (isPlainTextMessage(m)) continue
      const schema = m !== null && typeof m === 'object' ? messageByRole.get((m as { role?: unknown }).role) : undefined
      if (schema === undefined || schema.validate(m).error !== undefined) return false
    }
    return true
  }

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

  const fields: Record<string, Joi.Schema> = {
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
  }
  return Object.entries(fields).map(([name, schema]) => ({
    name,
    schema: schema.prefs(PREFS),
    required: schema.$_getFlag('presence') === 'required',
    quick: name === 'messages' ? quickMessages : undefined,
  }))
}

/** `messages.3.content` → `messages[3].content`, as OpenAI names params. */
function paramName (path: ReadonlyArray<string | number>): string {
  return path.map((p, i) => typeof p === 'number' ? `[${p}]` : (i === 0 ? p : `.${p}`)).join('')
}

export function createChatRequestValidator (limits: Partial<ChatSchemaLimits> = {}): (body: unknown) => ChatRequest {
  const fields = fieldsFor({ ...DEFAULT_CHAT_LIMITS, ...limits })
  return function validateChatRequest (body) {
    if (body === undefined) throw invalidParam('The request body is empty; send a JSON object with `model` and `messages`', null)
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalidParam('The request body must be a JSON object', null)
    // Unknown fields are accepted and passed through untouched, like every valid one (no conversion).
    const given = body as Record<string, unknown>
    for (const { name, schema, required, quick } of fields) {
      const value = given[name]
      if ((value === undefined && !required) || quick?.(value) === true) continue
      const { error } = schema.validate(value)
      if (error !== undefined) {
        const detail = error.details[0]
        const param = paramName([name, ...detail.path])
        throw invalidParam(detail.message.replace(/`[^`]*`/, `\`${param}\``), param)
      }
    }
    return body as ChatRequest
  }
}
