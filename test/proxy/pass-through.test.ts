import t from 'tap'
import http from 'node:http'
import { createHash } from 'node:crypto'
import type { KeyCaller, ProxyOptions } from '../../lib/index.ts'
import Hapi from '@hapi/hapi'
import { createEmbeddedStore, createProxy, hapiPlugin } from '../../lib/index.ts'
import { forwardedPath } from '../../lib/proxy/native/pass-through.ts'
import { UNREACHED_CODE_ASSIST, serveProxy } from '../support/serve-proxy.ts'
import { startFakePassThrough } from '../support/fake-pass-through.ts'
import type { FakePassThrough } from '../support/fake-pass-through.ts'

const PASSWORD = 'pass-through-password'
const UPSTREAM_KEY = 'proxy-own-key'

interface Teardown { teardown (fn: () => unknown): void }

async function startGateway (t: Teardown, options: Partial<ProxyOptions> = {}, host: 'node' | 'hapi' = 'node'): Promise<{ url: string, fake: FakePassThrough }> {
  const fake = await startFakePassThrough()
  const proxy = createProxy({
    password: PASSWORD,
    upstream: { backend: 'gemini-api', apiKey: UPSTREAM_KEY, geminiApiEndpoint: fake.url, maxRetries: 0 },
    maxBodyBytes: 32 * 1024 * 1024,
    // A fixed day before the 2.5 models' shutdown on the Gemini API, so the models named here are served as themselves.
    now: () => new Date('2026-11-27T12:00:00Z'),
    ...options,
  })
  if (host === 'hapi') {
    const hapi = Hapi.server({ host: '127.0.0.1', port: 0, compression: false })
    await hapi.register({ plugin: hapiPlugin, options: { tables: [proxy.routeTable] } })
    await hapi.start()
    t.teardown(async () => {
      await hapi.stop({ timeout: 100 })
      await proxy.close()
      await fake.close()
    })
    return { url: hapi.info.uri, fake }
  }
  const url = await serveProxy(t, proxy)
  t.teardown(async () => { await fake.close() })
  return { url, fake }
}

/** A request with its path sent exactly as given (fetch would normalise it). */
async function raw (url: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number, body: string }> {
  const { hostname, port } = new URL(url)
  return await new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port, path, method: 'POST', headers: { 'x-goog-api-key': PASSWORD, ...headers } }, res => {
      let body = ''
      res.on('data', c => { body += String(c) })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject)
    req.end('{}')
  })
}

for (const host of ['node', 'hapi'] as const) t.test(`an embedContent and a multi-megabyte upload go through unchanged and unbuffered (${host})`, async t => {
  const { url, fake } = await startGateway(t, {}, host)
  const body = JSON.stringify({ content: { parts: [{ text: 'héllo' }] }, taskType: 'RETRIEVAL_QUERY', outputDimensionality: 3 })
  const res = await fetch(`${url}/v1beta/models/gemini-embedding-001:embedContent?alt=json`, { method: 'POST', headers: { 'x-goog-api-key': PASSWORD, 'content-type': 'application/json' }, body })
  t.equal(res.status, 200)
  t.same(await res.json(), { embedding: { values: [0.1, 0.2, 0.3] } })
  t.equal(fake.seen[0].url, '/v1beta/models/gemini-embedding-001:embedContent?alt=json')
  t.equal(fake.seen[0].text, body, 'the body arrives byte for byte')

  // 20 MB sent in two parts: the second only once the upstream has the first bytes, which it could not have if
  // the proxy waited for the whole body.
  const { hostname, port } = new URL(url)
  const part = Buffer.alloc(10 * 1024 * 1024, 7)
  const digest = createHash('sha256').update(part).update(part).digest('hex')
  const firstBytes = fake.firstBytes()
  const answer = await new Promise<{ status: number, headers: http.IncomingHttpHeaders, body: string }>((resolve, reject) => {
    const req = http.request({
      host: hostname,
      port,
      method: 'POST',
      path: '/upload/v1beta/files?uploadType=resumable',
      headers: { 'x-goog-api-key': PASSWORD, 'content-type': 'application/octet-stream', 'x-goog-upload-protocol': 'raw', 'content-length': String(2 * part.length) },
    }, res => {
      let text = ''
      res.on('data', c => { text += String(c) })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }))
    })
    req.on('error', reject)
    req.write(part)
    void firstBytes.then(() => req.end(part))
  })
  t.equal(answer.status, 200)
  t.same(JSON.parse(answer.body), { file: { name: 'files/abc', sizeBytes: String(2 * part.length), sha256Hash: digest } })
  const upload = fake.seen[1]
  t.equal(upload.url, '/upload/v1beta/files?uploadType=resumable')
  t.equal(upload.headers['x-goog-upload-protocol'], 'raw')
  t.equal(answer.headers['x-goog-upload-url'], `${url}/upload/v1beta/files?upload_id=abc&upload_protocol=resumable`, 'the next upload request comes back through the proxy')
  t.equal(answer.headers['x-goog-upload-status'], 'final')
  t.equal(answer.headers['set-cookie'], undefined, 'only allowed answer headers pass')
  t.equal(answer.headers['x-secret-upstream'], undefined)
})

