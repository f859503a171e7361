// Context caching on the Vertex AI backend for a client speaking the Gemini API: cachedContents create, list, get,
// patch and delete with names translated both ways, generateContent with `cachedContent` named in full at the
// cache's own location, the model policy on a create's model, and express mode's answer.
import t from 'tap'
import type { Test } from 'tap'
import type { BackendOptions, KeyCaller, ProxyOptions } from '../../lib/index.ts'
import { createEmbeddedStore, createProxy } from '../../lib/index.ts'
import { createVertexBackend } from '../../lib/proxy/upstream/vertex-backend.ts'
import { serveProxy } from '../support/serve-proxy.ts'
import { startFakeVertex } from '../support/fake-vertex.ts'
import { errorReply, googleErrors } from '../support/fake-upstream.ts'
import type { FakeVertex } from '../support/fake-vertex.ts'

const PASSWORD = 'vertex-cache-password'
const AUTH = { authorization: `Bearer ${PASSWORD}` }

const oneLocation = (vertex: FakeVertex): BackendOptions => ({ projectId: 'proj-1', vertexLocation: 'us-central1', credentialsFile: vertex.keyFile })
const twoLocations = (vertex: FakeVertex): BackendOptions => ({ projectId: 'proj-1', vertexLocation: 'us-central1,europe-west4', credentialsFile: vertex.keyFile })
const express = (vertex: FakeVertex): BackendOptions => ({ apiKey: vertex.apiKey })

async function start (t: Test, mode: (vertex: FakeVertex) => BackendOptions, options: Partial<ProxyOptions> = {}): Promise<{ url: string, vertex: FakeVertex }> {
  const vertex = await startFakeVertex(t)
  const upstream = { vertexEndpoint: vertex.url, maxRetries: 0, ...mode(vertex) }
  // createBackend refuses several locations with vertexEndpoint (one host for all): a pool is built with the
  // backend's own factory, every location's host the fake, its path naming the location.
  const pooled = upstream.vertexLocation?.includes(',') === true ? createVertexBackend(upstream) : undefined
  if (pooled !== undefined) t.teardown(() => pooled.close())
  const proxy = createProxy({ password: PASSWORD, ...(pooled === undefined ? { upstream: { backend: 'vertex', ...upstream } } : { backend: pooled }), ...options })
  const url = await serveProxy(t, proxy)
  return { url, vertex }
}

async function call (url: string, method: string, path: string, body?: unknown, headers: Record<string, string> = AUTH): Promise<{ status: number, body: any }> {
  const res = await fetch(url + path, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) })
  return { status: res.status, body: await res.json() }
}

const CACHE_BODY = { model: 'models/gemini-3.6-flash', contents: [{ role: 'user', parts: [{ text: 'a long document' }] }], systemInstruction: { parts: [{ text: 'be brief' }] }, ttl: '300s', displayName: 'doc' }

