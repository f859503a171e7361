import t from 'tap'
import OpenAI from 'openai'
import { GoogleGenAI } from '@google/genai'
import type { KeyCaller, ProxyOptions } from '../../lib/index.ts'
import { createProxy } from '../../lib/index.ts'
import { MAX_EMBEDDING_INPUTS } from '../../lib/proxy/upstream/backend.ts'
import { UNREACHED_CODE_ASSIST, serveProxy } from '../support/serve-proxy.ts'
import { startFakePassThrough } from '../support/fake-pass-through.ts'
import type { FakePassThrough } from '../support/fake-pass-through.ts'

const PASSWORD = 'embeddings-password'
interface Teardown { teardown (fn: () => unknown): void }

async function listen (t: Teardown, options: ProxyOptions): Promise<string> {
  const proxy = createProxy(options)
  const url = await serveProxy(t, proxy)
  return url
}

async function start (t: Teardown, options: Partial<ProxyOptions> = {}): Promise<{ url: string, fake: FakePassThrough }> {
  const fake = await startFakePassThrough()
  t.teardown(() => fake.close())
  const url = await listen(t, { password: PASSWORD, upstream: { backend: 'gemini-api', apiKey: 'own-key', geminiApiEndpoint: fake.url, maxRetries: 0 }, ...options })
  return { url, fake }
}

const post = async (url: string, body: unknown, key = PASSWORD): Promise<Response> =>
  await fetch(`${url}/v1/embeddings`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })

t.test("the openai SDK's embeddings.create: one batchEmbedContents call, dimensions as outputDimensionality, usage included", async t => {
  const { url, fake } = await start(t)
  const openai = new OpenAI({ apiKey: PASSWORD, baseURL: `${url}/v1`, maxRetries: 0, timeout: 10000 })
  const one = await openai.embeddings.create({ model: 'gemini-embedding-001', input: 'hello', dimensions: 3, encoding_format: 'float' })
  t.same(one.data, [{ object: 'embedding', index: 0, embedding: [5, 0, 0.5] }])
  t.equal(one.model, 'gemini-embedding-001')
  t.same(one.usage, { prompt_tokens: 2, total_tokens: 2 })
  t.equal(fake.seen[0].url, '/v1beta/models/gemini-embedding-001:batchEmbedContents')
  t.same(JSON.parse(fake.seen[0].text), { requests: [{ content: { parts: [{ text: 'hello' }] }, outputDimensionality: 3, model: 'models/gemini-embedding-001' }] })

  const many = await openai.embeddings.create({ model: 'gemini-embedding-001', input: ['a', 'bb', 'ccc'] })
  t.same(many.data.map(d => [d.index, d.embedding]), [[0, [1, 0, 0.5]], [1, [2, 1, 0.5]], [2, [3, 2, 0.5]]])
  // The SDK asks for base64 by default and decodes it: float32, little-endian, as OpenAI sends it.
  const b64 = await post(url, { model: 'gemini-embedding-001', input: 'abcd', encoding_format: 'base64' })
  const vector = ((await b64.json()) as { data: Array<{ embedding: string }> }).data[0].embedding
  const bytes = Buffer.from(vector, 'base64')
  t.same([0, 4, 8].map(at => bytes.readFloatLE(at)), [4, 0, 0.5])
  t.equal(bytes.length, 12)
})

t.test("@google/genai's models.embedContent passes through to the upstream", async t => {
  const { url, fake } = await start(t)
  const ai = new GoogleGenAI({ apiKey: PASSWORD, httpOptions: { baseUrl: url, timeout: 10000, apiVersion: 'v1beta' } })
  const result = await ai.models.embedContent({ model: 'gemini-embedding-001', contents: ['one', 'three'], config: { outputDimensionality: 3 } })
  t.same(result.embeddings?.map(e => e.values), [[3, 0, 0.5], [5, 1, 0.5]])
  t.match(fake.seen[0].url, /^\/v1beta\/models\/gemini-embedding-001:batchEmbedContents/)
  t.equal(fake.seen[0].headers['x-goog-api-key'], 'own-key')
})

t.test('embeddings requests are checked: input, dimensions, encoding_format, model (400 in the chat shape)', async t => {
  const { url, fake } = await start(t)
  const cases: Array<[unknown, string]> = [
    [{ model: 'gemini-embedding-001' }, 'input'],
    [{ model: 'gemini-embedding-001', input: '' }, 'input'],
    [{ model: 'gemini-embedding-001', input: [] }, 'input'],
    [{ model: 'gemini-embedding-001', input: [[1, 2]] }, 'input'],
    [{ model: 'gemini-embedding-001', input: Array(MAX_EMBEDDING_INPUTS + 1).fill('x') }, 'input'],
    [{ model: 'gemini-embedding-001', input: 'x', dimensions: 0 }, 'dimensions'],
    [{ model: 'gemini-embedding-001', input: 'x', encoding_format: 'int8' }, 'encoding_format'],
    [{ input: 'x' }, 'model'],
  ]
  for (const [body, param] of cases) {
    const res = await post(url, body)
    t.equal(res.status, 400, param)
    t.match(await res.json(), { error: { type: 'invalid_request_error', param } }, param)
  }
  const notJson = await post(url, [1])
  t.equal(notJson.status, 400)
  t.same(fake.seen, [])
})

t.test('embeddings are subject to the model policy and metered', async t => {
  const KEY = 'ghk_member' + 'M'.repeat(37)
  const member: KeyCaller = { kind: 'key', userId: 'a'.repeat(24), keyId: 'b'.repeat(24), accessLevel: 'member', models: null }
  const calls: Array<[string, string, number]> = []
  const { url, fake } = await start(t, {
    keys: { resolveKey: async secret => secret === KEY ? member : undefined },
    modelAccess: { member: ['gemini-embedding-2'] },
    onCall: entry => calls.push([entry.model, entry.surface, entry.status]),
  })
  const refused = await post(url, { model: 'gemini-embedding-001', input: 'x' }, KEY)
  t.equal(refused.status, 403)
  t.match(await refused.json(), { error: { param: 'model', message: /may not use the model `gemini-embedding-001`/ } })
  t.same(fake.seen, [])
  t.equal((await post(url, { model: 'gemini-embedding-2', input: 'x' }, KEY)).status, 200)
  t.same(calls, [['gemini-embedding-2', 'chat', 200]])
})

t.test('on code-assist, /v1/embeddings answers 404 naming the backend', async t => {
  const url = await listen(t, { password: PASSWORD, upstream: UNREACHED_CODE_ASSIST })
  const res = await post(url, { model: 'gemini-embedding-001', input: 'x' })
  t.equal(res.status, 404)
  t.match(await res.json(), { error: { message: /code-assist backend/ } })
})
