// The model catalog: which ids are listed, their limits, and which names a request may use. What each model
// accepts comes from the model file (lib/proxy/models/data.ts); a retired id (an alias) is served by its replacement.
// Listed: every base model plus its variants (-search for all but image models; -nothinking,
// -maxthinking and the -search combinations for models that think).
// Requests may also name models outside the catalog as long as the base starts with `gemini-`
// (the upstream knows models we don't, and decides); anything else is a 404 model_not_found.
// A model of the file whose `backends` leave out the configured backend is neither listed nor sent: the file
// knows that upstream does not serve it, so it is a 404 naming the backend (after aliases resolve, for every
// variant and spelling), the same on every surface because every route resolves names here.
// A model the file says is shut down on the configured backend is, from that date on (by the clock given), served
// by its replacement: the name resolves to the replacement, and the answer names it (docs/model-proxy.md,
// "Shut-down models").
import { ConfigurationError, fail } from '../../errors.ts'
import type { ModelName } from './name.ts'
import { checkModelName, parseModelName, normaliseModelId, modelFamily } from './name.ts'
import type { ModelSpec } from './data.ts'
import { MODEL_BACKENDS, loadModelFile, replacementChain, servedBy } from './data.ts'
import type { DiscoveredModels } from './discovery.ts'

const SHIPPED: readonly ModelSpec[] = loadModelFile()

/** Per model id of `specs` (default the shipped file), the locations the model file lists for it on `backend`. */
export function modelLocations (specs: readonly ModelSpec[] = SHIPPED, backend = 'vertex'): (model: string) => readonly string[] | undefined {
  const byId = new Map(specs.map(s => [s.id, s.locations[backend]]))
  return model => byId.get(model)
}

/** The base ids of the shipped model file (lib/proxy/models/models.json), in its order. */
export const DEFAULT_MODELS: readonly string[] = SHIPPED.map(m => m.id)

// For ids the model file does not know.
const DEFAULT_LIMITS: [number, number] = [1048576, 65535]

/** The OpenAI list entries' fixed `created` (the reference's value; the upstream gives none). */
const CREATED = 1677610602

/** A model as the native API lists it. */
export interface NativeModel {
  name: string
  version: string
  displayName: string
  description: string
  inputTokenLimit: number
  outputTokenLimit: number
  supportedGenerationMethods: string[]
  temperature: number
  maxTemperature: number
  topP: number
  topK: number
  thinking?: boolean
  /** Present (true) when no price is in force for the model that serves the id (docs/prices.md, "Unpriced models"). */
  unpriced?: true
}

/** Whether the price list holds a price in force at `at` for `model` on the configured backend. */
export type PriceKnown = (model: string, at: Date) => boolean

export interface ModelCatalog {
  /** Every listed id (variants included), sorted. */
  readonly ids: readonly string[]
  /** The native entry for a listed id (`lm-` and `models/` accepted), or undefined; throws MODEL_NOT_FOUND naming the backend for a model it does not serve. */
  get (id: string): NativeModel | undefined
  /** The entry as listed, without its price flag and never throwing: what a call's reservation and usage row read. */
  listed (id: string): NativeModel | undefined
  /** Parses a requested name; throws MODEL_NOT_FOUND for names the proxy will not send upstream. */
  resolve (name: string): ModelName
  /** `GET /v1/models` body: every listed id, or those whose base name `allows` accepts. */
  openaiList (allows?: (base: string) => boolean): { object: 'list', data: Array<Record<string, unknown>> }
  /** `GET /v1/models/{id}` body for a listed id, or undefined; throws like get. */
  openaiModel (id: string): Record<string, unknown> | undefined
  /** `GET /v1beta/models` body: every listed model, or those whose base name `allows` accepts. */
  nativeList (allows?: (base: string) => boolean): { models: NativeModel[] }
  /** The listed base ids whose serving model has no price in force now (none without a price lookup), sorted. */
  unpriced (): string[]
  /** Each listed base model's family and where it stands on the backend now (the console's upstream page). */
  standings (): ModelStanding[]
}

