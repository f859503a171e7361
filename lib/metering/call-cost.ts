// What one model call cost, in whole micro-dollars, at the price in force on its date (docs/prices.md, "How a call
// is priced"). Pure: the usage settlement calls it with what the upstream reported; nothing here reads a clock.
import { DEFAULT_PRICES_FILE, loadPriceFile, mergePrices } from './prices.ts'
import type { PriceEntry } from './prices.ts'
import type { TokenUsage } from './token-usage.ts'
import { ConfigurationError } from '../errors.ts'

/** Counts one call's usage metadata reported, under Gemini's names (absent fields count 0). */
export interface CallUsage {
  /** promptTokenCount: every prompt token, the cached ones included. */
  promptTokens: number
  /** cachedContentTokenCount: the part of promptTokens read from a cache. */
  cachedTokens?: number
  /** candidatesTokenCount: the answer's tokens, generated images' tokens included. */
  candidatesTokens?: number
  /** thoughtsTokenCount: billed as output. */
  thoughtsTokens?: number
  /** toolUsePromptTokenCount: tool results fed back to the model, billed as input. */
  toolUsePromptTokens?: number
  /** Billable search-grounding requests (queries on Gemini 3 and later, grounded prompts on Gemini 2.5). */
  searchRequests?: number
  /** Images the answer holds. */
  images?: number
  /** The part of candidatesTokens that is images (candidatesTokensDetails, modality IMAGE). */
  imageTokens?: number
}

export interface PricedCall {
  /** The model that served the call (after any replacement). */
  model: string
  backend: string
  /** When the call was made: the price in force on that UTC date applies. */
  at: Date
  usage: CallUsage
  /** A batch call: the entry's batchDiscountPercent comes off its tokens and images. */
  batch?: boolean
}

/** A priced call; `tier` says which rates applied. */
export interface PricedCost {
  priced: true
  micros: number
  entry: PriceEntry
  tier: 'standard' | 'long-context'
}

/** A call the list has no price for: under a dollar budget it cannot be charged. */
export interface UnpricedCost {
  priced: false
  model: string
  backend: string
  /** Why, for logs and errors: no entry for the pair, or none in force yet on the call's date. */
  message: string
}

export type CallCost = PricedCost | UnpricedCost

const COUNTS = ['promptTokens', 'cachedTokens', 'candidatesTokens', 'thoughtsTokens', 'toolUsePromptTokens', 'searchRequests', 'images', 'imageTokens'] as const

function count (usage: CallUsage, name: typeof COUNTS[number]): bigint {
  const n = usage[name] ?? 0
  if (!Number.isSafeInteger(n) || n < 0) throw new TypeError(`callCost: usage.${name} must be a whole number, 0 or more (got ${String(n)})`)
  return BigInt(n)
}

const MILLION = 1_000_000n
/** The common denominator: per 1M tokens, per 100 percent, per 1,000 requests. */
const SCALE = MILLION * 100n * 1000n

/**
 * The cost of one call under one price entry. Cached tokens are taken out of the prompt and charged once, at the
 * cached rate; thinking is output and tool-use prompt tokens are input; the long-context tier applies to the whole
 * call when the prompt is longer than its threshold. One rounding, half up, at the end.
 */
export function callCost (entry: PriceEntry, usage: CallUsage, options: { batch?: boolean } = {}): { micros: number, tier: PricedCost['tier'] } {
  const [prompt, cachedReported, candidates, thoughts, toolUse, search, images, imageTokensReported] = COUNTS.map(name => count(usage, name))
  const long = entry.longContext !== undefined && prompt > BigInt(entry.longContext.above)
  const rates = long ? entry.longContext as NonNullable<PriceEntry['longContext']> : entry
  const input = BigInt(rates.input)
  const cachedRate = BigInt(rates.cachedInput ?? entry.cachedInput ?? rates.input)
  // An upstream never reports more cached than prompt tokens; if one did, no token is charged below zero.
  const cached = cachedReported > prompt ? prompt : cachedReported
  const perImage = entry.perImage === undefined ? undefined : BigInt(entry.perImage)
  const imageTokens = perImage === undefined ? 0n : (imageTokensReported > candidates ? candidates : imageTokensReported)
  const tokens = (prompt - cached + toolUse) * input + cached * cachedRate + (candidates - imageTokens + thoughts) * BigInt(rates.output)
  const kept = 100n - BigInt(options.batch === true ? entry.batchDiscountPercent ?? 0 : 0)
  const total = tokens * kept * 1000n +
    (perImage === undefined ? 0n : images * perImage * kept * MILLION * 1000n) +
    search * BigInt(entry.searchPer1000 ?? 0) * MILLION * 100n
  return { micros: Number((total + SCALE / 2n) / SCALE), tier: long ? 'long-context' : 'standard' }
}

const whole = (n: number | undefined): number => n !== undefined && Number.isSafeInteger(n) && n > 0 ? n : 0