t.test("the client's key or Authorization is never forwarded", async t => {
  const { url, fake } = await startGateway(t)
  const res = await fetch(`${url}/v1beta/cachedContents?key=${PASSWORD}&pageSize=2`, {
    method: 'GET',
    headers: {
      authorization: `Bearer ${PASSWORD}`,
      'x-goog-api-key': PASSWORD,
      cookie: 'session=s',
      'proxy-authorization': 'Basic x',
      'x-goog-user-project': 'someone-elses',
      'x-forwarded-for': '10.0.0.1',
      'x-goog-api-client': 'google-genai-sdk/1.0',
    },
  })
  t.equal(res.status, 200)
  const seen = fake.seen[0]
  t.equal(seen.url, '/v1beta/cachedContents?pageSize=2', 'the query without the key')
  t.equal(seen.headers['x-goog-api-key'], UPSTREAM_KEY, "the proxy's own key")
  for (const name of ['authorization', 'cookie', 'proxy-authorization', 'x-goog-user-project', 'x-forwarded-for']) t.equal(seen.headers[name], undefined, name)
  t.equal(seen.headers['x-goog-api-client'], 'google-genai-sdk/1.0')
  t.notMatch(JSON.stringify(seen.headers), PASSWORD)
})

t.test('paths that would leave the API prefix are refused', async t => {
  const { url, fake } = await startGateway(t)
  for (const path of ['/v1beta/files/..%2f..%2fsecret', '/v1beta/files%2Fabc', '/v1beta/files/%5c..', '/v1beta//evil.example/x', '/v1beta/files/%2e%2e/models/x:embedContent', '/v1beta/files/%2E', '/v1beta/files/a%00b']) {
    const res = await raw(url, path)
    t.ok(res.status === 400 || res.status === 404, `${path}: ${res.status}`)
    t.match(JSON.parse(res.body), { error: { status: /INVALID_ARGUMENT|NOT_FOUND/ } }, path)
  }
  // What a host normalises before routing (`..`, `%2e%2e`) never leaves the prefix either.
  for (const path of ['/v1beta/files/../../secret', '/v1beta/%2e%2e/secret', 'http://evil.example/v1beta/x/../../secret']) {
    const res = await raw(url, path)
    t.equal(res.status, 404, path)
  }
  t.same(fake.seen, [], 'nothing reached the upstream')
  // An absolute request target names the proxy's own upstream only.
  const absolute = await raw(url, 'http://evil.example/v1beta/files')
  t.equal(absolute.status, 200)
  t.equal(fake.seen[0].url, '/v1beta/files')

  for (const path of ['/v1beta/a/../b', '/v1beta/a/%2e%2E/b', '/v1beta/a%2fb', '/v1beta/a%5Cb', '/v1beta/a\\b', '/v1beta//x', '/v1beta/a/./b']) {
    t.throws(() => forwardedPath(path), { code: 'INVALID_INPUT' }, path)
  }
  t.same(forwardedPath('/api/upload/v1beta/files'), { path: '/upload/v1beta/files', mount: '/api' })
})

t.test('a model in the path is subject to the model policy', async t => {
  const MEMBER_KEY = 'ghk_member' + 'M'.repeat(37)
  const member: KeyCaller = { kind: 'key', userId: 'a'.repeat(24), keyId: 'b'.repeat(24), accessLevel: 'member', models: null }
  const calls: Array<{ model: string, surface: string, status: number }> = []
  const { url, fake } = await startGateway(t, {
    keys: { resolveKey: async secret => secret === MEMBER_KEY ? member : undefined },
    modelAccess: { member: ['gemini-embedding-2'] },
    onCall: entry => calls.push({ model: entry.model, surface: entry.surface, status: entry.status }),
  })
  const call = async (model: string, action = ':embedContent'): Promise<Response> =>
    await fetch(`${url}/v1beta/models/${model}${action}`, { method: 'POST', headers: { 'x-goog-api-key': MEMBER_KEY }, body: '{}' })
  const refused = await call('gemini-2.5-pro')
  t.equal(refused.status, 403)
  t.match(await refused.json(), { error: { code: 403, status: 'PERMISSION_DENIED', message: /may not use the model `gemini-2.5-pro`/ } })
  t.equal((await call('gemini-2.5-pro', '/operations/x')).status, 403, 'any path naming the model')
  t.same(fake.seen, [])
  const allowed = await call('gemini-embedding-2')
  t.equal(allowed.status, 200)
  t.equal(fake.seen.length, 1)
  t.same(calls, [{ model: 'gemini-embedding-2', surface: 'native', status: 200 }], 'an embedContent is a metered model call')
})

