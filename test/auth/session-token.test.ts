// Where the session token may travel: the query (the seed's form, which an operator can turn off), the
// `token` header and `Authorization: Bearer`, on every route that takes a token.
import t from 'tap'
import { startAuthHarness } from '../support/auth-harness.ts'
import type { AuthHarness, TestUser } from '../support/auth-harness.ts'
import type { Reply } from '../support/auth-client.ts'
import { requestToken } from '../../lib/auth/session-token.ts'
import type { HandlerRequest } from '../../lib/index.ts'

type TokenForm = 'query' | 'header' | 'bearer'

/** Query and headers carrying `token` in the given form. */
function carry (form: TokenForm, token: string, query: Record<string, string>, device: string): { query: Record<string, string>, headers: Record<string, string> } {
  const headers: Record<string, string> = { 'user-agent': device }
  if (form === 'query') return { query: { ...query, token }, headers }
  if (form === 'header') headers.token = token
  else headers.authorization = `Bearer ${token}`
  return { query, headers }
}

/** Every route that takes a session token, called by `caller` (an admin for the admin routes) about `target`. */
function tokenRoutes (h: AuthHarness, admin: TestUser, user: TestUser): Array<[string, (form: TokenForm, token?: string) => Promise<Reply>]> {
  const asUser = (method: string, path: string, json?: unknown) => (form: TokenForm, token = user.token) =>
    h.call(method, path, { ...carry(form, token, { user_id: user.userId }, user.device), json })
  const asAdmin = (method: string, path: string, json?: unknown, query: Record<string, string> = { admin_id: admin.userId }) => (form: TokenForm, token = admin.token) =>
    h.call(method, path, { ...carry(form, token, query, admin.device), json })
  return [
    ['GET /auth/validate', asUser('GET', '/auth/validate')],
    ['GET /auth/sessions', asUser('GET', '/auth/sessions')],
    ['GET /admin/users', asAdmin('GET', '/admin/users', undefined, { user_id: admin.userId })],
    ['GET /admin/user/{id}', asAdmin('GET', `/admin/user/${user.userId}`)],
    ['PUT /admin/user/{id}', asAdmin('PUT', `/admin/user/${user.userId}`, { email: 'set@example.com' })],
    ['PUT /admin/user/{id}/access-level', asAdmin('PUT', `/admin/user/${user.userId}/access-level`, { access_level: 'member' })],
    ['PUT /admin/user/{id}/status', asAdmin('PUT', `/admin/user/${user.userId}/status`, { disabled: false })],
    ['DELETE /admin/user/{id}/lockout', asAdmin('DELETE', `/admin/user/${user.userId}/lockout`)],
    ['DELETE /auth/sessions', asUser('DELETE', '/auth/sessions')],
    ['DELETE /admin/user/{id}/sessions', asAdmin('DELETE', `/admin/user/${user.userId}/sessions`)],
  ]
}

t.test('every route that takes the session token in the query also takes it in the token header or as Authorization: Bearer', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const admin = await h.admin()
  const user = await h.newUser()
  for (const form of ['query', 'header', 'bearer'] as const) {
    for (const [name, send] of tokenRoutes(h, admin, user)) {
      const res = await send(form)
      t.equal(res.status, 200, `${name}, token in the ${form}`)
    }
    // The last route ended the user's sessions: log in again for the next form.
    user.token = (await h.login(user.username, user.password)).body.access_token
  }
  for (const form of ['header', 'bearer'] as const) {
    const login = await h.login(user.username, user.password, 'leaving/1')
    const res = await h.call('POST', '/auth/logout', { ...carry(form, login.body.access_token, { user_id: user.userId }, 'leaving/1') })
    t.equal(res.status, 200, `POST /auth/logout, token in the ${form}`)
    t.equal((await h.validate(user.userId, login.body.access_token, 'leaving/1')).status, 401, 'and the session ended')
  }
})

t.test('validate with a header token works, and answers that token', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const u = await h.newUser()
  const forms: Array<Record<string, string>> = [{ token: u.token }, { authorization: `Bearer ${u.token}` }, { authorization: `bearer   ${u.token}  ` }]
  for (const headers of forms) {
    const res = await h.call('GET', '/auth/validate', { query: { user_id: u.userId }, headers: { 'user-agent': u.device, ...headers } })
    t.equal(res.status, 200, JSON.stringify(Object.keys(headers)))
    t.same(res.body, { access_token: u.token, token_type: 'bearer' })
  }
  const wrong = await h.call('GET', '/auth/validate', { query: { user_id: u.userId }, headers: { 'user-agent': 'thief/1', token: u.token } })
  t.same([wrong.status, wrong.body], [401, { detail: 'Device mismatch' }], 'the device binding holds for header tokens')
})

