import t from 'tap'
import { startGateway, testStore } from '../support/gateway.ts'
import { startFakeUpstream, invalidGrant, currentTier } from '../support/fake-upstream.ts'
import { credentialsObject } from '../support/credentials-files.ts'

const ADMIN = { AUTH_ADMIN_PASSWORD: 'admin-password' }

async function get (url: string): Promise<{ status: number, body: any }> {
  const res = await fetch(url)
  return { status: res.status, body: await res.json() }
}

t.test('/health answers the seed shape and /livez answers while the event loop turns', async t => {
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
  t.same(res.body.failing, ['store'])
  t.equal(res.body.checks.store, 'connection refused')
  t.same(await get(gw.url + '/livez'), { status: 200, body: { status: 'alive' } }, 'liveness does not depend on the store')
  healthy = true
  t.equal((await get(gw.url + '/readyz')).status, 200, 'ready again once the store answers')
})

t.test('/readyz is 503 when a store ping hangs, after the check timeout', async t => {
  const store = await testStore({ ping: () => new Promise(() => {}) })
  const gw = await startGateway(ADMIN, { store })
  t.teardown(gw.close)
  const started = Date.now()
  const res = await get(gw.url + '/readyz')
  t.equal(res.status, 503)
  t.same(res.body.failing, ['store'])
  t.match(res.body.checks.store, /timed out/)
  t.ok(Date.now() - started < 4000)
})

t.test('with an upstream configured, /readyz checks it: usable credentials and a resolved project', async t => {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  fake.reply('loadCodeAssist', currentTier('probe-project'))
  const gw = await startGateway({
    ...ADMIN,
    GEMINI_AUTH_PASSWORD: 'gateway-proxy-password',
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
    GEMINI_AUTH_PASSWORD: 'gateway-proxy-password',
    GEMINI_CREDENTIALS: JSON.stringify(credentialsObject('authorized-user', { tokenUri: fake.tokenUri, accessToken: null })),
    CODE_ASSIST_ENDPOINT: fake.url,
  })
  t.teardown(gw.close)
  const res = await get(gw.url + '/readyz')
  t.equal(res.status, 503)
  t.same(res.body.failing, ['upstream'])
  t.equal(res.body.checks.store, 'ok')
  t.match(res.body.checks.upstream, /invalid_grant|unusable/i)
})

t.test('once shutdown begins /readyz is 503 at once, naming the shutdown', async t => {
  const gw = await startGateway(ADMIN)
  const stopped = gw.close()
  const res = await gw.gateway.server.inject('/readyz')
  t.equal(res.statusCode, 503)
  t.same(JSON.parse(res.payload).failing, ['shutdown'])
  await stopped
})
