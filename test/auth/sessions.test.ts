// GET /auth/validate, POST /auth/logout and the caller's own sessions (GET/DELETE /auth/sessions) over HTTP:
// device binding, lifetime, ending sessions.
import t from 'tap'
import { startAuthHarness } from '../support/auth-harness.ts'
import type { AuthHarness, TestUser } from '../support/auth-harness.ts'
import { DEVICE } from '../support/auth-client.ts'
import type { Reply } from '../support/auth-client.ts'
import { newToken } from '../../lib/auth/tokens.ts'

t.test('validate answers the same token, type bearer, while the session lives', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const u = await h.newUser()
  for (let i = 0; i < 3; i++) {
    const res = await h.validate(u.userId, u.token)
    t.equal(res.status, 200)
    t.same(res.body, { access_token: u.token, token_type: 'bearer' })
  }
})

t.test('validate requires the user-agent header (400)', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const u = await h.newUser()
  const res = await h.call('GET', '/auth/validate', { query: { user_id: u.userId, token: u.token } })
  t.equal(res.status, 400)
  t.same(res.body, { detail: 'The user-agent header is required' })
})

t.test('validate from another device answers 401 Device mismatch', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const u = await h.newUser()
  const res = await h.validate(u.userId, u.token, 'a-different-browser/1.0')
  t.equal(res.status, 401)
  t.same(res.body, { detail: 'Device mismatch' })
  t.equal((await h.validate(u.userId, u.token)).status, 200, 'the session itself lives on')
})

t.test('a session expires 60 minutes after it was issued, however often it is used', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const u = await h.newUser()
  h.advance(30 * 60)
  t.equal((await h.validate(u.userId, u.token)).status, 200)
  h.advance(29 * 60 + 59)
  t.equal((await h.validate(u.userId, u.token)).status, 200, 'alive at 59:59')
  h.advance(1)
  const res = await h.validate(u.userId, u.token)
  t.equal(res.status, 401, 'expired at 60:00')
  t.same(res.body, { detail: 'Token expired' })
  t.ok(h.events.includes('session_expired'))
  const again = await h.validate(u.userId, u.token)
  t.equal(again.status, 401, 'and stays dead')
})

t.test('the session lifetime is configurable', async t => {
  const h = await startAuthHarness({ sessionTtlSeconds: 5 })
  t.teardown(h.close)
  const u = await h.newUser()
  h.advance(4)
  t.equal((await h.validate(u.userId, u.token)).status, 200)
  h.advance(1)
  t.equal((await h.validate(u.userId, u.token)).status, 401)
})

t.test('validate answers 401 for a missing, unknown, malformed or someone else\'s token', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const u = await h.newUser()
  const other = await h.newUser()
  const cases: Array<[string, Record<string, string>, string]> = [
    ['missing token', { user_id: u.userId }, 'A session token is required'],
    ['empty token', { user_id: u.userId, token: '' }, 'A session token is required'],
    ['unknown token', { user_id: u.userId, token: newToken() }, 'No active sessions'],
    ['malformed token', { user_id: u.userId, token: 'not-a-token' }, 'No active sessions'],
    ['another user\'s token', { user_id: u.userId, token: other.token }, 'Invalid token'],
    ['a token for a user id that does not exist', { user_id: 'f'.repeat(24), token: u.token }, 'Invalid token'],
  ]
  for (const [name, query, detail] of cases) {
    const res = await h.call('GET', '/auth/validate', { query, headers: { 'user-agent': DEVICE } })
    t.equal(res.status, 401, name)
    t.same(res.body, { detail }, name)
  }
})

t.test('a user_id that cannot exist is answered like an unknown session: 401 on validate, "No active sessions" on logout', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const u = await h.newUser()
  for (const id of ['', 'short', 'z'.repeat(24), '{"$ne":null}', 'x'.repeat(2000)]) {
    for (const token of [u.token, newToken(), 'not-a-token']) {
      const res = await h.validate(id, token)
      t.equal(res.status, 401, `validate ${id.slice(0, 30)}`)
      t.same(res.body, { detail: token === u.token ? 'Invalid token' : 'No active sessions' }, 'as for a well-formed id that is not the token\'s')
      const out = await h.logout(id, token)
      t.equal(out.status, 400, `logout ${id.slice(0, 30)}`)
      t.same(out.body, { detail: 'No active sessions' })
    }
  }
  t.equal((await h.validate(u.userId, u.token)).status, 200, 'the real session is untouched')
  t.equal((await h.validate(u.userId.toUpperCase(), u.token)).status, 200, 'an upper-case id is the same id')
})

t.test('logout ends the named session and answers "Session forcefully expired"', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const u = await h.newUser()
  const res = await h.logout(u.userId, u.token)
  t.equal(res.status, 200)
  t.same(res.body, { message: 'Session forcefully expired' })
  t.equal((await h.validate(u.userId, u.token)).status, 401, 'the token no longer validates')
  t.ok(h.events.includes('session_ended'))
})

t.test('logout ends only the named session', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const a = await h.newUser({ username: 'two_devices' })
  const login = await h.login('two_devices', a.password, 'laptop/1.0')
  t.equal((await h.logout(a.userId, a.token)).status, 200)
  t.equal((await h.validate(a.userId, login.body.access_token, 'laptop/1.0')).status, 200, 'the laptop stays logged in')
})

t.test('logout without an active session answers 400 No active sessions', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const u = await h.newUser()
  const other = await h.newUser()
  t.equal((await h.logout(u.userId, u.token)).status, 200)
  const cases: Array<[string, string, string]> = [
    ['already logged out', u.userId, u.token],
    ['unknown token', u.userId, newToken()],
    ['someone else\'s token', u.userId, other.token],
    ['malformed token', u.userId, '$where'],
  ]
  for (const [name, userId, token] of cases) {
    const res = await h.logout(userId, token)
    t.equal(res.status, 400, name)
    t.same(res.body, { detail: 'No active sessions' }, name)
  }
  t.equal((await h.validate(other.userId, other.token, other.device)).status, 200, 'the other user was not logged out')
})

