// The price list and the cost of a call (docs/prices.md): dated prices, cached tokens once, thinking as output,
// tool-use prompt tokens as input, long-context tiers, integer micro-dollars, unpriced models and the operator file.
import t from 'tap'
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { ConfigurationError, cacheStorageCost, callUsageOf, createPriceList, createProxy, formatMicros, parseDollars } from '../../lib/index.ts'
import type { CallCost, CallUsage, PriceList } from '../../lib/index.ts'
import { billableSearches } from '../../lib/metering/call-cost.ts'

const prices = createPriceList()
const NOV_30_LAST_MS = new Date('2026-11-30T23:59:59.999Z')
const DEC_1_FIRST_MS = new Date('2026-12-01T00:00:00.000Z')

function micros (cost: CallCost): number {
  if (!cost.priced) throw new Error(`unpriced: ${cost.message}`)
  return cost.micros
}

function cost (list: PriceList, model: string, at: Date, usage: CallUsage, backend = 'gemini-api', batch = false): number {
  return micros(list.cost({ model, backend, at, usage, batch }))
}

const MILLION_EACH: CallUsage = { promptTokens: 1_000_000, candidatesTokens: 1_000_000 }

t.test('Argon on the Gemini API: $2 / $10 to the last instant of 2026-11-30, $4 / $20 from the first of 2026-12-01', async t => {
  t.equal(cost(prices, 'gemini-4-argon', NOV_30_LAST_MS, MILLION_EACH), 12_000_000, '1M in + 1M out on 2026-11-30: $12')
  t.equal(cost(prices, 'gemini-4-argon', DEC_1_FIRST_MS, MILLION_EACH), 24_000_000, 'the same call on 2026-12-01: $24')
  t.equal(prices.priceAt('gemini-4-argon', 'gemini-api', NOV_30_LAST_MS)?.from, '2026-10-13')
  t.equal(prices.priceAt('gemini-4-argon', 'gemini-api', DEC_1_FIRST_MS)?.from, '2026-12-01')
  t.equal(cost(prices, 'gemini-4-carbon', DEC_1_FIRST_MS, MILLION_EACH), 24_000_000, 'Carbon doubles on the same day')
  t.equal(cost(prices, 'gemini-4-argon', DEC_1_FIRST_MS, MILLION_EACH, 'vertex'), 24_000_000, 'and on Vertex')
  t.equal(cost(prices, 'gemini-4-neon', DEC_1_FIRST_MS, MILLION_EACH), 18_000_000, 'Neon: $3 / $15')
  t.equal(cost(prices, 'gemini-4-hydrogen', DEC_1_FIRST_MS, MILLION_EACH), 9_000_000, 'Hydrogen: $1.50 / $7.50')
})

t.test('cached tokens are charged once, at the cached rate: promptTokenCount already includes them', async t => {
  // 10,000 prompt tokens of which 8,000 cached: 2,000 at $4 and 8,000 at $0.20 per 1M.
  const usage = { promptTokens: 10_000, cachedTokens: 8_000 }
  t.equal(cost(prices, 'gemini-4-argon', DEC_1_FIRST_MS, usage), 8_000 + 1_600)
  t.equal(cost(prices, 'gemini-4-argon', DEC_1_FIRST_MS, { promptTokens: 10_000 }), 40_000, 'no cache: every prompt token at the input rate')
  t.equal(cost(prices, 'gemini-4-argon', DEC_1_FIRST_MS, { promptTokens: 10_000, cachedTokens: 10_000 }), 2_000, 'all cached')
  t.equal(cost(prices, 'gemini-4-argon', DEC_1_FIRST_MS, { promptTokens: 10, cachedTokens: 50 }), 2, 'more cached than prompt (never reported) charges no token below zero')
})

t.test('thinking tokens are priced as output and tool-use prompt tokens as input', async t => {
  // Hydrogen: 100 prompt + 50 tool-use tokens at $1.50, 6 answer + 832 thinking tokens at $7.50 per 1M.
  const usage = { promptTokens: 100, toolUsePromptTokens: 50, candidatesTokens: 6, thoughtsTokens: 832 }
  t.equal(cost(prices, 'gemini-4-hydrogen', DEC_1_FIRST_MS, usage), 225 + 6_285)
  t.equal(cost(prices, 'gemini-4-hydrogen', DEC_1_FIRST_MS, { promptTokens: 0, thoughtsTokens: 1_000_000 }), 7_500_000, 'thinking alone costs the output rate')
  t.equal(cost(prices, 'gemini-4-hydrogen', DEC_1_FIRST_MS, { promptTokens: 0, toolUsePromptTokens: 1_000_000 }), 1_500_000, 'tool-use alone costs the input rate')
})

