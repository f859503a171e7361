// A validated Responses request (its input items, a previous response's first) → a Gemini GenerateContentRequest
// (docs/responses.md, "Request"). Pure but for image URLs, which are fetched through the given fetcher.
//
//  - `instructions`, then system and developer messages in order → systemInstruction
//  - user messages → user turns; assistant messages, function and custom tool calls → model turns; tool outputs →
//    functionResponse parts in one user turn; adjacent turns of one role are merged
//  - reasoning items give back the thought signatures sealed in their encrypted_content (encrypted-content.ts);
//    calls of the active loop still without one get Google's placeholder (lib/proxy/thought-signatures.ts)
//  - tools: functions, namespace members (flattened into one name), custom tools (one string argument `input`),
//    web_search → googleSearch under the one search rule (lib/proxy/search-tools.ts)
import type { GeminiContent, GeminiPart, GeminiRequest } from '../gemini/hub.ts'
import type { ModelName } from '../models/name.ts'
import { chatThinking } from '../models/thinking.ts'
import { searchOutcome } from '../search-tools.ts'
import { addPlaceholderSignatures } from '../thought-signatures.ts'
import { HEAD_BYTES, parseDataUrl } from '../images/data-url.ts'
import { imageTypeOf } from '../images/bytes.ts'
import type { ImageAllowance } from '../images/fetch.ts'
import type { ContentOptions } from '../call/content-options.ts'
import { isGatehouseError, fail } from '../../errors.ts'
import { jsonAllowance, parseJson } from '../../http/json-body.ts'
import type { JsonAllowance } from '../../http/json-body.ts'
import { declaredTools, invalidParam } from './request-schema.ts'
import type { InputItem, ResponsesRequest, ResponsesTool, ResponsesToolChoice } from './request-schema.ts'
import type { SignatureSealer } from './encrypted-content.ts'

type Part = GeminiPart
type Content = GeminiContent

/** How a Gemini function name is answered: the client's tool kind, name and namespace. */
export interface ToolName { kind: 'function' | 'custom', name: string, namespace?: string }

export interface GeminiTranslation {
  request: GeminiRequest
  /** Gemini function name → the client's tool, for the calls in the answer. */
  tools: Map<string, ToolName>
}

export interface TranslateOptions extends ContentOptions {
  /** Opens reasoning items' encrypted_content. */
  sealer: SignatureSealer
  /** Who the request runs as ("operator" or a user id): the owner sealed items are bound to. */
  owner: string
  /** Told of each encrypted_content that did not open (altered, another gateway's, another owner's): it is ignored. */
  onUnopenedReasoning?: () => void
  /** The turn asks for a compaction (Codex's remote compaction): the model summarises instead of answering. */
  compaction?: boolean
}

/** What the model is asked on a compaction turn; its answer is sealed in the one compaction item. */
export const COMPACTION_PROMPT = 'Summarise the conversation so far for your own later use: the task, decisions made, files and ' +
  'commands involved, results, and what remains to do. Answer with the summary only.'

/** A compaction turn: its input ends with a compaction_trigger item (Codex's remote compaction v2). */
export function isCompactionTurn (items: readonly InputItem[]): boolean {
  return items.length > 0 && items[items.length - 1].type === 'compaction_trigger'
}

/** The web search tool types answered with Google Search grounding. */
export const WEB_SEARCH_TOOLS = ['web_search', 'web_search_preview', 'web_search_2025_08_26', 'web_search_preview_2025_03_11']

/** The one Gemini name of a namespaced tool (docs/responses.md, "Request"). */
export function geminiToolName (name: string, namespace?: string): string {
  if (namespace === undefined || namespace === '') return name
  return namespace.endsWith('_') ? namespace + name : `${namespace}__${name}`
}

/** The request's input as items: a string is one user message. */
export function inputItems (body: Pick<ResponsesRequest, 'input'>): InputItem[] {
  if (body.input === undefined || body.input === null) return []
  if (typeof body.input === 'string') return [{ type: 'message', role: 'user', content: body.input }]
  return body.input
}

