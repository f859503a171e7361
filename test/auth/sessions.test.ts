// GET /auth/validate and POST /auth/logout over HTTP: device binding, lifetime, ending sessions.
import t from 'tap'
import { startAuthHarness } from '../support/auth-harness.ts'
import { DEVICE } from '../support/auth-client.ts'
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