t.test('self-update takes the token header or Authorization: Bearer', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const u = await h.newUser()
  const bearer = await h.call('PUT', '/auth/user/update', { query: { user_id: u.userId }, headers: { 'user-agent': u.device, authorization: `Bearer ${u.token}` }, json: { email: 'b@example.com' } })
  t.equal(bearer.status, 200)
  t.equal(bearer.body.email, 'b@example.com')
})

t.test('a session token sent in two forms that disagree is refused (401), whichever form is right', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const u = await h.newUser()
  const other = await h.newUser()
  const conflicts: Array<[Record<string, string>, Record<string, string>]> = [
    [{ token: u.token }, { token: other.token }],
    [{ token: other.token }, { token: u.token }],
    [{ token: u.token }, { authorization: `Bearer ${other.token}` }],
    [{}, { token: u.token, authorization: `Bearer ${other.token}` }],
    [{}, { token: 'garbage', authorization: `Bearer ${u.token}` }],
  ]
  for (const [query, headers] of conflicts) {
    const res = await h.call('GET', '/auth/validate', { query: { user_id: u.userId, ...query }, headers: { 'user-agent': u.device, ...headers } })
    t.equal(res.status, 401, JSON.stringify({ query: Object.keys(query), headers: Object.keys(headers) }))
    t.same(res.body, { detail: 'The session token was sent in more than one form, with different values' })
  }
  const same = await h.call('GET', '/auth/validate', { query: { user_id: u.userId, token: u.token }, headers: { 'user-agent': u.device, token: u.token, authorization: `Bearer ${u.token}` } })
  t.equal(same.status, 200, 'the same token in every form is one token')
  const basic = await h.call('GET', '/auth/validate', { query: { user_id: u.userId, token: u.token }, headers: { 'user-agent': u.device, authorization: 'Basic dXNlcjpwYXNz' } })
  t.equal(basic.status, 200, 'another Authorization scheme is not a session token')
})

t.test('with query tokens turned off, a token in the query is refused with a 401 that says to use a header', async t => {
  const h = await startAuthHarness({ queryTokens: false })
  t.teardown(h.close)
  const admin = await h.admin()
  const user = await h.newUser()
  const before = await h.snapshot()
  for (const [name, send] of tokenRoutes(h, admin, user)) {
    const res = await send('query')
    t.equal(res.status, 401, name)
    t.same(res.body, { detail: 'Session tokens are not accepted in the query string: send the token in the token header or as Authorization: Bearer' }, name)
  }
  const both = await h.call('GET', '/auth/validate', { query: { user_id: user.userId, token: user.token }, headers: { 'user-agent': user.device, token: user.token } })
  t.equal(both.status, 401, 'refused even beside a header form: the token has been in a URL')
  const logout = await h.logout(user.userId, user.token)
  t.equal(logout.status, 401, 'logout too')
  t.equal(await h.snapshot(), before, 'nothing changed')
  for (const form of ['header', 'bearer'] as const) {
    for (const [name, send] of tokenRoutes(h, admin, user)) t.equal((await send(form)).status, 200, `${name}, token in the ${form}`)
    user.token = (await h.login(user.username, user.password)).body.access_token
  }
})

t.test('logout without a token in any form is a 400', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const u = await h.newUser()
  const none: Array<Record<string, string>> = [{}, { token: '' }, { authorization: 'Bearer' }, { authorization: 'Basic dXNlcjpwYXNz' }]
  for (const headers of none) {
    const res = await h.call('POST', '/auth/logout', { query: { user_id: u.userId }, headers })
    t.equal(res.status, 400, JSON.stringify(headers))
    t.match(res.body.detail, /token.*required/)
  }
})

t.test('requestToken: one token from the query, the token header or Authorization: Bearer', async t => {
  const req = (headers: Record<string, string>): HandlerRequest => ({ method: 'GET', path: '/', params: {}, query: {}, headers })
  t.equal(requestToken(req({}), undefined, true), undefined, 'none')
  t.equal(requestToken(req({}), '', true), undefined, 'an empty query value is no token')
  t.equal(requestToken(req({}), 'q', true), 'q')
  t.equal(requestToken(req({ token: 'h' }), undefined, false), 'h')
  t.equal(requestToken(req({ authorization: 'BEARER b' }), undefined, false), 'b', 'the scheme is case-insensitive')
  t.equal(requestToken(req({ authorization: 'Bearer ' }), undefined, true), undefined, 'a Bearer header without credentials is no token')
  t.equal(requestToken(req({ authorization: 'Bearerx y' }), undefined, true), undefined, 'not the Bearer scheme')
  t.equal(requestToken(req({ token: 'x', authorization: 'Bearer x' }), 'x', true), 'x')
  t.throws(() => requestToken(req({ token: 'x' }), 'y', true), { code: 'CONFLICTING_TOKENS', status: 401 })
  t.throws(() => requestToken(req({}), 'q', false), { code: 'QUERY_TOKENS_DISABLED', status: 401 })
})