t.test('cachedContents on Vertex (one location): create, get, list, patch and delete round trip with names translated both ways', async t => {
  const { url, vertex } = await start(t, oneLocation)
  const created = await call(url, 'POST', '/v1beta/cachedContents', CACHE_BODY)
  t.equal(created.status, 200)
  t.match(created.body, { name: 'cachedContents/1001', model: 'models/gemini-3.6-flash', displayName: 'doc', usageMetadata: { totalTokenCount: 3 }, createTime: String, expireTime: String })
  const sent = vertex.fake.last('cachedContents')!
  t.equal(sent.path, '/v1/projects/proj-1/locations/us-central1/cachedContents')
  t.equal(sent.body.model, 'projects/proj-1/locations/us-central1/publishers/google/models/gemini-3.6-flash', 'the full publisher model name')
  t.same(sent.body.contents, CACHE_BODY.contents)
  t.same(sent.body.systemInstruction, CACHE_BODY.systemInstruction)
  t.equal(sent.body.ttl, '300s')
  t.equal(sent.headers.authorization, `Bearer ${vertex.fake.issuedTokens[0]}`)

  const got = await call(url, 'GET', '/v1beta/cachedContents/1001')
  t.equal(got.status, 200)
  t.match(got.body, { name: 'cachedContents/1001', model: 'models/gemini-3.6-flash' })
  t.equal(vertex.fake.last('cachedContents')!.path, '/v1/projects/proj-1/locations/us-central1/cachedContents/1001')

  const other = await call(url, 'POST', '/v1beta/cachedContents', { ...CACHE_BODY, model: 'gemini-3.1-pro-preview' })
  t.equal(other.status, 200, JSON.stringify(other.body))
  const page = await call(url, 'GET', '/v1beta/cachedContents?pageSize=1')
  t.equal(page.status, 200)
  t.same(page.body.cachedContents.map((c: { name: string, model: string }) => [c.name, c.model]), [['cachedContents/1001', 'models/gemini-3.6-flash']])
  t.equal(page.body.nextPageToken, '1', 'Vertex\'s page token passed as it is')
  t.same(vertex.fake.last('cachedContents')!.query, { pageSize: '1' })
  const next = await call(url, 'GET', `/v1beta/cachedContents?pageSize=1&pageToken=${page.body.nextPageToken as string}`)
  t.same(next.body, { cachedContents: [{ ...next.body.cachedContents[0], name: 'cachedContents/1002', model: 'models/gemini-3.1-pro-preview' }] })

  const patched = await call(url, 'PATCH', '/v1beta/cachedContents/1001?updateMask=ttl', { ttl: '7200s' })
  t.equal(patched.status, 200)
  t.match(patched.body, { name: 'cachedContents/1001', model: 'models/gemini-3.6-flash', expireTime: '2026-11-24T02:00:00Z' })
  const patch = vertex.fake.last('cachedContents')!
  t.equal(patch.method, 'PATCH')
  t.same(patch.query, { updateMask: 'ttl' })
  t.same(patch.body, { ttl: '7200s' })

  const deleted = await call(url, 'DELETE', '/v1beta/cachedContents/1001')
  t.equal(deleted.status, 200)
  t.same(deleted.body, {})
  const gone = await call(url, 'GET', '/v1beta/cachedContents/1001')
  t.equal(gone.status, 404, 'Vertex\'s own 404 passes through')
  t.equal(gone.body.error.status, 'NOT_FOUND')
})

t.test('generateContent with a cache on Vertex: cachedContent reaches Vertex as the full resource name, at the cache\'s location of a pool of two', async t => {
  const { url, vertex } = await start(t, twoLocations)
  const first = await call(url, 'POST', '/v1beta/cachedContents', CACHE_BODY)
  const second = await call(url, 'POST', '/v1beta/cachedContents', CACHE_BODY)
  t.equal(first.body.name, 'cachedContents/1001.us-central1', 'a pool\'s names carry the location')
  t.equal(second.body.name, 'cachedContents/1002.europe-west4', 'created in the pool\'s next location')
  t.equal(vertex.fake.last('cachedContents')!.body.model, 'projects/proj-1/locations/europe-west4/publishers/google/models/gemini-3.6-flash')

  for (let i = 0; i < 2; i++) {
    // Twice: the pool's turn would move to the other location; a cache's calls never do.
    const answer = await call(url, 'POST', '/v1beta/models/gemini-3.6-flash:generateContent', { cachedContent: second.body.name, contents: [{ parts: [{ text: 'question' }] }] })
    t.equal(answer.status, 200)
    const sent = vertex.fake.last('generateContent')!
    t.equal(sent.location, 'europe-west4')
    t.equal(sent.body.cachedContent, 'projects/proj-1/locations/europe-west4/cachedContents/1002')
  }
  const stream = await fetch(`${url}/v1beta/models/gemini-3.6-flash:streamGenerateContent?alt=sse`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify({ cachedContent: first.body.name, contents: [{ role: 'user', parts: [{ text: 'q' }] }] }) })
  t.equal(stream.status, 200)
  await stream.text()
  t.equal(vertex.fake.last('streamGenerateContent')!.body.cachedContent, 'projects/proj-1/locations/us-central1/cachedContents/1001')

  const got = await call(url, 'GET', `/v1beta/cachedContents/${second.body.name.split('/')[1] as string}`)
  t.equal(got.body.name, second.body.name)
  t.equal(vertex.fake.last('cachedContents')!.location, 'europe-west4')

  // A list walks both locations, its page token naming the location it continues in.
  const page1 = await call(url, 'GET', '/v1beta/cachedContents')
  t.same(page1.body.cachedContents.map((c: { name: string }) => c.name), ['cachedContents/1001.us-central1'])
  t.equal(page1.body.nextPageToken, 'europe-west4:')
  const page2 = await call(url, 'GET', `/v1beta/cachedContents?pageToken=${encodeURIComponent(page1.body.nextPageToken as string)}`)
  t.same(page2.body.cachedContents.map((c: { name: string }) => c.name), ['cachedContents/1002.europe-west4'])
  t.equal(page2.body.nextPageToken, undefined)

  const elsewhere = await call(url, 'GET', '/v1beta/cachedContents/1002.asia-east1')
  t.equal(elsewhere.status, 404, 'a location outside the pool is no cache of this backend')
  const unknown = await call(url, 'POST', '/v1beta/models/gemini-3.6-flash:generateContent', { cachedContent: 'cachedContents/1.asia-east1', contents: [{ parts: [{ text: 'q' }] }] })
  t.equal(unknown.status, 404)
})

