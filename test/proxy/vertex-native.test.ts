// Embeddings and the other native paths on the Vertex AI backend: POST /v1/embeddings through :predict or
// :embedContent, native embedContent / batchEmbedContents answered in the Gemini API's shape, and a 404 naming the
// backend for what Vertex does not have.
import t from 'tap'
import type { Test } from 'tap'
import type { BackendOptions, KeyCaller, ProxyOptions } from '../../lib/index.ts'
import { createBackend, createProxy } from '../../lib/index.ts'
import { VERTEX_EMBED_CONCURRENCY } from '../../lib/proxy/upstream/vertex-embed.ts'
import { errorReply } from '../support/fake-upstream.ts'
import { UNREACHED_CODE_ASSIST, serveProxy } from '../support/serve-proxy.ts'
import { startFakeVertex } from '../support/fake-vertex.ts'
import type { FakeVertex } from '../support/fake-vertex.ts'

const PASSWORD = 'vertex-native-password'
const PROJECT_PATH = '/v1/projects/proj-1/locations/us-central1/publishers/google/models/'
const EXPRESS_PATH = '/v1/publishers/google/models/'

const serviceAccount = (vertex: FakeVertex): BackendOptions => ({ projectId: 'proj-1', vertexLocation: 'us-central1', credentialsFile: vertex.keyFile })
const express = (vertex: FakeVertex): BackendOptions => ({ apiKey: vertex.apiKey })

async function start (t: Test, mode: (vertex: FakeVertex) => BackendOptions, options: Partial<ProxyOptions> = {}): Promise<{ url: string, vertex: FakeVertex }> {
  const vertex = await startFakeVertex(t)
  const proxy = createProxy({ password: PASSWORD, upstream: { backend: 'vertex', vertexEndpoint: vertex.url, maxRetries: 0, ...mode(vertex) }, ...options })
  const url = await serveProxy(t, proxy)
  return { url, vertex }
}

async function post (url: string, path: string, body: unknown, headers: Record<string, string> = { authorization: `Bearer ${PASSWORD}` }): Promise<{ status: number, body: any }> {
  const res = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
  return { status: res.status, body: await res.json() }
}

t.test('POST /v1/embeddings on Vertex: gemini-embedding-001 embeds with :predict, one instance per call, dimensions as outputDimensionality, usage summed', async t => {
  const { url, vertex } = await start(t, serviceAccount)
  const one = await post(url, '/v1/embeddings', { model: 'gemini-embedding-001', input: 'hello', dimensions: 2 })
  t.equal(one.status, 200)
  t.same(one.body.data, [{ object: 'embedding', index: 0, embedding: [5, 0] }])
  t.same(one.body.usage, { prompt_tokens: 1, total_tokens: 1 }, 'the upstream\'s token_count')
  const call = vertex.fake.last('predict')!
  t.equal(call.path, `${PROJECT_PATH}gemini-embedding-001:predict`)
  t.same(call.body, { instances: [{ content: 'hello' }], parameters: { outputDimensionality: 2 } })
  t.equal(call.headers.authorization, `Bearer ${vertex.fake.issuedTokens[0]}`)

  const before = vertex.fake.calls('predict').length
  const many = await post(url, '/v1/embeddings', { model: 'gemini-embedding-001', input: ['a', 'bb two', 'ccc three words'] })
  t.equal(many.status, 200)
  t.same(many.body.data.map((d: { index: number, embedding: number[] }) => [d.index, d.embedding]), [[0, [1, 0, 0.5]], [1, [6, 0, 0.5]], [2, [15, 0, 0.5]]], 'answers in input order')
  t.same(many.body.usage, { prompt_tokens: 6, total_tokens: 6 }, 'token counts summed over the calls')
  const calls = vertex.fake.calls('predict').slice(before)
  t.equal(calls.length, 3, 'Google documents one instance per request for gemini-embedding-001')
  t.same(calls.map(c => c.body.instances.length), [1, 1, 1])
  t.same(calls.map(c => c.body.parameters), [undefined, undefined, undefined], 'no parameters without dimensions')
})

