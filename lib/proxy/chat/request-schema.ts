// The chat-completions request body, validated with joi. Unknown fields are accepted and ignored
// (clients send `user`, `metadata`, `store`, ...), wrong types are a 400 in the OpenAI error shape
// with `param` naming the field. No type conversion: "0.5" is not a temperature.
import type Joi from 'joi'
import { joi } from '../../load-package.ts'
import { REASONING_EFFORTS } from '../models/thinking.ts'
import type { ReasoningEffort } from '../models/thinking.ts'
import { FUNCTION_NAME, WEB_SEARCH_TOOL_TYPES } from './tool-declarations.ts'
import type { OpenAITool, OpenAIToolChoice } from './tool-declarations.ts'
import { invalidParam } from './error-body.ts'
import { ConfigurationError, fail } from '../../errors.ts'
import type { GatehouseError } from '../../errors.ts'

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
  /**
   * Most content parts in one request, all messages together; Markdown data-URL images inside text count too.
   * Default 4096 (Google accepts up to 3,000 images per prompt): each part costs work, and without a bound
   * 400 messages of 1,000 empty parts held the event loop for 3 s.
   */
  maxTotalParts: number
}

export const DEFAULT_CHAT_LIMITS: ChatSchemaLimits = { maxMessages: 2048, maxParts: 1000, maxTools: 512, maxTotalParts: 4096 }

/** The 400 for a request with more than `max` content parts. */
export function tooManyParts (max: number): GatehouseError {
  return fail('TOO_MANY_PARTS', `A request may hold at most ${max} content parts, all messages together (images inside text count too)`, { param: 'messages' })
}

/** The content parts of a request's messages, counted before any of them is validated. */
function countParts (messages: unknown): number {
  if (!Array.isArray(messages)) return 0
  let parts = 0
  for (const m of messages) {
    const content = m !== null && typeof m === 'object' ? (m as { content?: unknown }).content : undefined
    if (Array.isArray(content)) parts += content.length
  }
  return parts
}

const PART_TYPES = ['text', 'image_url', 'input_audio', 'file', 'refusal']

// Validation runs on every request, so the schema is shaped for speed without changing what it accepts
// or the error it reports:
//  - the fields that depend on a part's `type` or a message's `role` are checked by one schema per type
//    or role, chosen once per item (alternatives().conditional), not by a `when` per field, which joi
//    evaluates on every item;
//  - the top-level fields are checked one by one, in schema order, and only when present: joi spends
//    most of a typical request's time visiting the absent optional ones. None refers to another, so this
//    reports the same first error as one object schema would;
//  - `messages` is first checked message by message, by isQuickMessage or else with the schema of each one's
//    role, the one the conditional would pick, which spares the conditional's own work (and garbage) per
//    message. Only when that does not accept it does the full schema run, and that one reports the error.
const PREFS: Joi.ValidationOptions = { convert: false, abortEarly: true, errors: { wrap: { label: '`' } } }

interface Field {
  name: string
  schema: Joi.Schema
  required: boolean
  /** A quicker check that accepts only values the schema accepts (and may turn down some it would accept). */
  quick?: (value: unknown) => boolean
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)
const nonEmpty = (v: unknown): boolean => typeof v === 'string' && v !== ''
const absentOrNonEmpty = (v: unknown): boolean => v === undefined || nonEmpty(v)

/** A content part its type's schema accepts, checked without joi. Accepts only what that schema accepts. */
function isQuickPart (p: unknown): boolean {
  if (!isRecord(p)) return false
  switch (p.type) {
    case 'text': return typeof p.text === 'string'
    case 'refusal': return typeof p.refusal === 'string'
    case 'image_url': {
      const image = p.image_url
      return nonEmpty(image) || (isRecord(image) && nonEmpty(image.url) && (image.detail === null || absentOrNonEmpty(image.detail)))
    }
    case 'input_audio': return isRecord(p.input_audio) && nonEmpty(p.input_audio.data) && nonEmpty(p.input_audio.format)
    case 'file': {
      const file = p.file
      return isRecord(file) && absentOrNonEmpty(file.file_data) && absentOrNonEmpty(file.file_id) && absentOrNonEmpty(file.filename) &&
        (file.file_data !== undefined || file.file_id !== undefined)
    }
    default: return false
  }
}

function isQuickToolCall (call: unknown): boolean {
  if (!isRecord(call) || !nonEmpty(call.id) || (call.type !== undefined && call.type !== 'function')) return false
  const fn = call.function
  return isRecord(fn) && nonEmpty(fn.name) && (fn.arguments === undefined || typeof fn.arguments === 'string')
}

