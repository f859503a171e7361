import t from 'tap'
import type { Test } from 'tap'
import { createMetrics } from '../../gateway/metrics.ts'
import { PASSWORD, startProxy } from './harness.ts'
import type { ProxyHarness } from './harness.ts'
import { errorReply, listedModel, startFakeUpstream } from '../support/fake-upstream.ts'
import { createProxy } from '../../lib/index.ts'
import { serveProxy } from '../support/serve-proxy.ts'

const AUTH = { authorization: `Bearer ${PASSWORD}` }
const BODY = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] })

interface Discovering extends ProxyHarness {
  metrics: ReturnType<typeof createMetrics>
  generate (model: string): Promise<Response>
  listed (): Promise<string[]>
  keysCalled (): string[]
}

// The day before and the day of gemini-2.5-pro's shutdown on the Gemini API (lib/proxy/models/models.json).
const BEFORE_SHUTDOWN = new Date('2026-11-30T12:00:00Z')
const AFTER_SHUTDOWN = new Date('2026-12-01T00:00:00Z')

async function discovering (t: Test, apiKey = 'k1,k2', modelDiscovery: boolean = true, at = BEFORE_SHUTDOWN): Promise<Discovering> {
  const metrics = createMetrics({ models: ['gemini-2.5-flash', 'gemini-2.5-pro'], defaultMetrics: false })
  const h = await startProxy(t, { backendName: 'gemini-api', upstream: { apiKey }, modelDiscovery, observer: metrics.proxy, now: () => at })
  return {
    ...h,
    metrics,
    generate: async model => fetch(`${h.url}/v1beta/models/${model}:generateContent`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: BODY }),
    listed: async () => ((await (await fetch(h.url + '/v1beta/models', { headers: AUTH })).json()) as { models: Array<{ name: string }> }).models.map(m => m.name.slice('models/'.length)),
    keysCalled: () => h.fake.calls('generateContent').map(r => String(r.headers['x-goog-api-key'])),
  }
}

async function metricLines (p: Discovering, name: string): Promise<string[]> {
  return (await p.metrics.render()).body.split('\n').filter(l => l.startsWith(name))
}

t.test('discovery is off by default in the library: no list call is made and the model file decides', async t => {
  const p = await discovering(t, 'k1,k2', false)
  await p.proxy.discoverModels()
  t.ok((await p.listed()).includes('gemini-3.8-flash'))
  t.equal(p.fake.calls('listModels').length, 0)
})

for (const [when, at] of [['before', BEFORE_SHUTDOWN], ['on and after', AFTER_SHUTDOWN]] as const) {
  t.test(`a model the upstream does not list is not offered; one listed for one key goes to that key only, ${when} its shutdown date; one the file lacks is served with the list's limits and reported`, async t => {
    const p = await discovering(t, 'k1,k2', true, at)
    p.fake.listedModels.push(listedModel('gemini-9-test', { input: 2_000_000, output: 100_000 }))
    p.fake.keyModels.set('k1', ['gemini-2.5-flash', 'gemini-9-test'])
    p.fake.keyModels.set('k2', ['gemini-2.5-flash', 'gemini-2.5-pro'])
    await p.proxy.discoverModels()
    t.same(p.fake.calls('listModels').map(r => r.headers['x-goog-api-key']).sort(), ['k1', 'k2'], 'models.list through every key')

    const listed = await p.listed()
    t.ok(listed.includes('gemini-2.5-flash') && listed.includes('gemini-2.5-pro') && listed.includes('gemini-9-test'))
    t.notOk(listed.includes('gemini-3.8-flash'), 'a model of the file the upstream does not list is not offered')
    const refused = await p.generate('gemini-3.8-flash')
    t.equal(refused.status, 404)
    t.match(await refused.json(), { error: { message: /not listed by the gemini-api upstream/ } })

    for (let i = 0; i < 3; i++) t.equal((await p.generate('gemini-2.5-pro')).status, 200)
    t.same(p.keysCalled(), ['k2', 'k2', 'k2'], 'gemini-2.5-pro only through the key that lists it')
    t.equal((await p.generate('gemini-9-test')).status, 200)
    t.equal(p.keysCalled().at(-1), 'k1')
    const detail = await (await fetch(p.url + '/v1beta/models/gemini-9-test', { headers: AUTH })).json() as Record<string, unknown>
    t.match(detail, { inputTokenLimit: 2_000_000, outputTokenLimit: 100_000 })

    const gauges = await metricLines(p, 'gatehouse_model_discovery_models{')
    t.ok(gauges.includes('gatehouse_model_discovery_models{kind="added"} 1'))
    t.ok(gauges.includes('gatehouse_model_discovery_models{kind="listed"} 3'))
  })
}

