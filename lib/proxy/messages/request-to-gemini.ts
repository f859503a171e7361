// An Anthropic Messages request → a Gemini GenerateContentRequest (docs/messages.md, "Request").
//  - system (string or text blocks) and the system entries that open `messages` → systemInstruction; a system
//    entry later in the conversation → a user-turn text part in its place, between <system> tags
//  - user → user turn, assistant → model turn
//  - text, image (base64 or URL, fetched like chat-completions image URLs), document (PDF or text) → parts
//  - tool_use → functionCall, its thought signature restored from the tool_use id (or from the turn's thinking
//    block's signature); tool_result → functionResponse named after the call it answers, its images beside it
//  - thinking text and redacted_thinking are not sent back: Gemini takes only their signatures
//  - tools → functionDeclarations (parametersJsonSchema takes JSON Schema as it is); web_search_* → googleSearch
//  - thinking / output_config.effort → thinkingConfig through the model's own thinking rules
import type { GeminiContent, GeminiPart, GeminiRequest } from '../gemini/hub.ts'
import type { ModelName } from '../models/name.ts'
import { chatThinking } from '../models/thinking.ts'
import type { ReasoningEffort, ThinkingConfig } from '../models/thinking.ts'
import { imageTypeOf } from '../images/bytes.ts'
import { HEAD_BYTES, isBase64 } from '../images/data-url.ts'
import type { ImageAllowance } from '../images/fetch.ts'
import type { ContentOptions } from '../call/content-options.ts'
import { searchOutcome } from '../search-tools.ts'
import { thoughtSignatureOf } from '../tool-call-ids.ts'
import { addPlaceholderSignatures } from '../thought-signatures.ts'
import { fail, isGatehouseError } from '../../errors.ts'
import type { GatehouseError } from '../../errors.ts'
import type { Block, MessagesRequest, ToolChoice } from './request-schema.ts'

type Part = GeminiPart
type Content = GeminiContent

/** Messages' own part limit is its schema's (request-schema.ts); the rest are the call's (ContentOptions). */
export type MessagesTranslateOptions = ContentOptions

