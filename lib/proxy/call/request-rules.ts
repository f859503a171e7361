// The rules a model's file entry sets on every request, applied once for every surface by the lifecycle
// (lib/proxy/call/lifecycle.ts) after the surface's translation: what the model refuses or ignores is left out,
// and the output asked never exceeds the window it shares with the input (lib/proxy/models/data.ts, dropRefusedFields).
import type { ModelName } from '../models/name.ts'
import type { GeminiRequest } from '../upstream/backend.ts'
import { dropRefusedFields } from '../models/data.ts'

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/** A GenerateContentRequest with the model's rules applied to its generationConfig (in place: the surface built it for this call). */
export function applyRequestRules (request: GeminiRequest, model: ModelName): GeminiRequest {
  const config = request.generationConfig
  if (isObject(config)) dropRefusedFields(model.spec, config)
  return request
}

/** The Interactions API's generation_config fields the rules read, by the generationConfig name they share. */
const INTERACTION_FIELDS: ReadonlyArray<readonly [string, string]> = [
  ['temperature', 'temperature'],
  ['top_p', 'topP'],
  ['top_k', 'topK'],
  ['presence_penalty', 'presencePenalty'],
  ['frequency_penalty', 'frequencyPenalty'],
  ['candidate_count', 'candidateCount'],
  ['max_output_tokens', 'maxOutputTokens'],
]

/** An Interactions create body (Google's own wire format) with the same rules applied to its generation_config; a new body. */
export function applyInteractionRules (body: Record<string, unknown>, model: ModelName): Record<string, unknown> {
  const given = body.generation_config
  if (!isObject(given) || model.spec === undefined) return body
  const config: Record<string, unknown> = {}
  for (const [wire, name] of INTERACTION_FIELDS) if (given[wire] !== undefined) config[name] = given[wire]
  dropRefusedFields(model.spec, config)
  const kept: Record<string, unknown> = { ...given }
  for (const [wire, name] of INTERACTION_FIELDS) {
    if (config[name] === undefined) delete kept[wire]
    else kept[wire] = config[name]
  }
  return { ...body, generation_config: kept }
}
