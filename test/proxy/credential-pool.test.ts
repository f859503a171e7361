import t from 'tap'
import type { Test } from 'tap'
import { createMetrics } from '../../gateway/metrics.ts'
import { PASSWORD, startProxy } from './harness.ts'
import type { ProxyHarness } from './harness.ts'
import { errorReply, googleErrors } from '../support/fake-upstream.ts'

const GENERATE = '/v1beta/models/gemini-2.5-flash:generateContent'
const STREAM = '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse'
const BODY = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] })

interface Pool extends ProxyHarness {
  clock: { ms: number }
  metrics: ReturnType<typeof createMetrics>
  call (path?: string): Promise<Response>
  keysCalled (): string[]
}

async function pool (t: Test, apiKey: string, upstream: Record<string, unknown> = {}): Promise<Pool> {
  const clock = { ms: Date.parse('2026-11-24T00:00:00Z') }
  const metrics = createMetrics({ models: ['gemini-2.5-flash'], defaultMetrics: false })
  const h = await startProxy(t, { backendName: 'gemini-api', upstream: { apiKey, ...upstream }, now: () => new Date(clock.ms), observer: metrics.proxy })
  // Several keys stand for several projects: a file or cache belongs to the key that made it.
  h.fake.keyScoped = true
  return {
    ...h,
    clock,
    metrics,
    call: async (path = GENERATE) => fetch(h.url + path, { method: 'POST', headers: { authorization: `Bearer ${PASSWORD}`, 'content-type': 'application/json' }, body: BODY }),
    keysCalled: () => h.fake.requests.filter(r => r.api === 'gemini-api').map(r => String(r.headers['x-goog-api-key'])),
  }
}

async function metricLines (p: Pool, name: string): Promise<string[]> {
  const { body } = await p.metrics.render()
  return body.split('\n').filter(l => l.startsWith(name + '{'))
}

t.test('a key answering 429 with RetryInfo cools down for that delay and the call fails over to the next key', async t => {
  const p = await pool(t, 'k1, k2')
  p.fake.keyReplies.set('k1', errorReply(429, { retryDelay: '30s', reason: 'RATE_LIMIT_EXCEEDED' }))
  const res = await p.call()
  t.equal(res.status, 200)
  t.same(p.keysCalled(), ['k1', 'k2'])
  t.ok((await metricLines(p, 'gatehouse_upstream_credential_state')).includes('gatehouse_upstream_credential_state{credential="key#1",state="cooling"} 1'))
  t.ok((await metricLines(p, 'gatehouse_upstream_credential_state')).includes('gatehouse_upstream_credential_state{credential="key#2",state="ready"} 1'))
  t.ok((await metricLines(p, 'gatehouse_upstream_credential_cooldowns_total')).includes('gatehouse_upstream_credential_cooldowns_total{credential="key#1"} 1'))
  const secretShown = (await p.metrics.render()).body.includes('k1"')
  t.notOk(secretShown, 'metrics name the credential, never the key')

  // While key#1 cools down every call goes to key#2; after the RetryInfo delay key#1 is used again.
  await p.call()
  await p.call()
  t.same(p.keysCalled().slice(2), ['k2', 'k2'])
  p.fake.keyReplies.clear()
  p.clock.ms += 30_000
  await p.call()
  await p.call()
  t.same(p.keysCalled().slice(4).sort(), ['k1', 'k2'], 'both keys in turn again')
  t.ok((await metricLines(p, 'gatehouse_upstream_credential_state')).includes('gatehouse_upstream_credential_state{credential="key#1",state="ready"} 1'))
})

t.test('a stream fails over too, before any event reached the client', async t => {
  const p = await pool(t, 'k1,k2')
  p.fake.keyReplies.set('k1', errorReply(429, { retryDelay: '5s' }))
  const res = await p.call(STREAM)
  t.equal(res.status, 200)
  t.match(await res.text(), /data: /)
  t.same(p.keysCalled(), ['k1', 'k2'])
})

