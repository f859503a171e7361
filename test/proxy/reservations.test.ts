// Reservations that cover the call (issue 29; docs/model-proxy.md, "Reservations"): what a key's model call reserves
// in its token windows before the upstream is called, the input Google brings in by reference (an uploaded file, a
// cache, a stored conversation) and every answer it may write included. The real limiter on the embedded store; a
// spy sees each reservation.
import t from 'tap'
import type { Test } from 'tap'
import { startProxy } from './harness.ts'
import { createEmbeddedStore, createModelCatalog, createRateLimiter } from '../../lib/index.ts'
import { DEFAULT_OUTPUT_RESERVATION, outputReservation } from '../../lib/proxy/access/metering.ts'
import { candidateCountOf, outputCount, storedHistoryTokens } from '../../lib/proxy/access/reservation.ts'
import type { KeyCaller, LimitsByLevel, RateLimiter } from '../../lib/index.ts'

const KEY = 'ghk_' + 'R'.repeat(43)
const member: KeyCaller = { kind: 'key', userId: 'c'.repeat(24), keyId: 'd'.repeat(24), accessLevel: 'member', models: null }
const START = Date.UTC(2026, 0, 5, 10, 0, 15)
const catalog = createModelCatalog(['gemini-2.5-flash'])
const FLASH_LIMIT = catalog.get('gemini-2.5-flash')!.outputTokenLimit

interface Rig {
  url: string
  fake: Awaited<ReturnType<typeof startProxy>>['fake']
  /** The tokens each admitted call reserved, in order. */
  reserved: number[]
  call: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<{ status: number, body: any, headers: Headers }>
  upload: (content: string) => Promise<string>
}