/**
 * A message its role's schema accepts, checked without joi: joi takes about 10 µs per message and 5 µs per
 * content part, and a long conversation is sent whole on every turn. Accepts only what the role's schema accepts
 * (unknown fields too); anything else goes to joi, which reports the error.
 */
function isQuickMessage (m: unknown, limits: ChatSchemaLimits = DEFAULT_CHAT_LIMITS): boolean {
  if (!isRecord(m)) return false
  const { role, content, name } = m
  if (name !== undefined && name !== null && !nonEmpty(name)) return false
  const hasContent = typeof content === 'string' ||
    (Array.isArray(content) && content.length <= limits.maxParts && content.every(isQuickPart))
  switch (role) {
    case 'system':
    case 'developer':
    case 'user':
      return hasContent
    case 'assistant': {
      const calls = m.tool_calls
      return (content === undefined || content === null || hasContent) &&
        (calls === undefined || calls === null || (Array.isArray(calls) && calls.length <= limits.maxTools && calls.every(isQuickToolCall)))
    }
    case 'function':
      return content === null || hasContent
    case 'tool':
      return hasContent && nonEmpty(m.tool_call_id)
    default:
      return false
  }
}

/** The top-level fields in the order errors are looked for. */
function fieldsFor (limits: ChatSchemaLimits): Field[] {
  const Joi = joi()
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
      if (isQuickMessage(m, limits)) continue
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
  const quick: Record<string, (value: unknown) => boolean> = { ...QUICK_SCALARS, messages: quickMessages }
  return Object.entries(fields).map(([name, schema]) => ({
    name,
    schema: schema.prefs(PREFS),
    required: schema.$_getFlag('presence') === 'required',
    quick: quick[name],
  }))
}

const isBoolean = (v: unknown): boolean => v === null || typeof v === 'boolean'
/** A number joi's schema above takes: finite, safe, within [min, max], whole when `integer`; null as opt() allows. */
const numberIn = (min: number, max: number, integer = false) => (v: unknown): boolean =>
  v === null || (typeof v === 'number' && v >= min && v <= max && (integer ? Number.isSafeInteger(v) : Number.isFinite(v)))

/** Quick checks of the scalar fields, each accepting only what its schema in fieldsFor accepts (joi then is skipped). */
const QUICK_SCALARS: Record<string, (value: unknown) => boolean> = {
  model: v => typeof v === 'string' && v.length >= 1,
  stream: isBoolean,
  logprobs: isBoolean,
  temperature: numberIn(0, 2),
  top_p: numberIn(0, 1),
  top_k: numberIn(1, Number.MAX_SAFE_INTEGER, true),
  max_tokens: numberIn(1, Number.MAX_SAFE_INTEGER, true),
  max_completion_tokens: numberIn(1, Number.MAX_SAFE_INTEGER, true),
  n: numberIn(1, 8, true),
  seed: numberIn(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, true),
  presence_penalty: numberIn(-2, 2),
  frequency_penalty: numberIn(-2, 2),
  top_logprobs: numberIn(0, 20, true),
}

/** `messages.3.content` → `messages[3].content`, as OpenAI names params. */
function paramName (path: ReadonlyArray<string | number>): string {
  return path.map((p, i) => typeof p === 'number' ? `[${p}]` : (i === 0 ? p : `.${p}`)).join('')
}

export function createChatRequestValidator (limits: Partial<ChatSchemaLimits> = {}): (body: unknown) => ChatRequest {
  const resolved = { ...DEFAULT_CHAT_LIMITS, ...limits }
  for (const [name, value] of Object.entries(resolved)) {
    if (!Number.isSafeInteger(value) || value < 1) throw new ConfigurationError(`chatLimits.${name}`, `createProxy: chatLimits.${name} must be a positive integer`)
  }
  // Built on the first request, so a proxy that serves no chat completion never loads joi (lib/load-package.ts).
  let fields: Field[] | undefined
  return function validateChatRequest (body) {
    if (body === undefined) throw invalidParam('The request body is empty; send a JSON object with `model` and `messages`', null)
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalidParam('The request body must be a JSON object', null)
    // Unknown fields are accepted and passed through untouched, like every valid one (no conversion).
    const given = body as Record<string, unknown>
    // Before any part is validated: validating them costs time too.
    if (countParts(given.messages) > resolved.maxTotalParts) throw tooManyParts(resolved.maxTotalParts)
    fields ??= fieldsFor(resolved)
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
