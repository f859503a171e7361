// A model with no known price is flagged (docs/prices.md, "Unpriced models"): `unpriced: true` on its entries of
// GET /v1/models and GET /v1beta/models and their detail routes, priced as the model that serves the id on the
// clock's date; /metrics counts the unpriced models served, with no per-user label.
import t from 'tap'
import path from 'node:path'
import { startProxy, PASSWORD } from './harness.ts'
import { createMetrics } from '../../gateway/metrics.ts'

const AUTH = { authorization: `Bearer ${PASSWORD}` }
const DEC_2 = new Date('2026-12-02T12:00:00Z')

async function get (url: string): Promise<any> {
  const res = await fetch(url, { headers: AUTH })
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${await res.text()}`)
  return await res.json()
}

const flagged = (entries: Array<Record<string, unknown>>, key: 'id' | 'name'): string[] => entries.filter(e => e.unpriced === true).map(e => String(e[key]).replace(/^models\//, ''))

t.test('the model lists flag a model with no price in force as `unpriced: true`, on both surfaces and the detail routes; priced ones carry no flag', async t => {
  const h = await startProxy(t, { backendName: 'gemini-api', now: () => DEC_2 })
  const openai = (await get(`${h.url}/v1/models`)).data as Array<Record<string, unknown>>
  const native = (await get(`${h.url}/v1beta/models`)).models as Array<Record<string, unknown>>
  for (const [list, key] of [[openai, 'id'], [native, 'name']] as const) {
    const unpriced = flagged(list, key)
    t.ok(unpriced.includes('gemini-nano-banana-2.1'), 'a model the price list has no entry for')
    t.ok(unpriced.includes('gemini-4-argon-cyber-permissive-search'), 'every variant of it')
    t.notOk(unpriced.includes('gemini-4-argon') || unpriced.includes('gemini-4-argon-search'), 'a priced model')
    // A shut-down id costs what serves it: 2.5 Flash Image answers as Nano Banana 2.1 on the Gemini API by then.
    t.ok(unpriced.includes('gemini-2.5-flash-image'))
    t.notOk(unpriced.includes('gemini-2.5-flash'), 'served by gemini-3.5-flash-lite, which is priced')
  }
  t.notOk('unpriced' in (openai.find(e => e.id === 'gemini-4-argon') as object), 'no field at all on a priced entry')
  t.equal((await get(`${h.url}/v1/models/gemini-nano-banana-2.1`)).unpriced, true)
  t.equal((await get(`${h.url}/v1beta/models/gemini-nano-banana-2.1`)).unpriced, true)
  t.equal((await get(`${h.url}/v1beta/models/gemini-4-argon`)).unpriced, undefined)
  const bases = h.proxy.upstream().unpriced
  t.ok(bases.includes('gemini-nano-banana-2.1') && !bases.includes('gemini-4-argon'))
  t.notOk(bases.some(id => /-(search|nothinking|maxthinking)$/.test(id)), 'base models only')
})

t.test('a price that takes effect later flags the model until its date, and no longer from it (an operator file, a fixed clock)', async t => {
  const dir = t.testdir({ 'prices.json': JSON.stringify({ prices: [{ model: 'gemini-nano-banana-2.1', backend: 'gemini-api', from: '2026-12-10', input: '1.50', output: '7.50' }] }) })
  const clock = { now: new Date('2026-12-09T23:59:59Z') }
  const h = await startProxy(t, { backendName: 'gemini-api', now: () => clock.now, pricesFile: path.join(dir, 'prices.json') })
  t.equal((await get(`${h.url}/v1/models/gemini-nano-banana-2.1`)).unpriced, true, 'the day before')
  t.ok(h.proxy.upstream().unpriced.includes('gemini-nano-banana-2.1'))
  clock.now = new Date('2026-12-10T00:00:00Z')
  t.equal((await get(`${h.url}/v1/models/gemini-nano-banana-2.1`)).unpriced, undefined, 'from its first instant')
  t.notOk(h.proxy.upstream().unpriced.includes('gemini-nano-banana-2.1'))
})

t.test('on a backend the price list has no prices for (Code Assist), every model served is flagged', async t => {
  const h = await startProxy(t, { backendName: 'code-assist', now: () => DEC_2 })
  const openai = (await get(`${h.url}/v1/models`)).data as Array<Record<string, unknown>>
  t.ok(openai.length > 0)
  t.ok(openai.every(e => e.unpriced === true))
})

t.test('/metrics has a gauge of the unpriced models served, read on each scrape, with no label', async t => {
  const clock = { now: DEC_2 }
  const dir = t.testdir({ 'prices.json': JSON.stringify({ prices: [{ model: 'gemini-nano-banana-2.1', backend: 'gemini-api', from: '2026-12-10', input: '1.50', output: '7.50' }] }) })
  const h = await startProxy(t, { backendName: 'gemini-api', now: () => clock.now, pricesFile: path.join(dir, 'prices.json') })
  const metrics = createMetrics({ models: [], defaultMetrics: false })
  metrics.watchUnpriced(() => h.proxy.upstream().unpriced)
  const gauge = async (): Promise<string[]> => (await metrics.render()).body.split('\n').filter(l => l.startsWith('gatehouse_models_unpriced'))
  const before = h.proxy.upstream().unpriced.length
  t.ok(before > 0)
  t.same(await gauge(), [`gatehouse_models_unpriced ${before}`])
  clock.now = new Date('2026-12-10T00:00:00Z')
  const after = h.proxy.upstream().unpriced.length
  t.ok(after < before, 'Nano Banana 2.1 and the ids it serves are priced from 2026-12-10')
  t.same(await gauge(), [`gatehouse_models_unpriced ${after}`], 'the next scrape sees the price in force')
})
