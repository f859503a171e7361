// Sign-in links (lib/auth/sign-in-links.ts, docs/console.md "Adding users"): an admin adds or resets a user by a
// one-time link; its holder chooses a password and is signed in; a link works once, for 72 hours, and a newer one
// or a changed password ends it.
import t from 'tap'
import { startConsoleHarness } from '../support/console-harness.ts'
import { ERRORS } from '../../lib/index.ts'

const NEW_PASSWORD = 'a passphrase of my own 42'

t.test('an admin adds a user by link: the holder chooses a password, is signed in, and the link works once', async t => {
  const h = await startConsoleHarness()
  t.teardown(h.close)
  await h.admin()
  const added = await h.call('POST', '/api/admin/users', { json: { username: 'Ada', email: 'ada@example.com' } })
  t.equal(added.status, 201)
  t.equal(added.body.user.username, 'Ada')
  const link = added.body.sign_in_link
  t.match(link.token, /^[0-9a-f]{24}\.[0-9a-z]+\.[A-Za-z0-9_-]{43}$/)
  t.equal(Date.parse(link.expires_at) - Date.now() > 71 * 3_600_000, true, 'it works for 72 hours')

  const weak = await h.call('POST', '/api/sign-in-link', { json: { token: link.token, password: 'password' }, cookie: null })
  t.equal(weak.status, 400, 'the password policy applies')
  const used = await h.call('POST', '/api/sign-in-link', { json: { token: link.token, password: NEW_PASSWORD }, cookie: null })
  t.equal(used.status, 200, 'a refused password left the link usable')
  t.equal(used.body.user.username, 'Ada')
  t.equal((await h.call('GET', '/api/me')).body.user.username, 'Ada', 'the holder is signed in')
  const again = await h.call('POST', '/api/sign-in-link', { json: { token: link.token, password: 'another passphrase 43' }, cookie: null })
  t.equal(again.status, 401)
  t.equal(again.body.detail, ERRORS.SIGN_IN_LINK_INVALID.message, 'a link works once')
  t.equal((await h.call('POST', '/api/login', { json: { username: 'ada', password: NEW_PASSWORD }, cookie: null })).status, 200, 'the chosen password signs in')
})

t.test('a sign-in link ends after 72 hours', async t => {
  const h = await startConsoleHarness()
  t.teardown(h.close)
  await h.admin()
  const { token } = (await h.call('POST', '/api/admin/users', { json: { username: 'late' } })).body.sign_in_link
  h.advance(72 * 3600)
  const late = await h.call('POST', '/api/sign-in-link', { json: { token, password: NEW_PASSWORD }, cookie: null })
  t.equal(late.status, 401)
  t.equal(late.body.detail, ERRORS.SIGN_IN_LINK_EXPIRED.message)
})

t.test('a reset by link: the old password and sessions end, a newer link replaces the older', async t => {
  const h = await startConsoleHarness()
  t.teardown(h.close)
  const { username, password, userId } = await h.member()
  const memberCookie = h.cookie
  await h.admin()
  const first = await h.call('POST', `/api/admin/users/${userId}/sign-in-link`, { json: {} })
  t.equal(first.status, 201)
  const second = (await h.call('POST', `/api/admin/users/${userId}/sign-in-link`, { json: {} })).body
  t.equal((await h.call('GET', '/api/me', { cookie: memberCookie })).body.signed_in, false, 'their sessions ended')
  t.equal((await h.call('POST', '/api/login', { json: { username, password }, cookie: null })).status, 401, 'the old password no longer signs in')
  const old = await h.call('POST', '/api/sign-in-link', { json: { token: first.body.token, password: NEW_PASSWORD }, cookie: null })
  t.equal(old.body.detail, ERRORS.SIGN_IN_LINK_INVALID.message, 'the newer link replaced the older')
  t.equal((await h.call('POST', '/api/sign-in-link', { json: { token: second.token, password: NEW_PASSWORD }, cookie: null })).status, 200)
})

t.test('sign-in links: only an admin makes them, with the re-auth rule, never for their own account', async t => {
  const h = await startConsoleHarness({ reauthSeconds: 60 })
  t.teardown(h.close)
  const { userId } = await h.member()
  t.equal((await h.call('POST', `/api/admin/users/${userId}/sign-in-link`, { json: {} })).status, 403, 'a member may not')
  const { userId: adminId } = await h.admin()
  t.equal((await h.call('POST', `/api/admin/users/${adminId}/sign-in-link`, { json: {} })).status, 400, 'not for the admin\'s own account')
  h.advance(61)
  const stale = await h.call('POST', `/api/admin/users/${userId}/sign-in-link`, { json: {} })
  t.same([stale.status, /current password/.test(stale.body.detail)], [401, true], 'a link resets a password: it needs a recent sign-in')
  t.equal((await h.call('POST', `/api/admin/users/${userId}/sign-in-link`, { json: { current_password: 'admin-password-for-tests' } })).status, 201)
  t.equal((await h.call('POST', '/api/admin/users/0123456789abcdef01234567/sign-in-link', { json: { current_password: 'admin-password-for-tests' } })).status, 404)
})

t.test('a forged or altered sign-in link is refused and counts as a failed login', async t => {
  const h = await startConsoleHarness()
  t.teardown(h.close)
  await h.admin()
  const { token } = (await h.call('POST', '/api/admin/users', { json: { username: 'target' } })).body.sign_in_link
  const [id, expires, mac] = token.split('.')
  const later = (parseInt(expires, 36) + 86_400).toString(36)
  for (const forged of [`${id}.${later}.${mac}`, `${id}.${expires}.${'A'.repeat(43)}`, 'not-a-link']) {
    const answer = await h.call('POST', '/api/sign-in-link', { json: { token: forged, password: NEW_PASSWORD }, cookie: null })
    t.equal(answer.body.detail, ERRORS.SIGN_IN_LINK_INVALID.message, forged.slice(0, 30))
  }
  for (let i = 0; i < 10; i++) await h.call('POST', '/api/sign-in-link', { json: { token: `${id}.${expires}.${'B'.repeat(43)}`, password: NEW_PASSWORD }, cookie: null })
  const locked = await h.call('POST', '/api/sign-in-link', { json: { token, password: NEW_PASSWORD }, cookie: null })
  t.equal(locked.status, 429, 'guessing from one address meets the login lockout')
})

t.test('a disabled user\'s link opens no session', async t => {
  const h = await startConsoleHarness()
  t.teardown(h.close)
  await h.admin()
  const added = (await h.call('POST', '/api/admin/users', { json: { username: 'gone' } })).body
  t.equal((await h.call('PUT', `/api/admin/users/${added.user.user_id}/status`, { json: { disabled: true } })).status, 200)
  const answer = await h.call('POST', '/api/sign-in-link', { json: { token: added.sign_in_link.token, password: NEW_PASSWORD }, cookie: null })
  t.equal(answer.body.detail, ERRORS.ACCOUNT_DISABLED.message)
  t.equal(answer.headers['set-cookie'], undefined)
})
