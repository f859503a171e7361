import t from 'tap'
import type { Test } from 'tap'
import type { Backend, GeminiResponse } from '../../lib/index.ts'
import { createBackend } from '../../lib/index.ts'
import { createVertexBackend } from '../../lib/proxy/upstream/vertex-backend.ts'
import type { VertexBackendOptions } from '../../lib/proxy/upstream/vertex-backend.ts'
import { createMetrics } from '../../gateway/metrics.ts'
import { errorReply, geminiResponse, googleErrors, streamReply } from '../support/fake-upstream.ts'
import { startFakeVertex } from '../support/fake-vertex.ts'
import type { FakeVertex } from '../support/fake-vertex.ts'

const REQUEST = { contents: [{ role: 'user', parts: [{ text: 'two words' }] }] }

interface Pool {
  vertex: FakeVertex
  backend: Backend
  clock: { ms: number }
  metrics: ReturnType<typeof createMetrics>
  /** The location of every model call Vertex received, in order. */
  locationsCalled (): string[]
  metricLines (name: string): Promise<string[]>
}

// Every location's host is the fake here (its path still names the location): createBackend refuses several
// locations with vertexEndpoint, so the pool is built with the backend's own factory.
async function pool (t: Test, vertexLocation = 'us-central1,europe-west4', options: VertexBackendOptions = {}): Promise<Pool> {
  const vertex = await startFakeVertex(t)
  const clock = { ms: Date.parse('2026-11-24T00:00:00Z') }
  const metrics = createMetrics({ models: ['gemini-2.5-flash'], defaultMetrics: false })
  const backend = createVertexBackend({
    vertexEndpoint: vertex.url, projectId: 'proj-1', credentialsFile: vertex.keyFile, vertexLocation, maxRetries: 0, now: () => new Date(clock.ms), observer: metrics.proxy, ...options,
  })
  t.teardown(() => backend.close())
  return {
    vertex,
    backend,
    clock,
    metrics,
    locationsCalled: () => vertex.fake.requests.filter(r => r.api === 'vertex').map(r => String(r.location)),
    async metricLines (name) {
      return (await metrics.render()).body.split('\n').filter(l => l.startsWith(name + '{'))
    },
  }
}

async function collect (events: AsyncIterable<GeminiResponse>): Promise<GeminiResponse[]> {
  const out: GeminiResponse[] = []
  for await (const e of events) out.push(e)
  return out
}

t.test('a location answering 429 cools down and the call fails over to the next location', async t => {
  const p = await pool(t)
  p.vertex.fake.locationReplies.set('us-central1', errorReply(429, { retryDelay: '30s', reason: 'RATE_LIMIT_EXCEEDED' }))
  const answer = await p.backend.generate({ model: 'gemini-2.5-flash', request: REQUEST })
  t.equal(answer.candidates?.[0]?.content?.parts?.[0]?.text, 'Hello from the fake upstream.')
  t.same(p.locationsCalled(), ['us-central1', 'europe-west4'])
  t.equal(p.vertex.fake.last('generateContent')!.path, '/v1/projects/proj-1/locations/europe-west4/publishers/google/models/gemini-2.5-flash:generateContent')
  t.equal(p.vertex.fake.calls('token').length, 1, 'one credential (the project\'s) for every location')
  const states = await p.metricLines('gatehouse_upstream_credential_state')
  t.ok(states.includes('gatehouse_upstream_credential_state{credential="us-central1",state="cooling"} 1'), 'metrics show the cooling location by name')
  t.ok(states.includes('gatehouse_upstream_credential_state{credential="europe-west4",state="ready"} 1'))
  t.ok((await p.metricLines('gatehouse_upstream_credential_cooldowns_total')).includes('gatehouse_upstream_credential_cooldowns_total{credential="us-central1"} 1'))

  // While us-central1 cools down every call goes to europe-west4; after the RetryInfo delay both serve in turn.
  await p.backend.generate({ model: 'gemini-2.5-flash', request: REQUEST })
  await p.backend.countTokens({ model: 'gemini-2.5-flash', request: REQUEST })
  t.same(p.locationsCalled().slice(2), ['europe-west4', 'europe-west4'], 'countTokens goes through the pool too')
  p.vertex.fake.locationReplies.clear()
  p.clock.ms += 30_000
  await p.backend.generate({ model: 'gemini-2.5-flash', request: REQUEST })
  await p.backend.generate({ model: 'gemini-2.5-flash', request: REQUEST })
  t.same(p.locationsCalled().slice(4).sort(), ['europe-west4', 'us-central1'], 'both locations in turn again')
  t.ok((await p.metricLines('gatehouse_upstream_credential_state')).includes('gatehouse_upstream_credential_state{credential="us-central1",state="ready"} 1'))
})

