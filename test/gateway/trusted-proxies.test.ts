// TRUSTED_PROXIES over real HTTP: behind an ingress every client arrives from the ingress's address, so the
// gateway must count each client by the address the ingress forwards, and believe no one else's header.
import t from 'tap'
import { startGateway } from '../support/gateway.ts'
import { authClient, DEVICE } from '../support/auth-client.ts'
import type { AuthClient, Reply } from '../support/auth-client.ts'

const loginFrom = (api: AuthClient, forwardedFor: string, username: string, password: string): Promise<Reply> =>
  api.call('POST', '/auth/login', { json: { username, password }, headers: { 'user-agent': DEVICE, 'x-forwarded-for': forwardedFor } })

t.test('behind a trusted proxy each client is counted by its own address: 30 failed logins from one client do not lock out another', async t => {
  const gw = await startGateway({ TRUSTED_PROXIES: '127.0.0.1, ::1' })
  t.teardown(gw.close)
  const api = authClient(gw.url + '/v1/api')
  t.equal((await api.signup('behind_ingress', 'velvet-harbor-93')).status, 201)
  // One failure each for 30 usernames: no account reaches its own limit or delay, the address reaches its limit.
  for (let i = 0; i < 30; i++) t.equal((await loginFrom(api, '6.6.6.6, 203.0.113.1', `spray_${i}`, 'guess-pass')).status, 401)
  const stuffer = await loginFrom(api, '203.0.113.1', 'behind_ingress', 'velvet-harbor-93')
  t.equal(stuffer.status, 429, 'the client that failed 30 times is refused')
  t.ok(Number(stuffer.headers['retry-after']) > 0)
  t.equal((await loginFrom(api, '203.0.113.2', 'behind_ingress', 'velvet-harbor-93')).status, 200, 'another client behind the same proxy is not')
  const logged = gw.logs.filter(l => l.msg === 'request' && l.route === '/v1/api/auth/login').map(l => l.remoteAddress)
  t.same([...new Set(logged)], ['203.0.113.1', '203.0.113.2'], "the request log shows each client's address, not the proxy's")
})

t.test('without TRUSTED_PROXIES a client cannot pick its address with X-Forwarded-For', async t => {
  const gw = await startGateway()
  t.teardown(gw.close)
  const api = authClient(gw.url + '/v1/api')
  for (let i = 0; i < 30; i++) t.equal((await loginFrom(api, `203.0.113.${i}`, `spray_${i}`, 'guess-pass')).status, 401)
  t.equal((await loginFrom(api, '198.51.100.1', 'spray_x', 'guess-pass')).status, 429, 'every forged address was counted as the peer')
  t.same([...new Set(gw.logs.filter(l => l.msg === 'request').map(l => l.remoteAddress))], ['127.0.0.1'])
})

t.test('a TRUSTED_PROXIES entry that is neither an address nor a CIDR range stops start-up naming it', async t => {
  await t.rejects(startGateway({ TRUSTED_PROXIES: '10.0.0.0/8, ingress.local' }), {
    name: 'EnvironmentError',
    variable: 'TRUSTED_PROXIES',
    message: 'Invalid configuration: TRUSTED_PROXIES must be comma-separated IP addresses or CIDR ranges: "ingress.local" is not an IP address or a CIDR range (got "10.0.0.0/8, ingress.local")',
  })
})