/** A pool of two locations on a clock of the test's own, behind the proxy. */
async function startPooled (t: Test): Promise<{ url: string, vertex: FakeVertex, clock: { ms: number }, vertexCalls: () => number }> {
  const vertex = await startFakeVertex(t)
  const clock = { ms: Date.parse('2026-11-24T00:00:00Z') }
  const backend = createVertexBackend({ vertexEndpoint: vertex.url, maxRetries: 0, ...twoLocations(vertex), now: () => new Date(clock.ms) })
  t.teardown(() => backend.close())
  const url = await serveProxy(t, createProxy({ password: PASSWORD, backend }))
  return { url, vertex, clock, vertexCalls: () => vertex.fake.requests.filter(r => r.api === 'vertex').length }
}

const GENERATE = '/v1beta/models/gemini-3.6-flash:generateContent'

t.test('a 429 at a cache\'s location cools that location down for that model: the cache\'s calls of it wait it out with Retry-After, other calls of it go to the other location', async t => {
  const { url, vertex, clock, vertexCalls } = await startPooled(t)
  const cache = await call(url, 'POST', '/v1beta/cachedContents', CACHE_BODY)
  t.equal(cache.body.name, 'cachedContents/1001.us-central1')
  const ask = { cachedContent: cache.body.name, contents: [{ role: 'user', parts: [{ text: 'q' }] }] }

  vertex.fake.locationReplies.set('us-central1', errorReply(429, { retryDelay: '30s', reason: 'RATE_LIMIT_EXCEEDED' }))
  t.equal((await call(url, 'POST', GENERATE, ask)).status, 429, 'the cache lives in us-central1 only: its 429 reaches the client')
  const sent = vertexCalls()
  vertex.fake.locationReplies.clear()

  // The location now cools down: the cache's calls are not sent until it is over, and say when to come back.
  const refused = await fetch(url + GENERATE, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify(ask) })
  t.equal(refused.status, 429)
  t.equal(refused.headers.get('retry-after'), '30')
  t.match(await refused.json(), { error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: /us-central1 is rate limited for gemini-3.6-flash; usable again in 30 s/ } })
  t.equal(vertexCalls(), sent, 'nothing was sent to the cooling location')
  t.equal((await call(url, 'GET', '/v1beta/cachedContents/1001.us-central1')).status, 200, 'the cache\'s own methods call no model: they still go')

  // Calls that may go anywhere skip it, as after any 429 of the pool.
  t.equal((await call(url, 'POST', GENERATE, { contents: [{ role: 'user', parts: [{ text: 'q' }] }] })).status, 200)
  t.equal(vertex.fake.last('generateContent')!.location, 'europe-west4')

  clock.ms += 30_000
  t.equal((await call(url, 'POST', GENERATE, ask)).status, 200, 'after the delay the cache serves again')
  t.equal(vertex.fake.last('generateContent')!.location, 'us-central1')
})

t.test('a credential fault at a cache\'s location sets that location aside: its cache answers 503 naming it, the pool goes on with the other location', async t => {
  const { url, vertex, vertexCalls } = await startPooled(t)
  const cache = await call(url, 'POST', '/v1beta/cachedContents', CACHE_BODY)
  vertex.fake.locationReplies.set('us-central1', googleErrors.iamPermissionDenied('projects/p/locations/us-central1/cachedContents/1001', 'aiplatform.cachedContents.get'))
  t.equal((await call(url, 'GET', `/v1beta/cachedContents/${(cache.body.name as string).split('/')[1]}`)).status, 403)
  const sent = vertexCalls()
  const again = await call(url, 'GET', `/v1beta/cachedContents/${(cache.body.name as string).split('/')[1]}`)
  t.equal(again.status, 503)
  t.match(again.body, { error: { message: /us-central1 is set aside: IAM_PERMISSION_DENIED: .*denied/ } })
  t.equal(vertexCalls(), sent, 'nothing was sent to the location set aside')
  t.equal((await call(url, 'POST', GENERATE, { contents: [{ role: 'user', parts: [{ text: 'q' }] }] })).status, 200)
  t.equal(vertex.fake.last('generateContent')!.location, 'europe-west4')
})

