import t from 'tap'
import { startGateway, testStore } from '../support/gateway.ts'
import { startFakeUpstream, invalidGrant, currentTier, googleErrors } from '../support/fake-upstream.ts'
import { credentialsObject } from '../support/credentials-files.ts'
import { createProbes } from '../../gateway/probes.ts'

const ADMIN = { AUTH_ADMIN_PASSWORD: 'admin-password' }

async function get (url: string): Promise<{ status: number, body: any }> {
  const res = await fetch(url)
  return { status: res.status, body: await res.json() }
}

t.test('/health answers the documented shape and /livez answers while the event loop turns', async t => {
  const gw = await startGateway(ADMIN)
  t.teardown(gw.close)
  t.same(await get(gw.url + '/health'), { status: 200, body: { status: 'healthy', service: 'gatehouse' } })
  t.same(await get(gw.url + '/livez'), { status: 200, body: { status: 'alive' } })
})

t.test('/readyz is 200 when the store answers and no upstream is configured', async t => {
  const gw = await startGateway(ADMIN)
  t.teardown(gw.close)
  t.same(await get(gw.url + '/readyz'), { status: 200, body: { status: 'ready', checks: { store: 'ok' } } })
})

t.test('/readyz is 503 naming the store when the store does not answer', async t => {
  let healthy = true
  const store = await testStore({ ping: async () => { if (!healthy) throw new Error('connection refused') } })
  const gw = await startGateway(ADMIN, { store })
  t.teardown(gw.close)
  t.equal((await get(gw.url + '/readyz')).status, 200)
  healthy = false
  const res = await get(gw.url + '/readyz')
  t.equal(res.status, 503)
  t.same(res.body, { status: 'unavailable', failing: ['store'], checks: { store: 'failing' } })
  t.same(await get(gw.url + '/livez'), { status: 200, body: { status: 'alive' } }, 'liveness does not depend on the store')
  healthy = true
  t.equal((await get(gw.url + '/readyz')).status, 200, 'ready again once the store answers')
})

t.test('/readyz tells unauthenticated callers check names and states only; the reasons go to the log', async t => {
  const reason = 'connect ECONNREFUSED 10.1.2.3:27017 (replica set rs0, user gatehouse)'
  let healthy = false
  const store = await testStore({ ping: async () => { if (!healthy) throw new Error(reason) } })
  const gw = await startGateway(ADMIN, { store })
  t.teardown(gw.close)
  const res = await fetch(gw.url + '/readyz')
  const text = await res.text()
  t.equal(res.status, 503)
  t.same(JSON.parse(text), { status: 'unavailable', failing: ['store'], checks: { store: 'failing' } })
  t.notOk(text.includes('10.1.2.3') || text.includes('ECONNREFUSED'), 'no reason in the body')
  t.match(gw.logs.filter(l => l.msg === 'readiness check failing'), [{ level: 'warn', check: 'store', reason }], 'the reason is logged')
  healthy = true
  t.equal((await get(gw.url + '/readyz')).status, 200)
  t.match(gw.logs.filter(l => l.msg === 'readiness check passes again'), [{ check: 'store' }], 'and the recovery')
})

t.test('a failing readiness check is logged at most once a minute, however often /readyz is called', async t => {
  const lines: Array<[unknown, string | undefined]> = []
  const log = (obj: unknown, msg?: string): void => { lines.push([obj, msg]) }
  let clock = 0
  let failure: string | undefined = 'store down'
  const probes = createProbes({
    checks: [{ name: 'store', check: async () => { if (failure !== undefined) throw new Error(failure) } }, { name: 'upstream', check: async () => ({ ok: false }) }],
    isDraining: () => false,
    logger: { debug: log, info: log, warn: log, error: log },
    now: () => clock,
  })
  const readyz = probes.routes.find(r => r.path === '/readyz')!
  const call = () => readyz.handler({ method: 'GET', path: '/readyz', params: {}, query: {}, headers: {}, body: undefined } as any)
  for (let i = 0; i < 100; i++) {
    t.same((await call()).body, { status: 'unavailable', failing: ['store', 'upstream'], checks: { store: 'failing', upstream: 'failing' } })
    clock += 100
  }
  t.same(lines, [[{ check: 'store', reason: 'store down' }, 'readiness check failing'], [{ check: 'upstream', reason: 'not ready' }, 'readiness check failing']], '100 calls in 10 s: one line per check')
  clock = 60_000
  failure = 'store still down'
  await call()
  t.same(lines.slice(2), [
    [{ check: 'store', reason: 'store still down', unloggedFailures: 99 }, 'readiness check failing'],
    [{ check: 'upstream', reason: 'not ready', unloggedFailures: 99 }, 'readiness check failing'],
  ], 'a minute after the last line, one more with the latest reason and the count in between')
  failure = undefined
  await call()
  await call()
  t.same(lines.slice(4), [[{ check: 'store' }, 'readiness check passes again']], 'recovery is logged once')
})