const itemType = (item: InputItem): string | undefined => item.type ?? (item.role !== undefined ? 'message' : undefined)

function isHttpUrl (url: string): boolean {
  return /^https?:\/\//i.test(url)
}

/** How many http(s) image URLs the items ask the proxy to fetch. */
export function imageUrlCount (items: readonly InputItem[]): number {
  let count = 0
  for (const item of items) {
    if (itemType(item) !== 'message' || !Array.isArray(item.content)) continue
    for (const part of item.content as Part[]) if (part.type === 'input_image' && typeof part.image_url === 'string' && isHttpUrl(part.image_url)) count++
  }
  return count
}

interface PartContext extends TranslateOptions {
  imageAllowance?: ImageAllowance
  partAllowance?: { remaining: number, total: number }
}

const FILE_TYPES: Record<string, string> = { pdf: 'application/pdf', txt: 'text/plain', md: 'text/markdown', csv: 'text/csv', html: 'text/html', json: 'application/json', png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', webp: 'image/webp' }

function imagePart (declared: string, base64: string, head: Uint8Array, param: string): Part {
  const type = imageTypeOf(declared, head)
  if (!('mimeType' in type)) throw invalidParam(`Invalid image: ${type.error}`, param)
  return { inlineData: { mimeType: type.mimeType, data: base64 } }
}

function dataUrlPart (url: string, param: string, imagesOnly: boolean): Part {
  let data
  try {
    data = parseDataUrl(url)
  } catch (err) {
    throw invalidParam(`Invalid data URL: ${(err as Error).message}`, param)
  }
  if (data.mimeType.startsWith('image/') || imagesOnly) return imagePart(data.mimeType, data.base64, data.head, param)
  return { inlineData: { mimeType: data.mimeType, data: data.base64 } }
}

/** One content part → Gemini parts ([] for a part the gateway does not use). */
async function contentPart (part: Part, ctx: PartContext, param: string): Promise<Part[]> {
  const allowance = ctx.partAllowance
  if (allowance !== undefined && --allowance.remaining < 0) {
    throw fail('TOO_MANY_PARTS', `A request may hold at most ${allowance.total} content parts, all items together`, { param: 'input' })
  }
  switch (part.type) {
    case 'input_text':
    case 'output_text':
    case 'text':
    case 'summary_text':
      return typeof part.text === 'string' && part.text !== '' ? [{ text: part.text }] : []
    case 'refusal':
      return typeof part.refusal === 'string' && part.refusal !== '' ? [{ text: part.refusal }] : []
    case 'input_image': {
      const url = part.image_url
      const urlParam = `${param}.image_url`
      if (typeof url !== 'string') throw invalidParam('Uploaded file ids are not supported; send the image as image_url (a data: or http(s) URL)', `${param}.file_id`)
      if (/^data:/i.test(url)) return [dataUrlPart(url, urlParam, true)]
      if (!isHttpUrl(url)) throw invalidParam('Image URLs must be http(s) or data: URLs', urlParam)
      if (ctx.fetchImage === undefined) throw invalidParam('Image URLs are not fetched by this proxy; send the image as a data: URL', urlParam)
      try {
        const image = await ctx.fetchImage(url, ctx.signal, ctx.imageAllowance)
        return [{ inlineData: { mimeType: image.mimeType, data: image.bytes.toString('base64') } }]
      } catch (err) {
        if (isGatehouseError(err)) err.param = urlParam
        throw err
      }
    }
    case 'input_file': {
      const dataParam = `${param}.file_data`
      if (typeof part.file_data !== 'string') throw invalidParam('Only inline files are supported; send the file as file_data', typeof part.file_url === 'string' ? `${param}.file_url` : `${param}.file_id`)
      if (/^data:/i.test(part.file_data)) return [dataUrlPart(part.file_data, dataParam, false)]
      const ext = typeof part.filename === 'string' ? part.filename.split('.').pop()?.toLowerCase() ?? '' : ''
      const mimeType = FILE_TYPES[ext]
      const base64 = part.file_data.replace(/\s+/g, '')
      if (mimeType === undefined || !/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) throw invalidParam('file_data must be a data: URL with a media type (or base64 with a .pdf/.txt/... filename)', dataParam)
      if (mimeType.startsWith('image/')) return [imagePart(mimeType, base64, Buffer.from(base64.slice(0, (HEAD_BYTES / 3) * 4), 'base64'), dataParam)]
      return [{ inlineData: { mimeType, data: base64 } }]
    }
    default:
      return []
  }
}

async function messageParts (content: unknown, ctx: PartContext, param: string): Promise<Part[]> {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }]
  if (!Array.isArray(content)) return []
  const parts = await Promise.all((content as Part[]).map((part, k) => contentPart(part, ctx, `${param}.content[${k}]`)))
  return parts.flat()
}

