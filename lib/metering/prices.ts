// The price list: what a model costs per backend from a date on (docs/prices.md). The shipped list is
// lib/proxy/models/prices.json (in the built package, next to its one bundled module, scripts/bundle-lib.ts); an
// operator's file (`createProxy({ pricesFile })`, GEMINI_PRICES_FILE) replaces or adds entries. Both are read and
// checked once, at construction; every problem is a ConfigurationError naming the option, the file and the entry.
import { readJsonOptionFile } from '../fs/json-option-file.ts'
import { ConfigurationError } from '../errors.ts'
import { DEFAULT_PRICES_FILE } from '../proxy/models/prices-file.ts'
import { MODEL_BACKENDS, hasPath } from '../proxy/models/data.ts'

/** The rates above a prompt size, in micro-dollars per 1M tokens. */
export interface LongContextPrice {
  /** The tier applies when the prompt (promptTokenCount, cached tokens included) is longer than this. */
  above: number
  input: number
  output: number
  cachedInput?: number
}

/** One dated price of a model on a backend. Every amount is a whole number of micro-dollars (1e-6 USD). */
export interface PriceEntry {
  model: string
  backend: string
  /** The date (YYYY-MM-DD, UTC) the price takes effect, from its first instant. */
  from: string
  /** Per 1M prompt tokens, tool-use prompt tokens included. */
  input: number
  /** Per 1M output tokens, thinking tokens included. */
  output: number
  /** Per 1M cached prompt tokens; absent: cached tokens cost the input rate. */
  cachedInput?: number
  /** Per 1M tokens held one hour in an explicit cache; absent: the model takes no explicit caches. */
  cacheStoragePerHour?: number
  longContext?: LongContextPrice
  /** Per 1,000 billable search-grounding requests. */
  searchPer1000?: number
  /** Per generated image; absent: image tokens cost the output rate. */
  perImage?: number
  /** Taken off every token price of a batch call (whole percent). */
  batchDiscountPercent?: number
  sources: string[]
  /** The fields (dotted paths) no Google page found confirms. */
  unconfirmed: string[]
  notes?: string
}

export { DEFAULT_PRICES_FILE }

type Bad = (field: string, rule: string) => never

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

const DATE = /^\d{4}-\d{2}-\d{2}$/
const AMOUNT = /^(\d{1,9})(?:\.(\d{1,6}))?$/
const ENTRY_FIELDS = new Set(['model', 'backend', 'from', 'input', 'output', 'cachedInput', 'cacheStoragePerHour', 'longContext', 'searchPer1000', 'perImage', 'batchDiscountPercent', 'sources', 'unconfirmed', 'notes'])
const AMOUNT_RULE = 'US dollars as a decimal string or number, 0 or more, at most 6 decimals (e.g. "4.00")'

/**
 * Dollars to whole micro-dollars, read digit by digit: "0.075" is exactly 75000. A JSON number is read from its
 * shortest decimal form, which is the digits the file holds.
 */
export function parseDollars (value: unknown): number | undefined {
  const text = typeof value === 'number' && Number.isFinite(value) && value >= 0 ? String(value) : value
  if (typeof text !== 'string') return undefined
  const match = AMOUNT.exec(text)
  if (match === null) return undefined
  return Number(match[1]) * 1_000_000 + Number((match[2] ?? '').padEnd(6, '0'))
}

function validDate (d: unknown): d is string {
  if (typeof d !== 'string' || !DATE.test(d)) return false
  const time = Date.parse(`${d}T00:00:00Z`)
  // A day past its month's end (2026-02-30) either fails to parse or lands in the next month.
  return !Number.isNaN(time) && new Date(time).toISOString().startsWith(d)
}