async function rig (t: Test, byLevel: LimitsByLevel = { member: { tpm: 10 ** 9 } }, inFlight = false): Promise<Rig> {
  const clock = { at: START }
  const store = await createEmbeddedStore({ now: () => new Date(clock.at) })
  t.teardown(() => store.close())
  const real = createRateLimiter({ store, byLevel, now: () => new Date(clock.at), repeat: () => () => {} })
  const reserved: number[] = []
  // A request on no model (an upload) reserves nothing: only model calls are listed.
  // With `inFlight`, settles wait until released: every call admitted holds its reservation as a call in flight does.
  const held: Array<() => void> = []
  const limiter: RateLimiter = {
    async admit (caller, tokens) {
      if (tokens > 0) reserved.push(tokens)
      const admission = await real.admit(caller, tokens)
      if (!inFlight) return admission
      return { headers: admission.headers, settle: async usage => { held.push(() => { void admission.settle(usage) }) } }
    },
  }
  const h = await startProxy(t, {
    backendName: 'gemini-api',
    keys: { resolveKey: async secret => secret === KEY ? member : undefined },
    limiter,
    resources: { owners: store.owners },
    responses: { store: store.responses },
    now: () => new Date(clock.at),
  })
  const call: Rig['call'] = async (method, path, body, headers = {}) => {
    const res = await fetch(h.url + path, { method, headers: { 'x-goog-api-key': KEY, authorization: `Bearer ${KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers }, body: body === undefined ? undefined : JSON.stringify(body) })
    const text = await res.text()
    let parsed: unknown = text
    try { parsed = JSON.parse(text) } catch {}
    return { status: res.status, body: parsed, headers: res.headers }
  }
  const upload: Rig['upload'] = async content => {
    const res = await fetch(`${h.url}/upload/v1beta/files`, { method: 'POST', headers: { 'x-goog-api-key': KEY, 'x-goog-upload-protocol': 'raw', 'content-type': 'text/plain' }, body: content })
    const answer = await res.json() as { file: { name: string } }
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${JSON.stringify(answer)}`)
    return answer.file.name
  }
  return { url: h.url, fake: h.fake, reserved, call, upload }
}

const estimate = (body: unknown): number => Math.ceil(Buffer.byteLength(JSON.stringify(body)) / 4)
const generate = (extra: Record<string, unknown> = {}, parts: unknown[] = [{ text: 'hi' }]): Record<string, unknown> => ({ contents: [{ role: 'user', parts }], ...extra })

t.test('a request with no output maximum reserves the model\'s own output limit, not a smaller default', async t => {
  const r = await rig(t)
  const body = generate()
  t.equal((await r.call('POST', '/v1beta/models/gemini-2.5-flash:generateContent', body)).status, 200)
  t.same(r.reserved, [estimate(body) + FLASH_LIMIT])
  t.ok(FLASH_LIMIT > DEFAULT_OUTPUT_RESERVATION, 'the model\'s limit is above the default for unknown models')
  t.equal(outputReservation(catalog, 'gemini-2.5-flash', undefined), FLASH_LIMIT)
  t.equal(outputReservation(catalog, 'gemini-2.5-flash', 300), 300, 'a maximum asked is reserved')
  t.equal(outputReservation(catalog, 'gemini-2.5-flash', 10 ** 9), FLASH_LIMIT, 'never above the model\'s limit')
  t.equal(outputReservation(catalog, 'gemini-2.5-flash', '300'), FLASH_LIMIT, 'a maximum that is none is ignored')
  t.equal(outputReservation(catalog, 'gemini-9-unknown', undefined), DEFAULT_OUTPUT_RESERVATION, 'a model the catalog does not know: the default')
})

t.test('output × n: every answer a request asks for (chat n, native candidateCount in either spelling) is reserved', async t => {
  const r = await rig(t)
  const chat = { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'x' }], max_tokens: 100, n: 4 }
  t.equal((await r.call('POST', '/v1/chat/completions', chat)).status, 200)
  const native = generate({ generationConfig: { maxOutputTokens: 50, candidateCount: 3 } })
  t.equal((await r.call('POST', '/v1beta/models/gemini-2.5-flash:generateContent', native)).status, 200)
  const snake = generate({ generation_config: { candidate_count: 2 } })
  t.equal((await r.call('POST', '/v1beta/models/gemini-2.5-flash:generateContent', snake)).status, 200)
  t.same(r.reserved, [estimate(chat) + 400, estimate(native) + 150, estimate(snake) + 2 * FLASH_LIMIT])
  t.equal(outputCount(0), 1, 'a count that is none is 1')
  t.equal(outputCount('8'), 1)
  t.equal(candidateCountOf({ generationConfig: { candidateCount: 2 }, generation_config: { candidateCount: 5 } }), 5, 'the largest of the spellings')
})

t.test("a fileData file's size, kept with its owner record at upload, is part of the input a request naming it reserves", async t => {
  const r = await rig(t)
  const content = 'x'.repeat(400_000)
  const file = await r.upload(content)
  const body = generate({ generationConfig: { maxOutputTokens: 10 } }, [{ fileData: { fileUri: file, mimeType: 'text/plain' } }, { fileData: { fileUri: file, mimeType: 'text/plain' } }])
  t.equal((await r.call('POST', '/v1beta/models/gemini-2.5-flash:generateContent', body)).status, 200)
  t.same(r.reserved, [estimate(body) + 2 * 100_000 + 10], 'a 400 KB file named twice: 100,000 tokens each time, where the body alone is a few dozen')
  r.fake.setDefault('other', { body: { embedding: { values: [1] }, usageMetadata: { promptTokenCount: 3 } } })
  const embed = { content: { parts: [{ fileData: { fileUri: file, mimeType: 'text/plain' } }] } }
  const embedded = await r.call('POST', '/v1beta/models/gemini-embedding-001:embedContent', embed)
  t.equal(embedded.status, 200, JSON.stringify(embedded.body))
  t.equal(r.reserved[1], estimate(embed) + 100_000, 'a pass-through model call reserves it too')
})