function textOf (content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return (content as Part[]).map(p => typeof p.text === 'string' ? p.text : '').join('')
}

// Tool arguments and outputs are JSON inside strings: parsed within one body's limits, else kept as text.
function parseArguments (text: unknown, allowance: JsonAllowance): Record<string, unknown> {
  if (typeof text !== 'string' || text.trim() === '') return {}
  try {
    const value = parseJson(text, allowance)
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value as Record<string, unknown> : { value }
  } catch {
    return {}
  }
}

function outputValue (output: unknown, allowance: JsonAllowance): unknown {
  const text = textOf(output)
  try {
    return parseJson(text, allowance)
  } catch {
    return text
  }
}

/** Input items → contents and the system text. */
async function convertItems (items: readonly InputItem[], instructions: string | null | undefined, ctx: PartContext): Promise<{ contents: Content[], system: string[] }> {
  const system: string[] = []
  if (typeof instructions === 'string' && instructions !== '') system.push(instructions)
  // The signatures every reasoning item carries, by call id, wherever the item stands.
  const signatures = new Map<string, string>()
  for (const item of items) {
    if (itemType(item) !== 'reasoning' || typeof item.encrypted_content !== 'string') continue
    const opened = ctx.sealer.open(ctx.owner, item.encrypted_content)
    if (opened === undefined) ctx.onUnopenedReasoning?.()
    else for (const [id, signature] of Object.entries(opened.calls)) signatures.set(id, signature)
  }
  const partsOf = await Promise.all(items.map((item, i) => {
    const role = item.role
    return itemType(item) === 'message' && (role === 'user' || role === 'assistant') ? messageParts(item.content, ctx, `input[${i}]`) : Promise.resolve([])
  }))

  const turns: Array<{ role: 'user' | 'model', parts: Part[], tool: boolean }> = []
  const push = (role: 'user' | 'model', parts: Part[], tool = false): void => {
    if (parts.length === 0) return
    const last = turns[turns.length - 1]
    if (last !== undefined && last.role === role && last.tool === tool) last.parts.push(...parts)
    else turns.push({ role, parts, tool })
  }
  const calls = new Map<string, string>()
  const json = jsonAllowance()
  items.forEach((item, i) => {
    const type = itemType(item)
    if (type === 'message') {
      if (item.role === 'system' || item.role === 'developer') {
        const text = textOf(item.content)
        if (text !== '') system.push(text)
      } else {
        push(item.role === 'assistant' ? 'model' : 'user', partsOf[i])
      }
    } else if (type === 'function_call' || type === 'custom_tool_call') {
      const name = geminiToolName(item.name as string, typeof item.namespace === 'string' ? item.namespace : undefined)
      const callId = item.call_id as string
      const args = type === 'function_call' ? parseArguments(item.arguments, json) : { input: typeof item.input === 'string' ? item.input : '' }
      const part: Part = { functionCall: { name, args } }
      const signature = signatures.get(callId)
      if (signature !== undefined) part.thoughtSignature = signature
      calls.set(callId, name)
      push('model', [part])
    } else if (type === 'function_call_output' || type === 'custom_tool_call_output') {
      const name = calls.get(item.call_id as string)
      if (name === undefined) throw invalidParam(`No tool call found for ${type} with call_id ${String(item.call_id)}.`, `input[${i}].call_id`)
      push('user', [{ functionResponse: { name, response: { output: outputValue(item.output, json) } } }], true)
    } else if (type === 'compaction' && typeof item.encrypted_content === 'string') {
      // A compaction item restores the summary it sealed, in its place; one that does not open is ignored.
      const summary = ctx.sealer.open(ctx.owner, item.encrypted_content)?.summary
      if (summary === undefined) ctx.onUnopenedReasoning?.()
      else push('user', [{ text: `Summary of the conversation before this point:\n${summary}` }])
    }
    // reasoning items gave their signatures above; other item types are skipped.
  })
  // Tool outputs and prompts of one user turn go together, as Gemini wants the responses of parallel calls together.
  const contents: Content[] = []
  for (const turn of turns) {
    const last = contents[contents.length - 1]
    if (last !== undefined && last.role === turn.role) last.parts.push(...turn.parts)
    else contents.push({ role: turn.role, parts: turn.parts })
  }
  return { contents, system }
}