t.test('a cache cannot be created for a model the key may not use: 403 and nothing reaches Vertex', async t => {
  const KEY = 'ghk_member' + 'C'.repeat(37)
  const member: KeyCaller = { kind: 'key', userId: 'a'.repeat(24), keyId: 'b'.repeat(24), accessLevel: 'member', models: null }
  const { url, vertex } = await start(t, oneLocation, {
    keys: { resolveKey: async secret => secret === KEY ? member : undefined },
    modelAccess: { member: ['gemini-3.6-flash'] },
    // The member's cache gets an owner record (docs/model-proxy.md, "Upstream resources and their owners").
    resources: { owners: (await createEmbeddedStore()).owners },
  })
  for (const model of ['models/gemini-3.1-pro-preview', 'gemini-3.1-pro-preview']) {
    const refused = await call(url, 'POST', '/v1beta/cachedContents', { ...CACHE_BODY, model }, { 'x-goog-api-key': KEY })
    t.equal(refused.status, 403, model)
    t.match(refused.body, { error: { code: 403, status: 'PERMISSION_DENIED', message: /gemini-3\.1-pro-preview/ } }, model)
  }
  t.same(vertex.fake.requests.filter(r => r.call !== 'token'), [], 'nothing reached Vertex')
  const allowed = await call(url, 'POST', '/v1beta/cachedContents', CACHE_BODY, { 'x-goog-api-key': KEY })
  t.equal(allowed.status, 200, 'a model the key may use is cached')
})

t.test('cachedContents in Vertex express mode: 404 naming express mode, nothing sent upstream', async t => {
  const { url, vertex } = await start(t, express)
  for (const [method, path] of [['POST', '/v1beta/cachedContents'], ['GET', '/v1beta/cachedContents'], ['GET', '/v1beta/cachedContents/1']]) {
    const res = await call(url, method, path, method === 'POST' ? CACHE_BODY : undefined)
    t.equal(res.status, 404, path)
    t.match(res.body, { error: { status: 'NOT_FOUND', message: /express mode has no context caching/ } }, path)
  }
  const generate = await call(url, 'POST', '/v1beta/models/gemini-3.6-flash:generateContent', { cachedContent: 'cachedContents/1', contents: [{ parts: [{ text: 'q' }] }] })
  t.equal(generate.status, 404)
  t.match(generate.body.error.message, /express mode has no context caching/)
  t.same(vertex.fake.requests, [])
})

t.test("the client's key never reaches Vertex on cachedContents calls: the proxy's own credentials replace it", async t => {
  const { url, vertex } = await start(t, oneLocation)
  const headers = { 'x-goog-api-key': PASSWORD }
  const created = await call(url, 'POST', `/v1beta/cachedContents?key=${PASSWORD}`, CACHE_BODY, headers)
  t.equal(created.status, 200)
  await call(url, 'GET', `/v1beta/cachedContents?key=${PASSWORD}&pageSize=5`, undefined, headers)
  await call(url, 'PATCH', `/v1beta/cachedContents/1001?key=${PASSWORD}`, { ttl: '60s' }, headers)
  await call(url, 'DELETE', `/v1beta/cachedContents/1001?key=${PASSWORD}`, undefined, headers)
  const calls = vertex.fake.calls('cachedContents')
  t.equal(calls.length, 4)
  for (const c of calls) {
    t.equal(c.headers['x-goog-api-key'], undefined)
    t.equal(c.headers.authorization, `Bearer ${vertex.fake.issuedTokens[0]}`)
    t.equal(c.query.key, undefined)
    t.notOk(JSON.stringify(c).includes(PASSWORD), 'the password nowhere in the request')
  }
})

