// Requested model names: `[models/](gemini-|lm-)<base>[-search][-nothinking|-maxthinking]`.
// Suffixes are read as a set from the end of the name, in any order, and all of them are removed to
// get the id sent upstream (the reference removed only one, so `X-search-maxthinking` reached the
// upstream as `X-search` and failed).

export type ThinkingVariant = 'default' | 'none' | 'max'

/** Model families that decide variants and thinking budgets (docs/model-proxy.md, "Families"). */
export type ModelFamily = 'gemini-2.5-flash' | 'gemini-2.5-pro' | 'gemini-3' | 'image' | 'legacy' | 'other'

export interface ModelName {
  /** The name as the client sent it, without a `models/` prefix (echoed back in responses). */
  requested: string
  /** The upstream model id: `gemini-` prefix, no variant suffix. */
  base: string
  search: boolean
  thinking: ThinkingVariant
  family: ModelFamily
  /** Both -nothinking and -maxthinking were given. */
  conflicting: boolean
}

const SUFFIXES = ['-search', '-nothinking', '-maxthinking'] as const

export function modelFamily (base: string): ModelFamily {
  if (base.includes('-image')) return 'image'
  if (base.startsWith('gemini-2.5-flash')) return 'gemini-2.5-flash'
  if (base.startsWith('gemini-2.5-pro')) return 'gemini-2.5-pro'
  if (/^gemini-3([.-]|$)/.test(base)) return 'gemini-3'
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
  let requested = name.trim()
  while (requested.startsWith('models/')) requested = requested.slice('models/'.length)
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
