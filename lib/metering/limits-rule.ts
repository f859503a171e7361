// The one rule for rate limits as people write them: GEMINI_LIMITS (the createAuthService / createRateLimiter
// option `limits`, by access level, with each level's `allow`: the upstream resource kinds its keys may use, and
// `tools`: the built-in tools they may send) and the admin override body (PUT /admin/user/{user_id}/limits).
// On the wire the fields are snake_case (tokens_per_day); in code camelCase (tokensPerDay).
import { ACCESS_LEVELS } from '../store/types.ts'
import type { AccessLevel, UserLimits } from '../store/types.ts'
import { ConfigurationError, fail } from '../errors.ts'
import { parseDollars } from './prices.ts'

/** Limits of one access level or one user's override (the store's record shape); absent or null = unlimited. */
export type RateLimits = UserLimits

/** Every limit lifted: the base of a view that shows each field, null where unlimited. */
export const UNLIMITED: Readonly<Required<RateLimits>> = Object.freeze({ rpm: null, tpm: null, tokensPerDay: null, concurrent: null, usdPerDayMicros: null, usdPerMonthMicros: null })

/** The limits counted in micro-dollars: written in dollars on the wire (usd_per_day), in micro-dollars in code. */
const DOLLAR_LIMITS: ReadonlySet<keyof RateLimits> = new Set(['usdPerDayMicros', 'usdPerMonthMicros'])

/** The kinds of upstream resource an access level may be allowed (`allow`): files (and uploads), cached contents, batches (and every long-running operation: predictLongRunning). */
export const RESOURCE_KINDS = ['batches', 'caches', 'files'] as const
export type ResourceKind = typeof RESOURCE_KINDS[number]

/** What a level without `allow` may use: files and caches; batches are the operator password's only. */
export const DEFAULT_RESOURCE_ALLOW: readonly ResourceKind[] = Object.freeze(['files', 'caches'])

/** The built-in tools of Google's (Tool fields of generateContent, tool types of Interactions) a level may allow (`tools`). */
export const BUILT_IN_TOOLS = ['googleSearch', 'urlContext', 'googleMaps', 'codeExecution', 'fileSearch'] as const
export type BuiltInTool = typeof BUILT_IN_TOOLS[number]

/**
 * What a level without `tools` may send: every built-in tool, so agents that ground with Google Search and read URLs
 * (Gemini CLI) keep working; a listed `tools` restricts. File Search still names stores keys may not name.
 */
export const DEFAULT_TOOLS: readonly BuiltInTool[] = BUILT_IN_TOOLS

/** One access level's entry: its limits, the resource kinds its keys may use (absent: DEFAULT_RESOURCE_ALLOW), the built-in tools (absent: DEFAULT_TOOLS). */
export interface LevelLimits extends RateLimits {
  allow?: readonly ResourceKind[]
  tools?: readonly BuiltInTool[]
}

/** Limits by access level; a level not listed takes its entry from levelEntry. */
export type LimitsByLevel = Readonly<Partial<Record<AccessLevel, Readonly<LevelLimits>>>>

/**
 * The entry that holds for `level`: its own, else that of the nearest lower level with one (ACCESS_LEVELS order), so
 * promoting a user never lifts their limits by accident; `hush`, the admin level, is unlimited unless listed.
 * An explicit `{}` (no limit named) is unlimited, concurrency included. Undefined: no level at or below `level` is listed.
 */
export function levelEntry (byLevel: LimitsByLevel, level: AccessLevel): Readonly<LevelLimits> | undefined {
  if (byLevel[level] !== undefined || level === 'hush') return byLevel[level]
  for (let i = ACCESS_LEVELS.indexOf(level) - 1; i >= 0; i--) {
    const entry = byLevel[ACCESS_LEVELS[i]]
    if (entry !== undefined) return entry
  }
  return undefined
}

/** The resource kinds keys of `level` may use under `byLevel` (its levelEntry's `allow`). */
export function allowedResources (byLevel: LimitsByLevel, level: AccessLevel): readonly ResourceKind[] {
  return levelEntry(byLevel, level)?.allow ?? DEFAULT_RESOURCE_ALLOW
}