t.test('long-context tier: chosen by the prompt size, and then applies to the whole call', async t => {
  const at = new Date('2026-11-01T12:00:00Z')
  // Gemini 2.5 Pro: $1.25 / $10 up to 200,000 prompt tokens, $2.50 / $15 above.
  t.equal(cost(prices, 'gemini-2.5-pro', at, { promptTokens: 200_000, candidatesTokens: 1_000 }), 250_000 + 10_000, 'at the threshold: the standard rates')
  const long = prices.cost({ model: 'gemini-2.5-pro', backend: 'gemini-api', at, usage: { promptTokens: 200_001, candidatesTokens: 1_000 } })
  t.match(long, { priced: true, tier: 'long-context' })
  t.equal(micros(long), 515_003, 'one past it: every token at the long rates (500,002.5 + 15,000, rounded half up once)')
  t.equal(cost(prices, 'gemini-2.5-pro', at, { promptTokens: 300_000, cachedTokens: 100_000 }), 200_000 * 2.5 + 100_000 * 0.25, 'cached tokens count toward the prompt size and take the long cached rate')
  t.equal(cost(prices, 'gemini-4-argon', DEC_1_FIRST_MS, { promptTokens: 900_000 }), 3_600_000, 'a model without tiers: one rate across its window')
})

t.test('integer micro-dollars: amounts are read digit by digit and a call is rounded once, so sums never drift', async t => {
  t.equal(parseDollars('0.075'), 75_000)
  t.equal(parseDollars(0.1), 100_000)
  t.equal(parseDollars('4.000001'), 4_000_001)
  t.equal(parseDollars('4.0000001'), undefined, 'a seventh decimal is refused, never rounded')
  t.equal(parseDollars(-1), undefined)
  // A tenth of a cent, a hundred thousand times: floating-point dollars would not sum back to $100 exactly.
  let total = 0
  for (let i = 0; i < 100_000; i++) total += cost(prices, 'gemini-3.1-flash-lite', DEC_1_FIRST_MS, { promptTokens: 4_000 })
  t.equal(total, 100_000_000)
  t.equal(formatMicros(total), '100.000000')
  t.equal(formatMicros(75), '0.000075')
  t.throws(() => prices.cost({ model: 'gemini-4-argon', backend: 'gemini-api', at: DEC_1_FIRST_MS, usage: { promptTokens: 1.5 } }), { name: 'TypeError', message: /usage\.promptTokens must be a whole number/ })
})

t.test('search grounding is charged per request and generated images per image, their tokens not twice', async t => {
  t.equal(cost(prices, 'gemini-4-argon', DEC_1_FIRST_MS, { promptTokens: 0, searchRequests: 3 }), 42_000, '3 queries at $14 per 1,000')
  // Nano Banana: 2 images (1,290 tokens each) and 20 text tokens; images at $0.039 each, the text at $2.50 per 1M.
  const usage = { promptTokens: 0, candidatesTokens: 2_600, imageTokens: 2_580, images: 2 }
  t.equal(cost(prices, 'gemini-2.5-flash-image', new Date('2026-09-01T00:00:00Z'), usage), 78_000 + 50)
  t.equal(cost(prices, 'gemini-4-argon', DEC_1_FIRST_MS, { promptTokens: 0, candidatesTokens: 1_000, imageTokens: 1_000, images: 1 }), 20_000, 'no per-image price: image tokens cost the output rate')
})

t.test('batch calls: the batch discount comes off tokens and images, not off search requests', async t => {
  const usage = { promptTokens: 1_000_000, candidatesTokens: 1_000_000, searchRequests: 1_000 }
  t.equal(cost(prices, 'gemini-4-argon', DEC_1_FIRST_MS, usage), 24_000_000 + 14_000_000)
  t.equal(cost(prices, 'gemini-4-argon', DEC_1_FIRST_MS, usage, 'gemini-api', true), 12_000_000 + 14_000_000)
})

t.test('explicit-cache storage is priced per token-hour where the model has explicit caches', async t => {
  const pro = prices.priceAt('gemini-2.5-pro', 'gemini-api', new Date('2026-11-01T00:00:00Z'))
  if (pro === undefined) throw new Error('gemini-2.5-pro has a price')
  t.equal(cacheStorageCost(pro, 100_000, 3_600), 450_000, '100,000 tokens for an hour at $4.50 per 1M')
  t.equal(cacheStorageCost(pro, 100_000, 1), 125, 'a second of it')
  const argon = prices.priceAt('gemini-4-argon', 'gemini-api', DEC_1_FIRST_MS)
  t.equal(argon === undefined ? 'none' : cacheStorageCost(argon, 100_000, 3_600), undefined, 'Gemini 4 takes no explicit caches: no storage price')
})

