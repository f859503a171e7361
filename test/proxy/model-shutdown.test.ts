// Shut-down models (docs/model-proxy.md, "Shut-down models"): from the date the model file gives for the configured
// backend, the gateway serves the replacement by itself, and the answer names the model that answered.
import t from 'tap'
import { startProxy, PASSWORD } from './harness.ts'
import { createModelCatalog } from '../../lib/index.ts'
import { listedModel } from '../support/fake-upstream.ts'

const auth = { authorization: `Bearer ${PASSWORD}`, 'content-type': 'application/json' }

async function chat (url: string, model: string): Promise<{ status: number, json: any }> {
  const res = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: auth, body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hi' }] }) })
  return { status: res.status, json: await res.json() }
}

t.test('past 2026-12-01 the Gemini API gateway serves gemini-2.5-flash with its replacement, and the answer says so', async t => {
  const clock = { now: new Date('2026-12-02T09:00:00Z') }
  const h = await startProxy(t, { backendName: 'gemini-api', now: () => clock.now })
  // The fake shuts the model down on the same clock: sending the old id would be a 404.
  h.fake.now = () => clock.now
  const res = await chat(h.url, 'gemini-2.5-flash')
  t.equal(res.status, 200, JSON.stringify(res.json))
  t.equal(h.fake.last('generateContent')!.model, 'gemini-3.5-flash-lite', 'the replacement goes upstream')
  t.equal(res.json.model, 'gemini-3.5-flash-lite', 'the answer names the model that answered')
  t.same(h.fake.last('generateContent')!.body.generationConfig?.thinkingConfig?.thinkingBudget, undefined, 'the replacement\'s thinking rules, not 2.5\'s budget')

  const pro = await chat(h.url, 'gemini-2.5-pro-nothinking')
  t.equal(pro.status, 200)
  t.equal(h.fake.last('generateContent')!.model, 'gemini-3.8-flash')
  t.equal(pro.json.model, 'gemini-3.8-flash-nothinking', 'the variant asked for stays')

  const seed = await chat(h.url, 'gemini-1.5-pro')
  t.equal(seed.status, 200)
  t.equal(h.fake.last('generateContent')!.model, 'gemini-3.8-flash', 'a seed id follows its chain of replacements')

  const native = await fetch(`${h.url}/v1beta/models/gemini-2.5-flash:generateContent`, { method: 'POST', headers: auth, body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] }) })
  t.equal(native.status, 200)
  t.equal(h.fake.last('generateContent')!.model, 'gemini-3.5-flash-lite', 'the native surface too')
})

t.test('before its shutdown date a model is served as itself; the clock moving past it is enough, no release needed', async t => {
  const clock = { now: new Date('2026-11-30T23:59:59Z') }
  const h = await startProxy(t, { backendName: 'gemini-api', now: () => clock.now })
  h.fake.now = () => clock.now
  t.equal((await chat(h.url, 'gemini-2.5-flash')).status, 200)
  t.equal(h.fake.last('generateContent')!.model, 'gemini-2.5-flash')
  clock.now = new Date('2026-12-01T00:00:00Z')
  t.equal((await chat(h.url, 'gemini-2.5-flash')).status, 200)
  t.equal(h.fake.last('generateContent')!.model, 'gemini-3.5-flash-lite')
})

t.test('the fake answers a shut-down model 404 after its date, so serving the old id would fail', async t => {
  const h = await startProxy(t, { backendName: 'gemini-api' })
  h.fake.now = () => new Date('2026-12-02T00:00:00Z')
  const res = await fetch(`${h.fake.url}/v1beta/models/gemini-2.5-flash:generateContent`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"contents":[]}' })
  t.equal(res.status, 404)
})

t.test('shutdowns are per backend: Vertex retired 2.5 on 2026-10-20, Code Assist still serves it', async t => {
  const at = (): Date => new Date('2026-10-25T00:00:00Z')
  t.equal(createModelCatalog(undefined, undefined, 'vertex', at).resolve('gemini-2.5-pro').base, 'gemini-3.8-flash')
  t.equal(createModelCatalog(undefined, undefined, 'gemini-api', at).resolve('gemini-2.5-pro').base, 'gemini-2.5-pro')
  t.equal(createModelCatalog(undefined, undefined, 'code-assist', at).resolve('gemini-2.5-pro').base, 'gemini-2.5-pro')
  t.ok(createModelCatalog(undefined, undefined, 'vertex', at).ids.includes('gemini-2.5-pro'), 'a shut-down id stays listed')
  t.equal(createModelCatalog(undefined, undefined, 'gemini-api', at).resolve('gemini-3-pro-preview').base, 'gemini-3.1-pro-preview')
})

t.test('GET /v1beta/models/{id} for an id outside the catalogue is forwarded to the upstream, under the model policy', async t => {
  const h = await startProxy(t, { backendName: 'gemini-api' })
  const res = await fetch(`${h.url}/v1beta/models/gemini-9-ultra`, { headers: auth })
  t.ok(h.fake.requests.some(r => r.method === 'GET' && r.path === '/v1beta/models/gemini-9-ultra'), 'the upstream was asked')
  t.equal(res.status, 404, 'and its answer comes back')
  t.match(await res.json(), { error: { status: 'NOT_FOUND', message: /models\/gemini-9-ultra is not found/ } }, 'in Google\'s words')
  h.fake.listedModels.push(listedModel('gemini-9-lab', { input: 4096, output: 1024 }))
  const known = await fetch(`${h.url}/v1beta/models/gemini-9-lab`, { headers: auth })
  t.equal(known.status, 200, 'a model the upstream knows and the catalogue does not')
  t.match(await known.json(), { name: 'models/gemini-9-lab', inputTokenLimit: 4096, outputTokenLimit: 1024 }, 'the upstream\'s own entry')
  const refused = await fetch(`${h.url}/v1beta/models/gpt-4o`, { headers: auth })
  t.equal(refused.status, 404)
  t.notOk(h.fake.requests.some(r => r.path === '/v1beta/models/gpt-4o'), 'a name that is no Gemini model is not sent')
})

