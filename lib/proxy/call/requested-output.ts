// The output a model call asks for at most, reserved at admission with its input estimate (docs/model-proxy.md,
// "Limits and usage"): what the request names (max_tokens, max_completion_tokens, maxOutputTokens), else the
// model's output limit, never more than MAX_RESERVED_OUTPUT_TOKENS.
import type { ModelName } from '../models/name.ts'

/** The most output a call that names no limit of its own reserves: a model's whole limit (64k) would refuse small budgets outright. */
export const MAX_RESERVED_OUTPUT_TOKENS = 8192

/** The output tokens to reserve for a call on `model` that asked for `asked` (undefined, or not a positive whole number: no limit named). */
export function requestedOutputTokens (model: Pick<ModelName, 'spec'>, asked: unknown): number {
  const limit = model.spec?.limits.output
  if (typeof asked === 'number' && Number.isSafeInteger(asked) && asked > 0) return limit === undefined ? asked : Math.min(asked, limit)
  return Math.min(limit ?? MAX_RESERVED_OUTPUT_TOKENS, MAX_RESERVED_OUTPUT_TOKENS)
}