t.test('when every credential is cooling down the client gets one 429 with the earliest Retry-After, and nothing is marked dead', async t => {
  const p = await pool(t, 'k1,k2')
  p.fake.keyReplies.set('k1', errorReply(429, { retryDelay: '40s' }))
  p.fake.keyReplies.set('k2', errorReply(429, { retryDelay: '12s' }))
  const res = await p.call()
  t.equal(res.status, 429)
  t.equal(res.headers.get('retry-after'), '12')
  t.same(p.keysCalled(), ['k1', 'k2'])
  const again = await p.call()
  t.equal(again.status, 429, 'while both cool down no upstream call is made')
  t.equal(p.keysCalled().length, 2)
  t.equal((await p.proxy.ready()).ok, true, 'still ready: a cooling credential comes back by itself')
  const states = await metricLines(p, 'gatehouse_upstream_credential_state')
  t.notOk(states.some(l => l.includes('state="set_aside"} 1')), 'nothing set aside')
  p.fake.keyReplies.clear()
  p.clock.ms += 12_000
  t.equal((await p.call()).status, 200, 'the first key back serves again')
  t.same(p.keysCalled().slice(2), ['k2'])
})

t.test('without RetryInfo a cooldown starts at credentialCooldownMs and doubles on repeats, capped', async t => {
  const p = await pool(t, 'k1,k2', { credentialCooldownMs: 1000, maxCredentialCooldownMs: 3000 })
  p.fake.keyReplies.set('k1', errorReply(429))
  p.fake.keyReplies.set('k2', errorReply(429))
  const retryAfters: Array<string | null> = []
  for (let i = 0; i < 3; i++) {
    retryAfters.push((await p.call()).headers.get('retry-after'))
    p.clock.ms += 10_000
  }
  t.same(retryAfters, ['1', '2', '3'])
})

t.test('a key answering a credential fault (CONSUMER_SUSPENDED, an expired key) is set aside with its reason and not used again', async t => {
  const p = await pool(t, 'k1,k2')
  p.fake.keyReplies.set('k1', googleErrors.consumerSuspended())
  t.equal((await p.call()).status, 200)
  t.equal((await p.call()).status, 200)
  t.same(p.keysCalled(), ['k1', 'k2', 'k2'])
  t.ok((await metricLines(p, 'gatehouse_upstream_credential_state')).includes('gatehouse_upstream_credential_state{credential="key#1",state="set_aside"} 1'))
  t.equal((await p.proxy.ready()).ok, true, 'ready while one credential is usable')

  p.fake.keyReplies.set('k2', googleErrors.apiKeyExpired())
  const res = await p.call()
  t.equal(res.status, 503)
  t.match((await res.json() as { error: { message: string } }).error.message, /Every upstream credential is set aside: key#1: CONSUMER_SUSPENDED: .*suspended.*key#2: API_KEY_INVALID: API key expired/)
  const ready = await p.proxy.ready()
  t.equal(ready.ok, false)
})

t.test('a member\'s generate naming files/nope (403 from Google) is the caller\'s error: every credential stays usable', async t => {
  const p = await pool(t, 'k1,k2')
  const named = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'describe' }, { fileData: { mimeType: 'text/plain', fileUri: 'files/nope' } }] }] })
  for (let i = 0; i < 3; i++) {
    const res = await fetch(p.url + GENERATE, { method: 'POST', headers: { authorization: `Bearer ${PASSWORD}`, 'content-type': 'application/json' }, body: named })
    t.equal(res.status, 403, 'the caller gets Google\'s 403')
    t.match((await res.json() as { error: { message: string } }).error.message, /permission to access the File nope/)
  }
  t.same(p.keysCalled(), ['k1', 'k2', 'k1'], 'never failed over: one upstream call per request')
  const states = await metricLines(p, 'gatehouse_upstream_credential_state')
  t.ok(states.includes('gatehouse_upstream_credential_state{credential="key#1",state="ready"} 1'))
  t.ok(states.includes('gatehouse_upstream_credential_state{credential="key#2",state="ready"} 1'))
  t.same(await p.proxy.ready(), { ok: true })
  t.equal((await p.call()).status, 200, 'everyone else is served')
})