t.test('a model with no known price is unpriced, and says why', async t => {
  const usage = { promptTokens: 10 }
  t.same(prices.cost({ model: 'gemini-4-argon-cyber-permissive', backend: 'gemini-api', at: DEC_1_FIRST_MS, usage }),
    { priced: false, model: 'gemini-4-argon-cyber-permissive', backend: 'gemini-api', message: 'No price is known for gemini-4-argon-cyber-permissive on gemini-api' })
  t.match(prices.cost({ model: 'gemini-4-neon', backend: 'gemini-api', at: new Date('2026-11-17T23:59:59Z'), usage }),
    { priced: false, message: 'No price is known for gemini-4-neon on gemini-api before 2026-11-18' }, 'before its first price')
  t.match(prices.cost({ model: 'gemini-4-argon', backend: 'code-assist', at: DEC_1_FIRST_MS, usage }), { priced: false }, 'priced per backend')
  t.match(prices.cost({ model: 'gemini-unknown', backend: 'gemini-api', at: DEC_1_FIRST_MS, usage }), { priced: false })
})

t.test('the shipped list: every entry names a model of the model file on a backend that serves it, with its sources', async t => {
  const models = JSON.parse(readFileSync(new URL('../../lib/proxy/models/models.json', import.meta.url), 'utf8')) as { models: Array<{ id: string, backends: string[] }> }
  const backends = new Map(models.models.map(m => [m.id, m.backends]))
  for (const e of prices.entries) {
    t.ok(backends.get(e.model)?.includes(e.backend), `${e.model} on ${e.backend} is served there`)
    t.ok(e.sources.length > 0, `${e.model} ${e.from} cites a page`)
  }
})

t.test('the operator file: its entries for a model and backend replace the shipped ones; new pairs are added', async t => {
  const dir = t.testdir({
    'negotiated.json': JSON.stringify({
      prices: [
        { model: 'gemini-4-argon', backend: 'gemini-api', from: '2026-10-01', input: '3.00', output: 15, cachedInput: '0.15' },
        { model: 'gemini-4-argon-cyber-permissive', backend: 'vertex', from: '2026-10-13', input: '2.00', output: '10.00' },
      ],
    }),
  })
  const file = path.join(dir, 'negotiated.json')
  const list = createPriceList({ pricesFile: file })
  t.equal(cost(list, 'gemini-4-argon', DEC_1_FIRST_MS, MILLION_EACH), 18_000_000, 'the negotiated rate, not the shipped doubling')
  t.equal(cost(list, 'gemini-4-argon', DEC_1_FIRST_MS, MILLION_EACH, 'vertex'), 24_000_000, 'other pairs keep the shipped prices')
  t.equal(cost(list, 'gemini-4-argon-cyber-permissive', DEC_1_FIRST_MS, { promptTokens: 1_000_000, cachedTokens: 1_000_000 }, 'vertex'), 2_000_000, 'an added model; no cached rate: cached tokens at the input rate')
  const proxy = createProxy({ pricesFile: file })
  t.teardown(() => proxy.close())
  t.equal(micros(proxy.prices.cost({ model: 'gemini-4-argon', backend: 'gemini-api', at: DEC_1_FIRST_MS, usage: MILLION_EACH })), 18_000_000, 'createProxy({ pricesFile }) serves the same list')
})