t.test('a stream fails over to the next location before any event reached the client', async t => {
  const p = await pool(t)
  p.vertex.fake.locationReplies.set('us-central1', errorReply(429, { retryDelay: '5s' }))
  p.vertex.fake.reply('streamGenerateContent', streamReply([geminiResponse({ text: 'a' }), geminiResponse({ text: 'b', finishReason: 'STOP' })]))
  const events = await collect(await p.backend.stream({ model: 'gemini-2.5-flash', request: REQUEST }))
  t.same(events.map(e => e.candidates?.[0]?.content?.parts?.[0]?.text), ['a', 'b'], 'the events of the second location, once')
  t.same(p.locationsCalled(), ['us-central1', 'europe-west4'])
})

t.test('every location cooling down gives one 429 with the earliest Retry-After, and nothing is marked dead', async t => {
  const p = await pool(t, 'us-central1,europe-west4,asia-northeast1')
  p.vertex.fake.locationReplies.set('us-central1', errorReply(429, { retryDelay: '40s' }))
  p.vertex.fake.locationReplies.set('europe-west4', errorReply(429, { retryDelay: '12s' }))
  p.vertex.fake.locationReplies.set('asia-northeast1', errorReply(429, { retryDelay: '25s' }))
  const err = await p.backend.generate({ model: 'gemini-2.5-flash', request: REQUEST }).catch(e => e)
  t.equal(err.code, 'UPSTREAM_RATE_LIMITED')
  t.equal(err.status, 429)
  t.equal(err.retryAfter, 12)
  t.same(p.locationsCalled(), ['us-central1', 'europe-west4', 'asia-northeast1'], 'each location once: a 429 is never retried on the same location')
  const again = await p.backend.stream({ model: 'gemini-2.5-flash', request: REQUEST }).catch(e => e)
  t.equal(again.code, 'UPSTREAM_RATE_LIMITED', 'while all cool down no upstream call is made')
  t.equal(p.locationsCalled().length, 3)
  t.same(await p.backend.ready(), { ok: true }, 'still ready: a cooling location comes back by itself')
  t.notOk((await p.metricLines('gatehouse_upstream_credential_state')).some(l => l.includes('state="set_aside"} 1')), 'nothing set aside')
  p.vertex.fake.locationReplies.clear()
  p.clock.ms += 12_000
  await p.backend.generate({ model: 'gemini-2.5-flash', request: REQUEST })
  t.same(p.locationsCalled().slice(3), ['europe-west4'], 'the first location back serves again')
})

t.test('a location answering a credential fault (IAM_PERMISSION_DENIED, SERVICE_DISABLED) is set aside with its reason; Vertex stays ready while one location is usable', async t => {
  const p = await pool(t)
  p.vertex.fake.locationReplies.set('us-central1', googleErrors.iamPermissionDenied('projects/proj-1/locations/us-central1/publishers/google/models/gemini-2.5-flash'))
  await p.backend.generate({ model: 'gemini-2.5-flash', request: REQUEST })
  await p.backend.generate({ model: 'gemini-2.5-flash', request: REQUEST })
  t.same(p.locationsCalled(), ['us-central1', 'europe-west4', 'europe-west4'], 'the set-aside location is not called again')
  t.ok((await p.metricLines('gatehouse_upstream_credential_state')).includes('gatehouse_upstream_credential_state{credential="us-central1",state="set_aside"} 1'))
  t.same(await p.backend.ready(), { ok: true })

  p.vertex.fake.locationReplies.set('europe-west4', googleErrors.serviceDisabled('aiplatform.googleapis.com', 'proj-1'))
  const err = await p.backend.generate({ model: 'gemini-2.5-flash', request: REQUEST }).catch(e => e)
  t.equal(err.code, 'UPSTREAM_CREDENTIALS_REJECTED')
  t.match(err.message, /us-central1: IAM_PERMISSION_DENIED: .*denied.*europe-west4: SERVICE_DISABLED: .*has not been used/)
  t.match(await p.backend.ready(), { ok: false, reason: /Every upstream credential is set aside/ })
})

t.test('a location answering 403 or 404 about what the request named is the caller\'s error: no location changes state', async t => {
  const p = await pool(t)
  p.vertex.fake.reply('generateContent', errorReply(404, { message: 'Publisher Model `projects/proj-1/locations/us-central1/publishers/google/models/gemini-nope` was not found or your project does not have access to it.' }), errorReply(403, { message: 'The caller does not have permission' }))
  t.equal((await p.backend.generate({ model: 'gemini-nope', request: REQUEST }).catch(e => e)).upstreamStatus, 404)
  t.equal((await p.backend.generate({ model: 'gemini-2.5-flash', request: REQUEST }).catch(e => e)).upstreamStatus, 403)
  t.same(p.locationsCalled(), ['us-central1', 'europe-west4'], 'no failover')
  t.notOk((await p.metricLines('gatehouse_upstream_credential_state')).some(l => /state="(set_aside|cooling)"} 1/.test(l)))
})

