// Names a team's clients send that are not Gemini's (Claude Code's `claude-*`, its picker and small-model calls),
// mapped to catalogue models by the operator (createProxy({ modelAliases }), GEMINI_MODEL_ALIASES): docs/model-proxy.md,
// "Model aliases". An exact name wins over patterns; among patterns the longest matching one wins, so the JSON's
// order never matters.
import { ConfigurationError } from '../../errors.ts'
import { checkModelName } from './name.ts'

/** From a name or a pattern (`*` for any run of characters) to the model it stands for. */
export type ModelAliases = Readonly<Record<string, string>>

/** Most entries of a `modelAliases` table. */
export const MAX_MODEL_ALIASES = 256

const NAME = /^[A-Za-z0-9][A-Za-z0-9._:@/*-]{0,127}$/

function refuse (key: string, rule: string): never {
  throw new ConfigurationError('modelAliases', `createProxy: modelAliases${key === '' ? '' : `[${JSON.stringify(key)}]`} ${rule}`)
}

/** Checks the table once and returns the name each requested name stands for (itself when nothing matches). */
export function createModelAliases (aliases: ModelAliases | undefined): (name: string) => string {
  if (aliases === undefined) return name => name
  if (aliases === null || typeof aliases !== 'object' || Array.isArray(aliases)) refuse('', 'must be an object from model names or patterns to model names')
  const entries = Object.entries(aliases)
  if (entries.length > MAX_MODEL_ALIASES) refuse('', `may hold at most ${MAX_MODEL_ALIASES} entries`)
  const exact = new Map<string, string>()
  const patterns: Array<[RegExp, number, string]> = []
  for (const [from, to] of entries) {
    if (!NAME.test(from)) refuse(from, 'is not a model name or pattern (letters, digits, . _ : @ / - and *, at most 128 characters)')
    if (typeof to !== 'string') refuse(from, 'must map to a model name (a string)')
    try {
      checkModelName(to)
    } catch (err) {
      refuse(from, `maps to ${JSON.stringify(to)}, which is not a model name (${(err as Error).message})`)
    }
    if (!from.includes('*')) exact.set(from, to)
    else patterns.push([new RegExp(`^${from.split('*').map(s => s.replace(/[.+?^${}()|[\]\\/]/g, '\\$&')).join('.*')}$`), from.replaceAll('*', '').length, to])
  }
  patterns.sort((a, b) => b[1] - a[1])
  if (exact.size === 0 && patterns.length === 0) return name => name
  return name => exact.get(name) ?? patterns.find(([re]) => re.test(name))?.[2] ?? name
}