function invalid (message: string, param: string): GatehouseError {
  return fail('INVALID_INPUT', message, { param })
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

function base64Of (data: string, param: string): string {
  const compact = /\s/.test(data) ? data.replace(/\s+/g, '') : data
  if (compact === '' || !isBase64(compact, BASE64)) throw invalid('The data is not base64', param)
  return compact
}

/** Server tools that mean Google Search grounding (web_search_20250305 and later versions). */
export function isWebSearchTool (type: string | undefined): boolean {
  return type !== undefined && type.startsWith('web_search')
}

/**
 * Anthropic's thinking settings → one reasoning effort: `disabled` is none, a budget is bucketed (the model's
 * own rules in lib/proxy/models/thinking.ts turn the effort into its budget or level), `adaptive` takes
 * output_config.effort or the model's default. undefined: the model's default.
 */
export function effortOf (body: Pick<MessagesRequest, 'thinking' | 'output_config'> & Partial<Pick<MessagesRequest, 'messages'>>): ReasoningEffort | undefined {
  const effort = body.messages?.at(-1)?.output_config?.effort ?? body.output_config?.effort ?? undefined
  const thinking = body.thinking
  if (thinking?.type === 'disabled') return 'none'
  if (thinking?.type === 'enabled') {
    if (effort !== undefined) return effort
    const budget = thinking.budget_tokens
    return budget < 4096 ? 'low' : budget < 16384 ? 'medium' : 'high'
  }
  return effort
}

/** The thinkingConfig: thoughts are shown only when the request turned thinking on, as Anthropic does. */
export function thinkingOf (body: MessagesRequest, model: ModelName): ThinkingConfig | undefined {
  const config = chatThinking(model, effortOf(body))
  if (config === undefined) return undefined
  const show = body.thinking?.type === 'enabled' || body.thinking?.type === 'adaptive'
  const out: ThinkingConfig = { ...config }
  if (show && out.thinkingBudget !== 0) out.includeThoughts = true
  else delete out.includeThoughts
  return Object.keys(out).length > 0 ? out : undefined
}

function generationConfigOf (body: MessagesRequest, model: ModelName): Record<string, unknown> {
  const config: Record<string, unknown> = {}
  if (body.max_tokens !== undefined) config.maxOutputTokens = body.max_tokens
  if (typeof body.temperature === 'number') config.temperature = body.temperature
  if (typeof body.top_p === 'number') config.topP = body.top_p
  if (typeof body.top_k === 'number') config.topK = body.top_k
  if (Array.isArray(body.stop_sequences) && body.stop_sequences.length > 0) config.stopSequences = body.stop_sequences
  const format = body.output_config?.format
  if (format !== undefined && format !== null) {
    config.responseMimeType = 'application/json'
    config.responseJsonSchema = format.schema
  }
  const thinking = thinkingOf(body, model)
  if (thinking !== undefined) config.thinkingConfig = thinking
  return config
}

interface Budget { urls: number, allowance?: ImageAllowance }

async function imagePart (block: Extract<Block, { type: 'image' }>, param: string, options: MessagesTranslateOptions, budget: Budget): Promise<Part> {
  const source = block.source
  if (source.type === 'base64') {
    const data = base64Of(source.data, `${param}.source.data`)
    const type = imageTypeOf(source.media_type, Buffer.from(data.slice(0, (HEAD_BYTES / 3) * 4), 'base64'))
    if (!('mimeType' in type)) throw invalid(`Invalid image: ${type.error}`, param)
    return { inlineData: { mimeType: type.mimeType, data } }
  }
  if (!/^https?:\/\//i.test(source.url)) throw invalid('Image URLs must be http(s)', `${param}.source.url`)
  if (options.fetchImage === undefined) throw invalid('Image URLs are not fetched by this proxy; send the image as base64', `${param}.source.url`)
  if (options.maxImageUrls !== undefined && ++budget.urls > options.maxImageUrls) {
    throw invalid(`At most ${options.maxImageUrls} image URLs are fetched per request; send the others as base64`, 'messages')
  }
  try {
    const image = await options.fetchImage(source.url, options.signal, budget.allowance)
    return { inlineData: { mimeType: image.mimeType, data: image.bytes.toString('base64') } }
  } catch (err) {
    if (isGatehouseError(err)) err.param = `${param}.source.url`
    throw err
  }
}

function documentParts (block: Extract<Block, { type: 'document' }>, param: string): Part[] {
  const source = block.source
  switch (source.type) {
    case 'base64':
      return [{ inlineData: { mimeType: source.media_type, data: base64Of(source.data, `${param}.source.data`) } }]
    case 'text':
      return [{ text: source.data }]
    case 'content':
      return typeof source.content === 'string'
        ? [{ text: source.content }]
        : source.content.flatMap(b => b.type === 'text' ? [{ text: (b as { text: string }).text }] : [])
    case 'url':
      // Gemini fetches public document URLs itself only for some models; a clear refusal beats a failure upstream.
      throw invalid('Document URLs are not passed on; send the document as base64', `${param}.source.url`)
  }
}

const isUrlImage = (block: Block): boolean => block.type === 'image' && (block as Extract<Block, { type: 'image' }>).source.type === 'url'

/** How many image URLs the request asks the proxy to fetch, tool results' included. */
export function imageUrlCount (body: Pick<MessagesRequest, 'messages'>): number {
  let count = 0
  for (const message of body.messages) {
    if (typeof message.content === 'string') continue
    for (const block of message.content) {
      if (isUrlImage(block)) count++
      else if (block.type === 'tool_result') {
        const inner = (block as Extract<Block, { type: 'tool_result' }>).content
        if (Array.isArray(inner)) for (const b of inner) if (isUrlImage(b)) count++
      }
    }
  }
  return count
}

function toolResultText (content: string | Block[] | undefined): string {
  if (content === undefined) return ''
  if (typeof content === 'string') return content
  return content.filter(b => b.type === 'text').map(b => (b as { text: string }).text).join('\n')
}

interface Converted { contents: Content[], systemInstruction?: { parts: Array<{ text: string }> } }

/** The text of a system entry's text blocks, joined by blank lines; other blocks are skipped. */
function systemText (content: string | Block[]): string {
  if (typeof content === 'string') return content
  return content.flatMap(b => b.type === 'text' && (b as { text: string }).text !== '' ? [(b as { text: string }).text] : []).join('\n\n')
}

/** Function responses first in a user turn: a system note merged ahead of them must not split call and answer. */
function responsesFirst (contents: Content[]): void {
  for (const content of contents) {
    if (content.role !== 'user' || !content.parts.some(p => p.functionResponse !== undefined)) continue
    content.parts = [...content.parts.filter(p => p.functionResponse !== undefined), ...content.parts.filter(p => p.functionResponse === undefined)]
  }
}

async function convertMessages (body: MessagesRequest, options: MessagesTranslateOptions, placeholderSignatures: boolean): Promise<Converted> {
  const names = new Map<string, string>()
  const budget: Budget = { urls: 0, allowance: options.maxImageBytes === undefined ? undefined : { remaining: options.maxImageBytes, total: options.maxImageBytes } }
  const contents: Content[] = []
  const system: string[] = []
  const given = typeof body.system === 'string' ? body.system : body.system?.map(b => b.text).join('\n\n')
  if (given !== undefined && given !== '') system.push(given)
  let systemNotes = false
  for (let i = 0; i < body.messages.length; i++) {
    const message = body.messages[i]
    if (message.role === 'system') {
      const text = systemText(message.content)
      if (text === '') continue
      // Gemini has one systemInstruction: entries before the conversation join it, later ones stay in place.
      if (contents.length === 0) system.push(text)
      else {
        const last = contents.at(-1) as Content
        const note = { text: `<system>\n${text}\n</system>` }
        if (last.role === 'user') last.parts.push(note)
        else contents.push({ role: 'user', parts: [note] })
        systemNotes = true
      }
      continue
    }
    const role = message.role === 'assistant' ? 'model' : 'user'
    const param = `messages[${i}]`
    const blocks: Block[] = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content
    const parts: Part[] = []
    // A thinking block's signature belongs to the turn's first function call (where Gemini put it).
    let pendingSignature: string | undefined
    for (let j = 0; j < blocks.length; j++) {
      const block = blocks[j]
      const blockParam = `${param}.content[${j}]`
      switch (block.type) {
        case 'text': {
          const text = (block as { text: string }).text
          if (text !== '') parts.push({ text })
          break
        }
        case 'image':
          parts.push(await imagePart(block as Extract<Block, { type: 'image' }>, blockParam, options, budget))
          break
        case 'document':
          parts.push(...documentParts(block as Extract<Block, { type: 'document' }>, blockParam))
          break
        case 'thinking': {
          const signature = (block as { signature?: string }).signature
          if (role === 'model' && signature !== undefined && signature !== '') pendingSignature = signature
          break
        }
        case 'tool_use': {
          const use = block as Extract<Block, { type: 'tool_use' }>
          names.set(use.id, use.name)
          const part: Part = { functionCall: { name: use.name, args: use.input ?? {} } }
          const signature = thoughtSignatureOf(use.id) ?? pendingSignature
          if (signature !== undefined) part.thoughtSignature = signature
          pendingSignature = undefined
          parts.push(part)
          break
        }
        case 'tool_result': {
          const result = block as Extract<Block, { type: 'tool_result' }>
          const name = names.get(result.tool_use_id)
          if (name === undefined) throw invalid(`tool_result names tool_use_id ${result.tool_use_id}, which no earlier tool_use has`, blockParam)
          const text = toolResultText(result.content)
          parts.push({ functionResponse: { name, response: result.is_error === true ? { error: text } : { content: text } } })
          if (Array.isArray(result.content)) {
            for (let k = 0; k < result.content.length; k++) {
              const inner = result.content[k]
              if (inner.type === 'image') parts.push(await imagePart(inner as Extract<Block, { type: 'image' }>, `${blockParam}.content[${k}]`, options, budget))
            }
          }
          break
        }
        // redacted_thinking, server tool blocks and anything newer: nothing Gemini can take
      }
    }
    if (parts.length === 0) continue
    const last = contents.at(-1)
    // Gemini wants one turn per role in a row (parallel function responses together).
    if (last !== undefined && last.role === role) last.parts.push(...parts)
    else contents.push({ role, parts })
  }
  if (systemNotes) responsesFirst(contents)
  if (placeholderSignatures) addPlaceholderSignatures(contents)
  const converted: Converted = { contents }
  if (system.length > 0) converted.systemInstruction = { parts: [{ text: system.join('\n\n') }] }
  return converted
}

function toolConfigOf (choice: ToolChoice | undefined): Record<string, unknown> | undefined {
  if (choice === undefined || choice === null) return undefined
  if (choice.type === 'tool') return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.name] } }
  return { functionCallingConfig: { mode: choice.type === 'any' ? 'ANY' : choice.type === 'none' ? 'NONE' : 'AUTO' } }
}