t.test('ten calls in flight together naming a 400 KB file under 3,000 tokens a day: one is admitted, the file counted, the rest refused', async t => {
  const r = await rig(t, { member: { tokensPerDay: 3000 } }, true)
  const file = await r.upload('x'.repeat(400_000))
  const body = generate({}, [{ fileData: { fileUri: file, mimeType: 'text/plain' } }])
  const answers: number[] = []
  for (let i = 0; i < 10; i++) answers.push((await r.call('POST', '/v1beta/models/gemini-2.5-flash:generateContent', body)).status)
  t.same(answers.filter(s => s === 200).length, 1, 'the reservation of the file fills the day')
  t.same(answers.filter(s => s === 429).length, 9)
})

t.test("a cachedContent's totalTokenCount, kept at creation, is part of the input a request naming it reserves", async t => {
  const r = await rig(t)
  const created = await r.call('POST', '/v1beta/cachedContents', { model: 'models/gemini-2.5-flash', contents: [{ role: 'user', parts: [{ text: 'shared context '.repeat(200) }] }], ttl: '600s' })
  t.equal(created.status, 200)
  const total = created.body.usageMetadata.totalTokenCount as number
  t.ok(total > 0, 'Google answers a cache with its totalTokenCount')
  const body = generate({ cachedContent: created.body.name, generationConfig: { maxOutputTokens: 10 } })
  t.equal((await r.call('POST', '/v1beta/models/gemini-2.5-flash:generateContent', body)).status, 200)
  t.equal(r.reserved.at(-1), estimate(body) + total + 10)
})

t.test('previous_response_id: the stored history a Responses request continues is counted in its input estimate', async t => {
  const r = await rig(t)
  const first = { model: 'gemini-2.5-flash', input: 'y'.repeat(8000), max_output_tokens: 10 }
  const answered = await r.call('POST', '/v1/responses', first)
  t.equal(answered.status, 200)
  const next = { model: 'gemini-2.5-flash', input: 'and then?', previous_response_id: answered.body.id, max_output_tokens: 10 }
  t.equal((await r.call('POST', '/v1/responses', next)).status, 200)
  t.ok(r.reserved[1] >= estimate(next) + 2000 + 10, `the 8,000 characters before count (${r.reserved[1]})`)
  t.equal(storedHistoryTokens(undefined), 0)
  t.equal(storedHistoryTokens({ input: [{ text: 'abcd' }], response: { output: [] } }), Math.ceil((JSON.stringify([{ text: 'abcd' }]).length + 2) / 4))
})

t.test('previous_interaction_id: the history an interaction left is counted in the input of the one continuing it', async t => {
  const r = await rig(t)
  const first = await r.call('POST', '/v1beta/interactions', { model: 'gemini-2.5-flash', input: 'z '.repeat(1000), generation_config: { max_output_tokens: 10 } })
  t.equal(first.status, 200)
  const used = first.body.usage.total_input_tokens + first.body.usage.total_output_tokens
  t.ok(used > 0)
  const next = { model: 'gemini-2.5-flash', input: 'more', previous_interaction_id: first.body.id, generation_config: { max_output_tokens: 10 } }
  t.equal((await r.call('POST', '/v1beta/interactions', next)).status, 200)
  t.equal(r.reserved[1], estimate(next) + used + 10)
  // A stream's history is kept once it completed.
  const streamed = await fetch(`${r.url}/v1beta/interactions`, { method: 'POST', headers: { 'x-goog-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gemini-2.5-flash', input: 'w '.repeat(1000), stream: true }) })
  const text = await streamed.text()
  const id = /"id":"([^"]+)"/.exec(text)![1]
  const after = { model: 'gemini-2.5-flash', input: 'more', previous_interaction_id: id, generation_config: { max_output_tokens: 10 } }
  t.equal((await r.call('POST', '/v1beta/interactions', after)).status, 200)
  t.ok(r.reserved[3] > estimate(after) + 10 + 900, `the streamed interaction's history reserved (${r.reserved[3]})`)
})
