// The model file's `backends`: which upstreams serve a model (lib/proxy/models/catalog.ts). The shipped file lists
// gemini-3.8-flash for the Gemini API and Vertex only, so the Code Assist fake is the backend that leaves it out.
import t from 'tap'
import { mkdtemp, writeFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createBackend, createModelCatalog, createProxy, ConfigurationError } from '../../lib/index.ts'
import { loadModelFile } from '../../lib/proxy/models/data.ts'
import { PASSWORD, startProxy } from './harness.ts'

const AUTH = { authorization: `Bearer ${PASSWORD}`, 'content-type': 'application/json' }
const GOOG = { 'x-goog-api-key': PASSWORD, 'content-type': 'application/json' }
const CONTENTS = { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }

t.test('a model the configured backend does not serve is not listed', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  const openai = await (await fetch(`${h.url}/v1/models`, { headers: AUTH })).json() as { data: Array<{ id: string }> }
  const ids = openai.data.map(m => m.id)
  t.ok(ids.includes('gemini-2.5-pro'), 'a model Code Assist serves is listed')
  t.ok(ids.includes('gemini-3-flash-preview-search'))
  t.notOk(ids.some(id => id.startsWith('gemini-3.8-flash')), 'Code Assist does not list gemini-3.8-flash or its variants')
  t.notOk(ids.includes('gemini-embedding-2'))
  const native = await (await fetch(`${h.url}/v1beta/models`, { headers: GOOG })).json() as { models: Array<{ name: string }> }
  t.ok(native.models.some(m => m.name === 'models/gemini-2.5-flash'))
  t.notOk(native.models.some(m => m.name.startsWith('models/gemini-3.8-flash')), 'nor does the native list')

  const detail = await fetch(`${h.url}/v1/models/gemini-3.8-flash-search`, { headers: AUTH })
  t.equal(detail.status, 404)
  t.match(await detail.json(), { error: { code: 'model_not_found', param: 'model', message: /gemini-3\.8-flash-search.*not served by the code-assist backend/ } })
  const nativeDetail = await fetch(`${h.url}/v1beta/models/lm-3.8-flash`, { headers: GOOG })
  t.equal(nativeDetail.status, 404)
  t.match(await nativeDetail.json(), { error: { code: 404, status: 'NOT_FOUND', message: /lm-3\.8-flash.*code-assist backend/ } })

  const api = await startProxy(t, { backendName: 'gemini-api' })
  const listed = await (await fetch(`${api.url}/v1/models`, { headers: AUTH })).json() as { data: Array<{ id: string }> }
  t.ok(listed.data.some(m => m.id === 'gemini-3.8-flash-search'), 'the Gemini API backend lists it')
})

t.test('a request for a model the backend does not serve answers 404 naming the backend, on the chat and native surfaces', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  for (const model of ['gemini-3.8-flash', 'lm-3.8-flash-search', 'gemini-3.8-flash-nothinking', 'gemini-3.8-flash-maxthinking']) {
    const res = await fetch(`${h.url}/v1/chat/completions`, { method: 'POST', headers: AUTH, body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }) })
    t.equal(res.status, 404, model)
    const body = await res.json() as { error: { message: string, type: string, code: string, param?: string } }
    t.match(body.error, { code: 'model_not_found', type: 'invalid_request_error' }, model)
    t.match(body.error.message, `\`${model}\` is not served by the code-assist backend`, `${model}: names the model and the backend`)
    t.match(body.error.message, /gemini-api, vertex/, `${model}: says which backends serve it`)
  }
  // A retired id resolves first: gemini-3.7-flash is now gemini-3.8-flash, which Code Assist does not serve.
  const alias = await fetch(`${h.url}/v1/chat/completions`, { method: 'POST', headers: AUTH, body: JSON.stringify({ model: 'gemini-3.7-flash', messages: [{ role: 'user', content: 'hi' }] }) })
  t.equal(alias.status, 404)
  t.match((await alias.json() as { error: { message: string } }).error.message, /`gemini-3\.7-flash` \(now gemini-3\.8-flash\) is not served by the code-assist backend/)

  for (const action of ['generateContent', 'streamGenerateContent', 'countTokens']) {
    const res = await fetch(`${h.url}/v1beta/models/gemini-3.8-flash-nothinking:${action}`, { method: 'POST', headers: GOOG, body: JSON.stringify(CONTENTS) })
    t.equal(res.status, 404, action)
    t.match(await res.json(), { error: { code: 404, status: 'NOT_FOUND', message: /gemini-3\.8-flash-nothinking.*not served by the code-assist backend/ } }, action)
  }
  t.equal(h.fake.calls('generateContent').length + h.fake.calls('streamGenerateContent').length + h.fake.calls('countTokens').length, 0, 'nothing was sent upstream')

  // Models the file does not know still go to the upstream, which decides (docs/model-proxy.md, "Names in requests").
  const unknown = await fetch(`${h.url}/v1beta/models/gemini-9-ultra:generateContent`, { method: 'POST', headers: GOOG, body: JSON.stringify(CONTENTS) })
  t.equal(unknown.status, 200)
  await unknown.arrayBuffer()
  t.equal(h.fake.last('generateContent')?.body.model, 'gemini-9-ultra')
})