t.test('a 403 or 404 without a credential reason changes nothing in the pool', async t => {
  const p = await pool(t, 'k1,k2')
  p.fake.reply('generateContent', errorReply(403, { message: 'The caller does not have permission' }), errorReply(404, { message: 'models/gemini-x is not found' }))
  t.equal((await p.call()).status, 403)
  t.equal((await p.call()).status, 404)
  t.same(p.keysCalled(), ['k1', 'k2'])
  t.notOk((await metricLines(p, 'gatehouse_upstream_credential_state')).some(l => /state="(set_aside|cooling)"} 1/.test(l)))
})

t.test('a 429 cools the key down for that model only: another model still uses it', async t => {
  const p = await pool(t, 'k1,k2')
  p.fake.reply('generateContent', googleErrors.quotaExceeded('gemini-2.5-flash', '3600s'))
  t.equal((await p.call()).status, 200)
  t.same(p.keysCalled(), ['k1', 'k2'], 'the flash call failed over')
  t.equal((await p.call('/v1beta/models/gemini-2.5-pro:generateContent')).status, 200)
  t.equal((await p.call('/v1beta/models/gemini-2.5-pro:generateContent')).status, 200)
  t.same(p.keysCalled().slice(2), ['k1', 'k2'], 'gemini-2.5-pro still goes to both keys')
  await p.call()
  await p.call()
  t.same(p.keysCalled().slice(4), ['k2', 'k2'], 'gemini-2.5-flash only to the other key while key#1 cools down for it')
  const cooling = await metricLines(p, 'gatehouse_upstream_credential_model_cooling')
  t.ok(cooling.includes('gatehouse_upstream_credential_model_cooling{credential="key#1",model="gemini-2.5-flash"} 1'), 'metrics name the cooling model')
  t.notOk(cooling.some(l => l.includes('gemini-2.5-pro')))
})

t.test('a hinted delay is capped at maxCredentialCooldownMs', async t => {
  const p = await pool(t, 'k1,k2', { maxCredentialCooldownMs: 120_000 })
  p.fake.keyReplies.set('k1', googleErrors.quotaExceeded('gemini-2.5-flash', '3600s'))
  p.fake.keyReplies.set('k2', googleErrors.quotaExceeded('gemini-2.5-flash', '86400s'))
  const res = await p.call()
  t.equal(res.status, 429)
  t.equal(res.headers.get('retry-after'), '120', 'not the hour or the day Google hinted')
  p.fake.keyReplies.clear()
  p.clock.ms += 120_000
  t.equal((await p.call()).status, 200)
})

t.test('a set-aside key is re-probed with backoff and comes back when models.list answers again; readiness recovers', async t => {
  const p = await pool(t, 'k1,k2')
  p.fake.keyReplies.set('k1', googleErrors.serviceDisabled())
  p.fake.keyReplies.set('k2', googleErrors.apiKeyInvalid())
  t.equal((await p.call()).status, 503)
  t.equal((await p.proxy.ready()).ok, false)
  const probes = (): number => p.fake.calls('listModels').length
  t.equal(probes(), 0, 'no probe before the first is due')

  p.clock.ms += 60_000
  t.equal((await p.proxy.ready()).ok, false, 'probed, still refused')
  t.equal(probes(), 2, 'one models.list per set-aside key')
  t.equal(p.fake.last('listModels')!.query.pageSize, '1')

  p.fake.keyReplies.delete('k1')
  p.clock.ms += 60_000
  t.equal((await p.proxy.ready()).ok, false, 'the next probe waits twice as long')
  t.equal(probes(), 2)
  p.clock.ms += 60_000
  t.same(await p.proxy.ready(), { ok: true }, 'key#1 answers again: ready')
  t.equal(probes(), 4)
  t.ok((await metricLines(p, 'gatehouse_upstream_credential_state')).includes('gatehouse_upstream_credential_state{credential="key#1",state="ready"} 1'))
  t.equal((await p.call()).status, 200)
  t.equal(p.keysCalled().at(-1), 'k1')
})