t.test('a shut-down id no credential lists is served by its listed replacement from its shutdown date, and listed; before it, a 404', async t => {
  for (const [at, listed, status] of [[BEFORE_SHUTDOWN, false, 404], [AFTER_SHUTDOWN, true, 200]] as const) {
    const p = await discovering(t, 'k1', true, at)
    p.fake.listedModels.push(listedModel('gemini-3.8-flash'))
    p.fake.keyModels.set('k1', ['gemini-3.8-flash'])
    await p.proxy.discoverModels()
    t.equal((await p.listed()).includes('gemini-2.5-pro'), listed, `listed on ${at.toISOString()}`)
    const answer = await p.generate('gemini-2.5-pro')
    t.equal(answer.status, status, `answered on ${at.toISOString()}`)
    if (status === 200) t.equal(p.fake.calls('generateContent').at(-1)?.model, 'gemini-3.8-flash', 'sent as the replacement')
  }
})

// The seed's 1.5 and 1.0 ids were shut down in 2025 (lib/proxy/models/models.json): no upstream lists them again.
t.test('replacements win over discovery: a seed id no credential lists is served by the nearest model of its chain that one lists, and stays listed, either side of 2026-12-01', async t => {
  const rows: Array<[at: Date, listed: string[], served: Record<string, string>]> = [
    [BEFORE_SHUTDOWN, ['gemini-2.5-pro', 'gemini-2.5-flash', 'gemini-3.8-flash'], { 'gemini-1.5-pro': 'gemini-2.5-pro', 'gemini-1.5-flash': 'gemini-2.5-flash', 'gemini-1.0-pro': 'gemini-2.5-flash' }],
    // From 2026-12-01 the fake, as Google, lists 2.5 no more: the chain goes on to the replacements it lists.
    [AFTER_SHUTDOWN, ['gemini-2.5-pro', 'gemini-2.5-flash', 'gemini-3.8-flash', 'gemini-3.5-flash-lite'], { 'gemini-1.5-pro': 'gemini-3.8-flash', 'gemini-1.5-flash': 'gemini-3.5-flash-lite', 'gemini-1.0-pro': 'gemini-3.5-flash-lite' }],
  ]
  for (const [at, listed, served] of rows) {
    const p = await discovering(t, 'k1', true, at)
    p.fake.now = () => at
    p.fake.listedModels = listed.map(id => listedModel(id))
    await p.proxy.discoverModels()
    const offered = await p.listed()
    for (const [id, by] of Object.entries(served)) {
      t.ok(offered.includes(id), `${id} stays listed on ${at.toISOString()}`)
      const answer = await p.generate(id)
      t.equal(answer.status, 200, `${id} answered on ${at.toISOString()}`)
      t.equal(p.fake.calls('generateContent').at(-1)?.model, by, `${id} is sent as ${by}`)
    }
  }
})

