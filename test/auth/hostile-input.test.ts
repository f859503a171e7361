// Hostile input on every accounts route, on both hosts (Hapi as the gateway mounts it, and lib's
// node:http listener): each answer is a 4xx with a `detail` body, never a 500, and the store is unchanged.
import t from 'tap'
import type { Test } from 'tap'
import { startAuthHarness } from '../support/auth-harness.ts'
import type { AuthHarness, TestUser } from '../support/auth-harness.ts'
import type { Reply, RequestOptions } from '../support/auth-client.ts'

/** Values of the wrong JSON type, and MongoDB-operator objects, for string fields. */
const WRONG_TYPES: unknown[] = [1, 1.5, -0, true, false, [], ['a'], {}, { $ne: null }, { $gt: '' }, { $where: 'sleep(1000)' }, { $regex: '.*' }, { $in: ['system'] }]
/** Strings that mean something to a database or a regex engine. */
const OPERATOR_STRINGS = ['$where', '{"$ne": null}', '$ne', "'; return true; var x='", 'this.passwordHash.length > 0', '.*', '^system$', '$regex', 'a||b', '\u0000system']
/** Usernames with unicode and control characters. */
const ODD_USERNAMES = ['ålice', 'аlice' /* Cyrillic а */, 'alice\u200b', 'ali\u202Ece', 'a\u0000b', 'line\nbreak', 'tab\tbed', 'bell\u0007', 'del\u007f', '🔑🔑🔑', 'ｆｕｌｌ', 'e\u0301te', '\ud800bad']

const limits = { perUsername: 1_000_000, perAddress: 1_000_000 }

interface Ctx { h: AuthHarness, admin: TestUser, user: TestUser }

/** Every route with a hostile body, as a function of a body. */
function bodyRoutes ({ h, admin, user }: Ctx): Array<[string, (json: unknown) => Promise<Reply>, Record<string, unknown>]> {
  return [
    ['signup', json => h.call('POST', '/auth/signup', { json }), { username: 'newcomer', password: 'velvet-harbor-93', email: 'n@example.com' }],
    ['login', json => h.call('POST', '/auth/login', { json, headers: { 'user-agent': 'hostile/1' } }), { username: user.username, password: user.password }],
    ['self-update', json => h.call('PUT', '/auth/user/update', { query: { user_id: user.userId }, headers: { token: user.token, 'user-agent': user.device }, json }), { username: 'renamed', password: 'password456', email: 'r@example.com' }],
    ['admin update', json => h.call('PUT', `/admin/user/${user.userId}`, { query: { admin_id: admin.userId, token: admin.token }, headers: { 'user-agent': admin.device }, json }), { username: 'renamed', password: 'password456', email: 'r@example.com' }],
    ['access level', json => h.call('PUT', `/admin/user/${user.userId}/access-level`, { query: { admin_id: admin.userId, token: admin.token }, headers: { 'user-agent': admin.device }, json }), { access_level: 'member' }],
  ]
}

/** Every route, as a function of raw request options (for JSON syntax, content types and sizes). */
function rawRoutes ({ h, admin, user }: Ctx): Array<[string, (options: RequestOptions) => Promise<Reply>]> {
  return [
    ['signup', o => h.call('POST', '/auth/signup', o)],
    ['login', o => h.call('POST', '/auth/login', { ...o, headers: { 'user-agent': 'hostile/1', ...o.headers } })],
    ['self-update', o => h.call('PUT', '/auth/user/update', { ...o, query: { user_id: user.userId }, headers: { token: user.token, 'user-agent': user.device, ...o.headers } })],
    ['admin update', o => h.call('PUT', `/admin/user/${user.userId}`, { ...o, query: { admin_id: admin.userId, token: admin.token }, headers: { 'user-agent': admin.device, ...o.headers } })],
    ['access level', o => h.call('PUT', `/admin/user/${user.userId}/access-level`, { ...o, query: { admin_id: admin.userId, token: admin.token }, headers: { 'user-agent': admin.device, ...o.headers } })],
  ]
}