t.test('POST /v1/embeddings on Vertex: gemini-embedding-2 embeds with :embedContent, one per input (express mode), in order, usage summed', async t => {
  const { url, vertex } = await start(t, express)
  const res = await post(url, '/v1/embeddings', { model: 'gemini-embedding-2', input: ['one', 'three three three'], dimensions: 2 })
  t.equal(res.status, 200)
  t.same(res.body.data.map((d: { embedding: number[] }) => d.embedding), [[3, 0], [17, 0]])
  t.same(res.body.usage, { prompt_tokens: 4, total_tokens: 4 })
  const calls = vertex.fake.calls('embedContent')
  t.equal(calls.length, 2)
  t.equal(calls[0].path, `${EXPRESS_PATH}gemini-embedding-2:embedContent`)
  t.same(calls.map(c => c.body).sort((a, b) => a.content.parts[0].text.length - b.content.parts[0].text.length), [
    { content: { parts: [{ text: 'one' }] }, embedContentConfig: { outputDimensionality: 2 } },
    { content: { parts: [{ text: 'three three three' }] }, embedContentConfig: { outputDimensionality: 2 } },
  ])
  t.ok(calls.every(c => c.headers['x-goog-api-key'] === vertex.apiKey), 'the proxy\'s own express-mode key')
  const single = await post(url, '/v1/embeddings', { model: 'gemini-embedding-2', input: 'plain' })
  t.same(single.body.data[0].embedding, [5, 0, 0.5])
  t.same(vertex.fake.last('embedContent')!.body, { content: { parts: [{ text: 'plain' }] } })
})

t.test('Vertex embeddings: text-embedding models take several instances in one :predict call; a wrong count is an upstream error', async t => {
  const vertex = await startFakeVertex(t)
  const backend = createBackend({ backend: 'vertex', vertexEndpoint: vertex.url, maxRetries: 0, ...express(vertex) })
  t.teardown(() => backend.close())
  const requests = ['a', 'bb', 'ccc'].map(text => ({ content: { parts: [{ text }] }, taskType: 'RETRIEVAL_DOCUMENT', title: 'doc' }))
  const result = await backend.embed!({ model: 'text-embedding-005', requests })
  t.same(result.embeddings.map(e => e.values), [[1, 0, 0.5], [2, 1, 0.5], [3, 2, 0.5]])
  t.equal(result.promptTokens, 3)
  t.equal(vertex.fake.calls('predict').length, 1)
  t.same(vertex.fake.last('predict')!.body.instances[0], { content: 'a', task_type: 'RETRIEVAL_DOCUMENT', title: 'doc' })
  // Requests asking for other dimensions go in calls of their own: `parameters` is per call.
  await backend.embed!({ model: 'text-embedding-005', requests: [requests[0], { ...requests[1], outputDimensionality: 2 }] })
  t.same(vertex.fake.calls('predict').slice(1).map(c => [c.body.instances.length, c.body.parameters?.outputDimensionality]), [[1, undefined], [1, 2]])

  vertex.fake.reply('predict', { body: { predictions: [] } })
  const short = await backend.embed!({ model: 'text-embedding-005', requests }).catch(e => e)
  t.equal(short.code, 'UPSTREAM_ERROR')
  vertex.fake.reply('embedContent', { body: {} })
  t.equal((await backend.embed!({ model: 'gemini-embedding-2', requests }).catch(e => e)).code, 'UPSTREAM_ERROR')
  const image = await backend.embed!({ model: 'gemini-embedding-001', requests: [{ content: { parts: [{ inlineData: { mimeType: 'image/png', data: 'AA==' } }] } }] }).catch(e => e)
  t.equal(image.code, 'INVALID_INPUT', ':predict embeds text only')
})

