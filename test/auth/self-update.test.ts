// PUT /auth/user/update over HTTP: header token, same device, uniqueness, password change effects.
import t from 'tap'
import { startAuthHarness } from '../support/auth-harness.ts'
import type { AuthHarness, TestUser } from '../support/auth-harness.ts'
import type { Reply } from '../support/auth-client.ts'

function update (h: AuthHarness, u: TestUser, json: unknown, overrides: { token?: string, device?: string, userId?: string } = {}): Promise<Reply> {
  const headers: Record<string, string> = {}
  if (overrides.token !== '') headers.token = overrides.token ?? u.token
  if (overrides.device !== '') headers['user-agent'] = overrides.device ?? u.device
  return h.call('PUT', '/auth/user/update', { query: { user_id: overrides.userId ?? u.userId }, headers, json })
}

t.test('self-update changes username, email and password and answers the updated user', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const u = await h.newUser({ username: 'before' })
  const res = await update(h, u, { username: 'After', email: 'New@Mail.example', password: 'brand-new-password' })
  t.equal(res.status, 200)
  t.same(Object.keys(res.body).sort(), ['access_level', 'date_joined', 'email', 'username'])
  t.match(res.body, { username: 'After', email: 'new@mail.example', access_level: 'default', date_joined: /Z$/ })
  t.equal((await h.login('before', 'brand-new-password')).status, 401, 'the old name is gone')
  t.equal((await h.login('after', u.password, 'elsewhere/1')).status, 401, 'the old password is gone')
  t.equal((await h.login('after', 'brand-new-password', 'elsewhere/1')).status, 200)
})

t.test('self-update of one field leaves the others as they were', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  await h.signup('keeper', 'velvet-harbor-93', 'keep@example.com')
  const login = await h.login('keeper', 'velvet-harbor-93')
  const u: TestUser = { username: 'keeper', password: 'velvet-harbor-93', userId: login.body.user_id, token: login.body.access_token, device: 'gatehouse-tests/1.0 (device A)' }
  const res = await update(h, u, { email: 'other@example.com' })
  t.match(res.body, { username: 'keeper', email: 'other@example.com', date_joined: login.body.date_joined })
  t.equal((await update(h, u, { email: null })).body.email, null, 'null clears the email')
  t.equal((await h.login('keeper', 'velvet-harbor-93', 'second/1')).status, 200, 'password unchanged')
})

t.test('self-update needs the token header, the same device and the caller\'s own user_id (401)', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const u = await h.newUser()
  const other = await h.newUser()
  const before = await h.snapshot()
  const cases: Array<[string, Promise<Reply>, string]> = [
    ['no token header', update(h, u, { email: 'x@example.com' }, { token: '' }), 'A session token is required'],
    ['another device', update(h, u, { email: 'x@example.com' }, { device: 'thief/1.0' }), 'Device mismatch'],
    ['someone else\'s user_id', update(h, u, { email: 'x@example.com' }, { userId: other.userId }), 'Invalid token'],
    ['a dead token', update(h, u, { email: 'x@example.com' }, { token: 'A'.repeat(43) }), 'No active sessions'],
  ]
  for (const [name, reply, detail] of cases) {
    const res = await reply
    t.equal(res.status, 401, name)
    t.same(res.body, { detail }, name)
  }
  const inQuery = await h.call('PUT', '/auth/user/update', { query: { user_id: u.userId, token: u.token }, headers: { 'user-agent': u.device }, json: { email: 'x@example.com' } })
  t.equal(inQuery.status, 400, 'a token in the query string is refused: it belongs in the header')
  t.match(inQuery.body.detail, /token.*not allowed/)
  t.equal(await h.snapshot(), before, 'nobody was changed')
})

t.test('self-update requires the user-agent header (400)', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const u = await h.newUser()
  const res = await update(h, u, { email: 'x@example.com' }, { device: '' })
  t.equal(res.status, 400)
  t.same(res.body, { detail: 'The user-agent header is required' })
})

t.test('self-update keeps usernames unique case-insensitively (400), but one may change the case of one\'s own', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  await h.newUser({ username: 'taken_name' })
  const u = await h.newUser({ username: 'my_name' })
  for (const clash of ['taken_name', 'TAKEN_NAME', 'System']) {
    const res = await update(h, u, { username: clash })
    t.equal(res.status, 400, clash)
    t.same(res.body, { detail: 'Username already exists' })
  }
  const recase = await update(h, u, { username: 'My_Name' })
  t.equal(recase.status, 200)
  t.equal(recase.body.username, 'My_Name')
})

t.test('self-update with an empty body, no body or unknown fields is a 400', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const u = await h.newUser()
  const before = await h.snapshot()
  const empty = await update(h, u, {})
  t.equal(empty.status, 400)
  t.match(empty.body.detail, /Nothing to update/)
  const none = await h.call('PUT', '/auth/user/update', { query: { user_id: u.userId }, headers: { token: u.token, 'user-agent': u.device } })
  t.equal(none.status, 400)
  const escalate = await update(h, u, { access_level: 'hush' })
  t.equal(escalate.status, 400, 'no one raises their own level')
  t.match(escalate.body.detail, /access_level/)
  t.equal((await update(h, u, { username: 'ab' })).status, 400)
  t.equal((await update(h, u, { password: 'short' })).status, 400)
  t.equal((await update(h, u, { email: 'nope' })).status, 400)
  t.equal(await h.snapshot(), before)
})

t.test('a self password change ends the user\'s other sessions and keeps the caller\'s', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const u = await h.newUser({ username: 'changer' })
  const phone = await h.login('changer', u.password, 'phone/1.0')
  const tablet = await h.login('changer', u.password, 'tablet/1.0')
  const res = await update(h, u, { password: 'a-new-password' })
  t.equal(res.status, 200)
  t.equal((await h.validate(u.userId, u.token, u.device)).status, 200, 'the caller stays logged in')
  t.equal((await h.validate(u.userId, phone.body.access_token, 'phone/1.0')).status, 401, 'phone logged out')
  t.equal((await h.validate(u.userId, tablet.body.access_token, 'tablet/1.0')).status, 401, 'tablet logged out')
  t.equal(h.events.filter(e => e === 'session_ended').length, 2)
})

t.test('changing only the email or username ends no session', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const u = await h.newUser({ username: 'renamer' })
  const phone = await h.login('renamer', u.password, 'phone/1.0')
  await update(h, u, { username: 'renamed', email: 'r@example.com' })
  t.equal((await h.validate(u.userId, phone.body.access_token, 'phone/1.0')).status, 200)
})

t.test('a self-update to a common password, or one containing the (new) username, is refused with 400 and a clear detail', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const u = await h.newUser({ username: 'updater' })
  const common = await update(h, u, { password: 'Password123' })
  t.equal(common.status, 400)
  t.same(common.body, { detail: 'This password is one of the most common passwords; choose a less predictable one' })
  const own = await update(h, u, { password: 'i-am-UPDATER-now' })
  t.equal(own.status, 400)
  t.same(own.body, { detail: 'The password must not contain the username' })
  const renamed = await update(h, u, { username: 'renamed_one', password: 'renamed_one-2030' })
  t.equal(renamed.status, 400, 'checked against the username the update gives')
  t.same(renamed.body, { detail: 'The password must not contain the username' })
  t.equal((await h.login('updater', u.password)).status, 200, 'nothing changed')
})
