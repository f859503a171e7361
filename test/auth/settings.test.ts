// Gateway-wide settings (lib/auth/settings.ts, docs/console.md "Sign-up and lookup"): an admin closes or opens public
// sign-up and may require a session for user lookup; the stored choice wins over the configured default.
import t from 'tap'
import { startConsoleHarness } from '../support/console-harness.ts'

const signup = (h: Awaited<ReturnType<typeof startConsoleHarness>>, username: string) =>
  h.raw('POST', '/v1/api/auth/signup', { 'content-type': 'application/json' }, JSON.stringify({ username, password: 'correct horse battery' }))

t.test('an admin closes public sign-up in the console: sign-up answers 403 SIGNUP_CLOSED until it is opened again', async t => {
  const h = await startConsoleHarness()
  t.teardown(h.close)
  const { userId } = await h.admin()
  const before = await h.call('GET', '/api/admin/settings')
  t.same(before.body.public_signup, { value: true, configured: true, set_by: null, set_at: null }, 'open by default, as the seed has it')
  const closed = await h.call('PUT', '/api/admin/settings', { json: { public_signup: false } })
  t.equal(closed.status, 200)
  t.match(closed.body.public_signup, { value: false, configured: true, set_by: userId })
  t.match([(await signup(h, 'walk_in')).status, (await signup(h, 'walk_in')).body.detail], [403, /Sign-up is closed/])
  const reopened = await h.call('PUT', '/api/admin/settings', { json: { public_signup: true } })
  t.same(reopened.body.public_signup, { value: true, configured: true, set_by: null, set_at: null }, 'set back to the default, it is the default again')
  t.equal((await signup(h, 'walk_in')).status, 201)
})

t.test('an admin requires a session for user lookup: search-users and get-user-id refuse anonymous callers', async t => {
  const h = await startConsoleHarness()
  t.teardown(h.close)
  await h.admin()
  const lookup = () => h.raw('GET', '/v1/api/auth/get-user-id?username=system')
  t.equal((await lookup()).status, 200, 'public by default, as the seed has it')
  t.equal((await h.call('PUT', '/api/admin/settings', { json: { public_lookup: false } })).status, 200)
  t.equal((await lookup()).status, 401)
  t.equal((await h.raw('GET', '/v1/api/auth/search-users?query=sys')).status, 401)
})

t.test('settings: only an admin, with a recent sign-in or the password, and a body that names a setting', async t => {
  const h = await startConsoleHarness({ reauthSeconds: 60 })
  t.teardown(h.close)
  await h.member()
  t.equal((await h.call('PUT', '/api/admin/settings', { json: { public_signup: false } })).status, 403, 'a member may not')
  t.equal((await h.call('GET', '/api/admin/settings')).status, 403)
  await h.admin()
  t.equal((await h.call('PUT', '/api/admin/settings', { json: {} })).status, 400)
  t.equal((await h.call('PUT', '/api/admin/settings', { json: { public_signup: 'false' } })).status, 400, 'a string is not a boolean')
  t.equal((await h.call('PUT', '/api/admin/settings', { json: { open_bar: true } })).status, 400)
  h.advance(61)
  t.equal((await h.call('PUT', '/api/admin/settings', { json: { public_signup: false } })).status, 401, 'an old sign-in needs the password')
  t.equal((await h.call('PUT', '/api/admin/settings', { json: { public_signup: false, current_password: 'admin-password-for-tests' } })).status, 200)
  t.equal((await signup(h, 'late')).status, 403)
})
