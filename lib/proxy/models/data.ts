// The model file: what each model accepts (thinking control, sampling fields), serves (modalities, backends) and
// replaces (aliases). The shipped file is models.json next to this module (in the built package, next to its one
// bundled module, scripts/bundle-lib.ts); `createProxy({ modelsFile })` (GEMINI_MODELS_FILE) names another one.
// The file is read and checked once, at construction, and every problem is a ConfigurationError naming the option,
// the file and the field (docs/model-proxy.md, "The model file").
import { readJsonOptionFile } from '../../fs/json-option-file.ts'
import { fileURLToPath } from 'node:url'
import { ConfigurationError, fail } from '../../errors.ts'

/** Model families that decide variants and thinking budgets (docs/model-proxy.md, "Families"). */
export type ModelFamily = 'gemini-2.5-flash' | 'gemini-2.5-pro' | 'gemini-3' | 'gemini-4' | 'image' | 'legacy' | 'embedding' | 'other'

export type ThinkingLevel = 'minimal' | 'low' | 'medium' | 'high' | 'xhigh'
/** Every level a file may name, lowest first: a model's `levels` keep this order. */
export const THINKING_LEVELS: readonly ThinkingLevel[] = ['minimal', 'low', 'medium', 'high', 'xhigh']
export const SAMPLING_FIELDS = ['temperature', 'topP', 'topK'] as const
export type SamplingField = typeof SAMPLING_FIELDS[number]
export const PENALTY_FIELDS = ['presencePenalty', 'frequencyPenalty'] as const
export type PenaltyField = typeof PENALTY_FIELDS[number]
/** A model's stage on one backend (docs/model-proxy.md, "The model file"). */
export const MODEL_STAGES = ['preview', 'ga', 'shutdown'] as const
export type ModelStage = typeof MODEL_STAGES[number]
const FAMILIES: readonly ModelFamily[] = ['gemini-2.5-flash', 'gemini-2.5-pro', 'gemini-3', 'gemini-4', 'image', 'legacy', 'embedding', 'other']
/** The backend names a model file's `backends` may hold (Backend.name of the built-in backends). */
export const MODEL_BACKENDS = ['gemini-api', 'vertex', 'code-assist'] as const
const MODALITIES = ['text', 'image', 'audio', 'video', 'pdf', 'embedding'] as const
/** The surfaces a model may be limited to (`surfaces`): usage rows' names of them. */
const SURFACES = ['chat', 'native', 'messages', 'responses', 'interactions'] as const

export type ThinkingControl =
  | { budget: { min: number, max: number, off?: number } }
  | { levels: ThinkingLevel[], default?: ThinkingLevel }

/** Where a model stands on one backend: from `on` (a shutdown's date) the gateway serves `replacement` instead. */
export interface ModelStatus {
  stage: ModelStage
  /** The release date (YYYY-MM-DD), when known. */
  since?: string
  /** A shutdown's date (YYYY-MM-DD, UTC): from its first instant the model is no longer sent upstream. */
  on?: string
  /** The file's model that serves a shut-down one. */
  replacement?: string
}

/** One model of the file. */
export interface ModelSpec {
  id: string
  family: ModelFamily
  /** Retired ids this model now serves. */
  aliases: string[]
  /** null: the model does not think (no thinkingConfig is sent). */
  thinking: ThinkingControl | null
  /** The generationConfig sampling fields the model still accepts; the others are dropped. */
  sampling: SamplingField[]
  input: string[]
  output: string[]
  backends: string[]
  /**
   * input/output: the listed token limits. window: one budget input, thinking and output share (absent: none beyond
   * those). perCall: the most output one upstream call gives, streamed and not, when a longer answer continues
   * through a continuation token (lib/proxy/models/continuation.ts).
   */
  limits: { input: number, output: number, window?: number, perCall?: { stream: number, nonStream: number } }
  /** The penalty fields the model accepts; the others are dropped (absent in the file: both). */
  penalties: PenaltyField[]
  /** The largest candidateCount the model accepts; a larger one is dropped (absent: no limit). */
  maxCandidates?: number
  /** Per backend, the locations that serve the model (Vertex); a backend not named here serves it everywhere. */
  locations: Record<string, string[]>
  /** Whether the model takes explicit context caches (cachedContents); absent: not known. */
  explicitCaching?: boolean
  /** The only surfaces that serve the model (Gemini Omni: `interactions`); absent: every surface. */
  surfaces?: string[]
  /** Per backend of `backends`, where the model stands; a backend not named is `{ stage: 'ga' }`. */
  status: Record<string, ModelStatus>
  sources: string[]
  /** The fields (dotted paths of this entry) that Google's pages did not confirm. */
  unconfirmed: string[]
}

