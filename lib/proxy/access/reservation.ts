// What a model call reserves beyond its own body (docs/model-proxy.md, "Reservations"): the answers it asks for,
// and the input the upstream brings in by reference (a file, a cache, a stored conversation). Pure: the owner
// records and stored items are read by their owners (lib/proxy/access/ownership.ts, lib/proxy/responses/stored.ts)
// and handed here. Only reservations: the charge is what the upstream reports.
import type { OwnerRecord } from '../../store/types.ts'
import { CHARS_PER_TOKEN } from './metering.ts'

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/** A token count as given: a positive safe integer (a number or Google's int64 string), else 0. */
function tokenCount (value: unknown): number {
  const n = typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : value
  return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : 0
}

/**
 * How many answers a request asks for (`n` on chat, `generationConfig.candidateCount` natively): each may be as long
 * as the output maximum, so the output reservation is multiplied by it. A value that is none counts as 1.
 */
export function outputCount (value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 1 ? value : 1
}

/**
 * The candidateCount a Gemini request body asks for, in either JSON spelling Google reads (`generationConfig`,
 * `generation_config`; `candidateCount`, `candidate_count`), the largest when several are given.
 */
export function candidateCountOf (body: unknown): number {
  if (!isObject(body)) return 1
  let most = 1
  for (const config of [body.generationConfig, body.generation_config]) {
    if (!isObject(config)) continue
    for (const value of [config.candidateCount, config.candidate_count]) most = Math.max(most, outputCount(value))
  }
  return most
}

/** The input tokens an uploaded file brings into a call that names it: its size (`sizeBytes`, bytes or int64 string) ÷ 4. */
export function fileInputTokens (sizeBytes: unknown): number | undefined {
  const bytes = tokenCount(sizeBytes)
  return bytes === 0 ? undefined : Math.ceil(bytes / CHARS_PER_TOKEN)
}

/** The input tokens a cache brings into a call that names it: its create answer's `usageMetadata.totalTokenCount`. */
export function cacheInputTokens (answer: unknown): number | undefined {
  const total = isObject(answer) && isObject(answer.usageMetadata) ? tokenCount(answer.usageMetadata.totalTokenCount) : 0
  return total === 0 ? undefined : total
}

/** The input tokens the resources a request names bring in: the sum of their records' (unknown ones count 0). */
export function referencedInputTokens (records: ReadonlyArray<Pick<OwnerRecord, 'inputTokens'>>): number {
  let total = 0
  for (const r of records) total += r.inputTokens ?? 0
  return total
}

/**
 * The input tokens a stored Responses conversation a request continues brings in (previous_response_id): its input
 * items and its answer's output, as JSON ÷ 4; none without one.
 */
export function storedHistoryTokens (previous: { input: readonly unknown[], response: { output?: readonly unknown[] } } | undefined): number {
  if (previous === undefined) return 0
  return Math.ceil((JSON.stringify(previous.input).length + JSON.stringify(previous.response.output ?? []).length) / CHARS_PER_TOKEN)
}

/** The history an interaction leaves for one that continues it (previous_interaction_id): what it read and wrote. */
export function interactionHistoryTokens (usage: { inputTokens: number, outputTokens: number } | undefined): number | undefined {
  if (usage === undefined) return undefined
  const total = tokenCount(usage.inputTokens) + tokenCount(usage.outputTokens)
  return total === 0 ? undefined : total
}
