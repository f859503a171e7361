// Edits to a native generateContent body before it goes upstream (docs/model-proxy.md, "Native requests"):
//  - the client's safetySettings are kept; the defaults are used only when it sent none
//  - a top-level thinkingConfig (as the reference README shows) is moved into generationConfig
//  - Google's defaults stay: a plain model name adds no thinkingConfig, and no name adds includeThoughts: true
//    (clients that did not ask for thoughts get none); a -nothinking/-maxthinking suffix still sets its budget or
//    level, but the client's includeThoughts, budget or level win; a null budget is dropped and an empty
//    thinkingConfig is never created
//  - what the model's entry says it refuses or ignores is dropped (sampling and penalty fields, a candidateCount
//    above its largest), and a model that takes levels gets no thinkingBudget (lib/proxy/models/data.ts, thinking.ts)
//  - -search appends googleSearch unless a tool already has a googleSearch key or the request
//    declares function tools (the rule of both routes, lib/proxy/search-tools.ts)
import type { GeminiRequest } from '../upstream/backend.ts'
import { fail } from '../../errors.ts'
import type { ModelName } from '../models/name.ts'
import { fitThinking, nativeThinking } from '../models/thinking.ts'
import type { SafetySetting } from '../safety-settings.ts'
import { declaresFunctions, searchOutcome } from '../search-tools.ts'
import { countableContents, requestedContents } from '../upstream/count-tokens.ts'

type Json = Record<string, unknown>

function isObject (value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/** The body as a JSON object (empty body → {}); anything else is a 400. */
function requestObject (body: unknown): Json {
  if (body === undefined) return {}
  if (!isObject(body)) throw fail('INVALID_INPUT', 'The request body must be a JSON object')
  return body
}

function thinkingConfigFor (client: unknown, model: ModelName): Json | undefined {
  const variant = nativeThinking(model)
  if (!isObject(client)) return variant === undefined ? undefined : { ...variant }
  const config: Json = { ...client }
  for (const key of ['thinkingBudget', 'thinkingLevel', 'includeThoughts']) {
    if (config[key] === null) delete config[key]
  }
  if (variant !== undefined) {
    if (config.includeThoughts === undefined && variant.includeThoughts !== undefined) config.includeThoughts = variant.includeThoughts
    // A budget and a level cannot be combined: add the variant's only when the client set neither.
    if (config.thinkingBudget === undefined && config.thinkingLevel === undefined) {
      if (variant.thinkingBudget !== undefined) config.thinkingBudget = variant.thinkingBudget
      if (variant.thinkingLevel !== undefined) config.thinkingLevel = variant.thinkingLevel
    }
  }
  const fitted = fitThinking(config, model)
  return Object.keys(fitted).length > 0 ? fitted : undefined
}

export function prepareNativeRequest (body: unknown, model: ModelName, safetySettings: readonly SafetySetting[]): GeminiRequest {
  const request: Json = { ...requestObject(body) }
  const generationConfig: Json = isObject(request.generationConfig) ? { ...request.generationConfig } : {}
  let clientThinking = generationConfig.thinkingConfig
  if (isObject(request.thinkingConfig)) {
    clientThinking = { ...request.thinkingConfig, ...(isObject(clientThinking) ? clientThinking : {}) }
  }
  delete request.thinkingConfig

  if (!Array.isArray(request.safetySettings)) request.safetySettings = safetySettings.map(s => ({ ...s }))

  const thinking = thinkingConfigFor(clientThinking, model)
  if (thinking !== undefined) generationConfig.thinkingConfig = thinking
  else delete generationConfig.thinkingConfig
  if (Object.keys(generationConfig).length > 0 || request.generationConfig !== undefined) request.generationConfig = generationConfig

  if (model.search) {
    const tools = Array.isArray(request.tools) ? [...request.tools] : []
    const hasSearch = tools.some(t => isObject(t) && ('googleSearch' in t || 'google_search' in t))
    if (searchOutcome(!hasSearch, declaresFunctions(tools)) === 'add') {
      tools.push({ googleSearch: {} })
      request.tools = tools
    }
  }
  return request
}

/**
 * A countTokens body (`{contents}` or `{generateContentRequest:{contents,...}}`) → `{contents}` for
 * the upstream, cleaned by the rule the backends use (lib/proxy/upstream/count-tokens.ts).
 */
export function countTokensRequest (body: unknown): GeminiRequest {
  const request = requestObject(body)
  const contents = requestedContents(request)
  if (!Array.isArray(contents)) throw fail('INVALID_INPUT', 'countTokens needs `contents` or `generateContentRequest.contents`')
  return { contents: countableContents(contents) }
}
