// Model discovery (docs/upstream-protocol.md, "Model discovery"): in the background at start and every intervalMs, the
// upstream's own model list (Backend.listModels: the Gemini API's models.list per key, Vertex's publisher models)
// is merged with the model file. A model the upstream does not list is not offered (the backend also routes each
// model only to the credentials that list it); a Gemini model the upstream lists and the file lacks is served with
// safe defaults taken from the list and reported. A failed round keeps the last good list. Off unless asked for.
import type { Logger } from '../../logger.ts'
import { SILENT_LOGGER } from '../../logger.ts'
import type { Backend, ListedModel, ModelListing, ProxyObserver } from '../upstream/backend.ts'
import type { ModelSpec } from './data.ts'
import { PENALTY_FIELDS, SAMPLING_FIELDS } from './data.ts'
import { modelFamily } from './name.ts'

export const DISCOVERY_DEFAULTS = {
  /** Time between two discovery rounds: 6 h (models come and go by the week; a round costs one list call per credential). */
  intervalMs: 6 * 3600_000,
} as const

// Limits for a listed model whose entry gives none (Vertex's publisher list never does).
const FALLBACK_LIMITS = { input: 1_048_576, output: 8_192 }

/** What discovery found, in the catalog's terms. */
export interface DiscoveredModels {
  /** Base ids the upstream lists through at least one credential: the only ones offered. */
  offered: ReadonlySet<string>
  /** Listed Gemini models the model file lacks, as model-file entries with safe defaults. */
  added: readonly ModelSpec[]
}

/**
 * The model-file entry for a listed model the file lacks: its limits as listed (else FALLBACK_LIMITS), every sampling
 * field, text in and out, and no thinking control (the list says whether a model thinks, not whether it takes
 * budgets or levels, so nothing is sent and the model thinks as it does by default), both penalties, GA everywhere.
 */
export function specFromListing (model: ListedModel, backend: string): ModelSpec {
  return {
    id: model.id,
    family: modelFamily(model.id),
    aliases: [],
    thinking: null,
    sampling: [...SAMPLING_FIELDS],
    penalties: [...PENALTY_FIELDS],
    locations: {},
    status: {},
    unconfirmed: [],
    input: ['text'],
    output: ['text'],
    backends: [backend],
    limits: { input: model.inputTokenLimit ?? FALLBACK_LIMITS.input, output: model.outputTokenLimit ?? FALLBACK_LIMITS.output },
    sources: ['upstream model list (discovery)'],
  }
}

/** A listed model the proxy can serve: a Gemini model that generates or embeds (other publishers' and tools' models are left out). */
function servable (model: ListedModel): boolean {
  if (!/^gemini-[a-z0-9]/.test(model.id)) return false
  return model.methods === undefined || model.methods.some(m => m === 'generateContent' || m === 'embedContent')
}

/** Merges one listing with the model file. */
export function mergeListing (listing: ModelListing, specs: readonly ModelSpec[], backend: string): DiscoveredModels {
  const known = new Set(specs.flatMap(s => [s.id, ...s.aliases]))
  const offered = new Set(listing.models.map(m => m.id))
  const added = listing.models.filter(m => servable(m) && !known.has(m.id)).map(m => specFromListing(m, backend))
  return { offered, added }
}

export interface ModelDiscoveryOptions {
  backend: Backend
  /** The model file's entries the listing is merged with. */
  specs: readonly ModelSpec[]
  /** Time between rounds in ms. Default DISCOVERY_DEFAULTS.intervalMs. */
  intervalMs?: number
  /** Called with each successful round's result. */
  onChange: (discovered: DiscoveredModels) => void
  logger?: Logger
  observer?: ProxyObserver
}

export interface ModelDiscovery {
  /** Runs one round now; resolves when it has ended (a failure is logged, never thrown). */
  run (): Promise<void>
  /** The last good round's result, or undefined before the first. */
  current (): DiscoveredModels | undefined
  stop (): void
}

/** Starts discovery: the first round right after start-up, off the request path, then one every intervalMs. Timers never keep the process alive. */
export function startModelDiscovery (options: ModelDiscoveryOptions): ModelDiscovery {
  const logger = options.logger ?? SILENT_LOGGER
  const list = options.backend.listModels?.bind(options.backend)
  const backend = options.backend.name ?? 'upstream'
  let last: DiscoveredModels | undefined
  let running: Promise<void> | undefined
  let stopped = false

  async function round (): Promise<void> {
    if (list === undefined || stopped) return
    let listing: ModelListing
    try {
      listing = await list()
    } catch (err) {
      options.observer?.modelDiscoveryFailed?.()
      logger.warn({ reason: err instanceof Error ? err.message : String(err), keeping: last === undefined ? 'the model file' : 'the last good list' }, 'Model discovery failed')
      return
    }
    if (stopped) return
    last = mergeListing(listing, options.specs, backend)
    for (const f of listing.failed) logger.warn({ credential: f.credential, reason: f.reason }, 'Model discovery: this credential\'s list failed; it keeps its last good list')
    const unknown = last.added.map(s => s.id)
    if (unknown.length > 0) logger.info({ models: unknown }, 'Model discovery: the upstream lists models the model file lacks; serving them with defaults from the list')
    const missing = options.specs.filter(s => s.backends.includes(backend) && !(last as DiscoveredModels).offered.has(s.id)).map(s => s.id)
    if (missing.length > 0) logger.info({ models: missing }, 'Model discovery: the upstream does not list these models of the model file; not offered')
    options.observer?.modelsDiscovered?.(last.offered.size, unknown)
    options.onChange(last)
  }

  const run = (): Promise<void> => {
    running ??= round().finally(() => { running = undefined })
    return running
  }
  let interval: NodeJS.Timeout | undefined
  const first = list === undefined
    ? undefined
    : setTimeout(() => {
      void run()
      interval = setInterval(() => { void run() }, options.intervalMs ?? DISCOVERY_DEFAULTS.intervalMs)
      interval.unref()
    }, 0)
  first?.unref()
  if (list === undefined) logger.info({ backend }, 'Model discovery: this backend has no model list; the model file alone decides')
  return {
    run,
    current: () => last,
    stop () {
      stopped = true
      clearTimeout(first)
      clearInterval(interval)
    },
  }
}