t.test('/readyz is 503 when a store ping hangs, after the check timeout', async t => {
  const store = await testStore({ ping: () => new Promise(() => {}) })
  const gw = await startGateway(ADMIN, { store })
  t.teardown(gw.close)
  const started = Date.now()
  const res = await get(gw.url + '/readyz')
  t.equal(res.status, 503)
  t.same(res.body.failing, ['store'])
  t.equal(res.body.checks.store, 'failing')
  t.match(gw.logs.find(l => l.msg === 'readiness check failing'), { check: 'store', reason: /timed out/ })
  t.ok(Date.now() - started < 4000)
})

t.test('with an upstream configured, /readyz checks it: usable credentials and a resolved project', async t => {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  fake.reply('loadCodeAssist', currentTier('probe-project'))
  const gw = await startGateway({
    ...ADMIN,
    GEMINI_AUTH_PASSWORD: 'gateway-proxy-password-for-tests',
    GEMINI_CREDENTIALS: JSON.stringify(credentialsObject('authorized-user', { tokenUri: fake.tokenUri, accessToken: null })),
    CODE_ASSIST_ENDPOINT: fake.url,
  })
  t.teardown(gw.close)
  t.same(await get(gw.url + '/readyz'), { status: 200, body: { status: 'ready', checks: { store: 'ok', upstream: 'ok' } } })
  t.equal(fake.calls('token').length, 1, 'the credentials were refreshed once')
})

t.test('with unusable upstream credentials, /readyz is 503 naming the upstream', async t => {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  fake.setDefault('token', invalidGrant())
  const gw = await startGateway({
    ...ADMIN,
    GEMINI_AUTH_PASSWORD: 'gateway-proxy-password-for-tests',
    GEMINI_CREDENTIALS: JSON.stringify(credentialsObject('authorized-user', { tokenUri: fake.tokenUri, accessToken: null })),
    CODE_ASSIST_ENDPOINT: fake.url,
  })
  t.teardown(gw.close)
  const res = await get(gw.url + '/readyz')
  t.equal(res.status, 503)
  t.same(res.body, { status: 'unavailable', failing: ['upstream'], checks: { store: 'ok', upstream: 'failing' } })
  t.match(gw.logs.find(l => l.msg === 'readiness check failing'), { check: 'upstream', reason: /invalid_grant|unusable/i })
})

t.test('once shutdown begins /readyz is 503 at once, naming the shutdown', async t => {
  const gw = await startGateway(ADMIN)
  const stopped = gw.close()
  const res = await gw.gateway.server.inject('/readyz')
  t.equal(res.statusCode, 503)
  t.same(JSON.parse(res.payload), { status: 'unavailable', failing: ['shutdown'], checks: { shutdown: 'draining' } })
  await stopped
})

t.test('/readyz recovers with the pool: keys set aside by a credential fault are re-probed and /readyz is 200 again once one answers', async t => {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const clock = { ms: Date.parse('2026-11-27T00:00:00Z') }
  const gw = await startGateway({ ...ADMIN, GEMINI_BACKEND: 'gemini-api', GEMINI_API_KEY: 'k1,k2', GEMINI_API_ENDPOINT: fake.url, GEMINI_AUTH_PASSWORD: 'proxy-password-for-tests' }, { now: () => new Date(clock.ms) })
  t.teardown(gw.close)
  t.equal((await get(gw.url + '/readyz')).status, 200)
  fake.keyReplies.set('k1', googleErrors.consumerSuspended())
  fake.keyReplies.set('k2', googleErrors.apiKeyExpired())
  const generate = (): Promise<Response> => fetch(gw.url + '/v1beta/models/gemini-2.5-flash:generateContent', {
    method: 'POST', headers: { authorization: 'Bearer proxy-password-for-tests', 'content-type': 'application/json' }, body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
  })
  t.equal((await generate()).status, 503)
  t.same(await get(gw.url + '/readyz'), { status: 503, body: { status: 'unavailable', failing: ['upstream'], checks: { store: 'ok', upstream: 'failing' } } })

  fake.keyReplies.delete('k2')
  t.equal((await get(gw.url + '/readyz')).status, 503, 'no re-probe before it is due')
  clock.ms += 60_000
  t.same(await get(gw.url + '/readyz'), { status: 200, body: { status: 'ready', checks: { store: 'ok', upstream: 'ok' } } }, 'the key answered its re-probe: ready again')
  t.equal((await generate()).status, 200)
})

t.test('/readyz stays 200 when a member\'s request names a file that does not exist (403 from Google): the pool is untouched', async t => {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  // Two keys stand for two projects: Google answers a file no key of this one made with its bare 403.
  fake.keyScoped = true
  const gw = await startGateway({ ...ADMIN, GEMINI_BACKEND: 'gemini-api', GEMINI_API_KEY: 'k1,k2', GEMINI_API_ENDPOINT: fake.url, GEMINI_AUTH_PASSWORD: 'proxy-password-for-tests' })
  t.teardown(gw.close)
  for (let i = 0; i < 4; i++) {
    const res = await fetch(gw.url + '/v1beta/models/gemini-2.5-flash:generateContent', {
      method: 'POST', headers: { authorization: 'Bearer proxy-password-for-tests', 'content-type': 'application/json' }, body: JSON.stringify({ contents: [{ role: 'user', parts: [{ fileData: { mimeType: 'text/plain', fileUri: 'files/nope' } }] }] }),
    })
    t.equal(res.status, 403)
  }
  t.equal((await get(gw.url + '/readyz')).status, 200)
})