/** The shipped model file. */
export const DEFAULT_MODELS_FILE = fileURLToPath(new URL('./models.json', import.meta.url))

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Checks a parsed model file; `where` names it in errors. */
export function parseModelFile (data: unknown, where: string): ModelSpec[] {
  const bad = (field: string, rule: string): never => {
    throw new ConfigurationError('modelsFile', `createProxy: modelsFile ${where}: ${field} must be ${rule}`)
  }
  if (!isObject(data)) bad('the file', 'a JSON object')
  const file = data as Record<string, unknown>
  if (!Array.isArray(file.models) || file.models.length === 0) bad('models', 'a non-empty array')
  const specs: ModelSpec[] = []
  const names = new Set<string>()
  for (const [i, raw] of (file.models as unknown[]).entries()) {
    const at = (field: string): string => `models[${i}]${field === '' ? '' : '.' + field}`
    if (!isObject(raw)) bad(at(''), 'an object')
    const m = raw as Record<string, unknown>
    const id = m.id
    if (typeof id !== 'string' || !/^gemini-[a-z0-9][a-z0-9._-]*$/.test(id)) bad(at('id'), 'a model id starting with "gemini-" (lower case letters, digits, ".", "_", "-")')
    const strings = (field: string, allowed?: readonly string[], nonEmpty = false): string[] => {
      const list = m[field]
      if (!Array.isArray(list) || (nonEmpty && list.length === 0) || !list.every(v => typeof v === 'string' && (allowed === undefined || allowed.includes(v)))) {
        bad(at(field), (nonEmpty ? 'a non-empty array' : 'an array') + (allowed === undefined ? ' of strings' : ` of ${allowed.map(a => JSON.stringify(a)).join(', ')}`))
      }
      return [...list as string[]]
    }
    if (!FAMILIES.includes(m.family as ModelFamily)) bad(at('family'), `one of ${FAMILIES.join(', ')}`)
    const aliases = strings('aliases')
    const limits = m.limits
    const positive = (n: unknown): boolean => Number.isSafeInteger(n) && (n as number) >= 1
    if (!isObject(limits) || !positive(limits.input) || !positive(limits.output) || (limits.window !== undefined && !positive(limits.window))) {
      bad(at('limits'), '{ input, output, window? } with positive whole numbers')
    }
    const perCall = (limits as Record<string, unknown>).perCall
    if (perCall !== undefined && (!isObject(perCall) || !positive(perCall.stream) || !positive(perCall.nonStream))) {
      bad(at('limits.perCall'), '{ stream, nonStream } with positive whole numbers')
    }
    if (m.maxCandidates !== undefined && !positive(m.maxCandidates)) bad(at('maxCandidates'), 'a positive whole number')
    if (m.explicitCaching !== undefined && typeof m.explicitCaching !== 'boolean') bad(at('explicitCaching'), 'true or false')
    const backendKeyed = <V>(field: string, check: (value: unknown, where: string) => V): Record<string, V> => {
      const value = m[field]
      if (value === undefined) return {}
      if (!isObject(value)) return bad(at(field), 'an object keyed by backend names')
      const out: Record<string, V> = {}
      for (const [name, v] of Object.entries(value)) {
        if (!(MODEL_BACKENDS as readonly string[]).includes(name)) bad(at(`${field}.${name}`), `named for a backend (${MODEL_BACKENDS.join(', ')})`)
        out[name] = check(v, at(`${field}.${name}`))
      }
      return out
    }
    const locations = backendKeyed('locations', (v, where) => {
      if (!Array.isArray(v) || v.length === 0 || !v.every(l => typeof l === 'string' && /^[a-z0-9-]+$/.test(l))) bad(where, 'a non-empty array of location names')
      return [...v as string[]]
    })
    const status = backendKeyed('status', (v, where) => parseStatus(v, where, bad))
    const spec: ModelSpec = {
      id: id as string,
      family: m.family as ModelFamily,
      aliases,
      thinking: parseThinking(m.thinking, at('thinking'), bad),
      sampling: strings('sampling', SAMPLING_FIELDS) as SamplingField[],
      input: strings('input', MODALITIES),
      output: strings('output', MODALITIES),
      // Required and never empty: which upstreams serve a model is the operator's call, not a default.
      backends: strings('backends', MODEL_BACKENDS, true),
      limits: {
        input: (limits as { input: number }).input,
        output: (limits as { output: number }).output,
        ...((limits as { window?: number }).window === undefined ? {} : { window: (limits as { window: number }).window }),
        ...(perCall === undefined ? {} : { perCall: { stream: (perCall as { stream: number }).stream, nonStream: (perCall as { nonStream: number }).nonStream } }),
      },
      penalties: m.penalties === undefined ? [...PENALTY_FIELDS] : strings('penalties', PENALTY_FIELDS) as PenaltyField[],
      ...(m.maxCandidates === undefined ? {} : { maxCandidates: m.maxCandidates as number }),
      locations,
      ...(m.explicitCaching === undefined ? {} : { explicitCaching: m.explicitCaching as boolean }),
      ...(m.surfaces === undefined ? {} : { surfaces: strings('surfaces', SURFACES, true) }),
      status,
      sources: strings('sources'),
      unconfirmed: m.unconfirmed === undefined ? [] : strings('unconfirmed'),
    }
    for (const path of spec.unconfirmed) {
      if (!hasPath(m, path)) bad(at('unconfirmed'), `paths of fields this entry has ("${path}" is not one)`)
    }
    if (spec.sources.some(s => !s.startsWith('https://'))) bad(at('sources'), 'https:// addresses')
    for (const name of [spec.id, ...aliases]) {
      if (names.has(name)) bad(at(name === spec.id ? 'id' : 'aliases'), `unique across ids and aliases (${JSON.stringify(name)} appears twice)`)
      if (!/^gemini-[a-z0-9][a-z0-9._-]*$/.test(name)) bad(at('aliases'), 'model ids starting with "gemini-"')
      names.add(name)
    }
    specs.push(spec)
  }
  checkReplacements(specs, bad)
  return specs
}