interface ToolMapping {
  declarations: Array<Record<string, unknown>>
  names: Map<string, ToolName>
  webSearch: boolean
}

const CUSTOM_INPUT_DESCRIPTION = 'The raw input for this tool, exactly as the tool expects it (plain text, not JSON).'

function declare (tool: ResponsesTool, namespace: string | undefined, mapping: ToolMapping): void {
  if (tool.type !== 'function' && tool.type !== 'custom') return
  const name = geminiToolName(tool.name as string, namespace)
  const declaration: Record<string, unknown> = { name }
  let description = tool.description ?? undefined
  if (tool.type === 'custom') {
    // A freeform tool takes its input as one string; its grammar, when it has one, is told to the model in words.
    const format = tool.format
    if (format?.type === 'grammar' && typeof format.definition === 'string') {
      description = `${description ?? ''}\n\nThe input must follow this ${typeof format.syntax === 'string' ? format.syntax : ''} grammar:\n${format.definition}`.trim()
    }
    declaration.parametersJsonSchema = { type: 'object', properties: { input: { type: 'string', description: CUSTOM_INPUT_DESCRIPTION } }, required: ['input'] }
  } else if (tool.parameters !== undefined && tool.parameters !== null) {
    declaration.parametersJsonSchema = tool.parameters
  }
  if (description !== undefined && description !== '') declaration.description = description
  mapping.declarations.push(declaration)
  mapping.names.set(name, { kind: tool.type, name: tool.name as string, ...(namespace === undefined ? {} : { namespace }) })
}

function mapTools (tools: readonly ResponsesTool[] | null | undefined): ToolMapping {
  const mapping: ToolMapping = { declarations: [], names: new Map(), webSearch: false }
  for (const tool of tools ?? []) {
    if (WEB_SEARCH_TOOLS.includes(tool.type)) mapping.webSearch = true
    else if (tool.type === 'namespace') for (const member of tool.tools ?? []) declare(member, tool.name, mapping)
    else declare(tool, undefined, mapping)
  }
  return mapping
}

/** tool_choice → functionCallingConfig (docs/responses.md, "Request"). */
function toolConfigOf (choice: ResponsesToolChoice | null | undefined, mapping: ToolMapping): Record<string, unknown> | undefined {
  if (choice === undefined || choice === null || mapping.declarations.length === 0) return undefined
  if (typeof choice === 'string') return { functionCallingConfig: { mode: choice === 'none' ? 'NONE' : choice === 'required' ? 'ANY' : 'AUTO' } }
  if ((choice.type === 'function' || choice.type === 'custom') && typeof choice.name === 'string') {
    return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [geminiToolName(choice.name, (choice as { namespace?: string }).namespace)] } }
  }
  if (choice.type === 'allowed_tools' && Array.isArray(choice.tools)) {
    const names = choice.tools.filter(t => typeof t.name === 'string').map(t => geminiToolName(t.name as string, (t as { namespace?: string }).namespace))
    return { functionCallingConfig: { mode: choice.mode === 'required' ? 'ANY' : 'AUTO', ...(names.length > 0 ? { allowedFunctionNames: names } : {}) } }
  }
  return undefined
}