t.test('Vertex embeddings run at most VERTEX_EMBED_CONCURRENCY upstream calls at once, and start no more after a failure', async t => {
  const vertex = await startFakeVertex(t)
  const backend = createBackend({ backend: 'vertex', vertexEndpoint: vertex.url, maxRetries: 0, ...express(vertex) })
  t.teardown(() => backend.close())
  vertex.fake.reply('embedContent', ...Array.from({ length: VERTEX_EMBED_CONCURRENCY }, () => ({ stall: 'headers' as const })))
  const abort = new AbortController()
  const requests = Array.from({ length: 10 }, (_, i) => ({ content: { parts: [{ text: `input ${i}` }] } }))
  const pending = backend.embed!({ model: 'gemini-embedding-2', requests, signal: abort.signal }).catch(e => e)
  await vertex.fake.waitFor('embedContent', VERTEX_EMBED_CONCURRENCY)
  for (let i = 0; i < 5; i++) await new Promise(resolve => setImmediate(resolve))
  t.equal(vertex.fake.calls('embedContent').length, VERTEX_EMBED_CONCURRENCY)
  abort.abort()
  t.equal((await pending).code, 'CLIENT_CLOSED_REQUEST')
  t.equal(vertex.fake.calls('embedContent').length, VERTEX_EMBED_CONCURRENCY)
})