t.test('logout of an expired session answers 400 No active sessions', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const u = await h.newUser()
  h.advance(3600)
  const res = await h.logout(u.userId, u.token)
  t.equal(res.status, 400)
  t.same(res.body, { detail: 'No active sessions' })
})

t.test('logout needs user_id and token (400 otherwise)', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const u = await h.newUser()
  t.equal((await h.call('POST', '/auth/logout', { query: { user_id: u.userId } })).status, 400)
  t.equal((await h.call('POST', '/auth/logout', { query: { token: u.token } })).status, 400)
  t.equal((await h.validate(u.userId, u.token)).status, 200)
})

t.test('concurrent logouts of one session: one ends it, the others find no session', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const u = await h.newUser()
  const replies = await Promise.all(Array.from({ length: 5 }, () => h.logout(u.userId, u.token)))
  t.equal(replies.filter(r => r.status === 200).length, 1)
  t.equal(replies.filter(r => r.status === 400).length, 4)
})

const listSessions = (h: AuthHarness, u: TestUser, device = u.device): Promise<Reply> =>
  h.call('GET', '/auth/sessions', { query: { user_id: u.userId }, headers: { 'user-agent': device, token: u.token } })

t.test('a user lists their live sessions: device, created_at, expires_at, which one is current; never a token or digest', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const u = await h.newUser({ username: 'lister' })
  h.advance(60)
  const phone = await h.login('lister', u.password, 'phone/1.0')
  h.advance(60)
  await h.login('lister', u.password, 'tablet/1.0')
  await h.newUser({ username: 'someone_else' })
  h.advance(3600 - 120)
  const res = await listSessions(h, { ...u, token: phone.body.access_token, device: 'phone/1.0' })
  t.equal(res.status, 200)
  t.same(res.body.map((s: { device: string }) => s.device), ['tablet/1.0', 'phone/1.0'], 'newest first; the first session has expired and is not listed')
  t.same(Object.keys(res.body[0]).sort(), ['created_at', 'current', 'device', 'expires_at'])
  t.same(res.body.map((s: { current: boolean }) => s.current), [false, true])
  const phoneRow = res.body[1]
  t.match(phoneRow.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  t.equal(Date.parse(phoneRow.expires_at) - Date.parse(phoneRow.created_at), 3600 * 1000)
  const stored = await h.store.sessions.listByUser(u.userId)
  t.equal(phoneRow.created_at, stored.find(s => s.device === 'phone/1.0')?.createdAt.toISOString(), 'the login time')
  for (const secret of [u.token, phone.body.access_token, ...stored.map(s => s.tokenHash)]) t.notOk(res.text.includes(secret), 'no token or digest')
})

t.test('a user ends all their sessions but the current one', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const u = await h.newUser({ username: 'ender' })
  const phone = await h.login('ender', u.password, 'phone/1.0')
  const tablet = await h.login('ender', u.password, 'tablet/1.0')
  const bystander = await h.newUser()
  const res = await h.call('DELETE', '/auth/sessions', { query: { user_id: u.userId }, headers: { 'user-agent': u.device, authorization: `Bearer ${u.token}` } })
  t.equal(res.status, 200)
  t.same(res.body, { message: 'Other sessions ended', ended: 2 })
  t.equal((await h.validate(u.userId, u.token)).status, 200, 'the caller stays logged in')
  t.equal((await h.validate(u.userId, phone.body.access_token, 'phone/1.0')).status, 401)
  t.equal((await h.validate(u.userId, tablet.body.access_token, 'tablet/1.0')).status, 401)
  t.equal((await h.validate(bystander.userId, bystander.token)).status, 200, 'other users keep theirs')
  t.same((await listSessions(h, u)).body.map((s: { device: string }) => s.device), [u.device])
  t.same((await h.call('DELETE', '/auth/sessions', { query: { user_id: u.userId }, headers: { 'user-agent': u.device, token: u.token } })).body, { message: 'Other sessions ended', ended: 0 })
})

t.test('the sessions routes need the user-agent (400) and a live session of the caller on the same device (401)', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const u = await h.newUser()
  const other = await h.newUser()
  for (const method of ['GET', 'DELETE']) {
    const call = (query: Record<string, string>, headers: Record<string, string>): Promise<Reply> => h.call(method, '/auth/sessions', { query, headers })
    const noAgent = await call({ user_id: u.userId }, { token: u.token })
    t.same([noAgent.status, noAgent.body], [400, { detail: 'The user-agent header is required' }], `${method} without user-agent`)
    const cases: Array<[string, Promise<Reply>, string]> = [
      ['no token', call({ user_id: u.userId }, { 'user-agent': u.device }), 'A session token is required'],
      ['another device', call({ user_id: u.userId }, { 'user-agent': 'thief/1', token: u.token }), 'Device mismatch'],
      ['someone else\'s user_id', call({ user_id: other.userId }, { 'user-agent': u.device, token: u.token }), 'Invalid token'],
      ['an id that cannot exist', call({ user_id: 'nope' }, { 'user-agent': u.device, token: u.token }), 'Invalid token'],
    ]
    for (const [name, reply, detail] of cases) {
      const res = await reply
      t.same([res.status, res.body], [401, { detail }], `${method} ${name}`)
    }
  }
  t.equal((await listSessions(h, other)).body.length, 1, 'nobody\'s sessions were ended')
})