t.test('the operator file is checked at construction, each message naming the option, the file, the entry and the field', async t => {
  const dir = t.testdir({})
  const entry = { model: 'gemini-4-argon', backend: 'gemini-api', from: '2026-12-01', input: '4', output: '20' }
  const refused: Array<[string, unknown, RegExp]> = [
    ['not-json', 'not json', /pricesFile .*not-json\.json is not JSON/],
    ['no-list', {}, /pricesFile .*no-list\.json: prices must be an array of price entries/],
    ['no-input', { prices: [{ ...entry, input: undefined }] }, /prices\[0\]\.input must be US dollars as a decimal string/],
    ['seven-decimals', { prices: [entry, { ...entry, from: '2027-01-01', output: '20.0000001' }] }, /prices\[1\]\.output must be US dollars/],
    ['bad-date', { prices: [{ ...entry, from: '2026-02-30' }] }, /prices\[0\]\.from must be a date as YYYY-MM-DD/],
    ['bad-backend', { prices: [{ ...entry, backend: 'openai' }] }, /prices\[0\]\.backend must be one of gemini-api, vertex, code-assist/],
    ['bad-model', { prices: [{ ...entry, model: 'gpt-4' }] }, /prices\[0\]\.model must be a model id/],
    ['unknown-field', { prices: [{ ...entry, inputPrice: '4' }] }, /prices\[0\]\.inputPrice must be one of the entry's fields/],
    ['twice', { prices: [entry, entry] }, /prices\[1\] must be the only entry for gemini-4-argon on gemini-api from 2026-12-01 \(prices\[0\] is one too\)/],
    ['tier', { prices: [{ ...entry, longContext: { above: 0, input: '8', output: '30' } }] }, /prices\[0\]\.longContext\.above must be a positive whole number/],
    ['discount', { prices: [{ ...entry, batchDiscountPercent: 150 }] }, /prices\[0\]\.batchDiscountPercent must be a whole number from 0 to 100/],
    ['unconfirmed', { prices: [{ ...entry, unconfirmed: ['perImage'] }] }, /prices\[0\]\.unconfirmed must be paths of fields this entry has \("perImage" is not one\)/],
    ['sources', { prices: [{ ...entry, sources: ['http://example.com'] }] }, /prices\[0\]\.sources must be https:\/\/ addresses/],
  ]
  for (const [name, content, message] of refused) {
    const file = path.join(dir, `${name}.json`)
    writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content))
    t.throws(() => createPriceList({ pricesFile: file }), { constructor: ConfigurationError, option: 'pricesFile', message }, name)
  }
  t.throws(() => createPriceList({ pricesFile: path.join(dir, 'missing.json') }), { option: 'pricesFile', message: /missing\.json cannot be read \(ENOENT\)/ })
  t.throws(() => createProxy({ pricesFile: path.join(dir, 'twice.json') }), { constructor: ConfigurationError, option: 'pricesFile', message: /prices\[1\] must be the only entry/ }, 'createProxy refuses it before it builds anything')
  t.throws(() => createProxy({ pricesFile: '' }), { option: 'pricesFile', message: /createProxy: pricesFile must be a file path/ })
})

t.test('the worked example of docs/prices.md: a day of calls on 2026-12-01, priced by hand', async t => {
  const at = (time: string): Date => new Date(`2026-12-01T${time}:00Z`)
  const day: Array<[string, string, CallUsage, number | 'unpriced']> = [
    ['09:00', 'gemini-4-argon', { promptTokens: 12_000, cachedTokens: 8_000, candidatesTokens: 900, thoughtsTokens: 2_100 }, 77_600],
    ['10:30', 'gemini-4-hydrogen', { promptTokens: 3_000, toolUsePromptTokens: 1_500, candidatesTokens: 400, thoughtsTokens: 600, searchRequests: 2 }, 42_250],
    ['13:00', 'gemini-3.1-pro-preview', { promptTokens: 250_000, candidatesTokens: 2_000, thoughtsTokens: 3_000 }, 1_090_000],
    ['15:00', 'gemini-3.8-flash', { promptTokens: 1_234, candidatesTokens: 567, thoughtsTokens: 89 }, 3_386],
    ['17:00', 'gemini-4-argon-cyber-permissive', { promptTokens: 500, candidatesTokens: 50 }, 'unpriced'],
  ]
  let total = 0
  for (const [time, model, usage, expected] of day) {
    const result = prices.cost({ model, backend: 'gemini-api', at: at(time), usage })
    t.equal(result.priced ? result.micros : 'unpriced', expected, `${time} ${model}`)
    if (result.priced) total += result.micros
  }
  t.equal(total, 1_213_236)
  t.equal(formatMicros(total), '1.213236')
  t.equal(cost(prices, 'gemini-4-argon', new Date('2026-11-30T09:00:00Z'), day[0][2]), 38_800, 'the first call a day earlier')
})

t.test('a three-step price: Gemini 3.6 Flash at its list price, half price for the promotion, the list price again', async t => {
  const usage = { promptTokens: 1_000_000, candidatesTokens: 1_000_000 }
  t.equal(cost(prices, 'gemini-3.6-flash', new Date('2026-09-01T23:59:59Z'), usage), 9_000_000)
  t.equal(cost(prices, 'gemini-3.6-flash', new Date('2026-12-31T23:59:59Z'), usage), 4_500_000)
  t.equal(cost(prices, 'gemini-3.6-flash', new Date('2027-01-01T00:00:00Z'), usage), 9_000_000)
})

t.test('search grounding is billed per query from Gemini 3 on, per grounded prompt on Gemini 2.x', async t => {
  t.equal(billableSearches('gemini-4-hydrogen', 3), 3)
  t.equal(billableSearches('gemini-3.8-flash', 2), 2)
  t.equal(billableSearches('gemini-2.5-flash', 3), 1, 'three queries of one prompt: one grounded request')
  t.equal(billableSearches('gemini-2.5-flash', 0), 0)
  t.equal(callUsageOf({ inputTokens: 10, outputTokens: 1, thinkingTokens: 0, cachedTokens: 0, searchQueries: 2 }, 'gemini-4-argon').searchRequests, 2)
})