/** A listed base model's family and stage on the backend now; a shut-down one names the model that serves it. */
export interface ModelStanding {
  id: string
  family: string
  stage: 'ga' | 'preview' | 'shutdown'
  /** The shutdown's date (YYYY-MM-DD): in the past for a shut-down model, else the day a model still served goes. */
  shutdownOn?: string
  /** The model that serves it from that date. */
  replacement?: string
}

function titleCase (id: string): string {
  return id.split('-').map(w => w.length > 0 ? w[0].toUpperCase() + w.slice(1) : w).join(' ')
}

const VARIANT_TEXT: Record<string, [display: string, description: string]> = {
  '-search': [' with Google Search', ' (includes Google Search grounding)'],
  '-nothinking': [' (No Thinking)', ' (thinking disabled)'],
  '-maxthinking': [' (Max Thinking)', ' (maximum thinking budget)'],
}

function variantSuffixes (base: string, spec: ModelSpec | undefined): string[][] {
  const family = spec?.family ?? modelFamily(base)
  if (family === 'image' || family === 'embedding') return [[]]
  const list: string[][] = [[], ['-search']]
  if (spec !== undefined ? spec.thinking !== null : family !== 'legacy' && family !== 'other') {
    list.push(['-nothinking'], ['-maxthinking'], ['-search', '-nothinking'], ['-search', '-maxthinking'])
  }
  return list
}

function entry (base: string, suffixes: string[], spec: ModelSpec | undefined): NativeModel {
  const [input, output] = spec === undefined ? DEFAULT_LIMITS : [spec.limits.input, spec.limits.output]
  const family = spec?.family ?? modelFamily(base)
  const id = base + suffixes.join('')
  const model: NativeModel = {
    name: `models/${id}`,
    version: '001',
    displayName: titleCase(base) + suffixes.map(s => VARIANT_TEXT[s][0]).join(''),
    description: `${titleCase(base)} through the Gatehouse proxy` + suffixes.map(s => VARIANT_TEXT[s][1]).join(''),
    inputTokenLimit: input,
    outputTokenLimit: output,
    supportedGenerationMethods: family === 'embedding' ? ['embedContent', 'batchEmbedContents', 'countTokens'] : ['generateContent', 'streamGenerateContent', 'countTokens'],
    temperature: 1,
    maxTemperature: 2,
    topP: 0.95,
    topK: 64,
  }
  if (spec !== undefined ? spec.thinking !== null : family !== 'image' && family !== 'legacy') model.thinking = true
  return model
}

/**
 * Builds the catalog from base ids (default: every model of the file); variants are generated. `specs` is the
 * parsed model file (default the shipped one, lib/proxy/models/models.json); ids it does not know go by family.
 * `backend` is the configured Backend's name: models whose file entry leaves it out of `backends` are not listed
 * and answer 404 naming it, and a model shut down on it is served by its replacement from the shutdown's date (read
 * from `now`, default the wall clock). Default none (as any name the file does not know): no model is left out or replaced.
 * `priceKnown` (the price list, lib/metering/call-cost.ts) marks the entries of models with no price (`unpriced`).
 */
