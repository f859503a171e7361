// The model policy (docs/model-proxy.md, "Model policy"): which models a caller may use. The operator password
// may use every model; a key's owner may use the patterns of their access level (every model for a level the
// policy does not name), and only from the minimum access level up; a key's own `models` narrow that further.
// Patterns match the model's base name (no variant suffix, `lm-` read as `gemini-`), `*` standing for any run
// of characters, so `gemini-2.5-flash*` covers gemini-2.5-flash-lite and every -search/-nothinking variant.
import { ConfigurationError, fail } from '../../errors.ts'
import type { GatehouseError } from '../../errors.ts'
import { ACCESS_LEVELS } from '../../store/types.ts'
import type { AccessLevel } from '../../store/types.ts'
import { DEFAULT_PROXY_MIN_ACCESS_LEVEL } from './caller.ts'
import type { ProxyCaller } from './caller.ts'
import type { ModelName } from '../models/name.ts'
import { checkModelName } from '../models/name.ts'

/** One model-name pattern: what a level's list or a key's `models` may hold. */
export const MODEL_PATTERN = /^[A-Za-z0-9._*-]{1,128}$/

/** Patterns per access level; a level left out may use every model. */
export type ModelAccess = Partial<Record<AccessLevel, readonly string[]>>

export interface ModelPolicy {
  /** Whether this caller may use the model of this base name. */
  allows (caller: ProxyCaller, base: string): boolean
  /**
   * The first of a new key's `models` patterns that names no model `level` may use (undefined: all fit): a literal
   * name its level's patterns refuse, or a `*` pattern sharing no name with them (`gemini-*` fits `gemini-2.5-flash*`).
   */
  unfit (level: AccessLevel, patterns: readonly string[]): string | undefined
}

type Matcher = (base: string) => boolean

const everything: Matcher = () => true

/** A matcher for patterns already checked against MODEL_PATTERN: `*` is the only special character. */
export function patternMatcher (patterns: readonly string[]): Matcher {
  if (patterns.includes('*')) return everything
  const source = patterns.map(p => p.split('*').map(part => part.replace(/[.]/g, '\\.')).join('.*')).join('|')
  const re = new RegExp(`^(?:${source})$`)
  return base => re.test(base)
}

/** Whether the key pattern `key` names some model the level's `patterns` allow (`level`: their matcher). */
function fits (key: string, patterns: readonly string[], level: Matcher): boolean {
  if (patterns.length === 0) return false
  if (!key.includes('*')) return level(key)
  const matchesKey = patternMatcher([key])
  return level(key.replaceAll('*', '')) || patterns.some(p => matchesKey(p.replaceAll('*', '')))
}

/** Checks `modelAccess` and `minAccessLevel` (createProxy's options, or `factory`'s) and builds the policy. */
export function createModelPolicy (modelAccess: ModelAccess | undefined, minAccessLevel: AccessLevel = DEFAULT_PROXY_MIN_ACCESS_LEVEL, factory = 'createProxy'): ModelPolicy {
  const refuse = (name: string, rule: string, value: unknown): never => {
    throw new ConfigurationError(name, `${factory}: ${name} must be ${rule} (got ${JSON.stringify(value) ?? String(value)})`)
  }
  if (!(ACCESS_LEVELS as readonly unknown[]).includes(minAccessLevel)) refuse('minAccessLevel', `one of ${ACCESS_LEVELS.join(', ')}`, minAccessLevel)
  const minRank = ACCESS_LEVELS.indexOf(minAccessLevel)
  if (modelAccess !== undefined && (modelAccess === null || typeof modelAccess !== 'object' || Array.isArray(modelAccess))) {
    refuse('modelAccess', 'an object from access level to model-name patterns', modelAccess)
  }
  const byLevel = new Map<AccessLevel, Matcher>()
  for (const [level, patterns] of Object.entries(modelAccess ?? {})) {
    const name = `modelAccess.${level}`
    if (!(ACCESS_LEVELS as readonly string[]).includes(level)) refuse('modelAccess', `keyed by access levels (${ACCESS_LEVELS.join(', ')})`, level)
    if (ACCESS_LEVELS.indexOf(level as AccessLevel) < minRank) refuse(name, `left out: ${level} is below minAccessLevel (${minAccessLevel}), whose users have no proxy access`, patterns)
    if (!Array.isArray(patterns) || !patterns.every(p => typeof p === 'string' && MODEL_PATTERN.test(p))) {
      refuse(name, 'an array of model-name patterns (letters, digits, ".", "_", "-" and "*", at most 128 characters)', patterns)
    }
    byLevel.set(level as AccessLevel, patternMatcher(patterns as string[]))
  }
  // A key's patterns were checked when the key was created; matchers are cached per distinct list.
  const keyMatchers = new WeakMap<readonly string[], Matcher>()
  const keyMatcher = (models: readonly string[]): Matcher => {
    let m = keyMatchers.get(models)
    if (m === undefined) {
      m = patternMatcher(models.filter(p => MODEL_PATTERN.test(p)))
      keyMatchers.set(models, m)
    }
    return m
  }
  return {
    allows (caller, base) {
      if (caller.kind === 'operator') return true
      if (ACCESS_LEVELS.indexOf(caller.accessLevel) < minRank) return false
      if (!(byLevel.get(caller.accessLevel) ?? everything)(base)) return false
      return caller.models === null || keyMatcher(caller.models)(base)
    },
    unfit (level, patterns) {
      const listed = modelAccess?.[level]
      const matcher = byLevel.get(level)
      if (listed === undefined || matcher === undefined) return undefined
      return patterns.find(p => !fits(p, listed, matcher))
    },
  }
}

/** The filter for the model lists: undefined (list everything) for the operator. */
export function modelFilter (ctx: { modelPolicy: ModelPolicy }, caller: ProxyCaller): ((base: string) => boolean) | undefined {
  return caller.kind === 'operator' ? undefined : base => ctx.modelPolicy.allows(caller, base)
}

/** MODEL_NOT_ALLOWED (403) for a requested model outside the caller's policy. */
export function modelNotAllowed (requested: string): GatehouseError {
  return fail('MODEL_NOT_ALLOWED', `This key may not use the model \`${requested}\`; GET /v1/models lists the ones it may use`)
}

/**
 * The model `name` names, resolved by the catalog (an unknown or unserved model is refused there), when the caller
 * may use it; MODEL_NOT_ALLOWED (403) otherwise. The one check of a requested model, on every surface.
 */
export function allowedModel (ctx: { catalog: { resolve (name: string): ModelName }, modelPolicy: ModelPolicy, modelAlias?: (name: string) => string }, caller: ProxyCaller, asked: string): ModelName {
  const name = ctx.modelAlias === undefined ? asked : ctx.modelAlias(asked)
  const model = ctx.catalog.resolve(name)
  // A shut-down model served by its replacement stays allowed to whoever may use it, as Google's own routing would
  // (docs/model-proxy.md, "Shut-down models").
  const allowed = ctx.modelPolicy.allows(caller, model.base) || (model.shutDown !== undefined && ctx.modelPolicy.allows(caller, model.shutDown))
  // The refusal names the model as asked for, not what would have served it.
  if (!allowed) throw modelNotAllowed(model.shutDown === undefined ? model.requested : checkModelName(name))
  return model
}
