// Gemini 4 served by the rules of the model file (docs/model-proxy.md, "Gemini 4"): levels only, refused and ignored
// fields dropped, long decode followed on chat completions, Vertex locations that do not serve it skipped.
import t from 'tap'
import { startProxy, PASSWORD } from './harness.ts'
import { startFakeVertex } from '../support/fake-vertex.ts'
import { createModelCatalog, createProxy, createNodeListener } from '../../lib/index.ts'
import { createVertexBackend } from '../../lib/proxy/upstream/vertex-backend.ts'
import { modelLocations } from '../../lib/proxy/models/catalog.ts'
import { chatThinking, variantThinking } from '../../lib/proxy/models/thinking.ts'
import http from 'node:http'
import type { AddressInfo } from 'node:net'

const catalog = createModelCatalog()
const auth = { authorization: `Bearer ${PASSWORD}`, 'content-type': 'application/json' }

async function post (url: string, path: string, body: unknown): Promise<{ status: number, json: any, text: string }> {
  const res = await fetch(url + path, { method: 'POST', headers: auth, body: JSON.stringify(body) })
  const text = await res.text()
  let json: any
  try { json = JSON.parse(text) } catch {}
  return { status: res.status, json, text }
}

/** A level-thinking model's default level. */
const defaultLevel = (thinking: unknown): unknown => (thinking as { default?: unknown } | null | undefined)?.default

const words = (text: string): number => text.split(/\s+/).filter(w => w !== '').length

t.test('Gemini 4 thinks by levels only: -nothinking is the lowest level, -maxthinking the highest, reasoning_effort maps to levels, never a budget', async t => {
  t.same(variantThinking(catalog.resolve('gemini-4-argon-nothinking')), { thinkingLevel: 'low', includeThoughts: false })
  t.same(variantThinking(catalog.resolve('gemini-4-argon-maxthinking')), { thinkingLevel: 'high', includeThoughts: true })
  t.same(variantThinking(catalog.resolve('gemini-4-neon-maxthinking')), { thinkingLevel: 'xhigh', includeThoughts: true })
  t.same(variantThinking(catalog.resolve('gemini-4-hydrogen-maxthinking')), { thinkingLevel: 'xhigh', includeThoughts: true })
  t.same(variantThinking(catalog.resolve('gemini-4-argon')), { includeThoughts: true }, 'the model\'s own default level')
  const argon = catalog.resolve('gemini-4-argon')
  const neon = catalog.resolve('gemini-4-neon')
  t.same(chatThinking(argon, 'none')?.thinkingLevel, 'low')
  t.same(chatThinking(argon, 'minimal')?.thinkingLevel, 'low', 'no MINIMAL on Gemini 4')
  t.same(chatThinking(argon, 'medium')?.thinkingLevel, 'medium')
  t.same(chatThinking(argon, 'high')?.thinkingLevel, 'high')
  t.same(chatThinking(argon, 'xhigh')?.thinkingLevel, 'high', 'Argon has no XHIGH')
  t.same(chatThinking(neon, 'high')?.thinkingLevel, 'high')
  t.same(chatThinking(neon, 'xhigh')?.thinkingLevel, 'xhigh')
  t.same(chatThinking(neon, 'max')?.thinkingLevel, 'xhigh')
  for (const id of catalog.ids.filter(id => id.startsWith('gemini-4-'))) {
    for (const effort of [undefined, 'none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const) {
      t.equal(chatThinking(catalog.resolve(id), effort)?.thinkingBudget, undefined, `${id} + ${String(effort)}: no budget`)
    }
  }
})

t.test('the -cyber-permissive models are served on both backends with their own default (HIGH) and Argon\'s and Carbon\'s levels: no XHIGH, no budget', async t => {
  for (const backend of ['gemini-api', 'vertex']) {
    const served = createModelCatalog(undefined, undefined, backend)
    for (const base of ['gemini-4-argon-cyber-permissive', 'gemini-4-carbon-cyber-permissive']) {
      t.ok(served.ids.includes(base), `${backend}: ${base} listed`)
      const model = served.resolve(base)
      t.equal(defaultLevel(model.spec?.thinking), 'high', `${base}: HIGH by default, where its base model thinks MEDIUM`)
      t.same(variantThinking(served.resolve(`${base}-maxthinking`)), { thinkingLevel: 'high', includeThoughts: true }, `${base}: -maxthinking is HIGH, not XHIGH`)
      t.same(variantThinking(served.resolve(`${base}-nothinking`)), { thinkingLevel: 'low', includeThoughts: false })
      t.equal(chatThinking(model, 'xhigh')?.thinkingLevel, 'high')
    }
  }
  t.equal(defaultLevel(catalog.resolve('gemini-4-argon').spec?.thinking), 'medium')
})

t.test('the fake Gemini API refuses what Gemini 4 refuses, so the rules below can fail', async t => {
  const h = await startProxy(t, { backendName: 'gemini-api' })
  const call = async (generationConfig: Record<string, unknown>): Promise<number> => (await fetch(`${h.fake.url}/v1beta/models/gemini-4-argon:generateContent`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig }),
  })).status
  t.equal(await call({ thinkingConfig: { thinkingBudget: 1024 } }), 400, 'a budget')
  t.equal(await call({ thinkingConfig: { thinkingLevel: 'MINIMAL' } }), 400, 'MINIMAL')
  t.equal(await call({ thinkingConfig: { thinkingLevel: 'XHIGH' } }), 400, 'XHIGH on Argon')
  t.equal(await call({ presencePenalty: 0.5 }), 400, 'a penalty')
  t.equal(await call({ candidateCount: 2 }), 400, 'two candidates')
  t.equal(await call({ temperature: 0.2, thinkingConfig: { thinkingLevel: 'HIGH' } }), 200, 'sampling is ignored, not refused')
})