t.test('a backend the model file does not name (a custom Backend, or none) leaves no model out', async t => {
  for (const backend of [undefined, 'my-backend']) {
    const catalog = createModelCatalog(undefined, undefined, backend)
    t.ok(catalog.ids.includes('gemini-3.8-flash'), String(backend))
    t.equal(catalog.resolve('gemini-3.8-flash').base, 'gemini-3.8-flash')
  }
  const proxy = createProxy({ password: PASSWORD })
  t.ok(proxy, 'the unconfigured backend has no name: nothing is filtered')
  await proxy.close()
  const vertex = createModelCatalog(undefined, undefined, 'vertex')
  t.ok(vertex.ids.includes('gemini-3.8-flash') && vertex.ids.includes('gemini-embedding-2'), 'Vertex serves today\'s models')
})

t.test('a model list naming a model the backend does not serve is refused at construction', async t => {
  const err = (() => { try { createModelCatalog(['gemini-2.5-pro', 'gemini-3.8-flash'], undefined, 'code-assist') } catch (e) { return e } })() as ConfigurationError
  t.ok(err instanceof ConfigurationError)
  t.equal(err.option, 'models')
  t.match(err.message, /models: "gemini-3\.8-flash" is not served by the code-assist backend \(the model file lists it for gemini-api, vertex\)/)
  t.same(createModelCatalog(['gemini-2.5-pro'], undefined, 'code-assist').ids.filter(id => !id.includes('-search') && !id.includes('thinking')), ['gemini-2.5-pro'])
})

t.test('another model file\'s backends decide what each backend lists', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-backends-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'models.json')
  const model = (id: string, backends: string[]): Record<string, unknown> => ({ id, family: 'gemini-3', aliases: [], thinking: null, sampling: [], input: ['text'], output: ['text'], backends, limits: { input: 1000, output: 100 }, sources: [] })
  await writeFile(file, JSON.stringify({ models: [model('gemini-9-flash', ['vertex']), model('gemini-9-pro', ['gemini-api', 'vertex'])] }))
  const specs = loadModelFile(file)
  t.same(createModelCatalog(undefined, specs, 'gemini-api').ids, ['gemini-9-pro', 'gemini-9-pro-search'])
  t.same(createModelCatalog(undefined, specs, 'vertex').ids, ['gemini-9-flash', 'gemini-9-flash-search', 'gemini-9-pro', 'gemini-9-pro-search'])
  t.throws(() => createModelCatalog(undefined, specs, 'gemini-api').resolve('gemini-9-flash-search'), { code: 'MODEL_NOT_FOUND', message: /not served by the gemini-api backend \(the model file lists it for vertex\)/ })
  const api = createModelCatalog(undefined, specs, 'gemini-api')
  t.throws(() => api.get('models/gemini-9-flash'), { code: 'MODEL_NOT_FOUND', message: /gemini-9-flash.*gemini-api backend/ }, 'details say why')
  t.equal(api.get('gemini-9-ultra'), undefined, 'a model the file does not know is simply not listed')
  t.equal(api.get('not a/name'), undefined, 'nor is a name no model can have')
})

t.test('the Vertex backend is named vertex, so the model file\'s vertex entries decide what it lists and sends', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-backends-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'models.json')
  const model = (id: string, backends: string[]): Record<string, unknown> => ({ id, family: 'gemini-3', aliases: [], thinking: null, sampling: [], input: ['text'], output: ['text'], backends, limits: { input: 1000, output: 100 }, sources: [] })
  await writeFile(file, JSON.stringify({ models: [model('gemini-9-flash', ['gemini-api']), model('gemini-9-pro', ['vertex'])] }))
  // Express mode: nothing is fetched until a call, and no call reaches it here.
  const backend = createBackend({ backend: 'vertex', apiKey: 'express-key', vertexEndpoint: 'http://127.0.0.1:9' })
  t.teardown(() => backend.close())
  t.equal(backend.name, 'vertex')
  const h = await startProxy(t, { backendName: 'code-assist', backend, modelsFile: file })
  const list = await (await fetch(`${h.url}/v1beta/models`, { headers: GOOG })).json() as { models: Array<{ name: string }> }
  t.same(list.models.map(m => m.name), ['models/gemini-9-pro', 'models/gemini-9-pro-search'])
  const res = await fetch(`${h.url}/v1beta/models/gemini-9-flash:generateContent`, { method: 'POST', headers: GOOG, body: JSON.stringify(CONTENTS) })
  t.equal(res.status, 404)
  t.match(await res.json(), { error: { status: 'NOT_FOUND', message: /gemini-9-flash.*not served by the vertex backend \(the model file lists it for gemini-api\)/ } })
})
