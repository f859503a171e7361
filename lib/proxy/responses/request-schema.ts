// The OpenAI Responses request body (docs/responses.md, "Request"), checked by hand: the fields the translation
// reads must have the right type (a 400 in OpenAI's error shape naming the field), everything else is accepted and
// ignored, and input items of a type the gateway does not know are skipped, never a 400 (clients such as Codex send
// item types that come and go with their versions).
import { REASONING_EFFORTS } from '../models/thinking.ts'
import type { ReasoningEffort } from '../models/thinking.ts'
import { fail } from '../../errors.ts'
import type { GatehouseError } from '../../errors.ts'

export type InputItem = Record<string, unknown> & { type?: string }

export interface ResponsesTool {
  type: string
  name?: string
  description?: string | null
  parameters?: Record<string, unknown> | null
  strict?: boolean | null
  /** `namespace` tools: the functions and custom tools inside. */
  tools?: ResponsesTool[]
  /** `custom` tools: the input's grammar or text format. */
  format?: Record<string, unknown> | null
}

export type ResponsesToolChoice = 'none' | 'auto' | 'required' | { type: string, name?: string, mode?: string, tools?: Array<{ type: string, name?: string }> }

export interface TextFormat { type: 'text' | 'json_object' | 'json_schema', name?: string, schema?: Record<string, unknown>, strict?: boolean | null, description?: string }

export interface ResponsesRequest {
  model: string
  instructions?: string | null
  /** A string is one user message. */
  input?: string | InputItem[]
  tools?: ResponsesTool[] | null
  tool_choice?: ResponsesToolChoice | null
  parallel_tool_calls?: boolean | null
  reasoning?: { effort?: ReasoningEffort | null, summary?: string | null } | null
  text?: { format?: TextFormat | null, verbosity?: string | null } | null
  max_output_tokens?: number | null
  temperature?: number | null
  top_p?: number | null
  stream?: boolean | null
  /** Default true, as OpenAI's. */
  store?: boolean | null
  previous_response_id?: string | null
  include?: string[] | null
  prompt_cache_key?: string | null
  metadata?: Record<string, string> | null
  user?: string | null
}

export interface ResponsesLimits {
  /** Most input items in one request, after a previous response's are added. Default 20000. */
  maxItems: number
  /** Most tools, namespace members counted one by one. Default 512. */
  maxTools: number
}

export const DEFAULT_RESPONSES_LIMITS: ResponsesLimits = { maxItems: 20000, maxTools: 512 }

export function invalidParam (message: string, param: string | null): GatehouseError {
  return fail('INVALID_INPUT', message, { param })
}