t.test('a 429 cools a location down for that model only: another model still goes there', async t => {
  const p = await pool(t)
  p.vertex.fake.reply('generateContent', errorReply(429, { message: 'Resource exhausted. Please try again later.' }))
  await p.backend.generate({ model: 'gemini-2.5-flash', request: REQUEST })
  await p.backend.generate({ model: 'gemini-2.5-pro', request: REQUEST })
  await p.backend.generate({ model: 'gemini-2.5-pro', request: REQUEST })
  await p.backend.generate({ model: 'gemini-2.5-flash', request: REQUEST })
  t.same(p.locationsCalled(), ['us-central1', 'europe-west4', 'us-central1', 'europe-west4', 'europe-west4'])
})

t.test('a set-aside location is re-probed (a token, the publisher model list) and comes back when it answers; readiness recovers', async t => {
  const p = await pool(t)
  p.vertex.fake.locationReplies.set('us-central1', googleErrors.serviceDisabled('aiplatform.googleapis.com', 'proj-1'))
  p.vertex.fake.locationReplies.set('europe-west4', googleErrors.serviceDisabled('aiplatform.googleapis.com', 'proj-1'))
  await p.backend.generate({ model: 'gemini-2.5-flash', request: REQUEST }).catch(() => {})
  t.equal((await p.backend.ready()).ok, false)
  p.vertex.fake.locationReplies.clear()
  p.clock.ms += 60_000
  t.same(await p.backend.ready(), { ok: true }, 'back after the re-probe')
  t.equal(p.vertex.fake.calls('listModels').length, 2, 'one probe per location')
  await p.backend.generate({ model: 'gemini-2.5-flash', request: REQUEST })
  await p.backend.generate({ model: 'gemini-2.5-flash', request: REQUEST })
  t.same(p.locationsCalled().slice(-2).sort(), ['europe-west4', 'us-central1'])
})

t.test('one location is a pool of one: its 429 reaches the caller as it is and it never cools down', async t => {
  const p = await pool(t, 'us-central1')
  p.vertex.fake.reply('generateContent', errorReply(429, { retryDelay: '3s' }))
  const err = await p.backend.generate({ model: 'gemini-2.5-flash', request: REQUEST }).catch(e => e)
  t.equal(err.retryAfter, 3)
  await p.backend.generate({ model: 'gemini-2.5-flash', request: REQUEST })
  t.same(p.locationsCalled(), ['us-central1', 'us-central1'])
})

t.test('several Vertex locations need a project and no endpoint override; each must be a location, named once', async t => {
  const vertex = { backend: 'vertex', projectId: 'p' } as const
  const pooled = createBackend({ ...vertex, vertexLocation: ' us-central1 , europe-west4 ' })
  t.teardown(() => pooled.close())
  t.throws(() => createBackend({ backend: 'vertex', apiKey: 'k', vertexLocation: 'us-central1,europe-west4' }),
    { option: 'vertexLocation', message: /createBackend: vertexLocation lists several locations, but express mode \(no projectId\) always calls the global endpoint/ })
  t.throws(() => createBackend({ ...vertex, vertexLocation: 'us-central1,europe-west4', vertexEndpoint: 'https://vertex.internal.example' }),
    { option: 'vertexLocation', message: /vertexLocation lists several locations, but vertexEndpoint would send them all to its one host/ })
  t.throws(() => createBackend({ ...vertex, vertexLocation: 'us-central1,us-central1' }), { message: /vertexLocation names a location twice/ })
  for (const bad of ['us-central1,evil.example/', ',', 'us-central1;europe-west4']) {
    t.throws(() => createBackend({ ...vertex, vertexLocation: bad }), { message: /createBackend: vertexLocation must be/ }, JSON.stringify(bad))
  }
  const trailing = createBackend({ ...vertex, vertexLocation: 'us-central1,' })
  t.teardown(() => trailing.close())
  t.pass('a trailing comma is a blank, ignored like in GEMINI_API_KEY')
  const single = createBackend({ backend: 'vertex', apiKey: 'k', vertexLocation: 'europe-west4', vertexEndpoint: 'https://vertex.internal.example' })
  t.teardown(() => single.close())
  const other = createBackend({ backend: 'gemini-api', apiKey: 'k', vertexLocation: 'us-central1,europe-west4' })
  t.teardown(() => other.close())
  t.pass('the pool rules apply only to the Vertex backend')
})