export async function toGeminiRequest (body: MessagesRequest, model: ModelName, options: MessagesTranslateOptions): Promise<GeminiRequest> {
  // Families that validate thought signatures get placeholders for calls whose signature was lost.
  const placeholders = model.family === 'gemini-3' || model.family === 'other'
  const { contents, systemInstruction } = await convertMessages(body, options, placeholders)
  if (contents.length === 0) throw invalid('The messages hold nothing to send', 'messages')
  const request: GeminiRequest = { contents }
  if (systemInstruction !== undefined) request.systemInstruction = systemInstruction

  const declarations: Array<Record<string, unknown>> = []
  let webSearch = false
  for (const tool of body.tools ?? []) {
    if (isWebSearchTool(tool.type)) {
      webSearch = true
      continue
    }
    // Other typed server tools (bash, text editor, computer use) have no schema Gemini could call.
    if (tool.type !== undefined && tool.type !== 'custom') continue
    const declaration: Record<string, unknown> = { name: tool.name }
    if (tool.description !== undefined) declaration.description = tool.description
    if (tool.input_schema !== undefined) declaration.parametersJsonSchema = tool.input_schema
    declarations.push(declaration)
  }
  const tools: Array<Record<string, unknown>> = []
  if (declarations.length > 0) tools.push({ functionDeclarations: declarations })
  const search = searchOutcome(model.search || webSearch, declarations.length > 0)
  if (search === 'add') tools.push({ googleSearch: {} })
  else if (search === 'dropped') options.onSearchDropped?.()
  if (tools.length > 0) request.tools = tools
  const toolConfig = declarations.length > 0 ? toolConfigOf(body.tool_choice) : undefined
  if (toolConfig !== undefined) request.toolConfig = toolConfig

  request.safetySettings = options.safetySettings.map(s => ({ ...s }))
  const generationConfig = generationConfigOf(body, model)
  if (Object.keys(generationConfig).length > 0) request.generationConfig = generationConfig
  return request
}

/** The countTokens request for a Messages body: the same contents, system and tools Gemini would see. */
export async function toCountTokensRequest (body: MessagesRequest, options: MessagesTranslateOptions): Promise<GeminiRequest> {
  const { contents, systemInstruction } = await convertMessages(body, options, false)
  if (systemInstruction === undefined) return { contents }
  // countTokens takes only contents at its top level; the system prompt is counted as a leading user turn.
  return { contents: [{ role: 'user', parts: systemInstruction.parts }, ...contents] }
}