function generationConfigOf (body: ResponsesRequest, model: ModelName): Record<string, unknown> {
  const config: Record<string, unknown> = {}
  if (typeof body.temperature === 'number') config.temperature = body.temperature
  if (typeof body.top_p === 'number') config.topP = body.top_p
  if (typeof body.max_output_tokens === 'number') config.maxOutputTokens = body.max_output_tokens
  const format = body.text?.format
  if (format?.type === 'json_object') config.responseMimeType = 'application/json'
  if (format?.type === 'json_schema') {
    config.responseMimeType = 'application/json'
    config.responseJsonSchema = format.schema
  }
  const thinking = chatThinking(model, body.reasoning?.effort)
  if (thinking !== undefined) {
    // Thought summaries are sent only when the request asks for them, as OpenAI's reasoning.summary.
    const summary = body.reasoning?.summary
    thinking.includeThoughts = summary !== undefined && summary !== null
    config.thinkingConfig = thinking
  }
  return config
}

/** The Gemini request for `items` (the previous response's items first, then the request's input). */
export async function toGeminiRequest (body: ResponsesRequest, items: readonly InputItem[], model: ModelName, options: TranslateOptions): Promise<GeminiTranslation> {
  if (options.maxImageUrls !== undefined && imageUrlCount(items) > options.maxImageUrls) {
    throw invalidParam(`At most ${options.maxImageUrls} image URLs are fetched per request; send the others as data: URLs`, 'input')
  }
  const ctx: PartContext = {
    ...options,
    imageAllowance: options.maxImageBytes === undefined ? undefined : { remaining: options.maxImageBytes, total: options.maxImageBytes },
    partAllowance: options.maxParts === undefined ? undefined : { remaining: options.maxParts, total: options.maxParts },
  }
  const { contents, system } = await convertItems(items, body.instructions, ctx)
  if (contents.length === 0) throw invalidParam('input must hold at least one message or tool output with content', 'input')
  // Families that validate thought signatures get placeholders for calls whose signature was lost.
  if (model.family === 'gemini-3' || model.family === 'other') addPlaceholderSignatures(contents)
  if (options.compaction === true) {
    const last = contents[contents.length - 1]
    if (last.role === 'user') last.parts.push({ text: COMPACTION_PROMPT })
    else contents.push({ role: 'user', parts: [{ text: COMPACTION_PROMPT }] })
  }
  const request: GeminiRequest = { contents }
  if (system.length > 0) request.systemInstruction = { parts: [{ text: system.join('\n\n') }] }

  const mapping = mapTools(declaredTools(body))
  const tools: Array<Record<string, unknown>> = []
  if (mapping.declarations.length > 0) tools.push({ functionDeclarations: mapping.declarations })
  const search = searchOutcome(model.search || mapping.webSearch, mapping.declarations.length > 0)
  if (search === 'add') tools.push({ googleSearch: {} })
  else if (search === 'dropped') options.onSearchDropped?.()
  if (tools.length > 0) request.tools = tools
  // The tools stay declared for the calls in the history, but a compaction turn may call none.
  const toolConfig = options.compaction === true && mapping.declarations.length > 0 ? { functionCallingConfig: { mode: 'NONE' } } : toolConfigOf(body.tool_choice, mapping)
  if (toolConfig !== undefined) request.toolConfig = toolConfig

  request.safetySettings = options.safetySettings.map(s => ({ ...s }))
  const generationConfig = generationConfigOf(body, model)
  if (Object.keys(generationConfig).length > 0) request.generationConfig = generationConfig
  return { request, tools: mapping.names }
}