/** Whether `path` (dotted keys) names a field of `entry`: the rule of both files' `unconfirmed` lists. */
export function hasPath (entry: Record<string, unknown>, path: string): boolean {
  let at: unknown = entry
  for (const key of path.split('.')) {
    if (!isObject(at) || !(key in at)) return false
    at = at[key]
  }
  return true
}

const DATE = /^\d{4}-\d{2}-\d{2}$/

function parseStatus (value: unknown, where: string, bad: (field: string, rule: string) => never): ModelStatus {
  const rule = '{ stage: "preview" | "ga", since? } or { stage: "shutdown", on, replacement, since? } with dates as YYYY-MM-DD'
  if (!isObject(value) || !MODEL_STAGES.includes(value.stage as ModelStage)) return bad(where, rule)
  const date = (d: unknown): boolean => typeof d === 'string' && DATE.test(d) && !Number.isNaN(Date.parse(`${d}T00:00:00Z`))
  if (value.since !== undefined && !date(value.since)) return bad(where, rule)
  const shutdown = value.stage === 'shutdown'
  if (shutdown !== (value.on !== undefined) || shutdown !== (value.replacement !== undefined)) return bad(where, rule)
  if (shutdown && (!date(value.on) || typeof value.replacement !== 'string')) return bad(where, rule)
  return {
    stage: value.stage as ModelStage,
    ...(value.since === undefined ? {} : { since: value.since as string }),
    ...(shutdown ? { on: value.on as string, replacement: value.replacement as string } : {}),
  }
}

/** Every replacement is a model of the file served by that backend, and no chain of replacements comes back to where it started. */
function checkReplacements (specs: ModelSpec[], bad: (field: string, rule: string) => never): void {
  const byId = new Map(specs.map(s => [s.id, s]))
  for (const [i, spec] of specs.entries()) {
    for (const backend of Object.keys(spec.status)) {
      const seen = new Set<string>()
      for (let s: ModelSpec | undefined = spec; s?.status[backend]?.replacement !== undefined; s = byId.get(s.status[backend].replacement as string)) {
        const next = byId.get(s.status[backend].replacement as string)
        if (next === undefined || !next.backends.includes(backend)) bad(`models[${i}].status.${backend}.replacement`, `a model of this file served by ${backend} (${JSON.stringify(s.status[backend].replacement)} is not)`)
        if (seen.has(s.id)) bad(`models[${i}].status.${backend}.replacement`, 'a chain of replacements that ends (it comes back to ' + JSON.stringify(s.id) + ')')
        seen.add(s.id)
      }
    }
  }
}

/**
 * The models that replace `spec` on `backend` at `now`, nearest first: from a shutdown's date on its replacement,
 * then that one's while it is shut down too. Empty while `spec` is not shut down there.
 */
