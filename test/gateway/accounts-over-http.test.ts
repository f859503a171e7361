// The accounts service through the real gateway (in process, Hapi on 127.0.0.1:0, configured from
// env as `npm start` is), with the default argon2 parameters.
import t from 'tap'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { startGateway } from '../support/gateway.ts'
import { authClient } from '../support/auth-client.ts'

const ADMIN = { AUTH_ADMIN_USERNAME: 'gate_admin', AUTH_ADMIN_PASSWORD: 'gateway-admin-password' }

t.test('the gateway serves every accounts route under /v1/api', async t => {
  const gw = await startGateway(ADMIN)
  t.teardown(gw.close)
  const api = authClient(gw.url + '/v1/api')
  t.equal((await api.signup('Gate_User', 'velvet-harbor-93', 'G@Example.com')).status, 201)
  const login = await api.login('gate_user', 'velvet-harbor-93')
  t.equal(login.status, 200)
  t.match(login.body, { username: 'Gate_User', email: 'g@example.com', access_level: 'default', token_type: 'bearer' })
  const { user_id: userId, access_token: token } = login.body
  t.same((await api.validate(userId, token)).body, { access_token: token, token_type: 'bearer' })
  t.same((await api.call('GET', '/auth/search-users', { query: { query: 'gate' } })).body, ['gate_admin', 'Gate_User'])
  t.equal((await api.call('GET', '/auth/get-user-id', { query: { username: 'GATE_USER' } })).body, userId)
  const update = await api.call('PUT', '/auth/user/update', { query: { user_id: userId }, headers: { token, 'user-agent': 'gatehouse-tests/1.0 (device A)' }, json: { email: 'new@example.com' } })
  t.equal(update.status, 200)
  t.equal(update.body.email, 'new@example.com')

  const admin = await api.login('gate_admin', ADMIN.AUTH_ADMIN_PASSWORD, 'console/1')
  t.equal(admin.body.access_level, 'hush', 'the system user was created at start with level hush')
  const q = { admin_id: admin.body.user_id, token: admin.body.access_token }
  const ua = { 'user-agent': 'console/1' }
  t.equal((await api.call('GET', '/admin/users', { query: { user_id: q.admin_id, token: q.token }, headers: ua })).body.length, 2)
  t.equal((await api.call('GET', `/admin/user/${userId}`, { query: q, headers: ua })).body.username, 'Gate_User')
  t.equal((await api.call('PUT', `/admin/user/${userId}`, { query: q, headers: ua, json: { username: 'Renamed_User' } })).body.username, 'Renamed_User')
  t.equal((await api.call('PUT', `/admin/user/${userId}/access-level`, { query: q, headers: ua, json: { access_level: 'dev' } })).body.access_level, 'dev')
  t.equal((await api.call('GET', '/admin/users', { query: { user_id: userId, token }, headers: { 'user-agent': 'gatehouse-tests/1.0 (device A)' } })).status, 403)

  t.same((await api.logout(userId, token)).body, { message: 'Session forcefully expired' })
  t.equal((await api.validate(userId, token)).status, 401)
  t.equal((await api.logout(userId, token)).status, 400)
})

t.test('through the gateway, a body over 64 KiB answers 413 with a detail body', async t => {
  const gw = await startGateway(ADMIN)
  t.teardown(gw.close)
  const api = authClient(gw.url + '/v1/api')
  const res = await api.call('POST', '/auth/signup', { raw: JSON.stringify({ username: 'big', password: 'x'.repeat(70 * 1024) }), headers: { 'content-type': 'application/json' } })
  t.equal(res.status, 413)
  t.same(res.body, { detail: 'Request body too large' })
})