t.test('Gemini 4 takes no explicit cache: a cachedContents create naming one is refused up front (EXPLICIT_CACHING_UNSUPPORTED), on both backends; the fakes refuse it too', async t => {
  const cache = (model: string): Record<string, unknown> => ({ model, contents: [{ role: 'user', parts: [{ text: 'a long document' }] }], ttl: '300s' })
  const h = await startProxy(t, { backendName: 'gemini-api' })
  const direct = await fetch(`${h.fake.url}/v1beta/cachedContents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(cache('models/gemini-4-argon')) })
  t.equal(direct.status, 400, 'the fake Gemini API refuses it, as Google does')
  const vertex = await startFakeVertex(t)
  const onVertex = createProxy({ password: PASSWORD, upstream: { backend: 'vertex', vertexEndpoint: vertex.url, projectId: 'proj-1', vertexLocation: 'global', credentialsFile: vertex.keyFile, maxRetries: 0 } })
  const server = http.createServer(createNodeListener(onVertex.routeTable))
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => { server.closeAllConnections(); await new Promise(resolve => server.close(resolve)); await onVertex.close() })
  const vertexUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  for (const [url, fake] of [[h.url, h.fake], [vertexUrl, vertex.fake]] as const) {
    for (const model of ['models/gemini-4-argon', 'gemini-4-neon', 'models/gemini-4-carbon-cyber-permissive']) {
      const res = await post(url, '/v1beta/cachedContents', cache(model))
      t.equal(res.status, 400, `${model}: ${res.text}`)
      t.match(res.json, { error: { code: 400, status: 'INVALID_ARGUMENT', message: /takes no explicit context caches \(cachedContents\).*implicit caching/ } })
    }
    const creates = (): number => fake.requests.filter(r => r.method === 'POST' && /\/cachedContents$/.test(r.path)).length
    t.equal(creates(), url === h.url ? 1 : 0, 'nothing reached the upstream (but the direct call above)')
    const other = await post(url, '/v1beta/cachedContents', cache('models/gemini-3.6-flash'))
    t.equal(other.status, 200, `a model that takes explicit caches still creates one: ${other.text}`)
    t.equal(creates(), url === h.url ? 2 : 1)
  }
  const onFakeVertex = await fetch(`${vertex.url}/v1/projects/proj-1/locations/global/cachedContents`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${vertex.fake.issuedTokens[0]}` },
    body: JSON.stringify(cache('projects/proj-1/locations/global/publishers/google/models/gemini-4-argon')),
  })
  t.equal(onFakeVertex.status, 400, 'the fake Vertex refuses it too')
})

