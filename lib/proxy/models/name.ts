// Requested model names: `[models/](gemini-|lm-)<base>[-search][-nothinking|-maxthinking]`.
// Suffixes are read as a set from the end of the name, in any order, and all of them are removed to
// get the id sent upstream (the reference removed only one, so `X-search-maxthinking` reached the
// upstream as `X-search` and failed).
// Names are checked before anything else looks at them: the base id goes into the upstream's User-Agent
// header and, on the Gemini API backend, into its URL path.
import { fail } from '../../errors.ts'
import type { GatehouseError } from '../../errors.ts'
import type { ModelFamily, ModelSpec } from './data.ts'

export type ThinkingVariant = 'default' | 'none' | 'max'


export interface ModelName {
  /** The name as the client sent it, without a `models/` prefix (echoed back in responses); for a shut-down model the catalog serves by its replacement, the replacement's name with the same suffixes. */
  requested: string
  /** The upstream model id: `gemini-` prefix, no variant suffix. */
  base: string
  search: boolean
  thinking: ThinkingVariant
  family: ModelFamily
  /** Both -nothinking and -maxthinking were given. */
  conflicting: boolean
  /** The model file's entry for `base`, set by the catalog's resolve (lib/proxy/models/data.ts). */
  spec?: ModelSpec
  /** The file's id the client named when it is shut down on the backend and `base` serves it (docs/model-proxy.md, "Shut-down models"). */
  shutDown?: string
}

const SUFFIXES = ['-search', '-nothinking', '-maxthinking'] as const

/** Longest model name accepted, `models/` prefix and variant suffixes included. */
const MODEL_NAME_MAX = 128
// eslint-disable-next-line no-control-regex -- control characters are exactly what this refuses
const CONTROL = /[\x00-\x1f\x7f]/
const MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/

// Such a name is no model there is: a 404 like any other unknown model (OpenAI answers the same).
function invalidName (): GatehouseError {
  return fail('MODEL_NOT_FOUND', `No model has that name: model names are at most ${MODEL_NAME_MAX} characters, letters, digits, ".", "_" and "-", after an optional "models/"`)
}

/**
 * The one rule for requested model names: at most MODEL_NAME_MAX characters, no control characters (CR, LF and
 * NUL included), and after surrounding spaces and `models/` prefixes only letters, digits, `.`, `_` and `-`.
 * Returns the name without those; throws MODEL_NOT_FOUND (404).
 */
export function checkModelName (name: string): string {
  if (name.length > MODEL_NAME_MAX || CONTROL.test(name)) throw invalidName()
  let id = name.trim()
  while (id.startsWith('models/')) id = id.slice('models/'.length)
  if (!MODEL_ID.test(id)) throw invalidName()
  return id
}

export function modelFamily (base: string): ModelFamily {
  if (base.includes('-image')) return 'image'
  if (base.startsWith('gemini-embedding')) return 'embedding'
  if (base.startsWith('gemini-2.5-flash')) return 'gemini-2.5-flash'
  if (base.startsWith('gemini-2.5-pro')) return 'gemini-2.5-pro'
  if (/^gemini-3([.-]|$)/.test(base)) return 'gemini-3'
  if (/^gemini-4([.-]|$)/.test(base)) return 'gemini-4'
  // 1.x and 2.0 models predate thinking: a thinkingConfig would be rejected.
  if (/^gemini-(1\.|2\.0)/.test(base)) return 'legacy'
  return 'other'
}

/** `lm-` is accepted for `gemini-` (docs/model-proxy.md, "Names in requests"). */
export function normaliseModelId (id: string): string {
  let name = id.trim()
  while (name.startsWith('models/')) name = name.slice('models/'.length)
  if (name.startsWith('lm-')) name = 'gemini-' + name.slice(3)
  return name
}

export function parseModelName (name: string): ModelName {
  const requested = checkModelName(name)
  let base = normaliseModelId(requested)
  let search = false
  let none = false
  let max = false
  for (let stripped = true; stripped;) {
    stripped = false
    for (const suffix of SUFFIXES) {
      if (base.length > suffix.length && base.endsWith(suffix)) {
        base = base.slice(0, -suffix.length)
        if (suffix === '-search') search = true
        else if (suffix === '-nothinking') none = true
        else max = true
        stripped = true
      }
    }
  }
  const thinking: ThinkingVariant = max ? 'max' : none ? 'none' : 'default'
  return { requested, base, search, thinking, family: modelFamily(base), conflicting: none && max }
}