t.test('a key allowed the shut-down model may use what serves it, as Google\'s own routing would; others stay refused', async t => {
  const KEY = 'ghk_member' + 'M'.repeat(37)
  const keys = { async resolveKey (secret: string) { return secret === KEY ? { kind: 'key' as const, userId: 'a'.repeat(24), keyId: 'b'.repeat(24), accessLevel: 'member' as const, models: null } : undefined } }
  const h = await startProxy(t, { backendName: 'gemini-api', now: () => new Date('2026-12-02T00:00:00Z'), keys, modelAccess: { member: ['gemini-2.5-flash*'] } })
  const call = async (model: string): Promise<number> => (await fetch(`${h.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ model, messages: [{ role: 'user', content: 'x' }] }),
  })).status
  t.equal(await call('gemini-2.5-flash'), 200, 'allowed as gemini-2.5-flash, served by gemini-3.5-flash-lite')
  t.equal(h.fake.last('generateContent')!.model, 'gemini-3.5-flash-lite')
  t.equal(await call('gemini-3.5-flash-lite'), 403, 'the replacement by its own name is still outside the policy')
  t.equal(await call('gemini-2.5-pro'), 403, 'a model the key was never allowed stays refused after its shutdown')
  const refused = await fetch(`${h.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'x' }] }),
  })
  t.match(await refused.json(), { error: { message: /may not use the model `gemini-2.5-pro`/ } }, 'the refusal names the model as asked for')
})

t.test('every stale entry of the model file is served by what serves it today, per backend and date (issue 21\'s list)', async t => {
  const rows: Array<[backend: string, date: string, id: string, served: string]> = [
    // Image models: the Gemini API shut 2.5 Flash Image on 2026-10-02 and replaced 3.1 Flash Image by Nano Banana 2.1;
    // Vertex keeps 2.5 Flash Image until 2027-03-15.
    ['gemini-api', '2026-11-27', 'gemini-2.5-flash-image', 'gemini-nano-banana-2.1'],
    ['vertex', '2026-11-27', 'gemini-2.5-flash-image', 'gemini-2.5-flash-image'],
    ['vertex', '2027-03-16', 'gemini-2.5-flash-image', 'gemini-3.1-flash-image'],
    ['gemini-api', '2026-11-27', 'gemini-3.1-flash-image', 'gemini-nano-banana-2.1'],
    ['vertex', '2026-11-27', 'gemini-3.1-flash-image', 'gemini-3.1-flash-image'],
    ['vertex', '2026-11-27', 'gemini-3.1-flash-lite-image', 'gemini-3.1-flash-lite-image'],
    ['gemini-api', '2026-11-27', 'gemini-embedding-001', 'gemini-embedding-001'],
    // The image previews: shut down on the Gemini API on 2026-06-25 for their GA ids (the deprecations page), and
    // Nano Banana 2's on from there to Nano Banana 2.1; Vertex discontinued Nano Banana 2's preview on 2026-07-17.
    ['gemini-api', '2026-06-24', 'gemini-3-pro-image-preview', 'gemini-3-pro-image-preview'],
    ['gemini-api', '2026-06-25', 'gemini-3-pro-image-preview', 'gemini-3-pro-image'],
    ['gemini-api', '2026-06-24', 'gemini-3.1-flash-image-preview', 'gemini-3.1-flash-image-preview'],
    ['gemini-api', '2026-06-25', 'gemini-3.1-flash-image-preview', 'gemini-3.1-flash-image'],
    ['gemini-api', '2026-12-01', 'gemini-3.1-flash-image-preview', 'gemini-nano-banana-2.1'],
    ['vertex', '2026-07-16', 'gemini-3.1-flash-image-preview', 'gemini-3.1-flash-image-preview'],
    ['vertex', '2026-12-01', 'gemini-3.1-flash-image-preview', 'gemini-3.1-flash-image'],
    ['vertex', '2026-12-01', 'gemini-3-pro-image-preview', 'gemini-3-pro-image'],
    ['gemini-api', '2026-11-27', 'gemini-3-pro-preview', 'gemini-3.1-pro-preview'],
    // The seed's ids follow their chains: 1.5 and 1.0 went to 2.5 in 2025, and 2.5 goes on its own date per backend.
    ['gemini-api', '2026-11-27', 'gemini-1.5-flash', 'gemini-2.5-flash'],
    ['gemini-api', '2026-12-02', 'gemini-1.5-flash', 'gemini-3.5-flash-lite'],
    ['gemini-api', '2026-12-02', 'gemini-1.0-pro', 'gemini-3.5-flash-lite'],
    ['vertex', '2026-11-27', 'gemini-1.0-pro', 'gemini-3.5-flash-lite'],
    ['code-assist', '2026-11-27', 'gemini-1.0-pro', 'gemini-2.5-flash'],
  ]
  for (const [backend, date, id, served] of rows) {
    const catalog = createModelCatalog(undefined, undefined, backend, () => new Date(`${date}T00:00:00Z`))
    t.ok(catalog.ids.includes(id), `${backend}: ${id} stays listed`)
    t.equal(catalog.resolve(id).base, served, `${backend} on ${date}: ${id} is served by ${served}`)
  }
})