function assertRefused (t: Test, res: Reply, name: string, status?: number | RegExp): void {
  if (status === undefined) t.ok(res.status >= 400 && res.status < 500, `${name}: 4xx (got ${res.status})`)
  else t.match(String(res.status), typeof status === 'number' ? String(status) : status, `${name}: ${String(status)}`)
  t.type(res.body?.detail, 'string', `${name}: a detail body`)
  t.notMatch(res.text, /\bat .+:\d+:\d+|node_modules|\.ts:\d/, `${name}: no stack trace`)
}

for (const host of ['hapi', 'node'] as const) {
  t.test(`on the ${host} host`, async t => {
    const h = await startAuthHarness({ host, loginLimits: limits })
    const admin = await h.admin()
    const user = await h.newUser({ username: 'victim' })
    const ctx = { h, admin, user }
    const before = await h.snapshot()
    const sessionsBefore = h.events.filter(e => e === 'session_created').length
    t.teardown(h.close)

    t.test('wrong JSON types and operator objects in every body field are a 400', async t => {
      for (const [route, send, base] of bodyRoutes(ctx)) {
        for (const field of Object.keys(base)) {
          for (const value of [...WRONG_TYPES, ...(field === 'email' ? [] : [null])]) {
            const res = await send({ ...base, [field]: value })
            assertRefused(t, res, `${route} ${field}=${JSON.stringify(value)}`, 400)
          }
        }
      }
    })

    t.test('operator strings in username, email and level fields are refused', async t => {
      for (const [route, send, base] of bodyRoutes(ctx)) {
        for (const field of Object.keys(base).filter(f => f !== 'password')) {
          for (const value of OPERATOR_STRINGS) {
            const res = await send({ ...base, [field]: value })
            // Login takes any username string and answers like any unknown user.
            assertRefused(t, res, `${route} ${field}=${JSON.stringify(value)}`, route === 'login' ? /^40[01]$/ : 400)
          }
        }
      }
    })

    t.test('operator strings as a login password are just wrong passwords', async t => {
      for (const password of OPERATOR_STRINGS) {
        assertRefused(t, await h.call('POST', '/auth/login', { json: { username: user.username, password }, headers: { 'user-agent': 'x/1' } }), password, 401)
      }
    })

    t.test('unicode and control characters in usernames are a 400 everywhere a username is set', async t => {
      for (const username of ODD_USERNAMES) {
        for (const [route, send, base] of bodyRoutes(ctx).filter(([, , base]) => 'username' in base)) {
          const res = await send(route === 'login' ? { ...base, username } : { username, password: 'velvet-harbor-93' })
          assertRefused(t, res, `${route} ${JSON.stringify(username)}`, route === 'login' ? /^40[01]$/ : 400)
        }
        assertRefused(t, await h.call('GET', '/auth/get-user-id', { query: { username } }), `get-user-id ${JSON.stringify(username)}`, 400)
        const search = await h.call('GET', '/auth/search-users', { query: { query: username } })
        t.equal(search.status, 200, `search ${JSON.stringify(username)} is a literal search`)
        t.same(search.body, [])
      }
    })

    t.test('__proto__ and constructor keys are refused and pollute nothing', async t => {
      for (const raw of ['{"__proto__":{"accessLevel":"hush"},"username":"proto_user","password":"velvet-harbor-93"}',
        '{"constructor":{"prototype":{"accessLevel":"hush"}},"username":"proto_user","password":"velvet-harbor-93"}']) {
        assertRefused(t, await h.call('POST', '/auth/signup', { raw, headers: { 'content-type': 'application/json' } }), raw.slice(0, 30), 400)
      }
      t.equal(({} as Record<string, unknown>).accessLevel, undefined)
    })

    t.test('hostile query parameters and path ids are refused', async t => {
      const ua = { 'user-agent': admin.device }
      const cases: Array<[string, string, RequestOptions]> = [
        ['GET', '/auth/validate', { query: { user_id: '{"$ne":null}', token: user.token }, headers: ua }],
        ['GET', '/auth/validate', { query: { 'user_id[$ne]': 'x', token: user.token }, headers: ua }],
        ['GET', '/auth/validate', { query: { user_id: user.userId, token: '{"$ne":null}' }, headers: ua }],
        ['GET', '/auth/validate', { query: { user_id: user.userId, 'token[$ne]': 'x' }, headers: ua }],
        ['GET', '/auth/validate', { query: { user_id: user.userId, token: 'x'.repeat(10 * 1024) }, headers: ua }],
        ['POST', '/auth/logout', { query: { user_id: user.userId, token: '$where' } }],
        ['POST', '/auth/logout', { query: { user_id: '$where', token: user.token } }],
        ['GET', '/auth/get-user-id', { query: { username: '{"$ne":null}' } }],
        ['GET', '/auth/get-user-id', { query: { 'username[$regex]': '.*' } }],
        ['GET', '/auth/search-users', { query: { query: 'a'.repeat(10 * 1024) } }],
        ['GET', '/auth/search-users', { query: { 'query[$ne]': 'x' } }],
        ['GET', '/auth/search-users', { query: { query: 'a', limit: '{"$gt":0}' } }],
        ['GET', '/admin/users', { query: { user_id: admin.userId, token: admin.token, limit: '1e9' }, headers: ua }],
        ['GET', '/admin/users', { query: { user_id: admin.userId, token: admin.token, offset: '$where' }, headers: ua }],
        ['GET', `/admin/user/${encodeURIComponent('{"$ne":null}')}`, { query: { admin_id: admin.userId, token: admin.token }, headers: ua }],
        ['GET', `/admin/user/${user.userId}`, { query: { admin_id: '$where', token: admin.token }, headers: ua }],
        ['PUT', `/admin/user/${encodeURIComponent('.*')}/access-level`, { query: { admin_id: admin.userId, token: admin.token }, headers: ua, json: { access_level: 'hush' } }],
        ['PUT', '/auth/user/update', { query: { user_id: user.userId }, headers: { token: '{"$ne":null}', 'user-agent': user.device }, json: { email: 'a@b.co' } }],
        ['PUT', '/auth/user/update', { query: { user_id: user.userId }, headers: { authorization: 'Bearer {"$ne":null}', 'user-agent': user.device }, json: { email: 'a@b.co' } }],
        ['GET', '/auth/validate', { query: { user_id: user.userId }, headers: { ...ua, token: 'x'.repeat(10 * 1024) } }],
        ['GET', '/auth/sessions', { query: { 'user_id[$ne]': 'x', token: user.token }, headers: ua }],
        ['DELETE', '/auth/sessions', { query: { user_id: user.userId }, headers: { ...ua, token: '{"$ne":null}' } }],
        ['PUT', `/admin/user/${encodeURIComponent('{"$ne":null}')}/status`, { query: { admin_id: admin.userId, token: admin.token }, headers: ua, json: { disabled: true } }],
        ['PUT', `/admin/user/${user.userId}/status`, { query: { admin_id: admin.userId, token: admin.token }, headers: ua, json: { disabled: { $ne: false } } }],
        ['DELETE', `/admin/user/${encodeURIComponent('.*')}/sessions`, { query: { admin_id: admin.userId, token: admin.token }, headers: ua }],
        ['DELETE', `/admin/user/${user.userId}/lockout`, { query: { admin_id: '$where', token: admin.token }, headers: ua }],
      ]
      for (const [method, path, options] of cases) assertRefused(t, await h.call(method, path, options), `${method} ${path} ${JSON.stringify(options.query ?? {}).slice(0, 60)}`)
    })

    t.test('regex metacharacters and 10 KB strings in search never reach a regex engine', async t => {
      for (const query of ['.*', '.+', '(a', '[', '\\', '*', '+?', '(?<x>a)', '(a+)+$', 'a{99999}']) {
        const res = await h.call('GET', '/auth/search-users', { query: { query } })
        t.equal(res.status, 200, query)
        t.same(res.body, [], `${query}: literal, so no match`)
      }
      assertRefused(t, await h.call('GET', '/auth/search-users', { query: { query: '.*'.repeat(5000) } }), '10 KB of regex', 400)
    })

    t.test('a very long user-agent is a 400; a 1024-character one is accepted', async t => {
      const long = 'Mozilla/5.0 '.repeat(700)
      assertRefused(t, await h.call('POST', '/auth/login', { json: { username: user.username, password: user.password }, headers: { 'user-agent': long } }), 'login', 400)
      assertRefused(t, await h.validate(user.userId, user.token, long), 'validate', 400)
      assertRefused(t, await h.call('GET', '/admin/users', { query: { user_id: admin.userId, token: admin.token }, headers: { 'user-agent': long } }), 'admin users', 400)
      const fits = 'x'.repeat(1024)
      const login = await h.login('victim', user.password, fits)
      t.equal(login.status, 200)
      t.equal((await h.validate(user.userId, login.body.access_token, fits)).status, 200)
      t.equal((await h.logout(user.userId, login.body.access_token)).status, 200)
    })

    t.test('malformed JSON is a 400 Invalid JSON', async t => {
      for (const raw of ['{', '{"username":', 'nul', '[1,2', "{'username':'a'}", '{"a":1,}', '\u0000', 'undefined', '{"username":"a"} trailing']) {
        for (const [route, send] of rawRoutes(ctx)) {
          const res = await send({ raw, headers: { 'content-type': 'application/json' } })
          assertRefused(t, res, `${route} ${JSON.stringify(raw)}`, 400)
        }
      }
    })

    t.test('JSON that is not an object is a 400', async t => {
      for (const raw of ['[]', '"username"', '42', 'true', 'null', '[{"username":"a","password":"velvet-harbor-93"}]']) {
        for (const [route, send] of rawRoutes(ctx)) assertRefused(t, await send({ raw, headers: { 'content-type': 'application/json' } }), `${route} ${raw}`, 400)
      }
    })

    t.test('a body with a non-JSON content type is a 415', async t => {
      const body = JSON.stringify({ username: 'typed_user', password: 'velvet-harbor-93' })
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/jsonp']) {
        for (const [route, send] of rawRoutes(ctx)) assertRefused(t, await send({ raw: body, headers: { 'content-type': type } }), `${route} ${type}`, 415)
      }
      t.equal((await h.call('POST', '/auth/signup', { raw: 'username=form_user&password=velvet-harbor-93', headers: { 'content-type': 'application/x-www-form-urlencoded' } })).status, 415)
    })

    t.test('a body over 64 KiB is a 413 with a detail body', async t => {
      const big = JSON.stringify({ username: 'big_user', password: 'velvet-harbor-93', email: 'x'.repeat(70 * 1024) })
      for (const [route, send] of rawRoutes(ctx)) {
        assertRefused(t, await send({ raw: big, headers: { 'content-type': 'application/json' } }), `${route} with content-length`, 413)
        assertRefused(t, await send({ raw: big, chunked: true, headers: { 'content-type': 'application/json' } }), `${route} chunked`, 413)
      }
      const res = await h.call('POST', '/auth/signup', { raw: big, headers: { 'content-type': 'application/json' } })
      t.same(res.body, { detail: 'Request body too large' })
      const justUnder = JSON.stringify({ username: 'big_user', password: 'p'.repeat(256), email: null }).padEnd(60 * 1024, ' ')
      t.equal((await h.call('POST', '/auth/signup', { raw: justUnder, headers: { 'content-type': 'application/json' } })).status, 201, 'a 60 KiB body is read')
    })

    t.test('nothing was stored, no session opened, nothing logged as an error', async t => {
      const users = JSON.parse(await h.snapshot()).filter((u: { usernameKey: string }) => u.usernameKey !== 'big_user')
      t.same(users, JSON.parse(before), 'the users are as they were')
      const opened = h.events.filter(e => e === 'session_created').length - sessionsBefore
      t.equal(opened, 1, 'only the one deliberate login with a 1024-character user-agent')
      t.same(h.logs.filter(l => l.level === 'error'), [], 'no 500 was logged')
    })
  })
}