function isObject (value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

const absent = (value: unknown): boolean => value === undefined || value === null

function checkType (body: Record<string, unknown>, field: string, type: 'string' | 'number' | 'boolean' | 'object' | 'array', param = field): void {
  const value = body[field]
  if (absent(value)) return
  const ok = type === 'array' ? Array.isArray(value) : type === 'object' ? isObject(value) : typeof value === type && (type !== 'number' || Number.isFinite(value))
  if (!ok) throw invalidParam(`Invalid type for '${param}': expected ${type === 'object' ? 'an object' : type === 'array' ? 'an array' : `a ${type}`}.`, param)
}

function checkTool (tool: unknown, param: string): ResponsesTool {
  if (!isObject(tool) || typeof tool.type !== 'string') throw invalidParam(`Invalid value for '${param}': a tool is an object with a string 'type'.`, param)
  if ((tool.type === 'function' || tool.type === 'custom' || tool.type === 'namespace') && (typeof tool.name !== 'string' || tool.name === '')) {
    throw invalidParam(`Missing required parameter: '${param}.name'.`, `${param}.name`)
  }
  checkType(tool, 'parameters', 'object', `${param}.parameters`)
  checkType(tool, 'description', 'string', `${param}.description`)
  if (tool.type === 'namespace') {
    if (!Array.isArray(tool.tools)) throw invalidParam(`Missing required parameter: '${param}.tools'.`, `${param}.tools`)
    tool.tools.forEach((member, i) => checkTool(member, `${param}.tools[${i}]`))
  }
  return tool as unknown as ResponsesTool
}

function checkItem (item: unknown, param: string): void {
  if (!isObject(item)) throw invalidParam(`Invalid type for '${param}': expected an object.`, param)
  checkType(item, 'type', 'string', `${param}.type`)
  const type = item.type ?? (item.role !== undefined ? 'message' : undefined)
  if (type === 'message') {
    if (!['user', 'assistant', 'system', 'developer'].includes(item.role as string)) {
      throw invalidParam(`Invalid value for '${param}.role': expected one of user, assistant, system, developer.`, `${param}.role`)
    }
    if (typeof item.content !== 'string' && !Array.isArray(item.content)) throw invalidParam(`Invalid type for '${param}.content': expected a string or an array.`, `${param}.content`)
    if (Array.isArray(item.content)) {
      item.content.forEach((part, k) => {
        if (!isObject(part) || typeof part.type !== 'string') throw invalidParam(`Invalid value for '${param}.content[${k}]': a content part is an object with a string 'type'.`, `${param}.content[${k}]`)
      })
    }
  } else if (type === 'function_call' || type === 'custom_tool_call') {
    for (const field of ['call_id', 'name']) {
      if (typeof item[field] !== 'string' || item[field] === '') throw invalidParam(`Missing required parameter: '${param}.${field}'.`, `${param}.${field}`)
    }
    checkType(item, type === 'function_call' ? 'arguments' : 'input', 'string', `${param}.${type === 'function_call' ? 'arguments' : 'input'}`)
  } else if (type === 'function_call_output' || type === 'custom_tool_call_output') {
    if (typeof item.call_id !== 'string' || item.call_id === '') throw invalidParam(`Missing required parameter: '${param}.call_id'.`, `${param}.call_id`)
    if (typeof item.output !== 'string' && !Array.isArray(item.output)) throw invalidParam(`Invalid type for '${param}.output': expected a string or an array.`, `${param}.output`)
  } else if (type === 'reasoning') {
    checkType(item, 'encrypted_content', 'string', `${param}.encrypted_content`)
  } else if (type === 'compaction') {
    if (typeof item.encrypted_content !== 'string') throw invalidParam(`Missing required parameter: '${param}.encrypted_content'.`, `${param}.encrypted_content`)
  } else if (type === 'additional_tools') {
    if (!Array.isArray(item.tools)) throw invalidParam(`Missing required parameter: '${param}.tools'.`, `${param}.tools`)
    item.tools.forEach((tool, k) => checkTool(tool, `${param}.tools[${k}]`))
  }
}

/** Every tool a request declares: `tools`, then those of `additional_tools` input items (Responses Lite), in order. */
export function declaredTools (body: Pick<ResponsesRequest, 'tools' | 'input'>): ResponsesTool[] {
  const tools = [...(body.tools ?? [])]
  if (Array.isArray(body.input)) for (const item of body.input) if (item.type === 'additional_tools' && Array.isArray(item.tools)) tools.push(...item.tools as ResponsesTool[])
  return tools
}

/** A validator for request bodies: the body typed as a ResponsesRequest, or a 400 naming the field. */
export function createResponsesRequestValidator (limits: Partial<ResponsesLimits> = {}): (body: unknown) => ResponsesRequest {
  const { maxItems, maxTools } = { ...DEFAULT_RESPONSES_LIMITS, ...limits }
  return function validateResponses (body) {
    if (!isObject(body)) throw invalidParam('The request body must be a JSON object.', null)
    if (typeof body.model !== 'string' || body.model === '') throw invalidParam("Missing required parameter: 'model'.", 'model')
    if (!absent(body.input) && typeof body.input !== 'string' && !Array.isArray(body.input)) throw invalidParam("Invalid type for 'input': expected a string or an array of items.", 'input')
    if (Array.isArray(body.input)) {
      if (body.input.length > maxItems) throw invalidParam(`'input' may hold at most ${maxItems} items.`, 'input')
      body.input.forEach((item, i) => checkItem(item, `input[${i}]`))
    }
    checkType(body, 'instructions', 'string')
    for (const field of ['max_output_tokens', 'temperature', 'top_p']) checkType(body, field, 'number')
    if (!absent(body.max_output_tokens) && (!Number.isSafeInteger(body.max_output_tokens) || (body.max_output_tokens as number) < 1)) {
      throw invalidParam("Invalid value for 'max_output_tokens': expected a positive integer.", 'max_output_tokens')
    }
    for (const field of ['stream', 'store', 'parallel_tool_calls']) checkType(body, field, 'boolean')
    for (const field of ['previous_response_id', 'prompt_cache_key', 'user']) checkType(body, field, 'string')
    checkType(body, 'include', 'array')
    checkType(body, 'metadata', 'object')
    checkType(body, 'reasoning', 'object')
    if (isObject(body.reasoning) && !absent(body.reasoning.effort) && !REASONING_EFFORTS.includes(body.reasoning.effort as ReasoningEffort)) {
      throw invalidParam(`Invalid value for 'reasoning.effort': expected one of ${REASONING_EFFORTS.join(', ')}.`, 'reasoning.effort')
    }
    checkType(body, 'text', 'object')
    if (isObject(body.text) && !absent(body.text.format)) {
      const format = body.text.format
      if (!isObject(format) || !['text', 'json_object', 'json_schema'].includes(format.type as string)) {
        throw invalidParam("Invalid value for 'text.format.type': expected one of text, json_object, json_schema.", 'text.format.type')
      }
      if (format.type === 'json_schema' && !isObject(format.schema)) throw invalidParam("Missing required parameter: 'text.format.schema'.", 'text.format.schema')
    }
    checkType(body, 'tools', 'array')
    if (Array.isArray(body.tools)) body.tools.forEach((tool, i) => checkTool(tool, `tools[${i}]`))
    const count = declaredTools(body as Pick<ResponsesRequest, 'tools' | 'input'>).reduce((n, tool) => n + (tool.type === 'namespace' ? tool.tools?.length ?? 0 : 1), 0)
    if (count > maxTools) throw invalidParam(`A request may declare at most ${maxTools} tools.`, 'tools')
    if (!absent(body.tool_choice) && typeof body.tool_choice !== 'string' && !isObject(body.tool_choice)) {
      throw invalidParam("Invalid type for 'tool_choice': expected a string or an object.", 'tool_choice')
    }
    if (typeof body.tool_choice === 'string' && !['none', 'auto', 'required'].includes(body.tool_choice)) {
      throw invalidParam("Invalid value for 'tool_choice': expected none, auto, required or an object.", 'tool_choice')
    }
    return body as unknown as ResponsesRequest
  }
}