t.test('chat completions on Gemini 4 drop the refused and ignored fields and send a level, never a budget', async t => {
  const h = await startProxy(t, { backendName: 'gemini-api' })
  const res = await post(h.url, '/v1/chat/completions', {
    model: 'gemini-4-argon',
    messages: [{ role: 'user', content: 'Hello' }],
    temperature: 0.3,
    top_p: 0.9,
    presence_penalty: 0.5,
    frequency_penalty: 0.5,
    n: 2,
    seed: 7,
    reasoning_effort: 'xhigh',
    max_tokens: 5000000,
  })
  t.equal(res.status, 200, res.text)
  const config = h.fake.last('generateContent')!.body.generationConfig
  t.same(config, { maxOutputTokens: 1048576, seed: 7, thinkingConfig: { thinkingLevel: 'high', includeThoughts: true } }, 'only what the model takes; max_tokens within the shared window')
  const neon = await post(h.url, '/v1/chat/completions', { model: 'gemini-4-neon-nothinking', messages: [{ role: 'user', content: 'Hi' }], stream: true })
  t.equal(neon.status, 200)
  t.same(h.fake.last('streamGenerateContent')!.body.generationConfig.thinkingConfig, { thinkingLevel: 'low', includeThoughts: false })
})

t.test('native generateContent on Gemini 4 never sends a budget or a refused field', async t => {
  const h = await startProxy(t, { backendName: 'gemini-api' })
  const res = await post(h.url, '/v1beta/models/gemini-4-argon:generateContent', {
    contents: [{ role: 'user', parts: [{ text: 'Hello' }] }],
    generationConfig: { temperature: 0.1, topK: 3, presencePenalty: 1, candidateCount: 3, thinkingConfig: { thinkingBudget: 0 } },
  })
  t.equal(res.status, 200, res.text)
  t.same(h.fake.last('generateContent')!.body.generationConfig, { thinkingConfig: { thinkingLevel: 'low' } }, 'budget 0 is the lowest level')
  const xhigh = await post(h.url, '/v1beta/models/gemini-4-carbon:generateContent', {
    contents: [{ role: 'user', parts: [{ text: 'Hello' }] }],
    generationConfig: { thinkingConfig: { thinkingLevel: 'XHIGH', thinkingBudget: 4096 } },
  })
  t.equal(xhigh.status, 200, xhigh.text)
  t.same(h.fake.last('generateContent')!.body.generationConfig, { thinkingConfig: { thinkingLevel: 'HIGH' } }, 'Carbon\'s highest level')
})

t.test('max_tokens above one call\'s output continues through the continuation token, non-streamed, up to what the client asked', async t => {
  const h = await startProxy(t, { backendName: 'gemini-api' })
  h.fake.decodeTokens = 80000
  const res = await post(h.url, '/v1/chat/completions', { model: 'gemini-4-argon', messages: [{ role: 'user', content: 'Write a book' }], max_tokens: 100000 })
  t.equal(res.status, 200, res.text.slice(0, 300))
  t.equal(words(res.json.choices[0].message.content), 80000, 'the whole answer')
  t.equal(res.json.choices[0].finish_reason, 'stop')
  t.equal(res.json.usage.completion_tokens, 80000, 'usage over every call')
  const calls = h.fake.calls('generateContent')
  t.equal(calls.length, 3, '32,768 non-streamed tokens per call on Argon')
  t.equal(calls[0].body.continuationToken, undefined)
  t.equal(calls[1].body.continuationToken, 'fake-ct-32768')
  t.equal(calls[2].body.continuationToken, 'fake-ct-65536')
  t.equal(calls[2].body.generationConfig.maxOutputTokens, 100000, 'the same total on every call')

  h.fake.reset()
  h.fake.decodeTokens = 80000
  const capped = await post(h.url, '/v1/chat/completions', { model: 'gemini-4-argon', messages: [{ role: 'user', content: 'Write a book' }], max_tokens: 40000 })
  t.equal(words(capped.json.choices[0].message.content), 40000, 'no more than the client asked')
  t.equal(capped.json.choices[0].finish_reason, 'length')
  t.equal(h.fake.calls('generateContent').length, 2)
})