t.test('malformed cachedContents requests on Vertex answer 4xx in the native shape and reach nothing upstream', async t => {
  const { url, vertex } = await start(t, twoLocations)
  const raw = async (method: string, path: string, body?: string): Promise<number> => (await fetch(url + path, { method, headers: { ...AUTH, 'content-type': 'application/json' }, body })).status
  t.equal(await raw('POST', '/v1beta/cachedContents', 'not json'), 400, 'a body that is not JSON')
  t.equal(await raw('POST', '/v1beta/cachedContents', '[1]'), 400, 'a body that is not an object')
  t.equal(await raw('POST', '/v1beta/cachedContents', '{}'), 400, 'a create without model')
  t.equal(await raw('POST', '/v1beta/cachedContents'), 400, 'a create without a body')
  t.equal(await raw('PUT', '/v1beta/cachedContents', '{}'), 405)
  t.equal(await raw('POST', '/v1beta/cachedContents/1.us-central1', '{}'), 405)
  t.equal(await raw('GET', '/v1beta/cachedContents/1.us-central1/more'), 404)
  t.equal(await raw('GET', '/v1beta/cachedContents/bad!id.us-central1'), 404)
  t.equal(await raw('GET', '/v1beta/cachedContents?pageToken=elsewhere:abc'), 400, 'a page token the proxy did not hand out')
  t.equal(await raw('GET', '/v1beta/cachedContents?pageToken=abc'), 400)
  t.same(vertex.fake.requests.filter(r => r.call !== 'token'), [])
  // A page token continuing in a location passes Vertex's own token on.
  await raw('GET', '/v1beta/cachedContents?pageToken=europe-west4:7&pageSize=2')
  t.same(vertex.fake.last('cachedContents')!.query, { pageSize: '2', pageToken: '7' })
  t.equal(vertex.fake.last('cachedContents')!.location, 'europe-west4')
})

t.test("ownership holds on Vertex too: a member's caches are theirs alone, another's is a 404 and nothing reaches Vertex", async t => {
  const keys: Record<string, KeyCaller> = {
    ['ghk_alice' + 'A'.repeat(38)]: { kind: 'key', userId: 'a'.repeat(24), keyId: '1'.repeat(24), accessLevel: 'member', models: null },
    ['ghk_bob00' + 'B'.repeat(38)]: { kind: 'key', userId: 'b'.repeat(24), keyId: '2'.repeat(24), accessLevel: 'member', models: null },
  }
  const [alice, bob] = Object.keys(keys).map(key => ({ 'x-goog-api-key': key }))
  const { url, vertex } = await start(t, twoLocations, {
    keys: { resolveKey: async secret => keys[secret] },
    resources: { owners: (await createEmbeddedStore()).owners },
  })
  const mine = await call(url, 'POST', '/v1beta/cachedContents', CACHE_BODY, alice)
  t.equal(mine.status, 200)
  t.match(mine.body.name, /^cachedContents\/\d+\.us-central1$/, 'the name a pool hands out, with its location')
  const theirs = await call(url, 'POST', '/v1beta/cachedContents', CACHE_BODY, bob)
  t.equal(theirs.status, 200)
  // The pool lists a location per page: a member's page may be empty, its page token leads on.
  const listed = async (headers: Record<string, string>): Promise<string[]> => {
    const names: string[] = []
    let token = ''
    for (let i = 0; i < 10; i++) {
      const page = await call(url, 'GET', `/v1beta/cachedContents${token === '' ? '' : `?pageToken=${encodeURIComponent(token)}`}`, undefined, headers)
      names.push(...page.body.cachedContents.map((c: { name: string }) => c.name))
      token = page.body.nextPageToken ?? ''
      if (token === '') break
    }
    return names.sort()
  }
  t.same(await listed(alice), [mine.body.name], 'Alice lists only hers')
  t.same(await listed(bob), [theirs.body.name], 'Bob only his')
  t.same(await listed(AUTH), [mine.body.name, theirs.body.name].sort(), 'the operator both')
  const before = vertex.fake.requests.length
  for (const [method, path, body] of [
    ['GET', `/v1beta/${mine.body.name}`],
    ['PATCH', `/v1beta/${mine.body.name}`, { ttl: '60s' }],
    ['DELETE', `/v1beta/${mine.body.name}`],
    ['POST', '/v1beta/models/gemini-2.5-flash:generateContent', { cachedContent: mine.body.name, contents: [{ parts: [{ text: 'q' }] }] }],
  ] as Array<[string, string, unknown?]>) {
    const refused = await call(url, method, path, body, bob)
    t.equal(refused.status, 404, `${method} ${path}`)
    t.match(refused.body, { error: { status: 'NOT_FOUND' } })
  }
  t.equal(vertex.fake.requests.length, before, 'nothing reached Vertex')
  t.equal((await call(url, 'POST', '/v1beta/models/gemini-2.5-flash:generateContent', { cachedContent: mine.body.name, contents: [{ parts: [{ text: 'q' }] }] }, alice)).status, 200, 'Alice uses hers')
})