/** The built-in tools keys of `level` may send under `byLevel` (its levelEntry's `tools`). */
export function allowedTools (byLevel: LimitsByLevel, level: AccessLevel): readonly BuiltInTool[] {
  return levelEntry(byLevel, level)?.tools ?? DEFAULT_TOOLS
}

/** A level's `allow` or `tools`, checked: a list of `names`, each once. */
function readList<T extends string> (value: unknown, names: readonly T[], where: string): readonly T[] | Problem {
  if (!Array.isArray(value) || value.some(v => !(names as readonly unknown[]).includes(v))) {
    return { field: where, message: `${where} must be a list of ${names.join(', ')} (got ${shown(JSON.stringify(value) ?? String(value))})` }
  }
  return Object.freeze([...new Set(value as T[])])
}

/** Wire name → code name of each limit. */
const FIELDS = { rpm: 'rpm', tpm: 'tpm', tokens_per_day: 'tokensPerDay', concurrent: 'concurrent', usd_per_day: 'usdPerDayMicros', usd_per_month: 'usdPerMonthMicros' } as const satisfies Record<string, keyof RateLimits>
type WireField = keyof typeof FIELDS
const WIRE_NAMES = Object.keys(FIELDS) as WireField[]
const CODE_NAMES = Object.values(FIELDS)

/** A value's problem: why it is refused, and the field (as written) at fault. */
interface Problem { field: string, message: string }

const shown = (name: string): string => JSON.stringify(name.length > 40 ? name.slice(0, 40) + '…' : name)

function isPlainObject (value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/** One level's limits or one override, with `names` (wire or code) as the accepted field names. */
function readLimits (value: unknown, names: readonly string[], toCode: (name: string) => keyof RateLimits, where: string): RateLimits | Problem {
  if (!isPlainObject(value)) return { field: where, message: `${where} must be an object with some of ${names.join(', ')}` }
  const out: RateLimits = {}
  const wire = names === WIRE_NAMES
  for (const name of Object.keys(value)) {
    const field = where === '' ? name : `${where}.${name}`
    if (!names.includes(name)) return { field: where === '' ? name : field, message: `${shown(field)} is not a limit (use ${names.join(', ')})` }
    const v = value[name]
    const code = toCode(name)
    if (v === null) {
      out[code] = null
    } else if (wire && DOLLAR_LIMITS.has(code)) {
      const micros = parseDollars(v)
      if (micros === undefined) return { field, message: `${field} must be US dollars, 0 or more, as a number or a decimal string of at most 6 decimals (5, 2.5 or "2.50"), or null for unlimited` }
      out[code] = micros
    } else if (Number.isSafeInteger(v) && (v as number) >= 0) {
      out[code] = v as number
    } else {
      const unit = DOLLAR_LIMITS.has(code) ? ' of micro-dollars' : ''
      return { field, message: `${field} must be a whole number${unit}, 0 or more, or null for unlimited` }
    }
  }
  return out
}

/** The level table, checked: access levels to limits. */
function readTable (value: unknown, names: readonly string[], toCode: (name: string) => keyof RateLimits, where: string): LimitsByLevel | Problem {
  if (!isPlainObject(value)) return { field: where, message: `${where} must be an object from access level (${ACCESS_LEVELS.join(', ')}) to limits` }
  const out: Partial<Record<AccessLevel, Readonly<LevelLimits>>> = {}
  for (const level of Object.keys(value)) {
    if (!(ACCESS_LEVELS as readonly string[]).includes(level)) {
      return { field: `${where}.${level}`, message: `${shown(level)} is not an access level (use ${ACCESS_LEVELS.join(', ')})` }
    }
    const entry = value[level]
    const { allow, tools, ...rates } = isPlainObject(entry) ? entry : { allow: undefined, tools: undefined }
    const limits: LevelLimits | Problem = readLimits(isPlainObject(entry) ? rates : entry, names, toCode, `${where}.${level}`)
    if ('message' in limits) return limits
    const kinds = allow === undefined ? undefined : readList(allow, RESOURCE_KINDS, `${where}.${level}.allow`)
    if (kinds !== undefined && 'message' in kinds) return kinds
    const builtIn = tools === undefined ? undefined : readList(tools, BUILT_IN_TOOLS, `${where}.${level}.tools`)
    if (builtIn !== undefined && 'message' in builtIn) return builtIn
    if (kinds !== undefined) limits.allow = kinds
    if (builtIn !== undefined) limits.tools = builtIn
    out[level as AccessLevel] = Object.freeze(limits)
  }
  return Object.freeze(out)
}

const fromWire = (name: string): keyof RateLimits => FIELDS[name as WireField]
const asIs = (name: string): keyof RateLimits => name as keyof RateLimits

/**
 * The option `limits` (createAuthService, createRateLimiter's byLevel): `{ member: { rpm: 60, tokensPerDay: null, usdPerDayMicros: 5_000_000 } }`.
 * Throws ConfigurationError naming the option and the field at fault.
 */
export function resolveLimitsOption (value: unknown, option = 'limits'): LimitsByLevel {
  if (value === undefined) return Object.freeze({})
  const table = readTable(value, CODE_NAMES, asIs, option)
  if ('message' in table) throw new ConfigurationError(option, `${option}: ${table.message}`)
  return table
}

/**
 * GEMINI_LIMITS as written: JSON from access level to `{"rpm", "tpm", "tokens_per_day", "concurrent", "usd_per_day", "usd_per_month", "allow", "tools"}`.
 * Throws ConfigurationError (option `limits`) naming the field at fault, under `name` (a host passes its setting's).
 */
export function parseLimitsJson (text: string, name = 'limits'): LimitsByLevel {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw new ConfigurationError('limits', `${name}: not valid JSON (expected {"<access level>": {"rpm", "tpm", "tokens_per_day", "concurrent", "usd_per_day", "usd_per_month", "allow", "tools"}})`)
  }
  const table = readTable(parsed, WIRE_NAMES, fromWire, name)
  if ('message' in table) throw new ConfigurationError('limits', `${name}: ${table.message}`)
  return table
}