t.test('max_tokens above one call\'s output continues through the continuation token when streamed', async t => {
  const h = await startProxy(t, { backendName: 'gemini-api' })
  h.fake.decodeTokens = 80000
  const res = await fetch(`${h.url}/v1/chat/completions`, {
    method: 'POST', headers: auth, body: JSON.stringify({ model: 'gemini-4-neon', messages: [{ role: 'user', content: 'Write a book' }], max_tokens: 200000, stream: true, stream_options: { include_usage: true } }),
  })
  t.equal(res.status, 200)
  const events = (await res.text()).split('\n\n').filter(e => e.startsWith('data: ') && e !== 'data: [DONE]').map(e => JSON.parse(e.slice(6)))
  const text = events.map(e => e.choices?.[0]?.delta?.content ?? '').join('')
  t.equal(words(text), 80000, 'every call\'s text in one stream')
  t.same(events.flatMap(e => e.choices?.map((c: any) => c.finish_reason).filter((r: unknown) => r !== null && r !== undefined) ?? []), ['stop'], 'one finish, at the end')
  t.equal(events.at(-1).usage.completion_tokens, 80000)
  const calls = h.fake.calls('streamGenerateContent')
  t.equal(calls.length, 2, '65,536 streamed tokens per call')
  t.equal(calls[1].body.continuationToken, 'fake-ct-65536')
})

t.test('a pooled Vertex location that does not serve Gemini 4 is skipped for it; none serving it is a 404', async t => {
  const vertex = await startFakeVertex(t)
  const start = async (vertexLocation: string): Promise<string> => {
    // The fake serves every location on one host, which createBackend refuses for a pool: the backend is built here,
    // with the model file's locations as createProxy hands them to createBackend.
    const backend = createVertexBackend({ vertexEndpoint: vertex.url, projectId: 'proj-1', credentialsFile: vertex.keyFile, vertexLocation, maxRetries: 0, modelLocations: modelLocations() })
    const proxy = createProxy({ password: PASSWORD, backend })
    const server = http.createServer(createNodeListener(proxy.routeTable))
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    t.teardown(async () => { server.closeAllConnections(); await new Promise(resolve => server.close(resolve)); await backend.close() })
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  }
  const url = await start('us-central1,global,europe-west4')
  for (let i = 0; i < 4; i++) {
    const res = await post(url, '/v1/chat/completions', { model: 'gemini-4-argon', messages: [{ role: 'user', content: 'Hi' }] })
    t.equal(res.status, 200, res.text)
  }
  t.same(vertex.fake.calls('generateContent').map(r => r.location), ['global', 'global', 'global', 'global'], 'only the location that serves it')
  await post(url, '/v1/chat/completions', { model: 'gemini-3.8-flash', messages: [{ role: 'user', content: 'Hi' }] })
  await post(url, '/v1/chat/completions', { model: 'gemini-3.8-flash', messages: [{ role: 'user', content: 'Hi' }] })
  t.not(vertex.fake.calls('generateContent').slice(4).map(r => r.location).join(), 'global,global', 'other models use the whole pool')

  const regional = await start('us-central1')
  const res = await post(regional, '/v1/chat/completions', { model: 'gemini-4-argon', messages: [{ role: 'user', content: 'Hi' }] })
  t.equal(res.status, 404, res.text)
  t.match(res.json.error.message, /served by Vertex only from global, us, eu/)
})