t.test('an id a credential still lists is where a chain stops: after 2026-12-01 gemini-1.5-pro goes to a listed gemini-2.5-pro rather than an unlisted replacement', async t => {
  const p = await discovering(t, 'k1', true, AFTER_SHUTDOWN)
  p.fake.listedModels = [listedModel('gemini-2.5-pro')]
  await p.proxy.discoverModels()
  t.ok((await p.listed()).includes('gemini-1.5-pro'))
  t.equal((await p.generate('gemini-1.5-pro')).status, 200)
  t.equal(p.fake.calls('generateContent').at(-1)?.model, 'gemini-2.5-pro')
  const nothing = await discovering(t, 'k1', true, AFTER_SHUTDOWN)
  nothing.fake.listedModels = [listedModel('gemini-3.6-flash')]
  await nothing.proxy.discoverModels()
  t.notOk((await nothing.listed()).includes('gemini-1.5-pro'), 'no model of its chain listed: not offered')
  const refused = await nothing.generate('gemini-1.5-pro')
  t.equal(refused.status, 404)
  t.match(await refused.json(), { error: { message: /not listed by the gemini-api upstream/ } })
})

t.test('a failed discovery keeps the last good list', async t => {
  const p = await discovering(t)
  p.fake.listedModels.push(listedModel('gemini-9-test'))
  await p.proxy.discoverModels()
  t.ok((await p.listed()).includes('gemini-9-test'))
  p.fake.keyReplies.set('k1', errorReply(500))
  p.fake.keyReplies.set('k2', errorReply(500))
  await p.proxy.discoverModels()
  p.fake.keyReplies.clear()
  t.ok((await p.listed()).includes('gemini-9-test'), 'still offered')
  t.equal((await p.generate('gemini-9-test')).status, 200)
  t.ok((await metricLines(p, 'gatehouse_model_discovery_rounds_total{')).includes('gatehouse_model_discovery_rounds_total{outcome="failed"} 1'))
})

t.test('models.list is read page by page', async t => {
  const p = await discovering(t, 'k1')
  for (let i = 0; i < 1005; i++) p.fake.listedModels.push(listedModel(`gemini-paged-${i}`))
  await p.proxy.discoverModels()
  t.same(p.fake.calls('listModels').map(r => r.query.pageToken ?? ''), ['', '1000'])
  t.ok((await p.listed()).includes('gemini-paged-1004'))
})

t.test('Code Assist has no model list: discovery skips it and the model file decides', async t => {
  const h = await startProxy(t, { backendName: 'code-assist', modelDiscovery: true })
  await h.proxy.discoverModels()
  t.equal(h.fake.calls('listModels').length, 0)
  const res = await fetch(h.url + '/v1beta/models', { headers: AUTH })
  t.ok(((await res.json()) as { models: unknown[] }).models.length > 0)
})

t.test('on Vertex, discovery reads the publisher model list: a model of the file it does not list is not offered', async t => {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  fake.listedModels = [listedModel('gemini-2.5-flash-image'), listedModel('gemini-3.1-flash-image')]
  const proxy = createProxy({ password: PASSWORD, upstream: { backend: 'vertex', apiKey: 'express-key', vertexEndpoint: fake.url, maxRetries: 0 }, modelDiscovery: true, now: () => BEFORE_SHUTDOWN })
  const url = await serveProxy(t, proxy)
  await proxy.discoverModels()
  t.ok(fake.calls('listModels').some(r => r.api === 'vertex'), 'the publisher model list was read')
  const listed = ((await (await fetch(url + '/v1beta/models', { headers: AUTH })).json()) as { models: Array<{ name: string }> }).models.map(m => m.name.slice('models/'.length))
  t.same(listed.sort(), ['gemini-2.5-flash-image', 'gemini-3.1-flash-image', 'gemini-3.1-flash-image-preview'], 'only what Vertex lists, and the shut-down preview its listed replacement serves')
  const refused = await fetch(`${url}/v1beta/models/gemini-3.8-flash:generateContent`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: BODY })
  t.equal(refused.status, 404)
  t.match(await refused.json(), { error: { message: /not listed by the vertex upstream/ } })
})