t.test('through the gateway, client mistakes are 4xx detail bodies', async t => {
  const gw = await startGateway(ADMIN)
  t.teardown(gw.close)
  const api = authClient(gw.url + '/v1/api')
  const cases: Array<[number, Promise<{ status: number, body: any }>]> = [
    [400, api.call('POST', '/auth/signup', { raw: '{"username":', headers: { 'content-type': 'application/json' } })],
    [415, api.call('POST', '/auth/signup', { raw: 'username=a', headers: { 'content-type': 'application/x-www-form-urlencoded' } })],
    [400, api.call('POST', '/auth/signup', { json: { username: { $ne: null }, password: 'velvet-harbor-93' } })],
    [400, api.call('POST', '/auth/login', { json: { username: 'a', password: 'b' } })],
    [404, api.call('GET', '/auth/get-user-id', { query: { username: 'nobody' } })],
    [404, api.call('GET', '/auth/no-such-route')],
  ]
  for (const [status, reply] of cases) {
    const res = await reply
    t.equal(res.status, status)
    t.type(res.body.detail, 'string')
  }
})

t.test('on first start the gateway writes a generated admin password to a file, names the file once, and the password works', async t => {
  const dir = await mkdtemp(path.join(tmpdir(), 'gatehouse-gw-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const env = { AUTH_DATA_FILE: path.join(dir, 'auth-db.json') }
  const first = await startGateway(env)
  const lines = first.logs.filter(l => /generated password/.test(String(l.msg)))
  t.equal(lines.length, 1, 'logged once')
  t.equal(lines[0]?.file, path.join(dir, 'admin-password'), 'the file beside the store, named in the log')
  const password = (await readFile(path.join(dir, 'admin-password'), 'utf8')).trim()
  t.match(password, /^[A-Za-z0-9_-]{24}$/)
  t.notOk(JSON.stringify(first.logs).includes(password), 'the password itself is not logged')
  const api = authClient(first.url + '/v1/api')
  t.equal((await api.login('system', password)).body.access_level, 'hush')
  await first.close()
  const second = await startGateway(env)
  t.teardown(second.close)
  t.equal(second.logs.filter(l => /generated password/.test(String(l.msg))).length, 0, 'not on the next start')
  t.equal((await authClient(second.url + '/v1/api').login('system', password)).status, 200, 'the same password still works')
})

t.test('through the gateway, AUTH_QUERY_TOKENS=false refuses query tokens (401) and header tokens work', async t => {
  const gw = await startGateway({ ...ADMIN, AUTH_QUERY_TOKENS: 'false' })
  t.teardown(gw.close)
  const api = authClient(gw.url + '/v1/api')
  await api.signup('header_user', 'quiet-lantern-58')
  const { user_id: userId, access_token: token } = (await api.login('header_user', 'quiet-lantern-58')).body
  const inQuery = await api.validate(userId, token)
  t.equal(inQuery.status, 401)
  t.match(inQuery.body.detail, /not accepted in the query string.*token header.*Authorization: Bearer/)
  const ua = { 'user-agent': 'gatehouse-tests/1.0 (device A)' }
  t.same((await api.call('GET', '/auth/validate', { query: { user_id: userId }, headers: { ...ua, token } })).body, { access_token: token, token_type: 'bearer' })
  t.equal((await api.call('GET', '/auth/sessions', { query: { user_id: userId }, headers: { ...ua, authorization: `Bearer ${token}` } })).body.length, 1)
  t.equal((await api.call('POST', '/auth/logout', { query: { user_id: userId }, headers: { token } })).status, 200)
})

t.test('through the gateway, PROXY_MIN_ACCESS_LEVEL sets who may create API keys (default member)', async t => {
  const ua = { 'user-agent': 'gatehouse-tests/1.0 (device A)' }
  for (const [env, status] of [[{}, 403], [{ PROXY_MIN_ACCESS_LEVEL: 'default' }, 201]] as const) {
    const gw = await startGateway({ ...ADMIN, ...env })
    t.teardown(gw.close)
    const api = authClient(gw.url + '/v1/api')
    await api.signup('key_user', 'quiet-lantern-58')
    const { user_id: userId, access_token: token } = (await api.login('key_user', 'quiet-lantern-58')).body
    const created = await api.call('POST', '/auth/keys', { query: { user_id: userId }, headers: { ...ua, token }, json: { name: 'ci' } })
    t.equal(created.status, status, JSON.stringify(env))
  }
})

t.test('through the gateway, AUTH_REAUTH_SECONDS=0 asks for current_password on every self-update', async t => {
  const gw = await startGateway({ ...ADMIN, AUTH_REAUTH_SECONDS: '0' })
  t.teardown(gw.close)
  const api = authClient(gw.url + '/v1/api')
  await api.signup('careful_user', 'quiet-lantern-58')
  const { user_id: userId, access_token: token } = (await api.login('careful_user', 'quiet-lantern-58')).body
  const headers = { token, 'user-agent': 'gatehouse-tests/1.0 (device A)' }
  t.equal((await api.call('PUT', '/auth/user/update', { query: { user_id: userId }, headers, json: { email: 'c@example.com' } })).status, 401)
  t.equal((await api.call('PUT', '/auth/user/update', { query: { user_id: userId }, headers, json: { email: 'c@example.com', current_password: 'quiet-lantern-58' } })).status, 200)
})

t.test('through the gateway, an admin disables and enables an account, ends its sessions and clears its lockout', async t => {
  const gw = await startGateway(ADMIN)
  t.teardown(gw.close)
  const api = authClient(gw.url + '/v1/api')
  await api.signup('managed_user', 'quiet-lantern-58')
  const user = (await api.login('managed_user', 'quiet-lantern-58')).body
  const admin = (await api.login('gate_admin', ADMIN.AUTH_ADMIN_PASSWORD, 'console/1')).body
  const as = { query: { admin_id: admin.user_id }, headers: { 'user-agent': 'console/1', authorization: `Bearer ${admin.access_token}` } }
  t.equal((await api.call('DELETE', `/admin/user/${user.user_id}/sessions`, as)).body.ended, 1)
  t.equal((await api.call('PUT', `/admin/user/${user.user_id}/status`, { ...as, json: { disabled: true } })).body.disabled, true)
  t.equal((await api.login('managed_user', 'quiet-lantern-58')).status, 401)
  t.equal((await api.call('PUT', `/admin/user/${user.user_id}/status`, { ...as, json: { disabled: false } })).body.disabled, false)
  t.same((await api.call('DELETE', `/admin/user/${user.user_id}/lockout`, as)).body, { message: 'Lockout cleared' })
  t.equal((await api.login('managed_user', 'quiet-lantern-58')).status, 200)
})

t.test('the gateway limits sign-ups per client address (10 an hour by default, AUTH_SIGNUPS_PER_ADDRESS, AUTH_SIGNUP_WINDOW_SECONDS)', async t => {
  const gw = await startGateway({ AUTH_SIGNUPS_PER_ADDRESS: '2', AUTH_SIGNUP_WINDOW_SECONDS: '120' })
  t.teardown(gw.close)
  const api = authClient(gw.url + '/v1/api')
  t.equal((await api.signup('gate_farm_1', 'velvet-harbor-93')).status, 201)
  t.equal((await api.signup('gate_farm_2', 'velvet-harbor-93')).status, 201)
  const refused = await api.signup('gate_farm_3', 'velvet-harbor-93')
  t.equal(refused.status, 429)
  t.same(refused.body, { detail: 'Too many sign-ups from this address; try again later' })
  t.ok(Number(refused.headers['retry-after']) > 100 && Number(refused.headers['retry-after']) <= 120, 'Retry-After within the 2-minute window')
})

t.test('the gateway refuses a weak password at sign-up with 400', async t => {
  const gw = await startGateway()
  t.teardown(gw.close)
  const res = await authClient(gw.url + '/v1/api').signup('gate_weak', 'password1234')
  t.equal(res.status, 400)
  t.same(res.body, { detail: 'This password is one of the most common passwords; choose a less predictable one' })
})

t.test('the gateway\'s clock options (now, sleep) must be functions', async t => {
  await t.rejects(startGateway({}, { now: 'yesterday' as any }), new TypeError('createGateway: options.now must be a function (got string)'))
  await t.rejects(startGateway({}, { sleep: 5 as any }), new TypeError('createGateway: options.sleep must be a function (got number)'))
})
