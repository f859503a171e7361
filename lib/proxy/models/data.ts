// The model file: what each model accepts (thinking control, sampling fields), serves (modalities, backends) and
// replaces (aliases). The shipped file is models.json next to this module; `createProxy({ modelsFile })`
// (GEMINI_MODELS_FILE) names another one. The file is read and checked once, at construction, and every problem
// is a ConfigurationError naming the option, the file and the field (docs/model-proxy.md, "The model file").
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { ConfigurationError } from '../../errors.ts'

/** Model families that decide variants and thinking budgets (docs/model-proxy.md, "Families"). */
export type ModelFamily = 'gemini-2.5-flash' | 'gemini-2.5-pro' | 'gemini-3' | 'image' | 'legacy' | 'embedding' | 'other'

export type ThinkingLevel = 'minimal' | 'low' | 'medium' | 'high'
export const THINKING_LEVELS: readonly ThinkingLevel[] = ['minimal', 'low', 'medium', 'high']
export const SAMPLING_FIELDS = ['temperature', 'topP', 'topK'] as const
export type SamplingField = typeof SAMPLING_FIELDS[number]
const FAMILIES: readonly ModelFamily[] = ['gemini-2.5-flash', 'gemini-2.5-pro', 'gemini-3', 'image', 'legacy', 'embedding', 'other']
/** The backend names a model file's `backends` may hold (Backend.name of the built-in backends). */
export const MODEL_BACKENDS = ['gemini-api', 'vertex', 'code-assist'] as const
const MODALITIES = ['text', 'image', 'audio', 'video', 'pdf', 'embedding'] as const

export type ThinkingControl =
  | { budget: { min: number, max: number, off?: number } }
  | { levels: ThinkingLevel[], default?: ThinkingLevel }

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
  limits: { input: number, output: number }
  sources: string[]
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
    if (!isObject(limits) || !Number.isSafeInteger(limits.input) || !Number.isSafeInteger(limits.output) || (limits.input as number) < 1 || (limits.output as number) < 1) {
      bad(at('limits'), '{ input, output } with positive whole numbers')
    }
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
      limits: { input: (limits as { input: number }).input, output: (limits as { output: number }).output },
      sources: strings('sources'),
    }
    if (spec.sources.some(s => !s.startsWith('https://'))) bad(at('sources'), 'https:// addresses')
    for (const name of [spec.id, ...aliases]) {
      if (names.has(name)) bad(at(name === spec.id ? 'id' : 'aliases'), `unique across ids and aliases (${JSON.stringify(name)} appears twice)`)
      if (!/^gemini-[a-z0-9][a-z0-9._-]*$/.test(name)) bad(at('aliases'), 'model ids starting with "gemini-"')
      names.add(name)
    }
    specs.push(spec)
  }
  return specs
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
  if (!Array.isArray(levels) || levels.length === 0 || !levels.every(l => THINKING_LEVELS.includes(l))) {
    return bad(`${at}.levels`, `a non-empty array of ${THINKING_LEVELS.join(', ')}`)
  }
  if (value.default !== undefined && !levels.includes(value.default)) return bad(`${at}.default`, 'one of the levels')
  return { levels: [...levels] as ThinkingLevel[], ...(value.default === undefined ? {} : { default: value.default as ThinkingLevel }) }
}

/** Reads and checks a model file (default the shipped one). */
export function loadModelFile (path: string = DEFAULT_MODELS_FILE): ModelSpec[] {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    throw new ConfigurationError('modelsFile', `createProxy: modelsFile ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, { cause: err })
  }
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch (err) {
    throw new ConfigurationError('modelsFile', `createProxy: modelsFile ${path} is not JSON (${(err as Error).message})`, { cause: err })
  }
  return parseModelFile(data, path)
}

/**
 * Whether a request for this model may carry a sampling field (temperature, topP, topK). Models of the file
 * that no longer accept one have it dropped from generationConfig on both surfaces; other models keep it.
 */
export function acceptsSampling (spec: ModelSpec | undefined, field: SamplingField): boolean {
  return spec === undefined || spec.sampling.includes(field)
}