t.test('a file uploaded through one key is used through that key afterwards (and a cache too)', async t => {
  const p = await pool(t, 'k1,k2')
  const upload = async (): Promise<string> => {
    const res = await fetch(p.url + '/upload/v1beta/files', { method: 'POST', headers: { authorization: `Bearer ${PASSWORD}`, 'content-type': 'text/plain' }, body: 'notes' })
    t.equal(res.status, 200)
    return (await res.json() as { file: { name: string, uri: string } }).file.uri
  }
  const first = await upload()
  const second = await upload()
  t.same(p.fake.calls('files').map(r => r.headers['x-goog-api-key']), ['k1', 'k2'], 'uploads go round the pool')
  const generate = async (uri: string): Promise<number> => (await fetch(p.url + GENERATE, {
    method: 'POST',
    headers: { authorization: `Bearer ${PASSWORD}`, 'content-type': 'application/json' },
    body: JSON.stringify({ contents: [{ role: 'user', parts: [{ fileData: { mimeType: 'text/plain', fileUri: uri } }] }] }),
  })).status
  t.same([await generate(first), await generate(first), await generate(second), await generate(first)], [200, 200, 200, 200])
  t.same(p.fake.calls('generateContent').map(r => r.headers['x-goog-api-key']), ['k1', 'k1', 'k2', 'k1'], 'each file through the key that uploaded it')
  const get = await fetch(p.url + '/v1beta/' + /files\/.+$/.exec(second)![0], { headers: { authorization: `Bearer ${PASSWORD}` } })
  t.equal(get.status, 200, 'files.get of the second file through key#2')

  const created = await fetch(p.url + '/v1beta/cachedContents', { method: 'POST', headers: { authorization: `Bearer ${PASSWORD}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'models/gemini-2.5-flash', contents: [{ role: 'user', parts: [{ text: 'long' }] }] }) })
  const cache = (await created.json() as { name: string }).name
  const creator = p.fake.calls('cachedContents').at(-1)!.headers['x-goog-api-key']
  for (let i = 0; i < 2; i++) {
    const res = await fetch(p.url + GENERATE, { method: 'POST', headers: { authorization: `Bearer ${PASSWORD}`, 'content-type': 'application/json' }, body: JSON.stringify({ cachedContent: cache, contents: [{ role: 'user', parts: [{ text: 'q' }] }] }) })
    t.equal(res.status, 200)
  }
  t.same(p.keysCalled().slice(-2), [creator, creator], 'the cache through the key that created it')
})
t.test('a 429 is never retried on the same credential: a persistent 429 costs one upstream call per credential', async t => {
  const p = await pool(t, 'k1,k2,k3', { maxRetries: 2 })
  for (const k of ['k1', 'k2', 'k3']) p.fake.keyReplies.set(k, errorReply(429, { retryDelay: '1s' }))
  const res = await p.call()
  t.equal(res.status, 429)
  t.same(p.keysCalled(), ['k1', 'k2', 'k3'])
})

t.test('a 5xx is retried once on the same credential, not failed over', async t => {
  const p = await pool(t, 'k1,k2', { maxRetries: 1, retryBaseDelayMs: 1 })
  p.fake.reply('generateContent', errorReply(503))
  t.equal((await p.call()).status, 200)
  t.same(p.keysCalled(), ['k1', 'k1'])
})