/** Models whose grounding Google bills per grounded prompt; from Gemini 3 on it bills each search query (docs/prices.md). */
const PER_PROMPT_SEARCH = /^gemini-[12]\./

/** The search-grounding requests Google bills for `queries` search queries a call of `model` ran. */
export function billableSearches (model: string, queries: number): number {
  return queries > 0 && PER_PROMPT_SEARCH.test(model) ? 1 : queries
}

/**
 * The counts a call's TokenUsage holds, as callCost prices them (a count that is not a whole number counts 0); `model`
 * decides how its search queries are billed.
 */
export function callUsageOf (usage: TokenUsage, model = ''): CallUsage {
  return {
    // inputTokens holds the tool-use tokens (the limits charge them): the prompt is what is left of it.
    promptTokens: Math.max(0, whole(usage.inputTokens) - whole(usage.toolUseTokens)),
    cachedTokens: whole(usage.cachedTokens),
    candidatesTokens: whole(usage.outputTokens),
    thoughtsTokens: whole(usage.thinkingTokens),
    toolUsePromptTokens: Math.min(whole(usage.toolUseTokens), whole(usage.inputTokens)),
    searchRequests: billableSearches(model, whole(usage.searchQueries)),
  }
}

/** What holding `tokens` in an explicit cache for `seconds` costs, in micro-dollars (undefined: no storage price). */
export function cacheStorageCost (entry: PriceEntry, tokens: number, seconds: number): number | undefined {
  if (entry.cacheStoragePerHour === undefined) return undefined
  for (const [name, n] of [['tokens', tokens], ['seconds', seconds]] as const) {
    if (!Number.isSafeInteger(n) || n < 0) throw new TypeError(`cacheStorageCost: ${name} must be a whole number, 0 or more (got ${String(n)})`)
  }
  const scale = MILLION * 3600n
  return Number((BigInt(tokens) * BigInt(seconds) * BigInt(entry.cacheStoragePerHour) + scale / 2n) / scale)
}

/** Micro-dollars as a dollar string with six decimals, for display: 1234567 → "1.234567". */
export function formatMicros (micros: number): string {
  const sign = micros < 0 ? '-' : ''
  const abs = BigInt(Math.abs(Math.trunc(micros)))
  return `${sign}${abs / MILLION}.${String(abs % MILLION).padStart(6, '0')}`
}

/** The price list of a gateway: the shipped entries and an operator's, checked once. */
export interface PriceList {
  readonly entries: readonly PriceEntry[]
  /** The entry in force for a model on a backend at an instant: the latest `from` on or before its UTC date. */
  priceAt: (model: string, backend: string, at: Date) => PriceEntry | undefined
  /** A call's cost, or why it has none. */
  cost: (call: PricedCall) => CallCost
}

export interface PriceListOptions {
  /** An operator's price file whose entries replace (per model and backend) or add to the shipped ones. Default none. */
  pricesFile?: string
}

/** Reads the shipped list and the operator's file and checks both (ConfigurationError naming `pricesFile`). */
export function createPriceList (options: PriceListOptions = {}): PriceList {
  const file = options.pricesFile
  if (file !== undefined && (typeof file !== 'string' || file === '')) throw new ConfigurationError('pricesFile', `createProxy: pricesFile must be a file path (got ${JSON.stringify(file)})`)
  const shipped = loadPriceFile(DEFAULT_PRICES_FILE)
  const entries = Object.freeze(mergePrices(shipped, file === undefined ? [] : loadPriceFile(file)))
  const byPair = new Map<string, PriceEntry[]>()
  for (const e of entries) {
    const key = `${e.model} ${e.backend}`
    byPair.set(key, [...byPair.get(key) ?? [], e].sort((a, b) => a.from.localeCompare(b.from)))
  }
  // Each entry's start as a time, worked out once: priceAt runs on every call's settlement.
  const fromTimes = new Map<PriceEntry, number>(entries.map(e => [e, Date.parse(`${e.from}T00:00:00Z`)]))
  const priceAt = (model: string, backend: string, at: Date): PriceEntry | undefined => {
    const time = at.getTime()
    return byPair.get(`${model} ${backend}`)?.findLast(e => (fromTimes.get(e) as number) <= time)
  }
  return {
    entries,
    priceAt,
    cost (call) {
      if (!(call.at instanceof Date) || Number.isNaN(call.at.getTime())) throw new TypeError('PriceList.cost: at must be a valid Date')
      const entry = priceAt(call.model, call.backend, call.at)
      if (entry === undefined) {
        const first = byPair.get(`${call.model} ${call.backend}`)?.[0]
        const message = first === undefined
          ? `No price is known for ${call.model} on ${call.backend}`
          : `No price is known for ${call.model} on ${call.backend} before ${first.from}`
        return { priced: false, model: call.model, backend: call.backend, message }
      }
      return { priced: true, entry, ...callCost(entry, call.usage, { batch: call.batch }) }
    },
  }
}