t.test('a cache cannot be created for a model the key may not use: the model in the body meets the policy too', async t => {
  const MEMBER_KEY = 'ghk_member' + 'M'.repeat(37)
  const member: KeyCaller = { kind: 'key', userId: 'a'.repeat(24), keyId: 'b'.repeat(24), accessLevel: 'member', models: null }
  const { url, fake } = await startGateway(t, {
    keys: { resolveKey: async secret => secret === MEMBER_KEY ? member : undefined },
    modelAccess: { member: ['gemini-2.5-flash'] },
    // The member's cache gets an owner record (docs/model-proxy.md, "Upstream resources and their owners").
    resources: { owners: (await createEmbeddedStore()).owners },
  })
  const create = async (body: string): Promise<Response> =>
    await fetch(`${url}/v1beta/cachedContents`, { method: 'POST', headers: { 'x-goog-api-key': MEMBER_KEY, 'content-type': 'application/json' }, body })
  const refused = await create(JSON.stringify({ model: 'models/gemini-2.5-pro', contents: [{ role: 'user', parts: [{ text: 'x' }] }] }))
  t.equal(refused.status, 403)
  t.match(await refused.json(), { error: { code: 403, status: 'PERMISSION_DENIED', message: /may not use the model `models\/gemini-2.5-pro`|may not use the model `gemini-2.5-pro`/ } })
  t.same(fake.seen, [], 'nothing reached the upstream')
  const body = JSON.stringify({ model: 'models/gemini-2.5-flash', contents: [{ role: 'user', parts: [{ text: 'y'.repeat(100_000) }] }] })
  const allowed = await create(body)
  t.equal(allowed.status, 200)
  t.equal(fake.seen.length, 1)
  t.equal(fake.seen[0].text, body, 'an allowed body goes on unchanged')
})

t.test('code-assist answers 404 naming the backend', async t => {
  const url = await serveProxy(t, createProxy({ password: PASSWORD, upstream: UNREACHED_CODE_ASSIST }))
  for (const path of ['/v1beta/models/gemini-embedding-001:embedContent', '/v1beta/cachedContents', '/upload/v1beta/files']) {
    const res = await fetch(url + path, { method: 'POST', headers: { 'x-goog-api-key': PASSWORD, connection: 'close' }, body: 'x'.repeat(100) })
    t.equal(res.status, 404, path)
    t.match(await res.json(), { error: { status: 'NOT_FOUND', message: /code-assist backend has no/ } }, path)
  }
})

t.test('a passed-through body keeps the body limit: 413 for a declared or an arriving size over maxBodyBytes', async t => {
  const { url, fake } = await startGateway(t, { maxBodyBytes: 1024 * 1024 })
  const declared = await fetch(`${url}/upload/v1beta/files`, { method: 'POST', headers: { 'x-goog-api-key': PASSWORD }, body: Buffer.alloc(2 * 1024 * 1024) })
  t.equal(declared.status, 413)
  t.same(fake.seen, [], 'refused before anything went upstream')
  const { hostname, port } = new URL(url)
  const status = await new Promise<number>((resolve, reject) => {
    const req = http.request({ host: hostname, port, method: 'POST', path: '/upload/v1beta/files', headers: { 'x-goog-api-key': PASSWORD, 'transfer-encoding': 'chunked' } }, res => {
      res.resume()
      resolve(res.statusCode ?? 0)
    })
    req.on('error', reject)
    for (let i = 0; i < 8; i++) req.write(Buffer.alloc(256 * 1024))
    req.end()
  })
  t.equal(status, 413)
})

t.test('a passed-through body keeps the read deadlines: too slow is a 408 in the native shape', async t => {
  const { url } = await startGateway(t, { bodyRead: { timeoutMs: 5000, minBytesPerSecond: 1024, graceMs: 150 } })
  const { hostname, port } = new URL(url)
  const started = Date.now()
  const answer = await new Promise<{ status: number, body: string }>((resolve, reject) => {
    const req = http.request({ host: hostname, port, method: 'POST', path: '/upload/v1beta/files', headers: { 'x-goog-api-key': PASSWORD, 'content-length': String(2 * 1024 * 1024) } }, res => {
      let body = ''
      res.on('data', c => { body += String(c) })
      res.on('end', () => { req.destroy(); resolve({ status: res.statusCode ?? 0, body }) })
    })
    req.on('error', reject)
    req.write('x'.repeat(100))
  })
  t.equal(answer.status, 408)
  t.match(JSON.parse(answer.body), { error: { code: 408, status: 'DEADLINE_EXCEEDED' } })
  t.ok(Date.now() - started < 4000, 'after the grace period at too low a rate, not at the deadline')
})
