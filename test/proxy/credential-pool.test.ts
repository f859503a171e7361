import t from 'tap'
import type { Test } from 'tap'
import { createMetrics } from '../../gateway/metrics.ts'
import { PASSWORD, startProxy } from './harness.ts'
import type { ProxyHarness } from './harness.ts'
import { errorReply } from '../support/fake-upstream.ts'

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
  const h = await startProxy(t, { geminiApi: true, upstream: { apiKey, ...upstream }, now: () => new Date(clock.ms), observer: metrics.proxy })
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

t.test('a credential answering 403 is set aside with its reason and not used again', async t => {
  const p = await pool(t, 'k1,k2')
  p.fake.keyReplies.set('k1', errorReply(403, { message: 'API key disabled.' }))
  t.equal((await p.call()).status, 200)
  t.equal((await p.call()).status, 200)
  t.same(p.keysCalled(), ['k1', 'k2', 'k2'])
  t.ok((await metricLines(p, 'gatehouse_upstream_credential_state')).includes('gatehouse_upstream_credential_state{credential="key#1",state="set_aside"} 1'))
  t.equal((await p.proxy.ready()).ok, true, 'ready while one credential is usable')

  p.fake.keyReplies.set('k2', errorReply(401, { message: 'API key expired.' }))
  const res = await p.call()
  t.equal(res.status, 503)
  t.match((await res.json() as { error: { message: string } }).error.message, /Every upstream credential is set aside: key#1: API key disabled.*key#2:.*API key expired/)
  const ready = await p.proxy.ready()
  t.equal(ready.ok, false)
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
