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

const REAUTH = 'Changing a password, email or username, an access level, status or limits, creating an API key, or as an admin deleting one or ending sessions or a lockout, needs a fresh login or the current password (current_password)'

t.test('a stolen session token cannot change the password, email or username without a recent login', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const u = await h.newUser({ username: 'owner' })
  const phone = await h.login('owner', u.password, 'phone/1.0')
  h.advance(600)
  const before = await h.snapshot()
  for (const change of [{ password: 'attacker-password' }, { email: 'attacker@example.com' }, { username: 'stolen' }]) {
    const res = await update(h, u, change)
    t.equal(res.status, 401, JSON.stringify(change))
    t.same(res.body, { detail: REAUTH })
  }
  t.equal(await h.snapshot(), before, 'nothing changed')
  t.equal((await h.validate(u.userId, phone.body.access_token, 'phone/1.0')).status, 200, 'the owner\'s other devices stay logged in')
  t.equal((await h.validate(u.userId, u.token)).status, 200, 'the session itself still works for everything else')
})

t.test('a session younger than reauthSeconds (default 600) changes them without current_password', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const u = await h.newUser({ username: 'fresh' })
  h.advance(599)
  const res = await update(h, u, { email: 'fresh@example.com' })
  t.equal(res.status, 200)
  t.equal(res.body.email, 'fresh@example.com')
  const relogin = await h.login('fresh', u.password, 'laptop/2.0')
  h.advance(1)
  t.equal((await update(h, u, { email: 'x@example.com' })).status, 401, 'the first session is 600 s old now')
  const again = await update(h, { ...u, token: relogin.body.access_token, device: 'laptop/2.0' }, { email: 'again@example.com' })
  t.equal(again.status, 200, 'a new login is a recent one')
})

t.test('on an older session the right current_password allows the change and is never echoed', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const u = await h.newUser({ username: 'prover' })
  const phone = await h.login('prover', u.password, 'phone/1.0')
  h.advance(3000)
  const res = await update(h, u, { password: 'brand-new-password', email: 'p@example.com', current_password: u.password })
  t.equal(res.status, 200)
  t.same(Object.keys(res.body).sort(), ['access_level', 'date_joined', 'email', 'username'])
  t.notOk(res.text.includes(u.password))
  t.equal((await h.login('prover', 'brand-new-password', 'new/1')).status, 200, 'the new password works')
  t.equal((await h.validate(u.userId, phone.body.access_token, 'phone/1.0')).status, 401, 'other sessions ended as with any password change')
  t.equal((await h.validate(u.userId, u.token)).status, 200, 'the caller\'s stays')
})

t.test('a wrong current_password is refused (401), even on a recent session, and counted by the login limiter', async t => {
  const h = await startAuthHarness({ loginLimits: { perUsername: 3 } })
  t.teardown(h.close)
  const u = await h.newUser({ username: 'guessed' })
  const before = await h.snapshot()
  for (let i = 0; i < 3; i++) {
    const res = await update(h, u, { password: 'attacker-password', current_password: `guess-${i}` })
    t.equal(res.status, 401)
    t.same(res.body, { detail: 'current_password is not the current password' })
  }
  const locked = await update(h, u, { password: 'attacker-password', current_password: u.password })
  t.equal(locked.status, 429, 'guessing through self-update meets the same limit as login')
  t.match(locked.headers['retry-after'], /^\d+$/)
  t.equal((await h.login('guessed', u.password, 'other/1')).status, 429, 'the counter is the login limiter\'s own')
  t.equal(await h.snapshot(), before)
  h.advance(900)
  const later = await update(h, { ...u, token: (await h.login('guessed', u.password)).body.access_token }, { email: 'g@example.com', current_password: u.password })
  t.equal(later.status, 200, 'after the window the right password works')
})

t.test('the reauthentication window is configurable; reauthSeconds 0 always asks for current_password', async t => {
  const h = await startAuthHarness({ reauthSeconds: 0 })
  t.teardown(h.close)
  const u = await h.newUser()
  t.same((await update(h, u, { email: 'a@example.com' })).body, { detail: REAUTH }, 'even a session just opened')
  t.equal((await update(h, u, { email: 'a@example.com', current_password: u.password })).status, 200)
  const short = await startAuthHarness({ reauthSeconds: 30 })
  t.teardown(short.close)
  const v = await short.newUser()
  short.advance(29)
  t.equal((await update(short, v, { email: 'b@example.com' })).status, 200)
  short.advance(1)
  t.equal((await update(short, v, { email: 'c@example.com' })).status, 401)
})

t.test('current_password alone updates nothing (400), and on the admin update route it is the admin\'s own, checked', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const u = await h.newUser()
  const alone = await update(h, u, { current_password: u.password })
  t.equal(alone.status, 400)
  t.match(alone.body.detail, /Nothing to update/)
  const admin = await h.admin()
  const res = await h.call('PUT', `/admin/user/${u.userId}`, { query: { admin_id: admin.userId, token: admin.token }, headers: { 'user-agent': admin.device }, json: { email: 'x@example.com', current_password: 'x' } })
  t.same([res.status, res.body], [401, { detail: 'current_password is not the current password' }], 'the target\'s password is no proof of the admin')
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