export function replacementChain (spec: ModelSpec, byId: ReadonlyMap<string, ModelSpec>, backend: string, now: Date): ModelSpec[] {
  const chain: ModelSpec[] = []
  let current = spec
  for (let hops = 0; hops <= byId.size; hops++) {
    const status = current.status[backend]
    if (status?.stage !== 'shutdown' || now.getTime() < Date.parse(`${status.on as string}T00:00:00Z`)) return chain
    const next = byId.get(status.replacement as string)
    if (next === undefined) return chain
    chain.push(next)
    current = next
  }
  return chain
}

/** The model that answers for `spec` on `backend` at `now` by the file alone: the end of its replacement chain, or undefined when nothing replaces it. */
export function servedBy (spec: ModelSpec, byId: ReadonlyMap<string, ModelSpec>, backend: string, now: Date): ModelSpec | undefined {
  return replacementChain(spec, byId, backend, now).at(-1)
}

function parseThinking (value: unknown, at: string, bad: (field: string, rule: string) => never): ThinkingControl | null {
  if (value === null) return null
  const rule = 'null, { "budget": { min, max, off? } } or { "levels": [...], "default"? }, never both'
  if (!isObject(value) || ('budget' in value) === ('levels' in value)) return bad(at, rule)
  if ('budget' in value) {
    const b = value.budget
    const whole = (n: unknown): boolean => Number.isSafeInteger(n) && (n as number) >= 0
    if (!isObject(b) || !whole(b.min) || !whole(b.max) || (b.min as number) > (b.max as number) || (b.off !== undefined && !whole(b.off))) {
      return bad(`${at}.budget`, '{ min, max, off? } with whole numbers, min <= max')
    }
    return { budget: { min: b.min as number, max: b.max as number, ...(b.off === undefined ? {} : { off: b.off as number }) } }
  }
  const levels = value.levels
  if (!Array.isArray(levels) || levels.length === 0 || !levels.every(l => THINKING_LEVELS.includes(l)) ||
    levels.some((l, k) => k > 0 && THINKING_LEVELS.indexOf(l) <= THINKING_LEVELS.indexOf(levels[k - 1]))) {
    return bad(`${at}.levels`, `a non-empty array of ${THINKING_LEVELS.join(', ')}, lowest first, each once`)
  }
  if (value.default !== undefined && !levels.includes(value.default)) return bad(`${at}.default`, 'one of the levels')
  return { levels: [...levels] as ThinkingLevel[], ...(value.default === undefined ? {} : { default: value.default as ThinkingLevel }) }
}

/** Reads and checks a model file (default the shipped one). */
export function loadModelFile (path: string = DEFAULT_MODELS_FILE): ModelSpec[] {
  return parseModelFile(readJsonOptionFile('modelsFile', path), path)
}

/**
 * Refuses a cache creation (`cachedContents`) on a model whose entry says it takes no explicit caches (Gemini 4
 * caches implicitly): before any upstream call, with EXPLICIT_CACHING_UNSUPPORTED. A model the file does not know passes.
 */
export function refuseExplicitCache (model: { requested: string, spec?: ModelSpec }): void {
  if (model.spec?.explicitCaching !== false) return
  throw fail('EXPLICIT_CACHING_UNSUPPORTED', `The model \`${model.requested}\` takes no explicit context caches (cachedContents): ` +
    'it caches repeated prompt prefixes by itself (implicit caching), so send the prompt as it is; docs/model-proxy.md, "Gemini 4"')
}

/**
 * Drops from a generationConfig what the model's entry says it does not take: sampling and penalty fields it does
 * not accept and a candidateCount above its largest; a maxOutputTokens above its shared window becomes the window.
 * Every surface's call runs it once (lib/proxy/call/request-rules.ts).
 */
export function dropRefusedFields (spec: ModelSpec | undefined, generationConfig: Record<string, unknown>): void {
  if (spec === undefined) return
  for (const field of SAMPLING_FIELDS) if (!spec.sampling.includes(field)) delete generationConfig[field]
  for (const field of PENALTY_FIELDS) if (!spec.penalties.includes(field)) delete generationConfig[field]
  const count = generationConfig.candidateCount
  if (spec.maxCandidates !== undefined && typeof count === 'number' && count > spec.maxCandidates) delete generationConfig.candidateCount
  // Output can never exceed the window it shares with the input: a larger maxOutputTokens asks for the whole window.
  const max = generationConfig.maxOutputTokens
  if (spec.limits.window !== undefined && typeof max === 'number' && max > spec.limits.window) generationConfig.maxOutputTokens = spec.limits.window
}