t.test('Vertex embedding errors map like the other calls: 429 with Retry-After on /v1/embeddings, Google\'s body unchanged on the native route', async t => {
  const { url, vertex } = await start(t, serviceAccount)
  vertex.fake.reply('predict', errorReply(429, { retryDelay: '7s', message: 'Quota exceeded for aiplatform.googleapis.com' }))
  const res = await fetch(`${url}/v1/embeddings`, { method: 'POST', headers: { authorization: `Bearer ${PASSWORD}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gemini-embedding-001', input: 'x' }) })
  t.equal(res.status, 429)
  t.equal(res.headers.get('retry-after'), '7')
  t.match(await res.json(), { error: { message: /Quota exceeded/ } })
  vertex.fake.reply('embedContent', errorReply(400, { message: 'Invalid content for embedding' }))
  const native = await post(url, '/v1beta/models/gemini-embedding-2:embedContent', { content: { parts: [{ text: 'x' }] } })
  t.equal(native.status, 400)
  t.same(native.body, { error: { code: 400, message: 'Invalid content for embedding', status: 'INVALID_ARGUMENT' } })
})

t.test('native embedContent and batchEmbedContents on Vertex answer in the Gemini API shape, and are metered', async t => {
  const KEY = 'ghk_member' + 'V'.repeat(37)
  const member: KeyCaller = { kind: 'key', userId: 'a'.repeat(24), keyId: 'b'.repeat(24), accessLevel: 'member', models: null }
  const calls: Array<[string, string, number]> = []
  const { url, vertex } = await start(t, serviceAccount, {
    keys: { resolveKey: async secret => secret === KEY ? member : undefined },
    modelAccess: { member: ['gemini-embedding-2'] },
    onCall: entry => calls.push([entry.model, entry.surface, entry.status]),
  })
  const auth = { 'x-goog-api-key': KEY }
  const one = await post(url, '/v1beta/models/gemini-embedding-2:embedContent', { model: 'models/gemini-embedding-2', content: { parts: [{ text: 'hello' }] }, taskType: 'RETRIEVAL_QUERY', outputDimensionality: 2 }, auth)
  t.equal(one.status, 200)
  t.same(one.body, { embedding: { values: [5, 0] } })
  t.same(vertex.fake.last('embedContent')!.body, { content: { parts: [{ text: 'hello' }] }, embedContentConfig: { taskType: 'RETRIEVAL_QUERY', outputDimensionality: 2 } })

  const batch = await post(url, '/v1/models/gemini-embedding-2:batchEmbedContents', {
    requests: [{ model: 'models/gemini-embedding-2', content: { parts: [{ text: 'a' }] } }, { model: 'models/gemini-embedding-2', content: { parts: [{ text: 'bbbb' }] } }],
  }, auth)
  t.equal(batch.status, 200)
  t.same(batch.body, { embeddings: [{ values: [1, 0, 0.5] }, { values: [4, 0, 0.5] }] })

  t.same(calls, [['gemini-embedding-2', 'native', 200], ['gemini-embedding-2', 'native', 200]])

  for (const [body, message] of [
    [{ requests: [] }, /`requests` must be a list of 1 to 100/],
    [{ requests: [{ content: 'text' }] }, /requests\[0\] needs a `content` object/],
    [[1], /must be a JSON object/],
  ] as const) {
    const bad = await post(url, '/v1beta/models/gemini-embedding-2:batchEmbedContents', body)
    t.equal(bad.status, 400)
    t.match(bad.body, { error: { status: 'INVALID_ARGUMENT', message } })
  }
  const notJson = await fetch(`${url}/v1beta/models/gemini-embedding-2:embedContent`, { method: 'POST', headers: { authorization: `Bearer ${PASSWORD}`, 'content-type': 'application/json' }, body: '{' })
  t.equal(notJson.status, 400)
  const get = await fetch(`${url}/v1beta/models/gemini-embedding-2:embedContent`, { headers: { authorization: `Bearer ${PASSWORD}` } })
  t.equal(get.status, 405)
  t.equal(vertex.fake.calls('embedContent').length, 3, 'refused requests reach nothing upstream')
})

t.test('a model the key may not use is refused on Vertex\'s native embedContent and batchEmbedContents before anything reaches Vertex', async t => {
  const KEY = 'ghk_member' + 'W'.repeat(37)
  const member: KeyCaller = { kind: 'key', userId: 'a'.repeat(24), keyId: 'b'.repeat(24), accessLevel: 'member', models: null }
  const { url, vertex } = await start(t, serviceAccount, {
    keys: { resolveKey: async secret => secret === KEY ? member : undefined },
    modelAccess: { member: ['gemini-embedding-2'] },
  })
  for (const action of ['embedContent', 'batchEmbedContents']) {
    const body = action === 'embedContent' ? { content: { parts: [{ text: 'a' }] } } : { requests: [{ content: { parts: [{ text: 'a' }] } }] }
    const refused = await post(url, `/v1beta/models/gemini-embedding-001:${action}`, body, { 'x-goog-api-key': KEY })
    t.equal(refused.status, 403, action)
    t.match(refused.body, { error: { status: 'PERMISSION_DENIED', message: /gemini-embedding-001/ } }, action)
  }
  t.same(vertex.fake.requests.filter(r => r.call !== 'token'), [])
})

t.test('an embedContent body over the body limit is refused (413) on Vertex before anything reaches it', async t => {
  const { url, vertex } = await start(t, express, { maxBodyBytes: 1024 })
  const res = await post(url, '/v1beta/models/gemini-embedding-2:embedContent', { content: { parts: [{ text: 'x'.repeat(4096) }] } })
  t.equal(res.status, 413)
  t.same(vertex.fake.requests, [])
})

t.test('other native paths on Vertex answer 404 naming the vertex backend and what it lacks, and reach nothing upstream', async t => {
  const { url, vertex } = await start(t, express)
  const cases: Array<[string, string, RegExp]> = [
    ['GET', '/v1beta/files', /vertex backend has no \/v1beta\/files: Vertex AI has no `files`.*gemini-api backend/],
    ['POST', '/upload/v1beta/files', /vertex backend has no \/upload\/v1beta\/files: Vertex AI has no file uploads/],
    ['GET', '/v1beta/batches/b-1', /vertex backend has no .*`batches`/],
    ['GET', '/v1beta/operations/op-1', /vertex backend has no .*`operations`/],
    ['POST', '/v1beta/cachedContents', /Vertex AI express mode has no context caching \(\/v1beta\/cachedContents\): it needs a Google Cloud project/],
    ['POST', '/v1beta/models/gemini-2.5-pro:batchGenerateContent', /vertex backend has no .*`models`/],
  ]
  for (const [method, path, message] of cases) {
    // A cache creation names its model (the body is checked first, lib/proxy/native/pass-through.ts).
    const res = await fetch(url + path, { method, headers: { authorization: `Bearer ${PASSWORD}`, 'content-type': 'application/json' }, body: method === 'POST' ? '{"model":"models/gemini-2.5-flash"}' : undefined })
    t.equal(res.status, 404, path)
    t.match(await res.json(), { error: { code: 404, status: 'NOT_FOUND', message } }, path)
  }
  const dotted = await fetch(`${url}/v1beta/models%2Fgemini-embedding-2:embedContent`, { headers: { authorization: `Bearer ${PASSWORD}` } })
  t.equal(dotted.status, 400, 'the pass-through path rules hold on Vertex too')
  t.same(vertex.fake.requests, [])
})

t.test('GET /v1beta/models/{id} for an id outside the catalogue reads Vertex\'s publisher model, answered as a Gemini API Model, under the model policy', async t => {
  for (const mode of [serviceAccount, express]) {
    const keys = { async resolveKey (secret: string): Promise<KeyCaller | undefined> { return secret === 'ghk_' + 'v'.repeat(43) ? { kind: 'key', userId: 'a'.repeat(24), keyId: 'b'.repeat(24), accessLevel: 'member', models: ['gemini-2.5-*'] } : undefined } }
    const { url, vertex } = await start(t, mode, { keys })
    vertex.fake.listedModels.push({ name: 'models/gemini-9-lab' })
    const res = await fetch(`${url}/v1beta/models/gemini-9-lab`, { headers: { authorization: `Bearer ${PASSWORD}` } })
    t.equal(res.status, 200)
    t.same(await res.json(), { name: 'models/gemini-9-lab', baseModelId: 'gemini-9-lab', version: '001', displayName: 'gemini-9-lab' })
    t.equal(vertex.fake.last('getModel')?.path, '/v1beta1/publishers/google/models/gemini-9-lab', 'publishers.models.get')
    const missing = await fetch(`${url}/v1beta/models/gemini-9-ultra`, { headers: { authorization: `Bearer ${PASSWORD}` } })
    t.equal(missing.status, 404, 'Vertex\'s 404 comes back')
    t.match(await missing.json(), { error: { status: 'NOT_FOUND' } })
    const before = vertex.fake.calls('getModel').length
    const refused = await fetch(`${url}/v1beta/models/gemini-9-lab`, { headers: { authorization: `Bearer ghk_${'v'.repeat(43)}` } })
    t.equal(refused.status, 403, 'a key the policy does not allow the model')
    t.equal(vertex.fake.calls('getModel').length, before, 'and Vertex is not asked')
  }
})

t.test("the client's key never reaches Vertex: the proxy's own credentials replace it on every embedding call", async t => {
  const { url, vertex } = await start(t, express)
  const res = await fetch(`${url}/v1beta/models/gemini-embedding-2:embedContent?key=${PASSWORD}&alt=json`, {
    method: 'POST',
    headers: { 'x-goog-api-key': PASSWORD, authorization: `Bearer ${PASSWORD}`, 'content-type': 'application/json' },
    body: JSON.stringify({ content: { parts: [{ text: 'x' }] } }),
  })
  t.equal(res.status, 200)
  await post(url, '/v1/embeddings', { model: 'gemini-embedding-001', input: 'x' }, { authorization: `Bearer ${PASSWORD}`, 'x-goog-api-key': PASSWORD })
  const seen = [...vertex.fake.calls('embedContent'), ...vertex.fake.calls('predict')]
  t.equal(seen.length, 2)
  for (const call of seen) {
    t.equal(call.headers['x-goog-api-key'], vertex.apiKey)
    t.equal(call.headers.authorization, undefined)
    t.same(call.query, {})
    t.notOk(JSON.stringify(call).includes(PASSWORD), 'the password appears nowhere in what Vertex got')
  }
})

t.test('on code-assist, other native paths still answer 404 naming the backend and where they pass through', async t => {
  const url = await serveProxy(t, createProxy({ password: PASSWORD, upstream: UNREACHED_CODE_ASSIST }))
  const res = await fetch(`${url}/v1beta/files`, { headers: { authorization: `Bearer ${PASSWORD}` } })
  t.equal(res.status, 404)
  t.match(await res.json(), { error: { message: 'The code-assist backend has no /v1beta/files: other native paths pass through on the gemini-api and vertex backends only' } })
  // Code Assist has no model details to read: an id outside the catalogue is a 404 saying so, with nothing sent.
  const detail = await fetch(`${url}/v1beta/models/gemini-9-ultra`, { headers: { authorization: `Bearer ${PASSWORD}` } })
  t.equal(detail.status, 404)
  t.match(await detail.json(), { error: { status: 'NOT_FOUND', message: /code-assist backend has no \/v1beta\/models\/gemini-9-ultra/ } })
})