/** The admin override body: some of rpm, tpm, tokens_per_day, concurrent, usd_per_day, usd_per_month (dollars); null lifts a limit. 400 INVALID_INPUT with `param` otherwise. */
export function parseLimitsBody (body: unknown): RateLimits {
  const limits = readLimits(body, WIRE_NAMES, fromWire, '')
  if ('message' in limits) throw fail('INVALID_INPUT', limits.field === '' ? `The body ${limits.message.slice(1)}` : limits.message, { param: limits.field === '' ? null : limits.field })
  return limits
}

/** Limits in their wire form (snake_case, dollar limits in dollars), for answers. */
export function limitsToWire (limits: Partial<Record<keyof RateLimits, number | null>>): Record<string, number | null> {
  const out: Record<string, number | null> = {}
  for (const name of WIRE_NAMES) {
    const code = FIELDS[name]
    const v = limits[code]
    // A whole number of micro-dollars over 1e6 prints as its exact decimal: 2_500_000 is 2.5.
    if (v !== undefined) out[name] = v !== null && DOLLAR_LIMITS.has(code) ? v / 1_000_000 : v
  }
  return out
}

/**
 * The calls in flight at once a level listed in the table allows when its entry sets no `concurrent` (null lifts it):
 * a key is never unlimited in parallel by omission, so parallel calls cannot outrun their reservations unbounded.
 */
export const DEFAULT_CONCURRENT = 8

/**
 * The level's limits with the user's override laid over them field by field (absent keeps the level's); a listed
 * level that names some limit but not `concurrent` has DEFAULT_CONCURRENT, and an explicit `{}` is unlimited.
 */
export function effectiveLimits (level: Readonly<LevelLimits> | undefined, override: Readonly<RateLimits> | null): RateLimits {
  const out: RateLimits = {}
  if (level !== undefined) {
    let named = false
    for (const name of CODE_NAMES) {
      if (level[name] === undefined) continue
      out[name] = level[name]
      named = true
    }
    if (named && level.concurrent === undefined) out.concurrent = DEFAULT_CONCURRENT
  }
  if (override !== null) for (const name of CODE_NAMES) if (override[name] !== undefined) out[name] = override[name]
  return out
}