function parseEntry (raw: unknown, at: string, bad: Bad): PriceEntry {
  if (!isObject(raw)) return bad(at, 'an object')
  const field = (name: string): string => `${at}.${name}`
  for (const name of Object.keys(raw)) if (!ENTRY_FIELDS.has(name)) bad(field(name), `one of the entry's fields (${[...ENTRY_FIELDS].join(', ')})`)
  const { model, backend, from } = raw
  if (typeof model !== 'string' || !/^gemini-[a-z0-9][a-z0-9._-]*$/.test(model)) bad(field('model'), 'a model id starting with "gemini-"')
  if (!(MODEL_BACKENDS as readonly unknown[]).includes(backend)) bad(field('backend'), `one of ${MODEL_BACKENDS.join(', ')}`)
  if (!validDate(from)) bad(field('from'), 'a date as YYYY-MM-DD')
  const amount = (name: string, value: unknown, required: boolean): number | undefined => {
    if (value === undefined && !required) return undefined
    const micros = parseDollars(value)
    return micros === undefined ? bad(field(name), AMOUNT_RULE) : micros
  }
  const entry: PriceEntry = {
    model: model as string,
    backend: backend as string,
    from: from as string,
    input: amount('input', raw.input, true) as number,
    output: amount('output', raw.output, true) as number,
    sources: [],
    unconfirmed: [],
  }
  for (const name of ['cachedInput', 'cacheStoragePerHour', 'searchPer1000', 'perImage'] as const) {
    const micros = amount(name, raw[name], false)
    if (micros !== undefined) entry[name] = micros
  }
  if (raw.longContext !== undefined) {
    const lc = raw.longContext
    if (!isObject(lc)) return bad(field('longContext'), '{ above, input, output, cachedInput? }')
    if (!Number.isSafeInteger(lc.above) || (lc.above as number) < 1) bad(field('longContext.above'), 'a positive whole number of prompt tokens')
    entry.longContext = {
      above: lc.above as number,
      input: amount('longContext.input', lc.input, true) as number,
      output: amount('longContext.output', lc.output, true) as number,
      ...(lc.cachedInput === undefined ? {} : { cachedInput: amount('longContext.cachedInput', lc.cachedInput, true) as number }),
    }
  }
  const discount = raw.batchDiscountPercent
  if (discount !== undefined) {
    if (!Number.isSafeInteger(discount) || (discount as number) < 0 || (discount as number) > 100) bad(field('batchDiscountPercent'), 'a whole number from 0 to 100')
    entry.batchDiscountPercent = discount as number
  }
  const strings = (name: 'sources' | 'unconfirmed'): string[] => {
    const list = raw[name]
    if (list === undefined) return []
    if (!Array.isArray(list) || !list.every(s => typeof s === 'string')) return bad(field(name), 'an array of strings')
    return [...list as string[]]
  }
  entry.sources = strings('sources')
  if (entry.sources.some(s => !s.startsWith('https://'))) bad(field('sources'), 'https:// addresses')
  entry.unconfirmed = strings('unconfirmed')
  for (const path of entry.unconfirmed) {
    if (!hasPath(raw, path)) bad(field('unconfirmed'), `paths of fields this entry has ("${path}" is not one)`)
  }
  if (raw.notes !== undefined) {
    if (typeof raw.notes !== 'string') bad(field('notes'), 'a string')
    entry.notes = raw.notes as string
  }
  return entry
}


/** Checks a parsed price file; `where` names it in errors. */
export function parsePriceFile (data: unknown, where: string): PriceEntry[] {
  const bad: Bad = (field, rule) => {
    throw new ConfigurationError('pricesFile', `createProxy: pricesFile ${where}: ${field} must be ${rule}`)
  }
  if (!isObject(data)) bad('the file', 'a JSON object')
  const list = (data as Record<string, unknown>).prices
  if (!Array.isArray(list)) bad('prices', 'an array of price entries')
  const entries = (list as unknown[]).map((raw, i) => parseEntry(raw, `prices[${i}]`, bad))
  const seen = new Map<string, number>()
  for (const [i, e] of entries.entries()) {
    const key = `${e.model} ${e.backend} ${e.from}`
    const first = seen.get(key)
    if (first !== undefined) bad(`prices[${i}]`, `the only entry for ${e.model} on ${e.backend} from ${e.from} (prices[${first}] is one too)`)
    seen.set(key, i)
  }
  return entries
}

/** Reads and checks a price file (default the shipped one). */
export function loadPriceFile (path: string = DEFAULT_PRICES_FILE): PriceEntry[] {
  return parsePriceFile(readJsonOptionFile('pricesFile', path), path)
}

/**
 * The shipped entries with an operator's: the operator's entries for a model and backend replace every shipped one
 * of that pair, so a negotiated rate is never overtaken by a later shipped price; other pairs are added.
 */
export function mergePrices (shipped: readonly PriceEntry[], operator: readonly PriceEntry[]): PriceEntry[] {
  const pair = (e: PriceEntry): string => `${e.model} ${e.backend}`
  const overridden = new Set(operator.map(pair))
  return [...shipped.filter(e => !overridden.has(pair(e))), ...operator]
}
