// A validated chat-completions request → a Gemini GenerateContentRequest (docs/chat-completions.md).
//
// Search grounding and function tools: the one rule of both routes (lib/proxy/search-tools.ts): when the
// request declares function tools, they win and googleSearch (from a -search model name or a `web_search`
// tool) is left out. Without function tools, -search or `web_search` adds `{googleSearch:{}}`.
import type { GeminiRequest } from '../upstream/backend.ts'
import type { ChatRequest } from './request-schema.ts'
import type { ModelName } from '../models/name.ts'
import { chatThinking } from '../models/thinking.ts'
import { convertMessages } from './messages.ts'
import type { ContentContext } from './content.ts'
import type { ContentOptions } from '../call/content-options.ts'
import { mapTools } from './tool-declarations.ts'
import { invalidParam } from './error-body.ts'
import { searchOutcome } from '../search-tools.ts'

export type TranslateOptions = ContentContext & ContentOptions

/** OpenAI sampling and output parameters → generationConfig (docs/chat-completions.md, "Parameters"). */
function generationConfigOf (body: ChatRequest, model: ModelName): Record<string, unknown> {
  const config: Record<string, unknown> = {}
  const set = (key: string, value: unknown): void => { if (value !== undefined && value !== null) config[key] = value }
  set('temperature', body.temperature)
  set('topP', body.top_p)
  set('topK', body.top_k)
  set('maxOutputTokens', body.max_completion_tokens ?? body.max_tokens)
  if (body.stop !== undefined && body.stop !== null) config.stopSequences = typeof body.stop === 'string' ? [body.stop] : body.stop
  set('candidateCount', body.n)
  set('seed', body.seed)
  set('presencePenalty', body.presence_penalty)
  set('frequencyPenalty', body.frequency_penalty)
  const format = body.response_format
  if (format?.type === 'json_object') config.responseMimeType = 'application/json'
  if (format?.type === 'json_schema') {
    config.responseMimeType = 'application/json'
    if (format.json_schema?.schema !== undefined) config.responseJsonSchema = format.json_schema.schema
  }
  if (body.logprobs === true) {
    config.responseLogprobs = true
    set('logprobs', body.top_logprobs)
  }
  if (body.modalities !== undefined && body.modalities !== null) config.responseModalities = body.modalities.map(m => m.toUpperCase())
  const thinking = chatThinking(model, body.reasoning_effort)
  if (thinking !== undefined) config.thinkingConfig = thinking
  return config
}

/** How many http(s) image URLs the request asks the proxy to fetch. */
export function imageUrlCount (body: ChatRequest): number {
  let count = 0
  for (const m of body.messages) {
    if (!Array.isArray(m.content)) continue
    for (const p of m.content) {
      if (p.type === 'image_url' && /^https?:/i.test(typeof p.image_url === 'string' ? p.image_url : p.image_url.url)) count++
    }
  }
  return count
}

export async function toGeminiRequest (body: ChatRequest, model: ModelName, options: TranslateOptions): Promise<GeminiRequest> {
  // Each image URL costs a fetch: cap them so one request cannot fan out into thousands.
  if (options.maxImageUrls !== undefined && imageUrlCount(body) > options.maxImageUrls) {
    throw invalidParam(`At most ${options.maxImageUrls} image URLs are fetched per request; send the others as data: URLs`, 'messages')
  }
  // Families that validate thought signatures get placeholders for calls whose signature was lost.
  const placeholderSignatures = model.family === 'gemini-3' || model.family === 'gemini-4' || model.family === 'other'
  const imageAllowance = options.maxImageBytes === undefined ? undefined : { remaining: options.maxImageBytes, total: options.maxImageBytes }
  const partAllowance = options.maxParts === undefined ? undefined : { remaining: options.maxParts, total: options.maxParts }
  const { contents, systemInstruction } = await convertMessages(body.messages, { ...options, imageAllowance, partAllowance, placeholderSignatures })
  const request: GeminiRequest = { contents }
  if (systemInstruction !== undefined) request.systemInstruction = systemInstruction

  const tools = mapTools(body.tools, body.tool_choice)
  const geminiTools: Array<Record<string, unknown>> = []
  if (tools.functionDeclarations.length > 0) geminiTools.push({ functionDeclarations: tools.functionDeclarations })
  const search = searchOutcome(model.search || tools.webSearch, tools.functionDeclarations.length > 0)
  if (search === 'add') geminiTools.push({ googleSearch: {} })
  else if (search === 'dropped') options.onSearchDropped?.()
  if (geminiTools.length > 0) request.tools = geminiTools
  if (tools.toolConfig !== undefined) request.toolConfig = tools.toolConfig

  request.safetySettings = options.safetySettings.map(s => ({ ...s }))
  const generationConfig = generationConfigOf(body, model)
  if (Object.keys(generationConfig).length > 0) request.generationConfig = generationConfig
  return request
}