export function createModelCatalog (models?: readonly string[], specs: readonly ModelSpec[] = SHIPPED, backend?: string, now: () => Date = () => new Date(), discovered?: DiscoveredModels, priceKnown?: PriceKnown): ModelCatalog {
  // Discovery (lib/proxy/models/discovery.ts): only what the upstream lists is offered, plus what it lists and the file lacks.
  if (discovered !== undefined) {
    specs = [...specs, ...discovered.added]
    if (models !== undefined) models = [...models, ...discovered.added.map(s => s.id)]
  }
  const offered = (base: string): boolean => discovered === undefined || discovered.offered.has(base)
  const byId = new Map<string, ModelSpec>()
  const replacement = new Map<string, string>()
  for (const spec of specs) {
    byId.set(spec.id, spec)
    for (const alias of spec.aliases) replacement.set(alias, spec.id)
  }
  const filtering = backend !== undefined && (MODEL_BACKENDS as readonly string[]).includes(backend)
  const serves = (spec: ModelSpec | undefined): boolean => !filtering || spec === undefined || spec.backends.includes(backend as string)
  // Replacements win over discovery: an id the upstream still lists is served as itself, else by the nearest model of
  // its replacement chain that a credential lists (Google may still list, and route, an id the file has shut down).
  const replacedBy = (spec: ModelSpec | undefined, at: Date): ModelSpec | undefined => {
    if (spec === undefined || !filtering) return undefined
    if (discovered === undefined) return servedBy(spec, byId, backend as string, at)
    if (offered(spec.id)) return undefined
    return replacementChain(spec, byId, backend as string, at).find(next => offered(next.id))
  }
  const explicit = models !== undefined
  models ??= specs.map(s => s.id)
  const entries = new Map<string, NativeModel>()
  const baseOf = new Map<string, string>()
  for (const raw of models) {
    try {
      checkModelName(raw)
    } catch (err) {
      throw new ConfigurationError('models', `createProxy: models: ${JSON.stringify(raw)} is not a model id (${(err as Error).message})`, { cause: err })
    }
    const base = parseModelName(raw).base
    const spec = byId.get(base)
    if (!offered(base) && replacedBy(spec, now()) === undefined) continue
    if (!serves(spec)) {
      if (!explicit) continue
      throw new ConfigurationError('models', `createProxy: models: ${JSON.stringify(raw)} is not served by the ${String(backend)} backend (the model file lists it for ${(spec as ModelSpec).backends.join(', ')})`)
    }
    for (const suffixes of variantSuffixes(base, spec)) {
      const model = entry(base, suffixes, spec)
      entries.set(model.name.slice('models/'.length), model)
      baseOf.set(model.name.slice('models/'.length), base)
    }
  }
  const ids = [...entries.keys()].sort()
  const sorted = ids.map(id => entries.get(id) as NativeModel)
  const bases = new Set([...baseOf.values()])
  // The file's entry a parsed name stands for (a retired id the catalog does not list itself goes to the model that
  // replaced it); throws when the backend does not serve it.
  const specOf = (model: ModelName): [string, ModelSpec | undefined] => {
    const base = bases.has(model.base) ? model.base : replacement.get(model.base) ?? model.base
    const spec = byId.get(base)
    if (!offered(base) && replacedBy(spec, now()) === undefined) throw fail('MODEL_NOT_FOUND', `The model \`${model.requested}\`${model.base === base ? '' : ` (now ${base})`} is not listed by the ${String(backend)} upstream for any configured credential; GET /v1/models lists the available ones`)
    if (spec !== undefined && !serves(spec)) {
      throw fail('MODEL_NOT_FOUND', `The model \`${model.requested}\`${model.base === base ? '' : ` (now ${base})`} is not served by the ` +
        `${String(backend)} backend (the model file lists it for ${spec.backends.join(', ')}); GET /v1/models lists the available ones`)
    }
    return [base, spec]
  }
  // Priced as the model that answers it now: a shut-down id costs what its replacement costs.
  const unpricedBase = (base: string, at: Date): boolean => {
    if (priceKnown === undefined) return false
    const spec = byId.get(base)
    return !priceKnown(replacedBy(spec, at)?.id ?? base, at)
  }
  const flagAt = (at: Date): ((id: string) => boolean) => {
    const flagged = new Set([...bases].filter(base => unpricedBase(base, at)))
    return id => flagged.has(baseOf.get(id) as string)
  }
  const openaiOf = (id: string, unpriced: boolean): Record<string, unknown> => unpriced ? { ...openaiEntry(id), unpriced: true } : openaiEntry(id)
  const nativeOf = (model: NativeModel, unpriced: boolean): NativeModel => unpriced ? { ...model, unpriced: true } : model
  // Detail routes: a model the backend does not serve says so; other unlisted names stay the route's own 404.
  const refuseUnserved = (id: string): void => {
    let model: ModelName
    try {
      model = parseModelName(id)
    } catch {
      return
    }
    specOf(model)
  }

  return {
    ids,
    get (id) {
      const name = normaliseModelId(id)
      const entry = entries.get(name)
      if (entry === undefined) refuseUnserved(id)
      return entry === undefined ? undefined : nativeOf(entry, unpricedBase(baseOf.get(name) as string, now()))
    },
    // No clock and no price lookup: this runs several times a call on the proxy's hot path.
    listed: id => entries.get(normaliseModelId(id)),
    resolve (name) {
      const model = parseModelName(name)
      if (model.conflicting) throw fail('MODEL_NOT_FOUND', `The model \`${name}\` asks for both -nothinking and -maxthinking`)
      if (!bases.has(model.base) && !/^gemini-[a-z0-9]/.test(model.base)) {
        throw fail('MODEL_NOT_FOUND', `The model \`${name}\` does not exist; GET /v1/models lists the available ones`)
      }
      const [base, spec] = specOf(model)
      if (spec === undefined) return model
      const replacement = replacedBy(spec, now())
      if (replacement === undefined) return { ...model, base, family: spec.family, spec }
      // The answer names the model that answered, with the variant suffixes the client asked for.
      const suffixes = (model.search ? '-search' : '') + (model.thinking === 'none' ? '-nothinking' : model.thinking === 'max' ? '-maxthinking' : '')
      return { ...model, requested: replacement.id + suffixes, base: replacement.id, family: replacement.family, spec: replacement, shutDown: spec.id }
    },
    openaiList (allows) {
      const unpriced = flagAt(now())
      return { object: 'list', data: (allows === undefined ? ids : ids.filter(id => allows(baseOf.get(id) as string))).map(id => openaiOf(id, unpriced(id))) }
    },
    openaiModel (id) {
      const name = normaliseModelId(id)
      if (entries.has(name)) return openaiOf(name, unpricedBase(baseOf.get(name) as string, now()))
      refuseUnserved(id)
      return undefined
    },
    nativeList (allows) {
      const unpriced = flagAt(now())
      const listed = allows === undefined ? sorted : sorted.filter(m => allows(baseOf.get(m.name.slice('models/'.length)) as string))
      return { models: listed.map(m => nativeOf(m, unpriced(m.name.slice('models/'.length)))) }
    },
    unpriced () {
      const at = now()
      return [...bases].filter(base => unpricedBase(base, at)).sort()
    },
    standings () {
      const at = now()
      return [...bases].sort().map(id => {
        const spec = byId.get(id)
        const status = spec === undefined || !filtering ? undefined : spec.status[backend as string]
        const family = spec?.family ?? modelFamily(id)
        // A stage the file leaves out: preview when Google's id says so (`-preview`, `-preview-06-05`), else GA.
        if (status?.stage !== 'shutdown') return { id, family, stage: status?.stage ?? (/-preview(-|$)/.test(id) ? 'preview' : 'ga') }
        const gone = replacedBy(spec, at) !== undefined
        return { id, family, stage: gone ? 'shutdown' : 'ga', shutdownOn: status.on, replacement: status.replacement }
      })
    },
  }
}

function openaiEntry (id: string): Record<string, unknown> {
  return {
    id,
    object: 'model',
    created: CREATED,
    owned_by: 'google',
    permission: [{
      id: `modelperm-${id}`,
      object: 'model_permission',
      created: CREATED,
      allow_create_engine: false,
      allow_sampling: true,
      allow_logprobs: false,
      allow_search_indices: false,
      allow_view: true,
      allow_fine_tuning: false,
      organization: '*',
      group: null,
      is_blocking: false,
    }],
    root: id,
    parent: null,
  }
}
