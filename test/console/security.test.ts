// The console's security rules (docs/console.md, "Security"), over HTTP without a browser: the cookie session is
// the console's alone, cross-site writes are refused, and every answer carries the console's headers.
import t from 'tap'
import { startConsoleHarness, BROWSER } from '../support/console-harness.ts'
import { ADMIN_PASSWORD } from '../support/auth-harness.ts'
import { CONSOLE_CSP } from '../../lib/console/security-headers.ts'
import { createConsole } from '../../lib/index.ts'

t.test('login sets a __Host- cookie: HttpOnly, Secure, SameSite=Strict, Path=/, holding an opaque session id', async t => {
  const h = await startConsoleHarness()
  t.teardown(h.close)
  await h.member()
  const login = await h.call('POST', '/api/login', { json: { username: 'system', password: 'admin-password-for-tests' }, cookie: null })
  const cookie = login.headers['set-cookie']
  t.match(cookie, /^__Host-gatehouse-console=[A-Za-z0-9_-]{20,};/)
  for (const attribute of ['Path=/', 'Secure', 'HttpOnly', 'SameSite=Strict']) t.ok(cookie.split('; ').includes(attribute), attribute)
  t.notOk(/Domain=/i.test(cookie), 'no Domain (a __Host- cookie has none)')
  t.notOk(login.text.includes(h.cookie!), 'the session id is in the cookie only, never in the body')
})

t.test('the console cookie is refused on the accounts JSON routes, and its token in their token forms too', async t => {
  const h = await startConsoleHarness()
  t.teardown(h.close)
  const { userId } = await h.member()
  const cookie = `__Host-gatehouse-console=${h.cookie!}`
  const viaCookie = await h.raw('GET', `/v1/api/auth/sessions?user_id=${userId}`, { 'user-agent': BROWSER, cookie })
  t.equal(viaCookie.status, 401, 'a cookie is no session token on /v1/api')
  const asBearer = await h.raw('GET', `/v1/api/auth/sessions?user_id=${userId}`, { 'user-agent': `console: ${BROWSER}`, authorization: `Bearer ${h.cookie!}` })
  t.equal(asBearer.status, 401, 'nor is the cookie\'s token, even from the console\'s device')
  t.same(asBearer.body, { detail: 'Invalid token' })
  const keys = await h.raw('GET', `/v1/api/auth/keys?user_id=${userId}`, { 'user-agent': BROWSER, cookie })
  t.equal(keys.status, 401)
  t.equal((await h.call('GET', '/api/keys')).status, 200, 'while the console takes it')
})

t.test('the console refuses a session token the JSON login issued', async t => {
  const h = await startConsoleHarness()
  t.teardown(h.close)
  const login = await h.raw('POST', '/v1/api/auth/login', { 'user-agent': BROWSER, 'content-type': 'application/json' }, JSON.stringify({ username: 'system', password: 'admin-password-for-tests' }))
  t.equal(login.status, 200)
  const keys = await h.call('GET', '/api/keys', { cookie: login.body.access_token })
  t.equal(keys.status, 401)
  t.same((await h.call('GET', '/api/me', { cookie: login.body.access_token })).body, { signed_in: false })
})

t.test('unsafe console calls need Sec-Fetch-Site: same-origin (or a same-host Origin) and the console header', async t => {
  const h = await startConsoleHarness()
  t.teardown(h.close)
  await h.member()
  const before = await h.call('GET', '/api/keys')
  const create = (headers: Record<string, string | undefined>): ReturnType<typeof h.call> => h.call('POST', '/api/keys', { json: { name: 'k' }, headers })
  const crossSite = await create({ 'sec-fetch-site': 'cross-site' })
  t.equal(crossSite.status, 403, 'a cross-site POST')
  t.match(crossSite.body.detail, /did not come from the console page/)
  t.equal((await create({ 'sec-fetch-site': 'same-site' })).status, 403, 'a sibling subdomain\'s POST')
  t.equal((await create({ 'x-gatehouse-console': undefined })).status, 403, 'no console header')
  t.equal((await create({ 'sec-fetch-site': undefined })).status, 403, 'neither Sec-Fetch-Site nor Origin')
  t.equal((await create({ 'sec-fetch-site': undefined, origin: 'https://evil.example' })).status, 403, 'another Origin')
  const host = new URL(h.origin).host
  t.equal((await create({ 'sec-fetch-site': undefined, origin: h.origin })).status, 201, `Origin of the same host (${host}) as the fallback`)
  t.equal((await create({})).status, 201, 'what the page sends')
  t.equal((await h.call('GET', '/api/keys')).body.length, before.body.length + 2, 'only the two same-origin calls made keys')
  t.equal((await h.call('POST', '/api/logout', { headers: { 'sec-fetch-site': 'cross-site' } })).status, 403, 'logout too')
  t.equal((await h.call('POST', '/api/login', { json: { username: 'system', password: 'x' }, headers: { 'sec-fetch-site': 'cross-site' }, cookie: null })).status, 403, 'and login (no login CSRF)')
})

t.test('every console answer carries the CSP, nosniff and no-referrer; data answers are no-store', async t => {
  const h = await startConsoleHarness()
  t.teardown(h.close)
  t.equal(CONSOLE_CSP, "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
  const page = await h.raw('GET', '/console/')
  const script = await h.raw('GET', '/console/assets/app.js')
  await h.member()
  const data = await h.call('GET', '/api/me')
  const refused = await h.call('GET', '/api/keys', { cookie: null })
  const unknown = await h.call('GET', '/api/nothing-here')
  for (const [name, reply] of Object.entries({ page, script, data, refused, unknown })) {
    t.equal(reply.headers['content-security-policy'], CONSOLE_CSP, `${name}: CSP`)
    t.equal(reply.headers['x-content-type-options'], 'nosniff', `${name}: nosniff`)
    t.equal(reply.headers['referrer-policy'], 'no-referrer', `${name}: referrer`)
  }
  for (const [name, reply] of Object.entries({ data, refused, unknown })) t.equal(reply.headers['cache-control'], 'no-store', `${name}: no-store`)
  t.equal(page.status, 200)
  t.match(page.headers['content-type'], /^text\/html/)
  t.match(script.headers['content-type'], /^text\/javascript/)
  t.equal(refused.status, 401)
  t.equal(unknown.status, 404)
  t.equal((await h.raw('GET', '/console/assets/secret.txt')).status, 404, 'only built files are served')
  t.equal((await h.raw('GET', '/console/assets/..%2Fpackage.json')).status, 404, 'no path out of the folder')
})

t.test('logout ends the session on the server: the old cookie is refused afterwards', async t => {
  const h = await startConsoleHarness()
  t.teardown(h.close)
  await h.member()
  const old = h.cookie!
  const out = await h.call('POST', '/api/logout')
  t.equal(out.status, 200)
  t.match(out.headers['set-cookie'], /^__Host-gatehouse-console=; .*Max-Age=0/)
  t.equal((await h.call('GET', '/api/keys', { cookie: old })).status, 401)
})

t.test('a login rotates the session: a new id each time, and the previous cookie\'s session ends', async t => {
  const h = await startConsoleHarness()
  t.teardown(h.close)
  await h.admin()
  const first = h.cookie!
  const again = await h.call('POST', '/api/login', { json: { username: 'system', password: 'admin-password-for-tests' } })
  t.equal(again.status, 200)
  t.not(h.cookie, first)
  t.equal((await h.call('GET', '/api/keys', { cookie: first })).status, 401, 'the fixed or stolen earlier id no longer works')
  t.equal((await h.call('GET', '/api/keys')).status, 200)
})

t.test('a console session is bound to the browser it signed in from', async t => {
  const h = await startConsoleHarness()
  t.teardown(h.close)
  await h.member()
  t.equal((await h.call('GET', '/api/keys', { headers: { 'user-agent': 'curl/8' } })).status, 401)
  t.same((await h.call('GET', '/api/me', { headers: { 'user-agent': 'curl/8' } })).body, { signed_in: false })
})

t.test('sensitive actions need the current password once the sign-in is older than the re-authentication window', async t => {
  const h = await startConsoleHarness({ reauthSeconds: 60 })
  t.teardown(h.close)
  const { password } = await h.member()
  t.equal((await h.call('POST', '/api/keys', { json: { name: 'fresh' } })).status, 201, 'a fresh sign-in may')
  h.advance(61)
  const stale = await h.call('POST', '/api/keys', { json: { name: 'stale' } })
  t.equal(stale.status, 401)
  t.match(stale.body.detail, /current password/)
  t.equal((await h.call('POST', '/api/keys', { json: { name: 'wrong', current_password: 'not it at all' } })).status, 401)
  t.equal((await h.call('POST', '/api/keys', { json: { name: 'right', current_password: password } })).status, 201)
  t.equal((await h.call('PUT', '/api/account', { json: { email: 'a@example.com' } })).status, 401, 'an email change too')
  const admin = await h.admin()
  h.advance(61)
  for (const [path, json] of [[`/api/admin/users/${admin.userId}/level`, { access_level: 'hush' }], [`/api/admin/users/${admin.userId}/status`, { disabled: false }], [`/api/admin/users/${admin.userId}/limits`, { rpm: 5 }]] as const) {
    t.equal((await h.call('PUT', path, { json })).status, 401, `${path} on a stale sign-in`)
  }
})

for (const host of ['hapi', 'node'] as const) {
  t.test(`an admin's deletes (revoking a user's key, clearing a lockout, ending sessions) need the current password once the sign-in is older than the re-authentication window (${host})`, async t => {
    const h = await startConsoleHarness({ reauthSeconds: 60, host })
    t.teardown(h.close)
    const { userId } = await h.member()
    const key = (await h.call('POST', '/api/keys', { json: { name: 'ci' } })).body
    await h.admin()
    const deletes = [`/api/admin/users/${userId}/keys/${key.key_id as string}`, `/api/admin/users/${userId}/lockout`, `/api/admin/users/${userId}/sessions`]
    h.advance(61)
    for (const path of deletes) {
      const stale = await h.call('DELETE', path)
      t.equal(stale.status, 401, `${path} on a stale sign-in`)
      t.match(stale.body.detail, /current password/, 'asks for the password, as the console\'s prompt reads it')
      t.equal((await h.call('DELETE', path, { json: { current_password: 'not it at all' } })).status, 401, 'a wrong password')
      t.equal((await h.call('DELETE', path, { json: { current_password: ADMIN_PASSWORD, also: 1 } })).status, 400, 'a body holds nothing else')
    }
    t.equal((await h.store.keys.listByUser(userId)).length, 1, 'the key is still there')
    for (const path of deletes) t.equal((await h.call('DELETE', path, { json: { current_password: ADMIN_PASSWORD } })).status, 200, `${path} with the password`)
    t.equal((await h.store.keys.listByUser(userId)).length, 0, 'revoked')
    await h.admin()
    t.equal((await h.call('DELETE', `/api/admin/users/${userId}/lockout`)).status, 200, 'a fresh sign-in needs no password')
  })
}

t.test('the console path is checked at construction, and CONSOLE_PATH moves every route', async t => {
  const h = await startConsoleHarness({ path: '/team/console', host: 'node' })
  t.teardown(h.close)
  t.equal((await h.raw('GET', '/console/')).status, 404)
  const bare = await h.raw('GET', '/team/console')
  t.equal(bare.status, 308)
  t.equal(bare.headers.location, 'console/', 'relative, so it holds under a prefix an ingress strips')
  t.equal((await h.raw('GET', '/team/console/')).status, 200)
  await h.admin()
  t.equal((await h.call('GET', '/api/me')).body.console_path, '/team/console')
  const { createConsole } = await import('../../lib/index.ts')
  t.throws(() => createConsole({ auth: h.auth, path: 'console' }), { option: 'path', message: /path must be a path/ })
  t.throws(() => createConsole({ auth: {} as never }), { option: 'auth', message: /createAuthService/ })
})

t.test('the console cookie is no credential on the proxy: /v1 and the native routes refuse it', async t => {
  const { startGateway } = await import('../support/gateway.ts')
  const gateway = await startGateway({ LOG_LEVEL: 'silent', AUTH_ADMIN_USERNAME: 'gate_admin', AUTH_ADMIN_PASSWORD: 'gateway-admin-password' })
  t.teardown(() => gateway.close())
  const login = await fetch(`${gateway.url}/console/api/login`, {
    method: 'POST',
    headers: { 'user-agent': BROWSER, 'sec-fetch-site': 'same-origin', 'x-gatehouse-console': '1', 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'gate_admin', password: 'gateway-admin-password' }),
  })
  t.equal(login.status, 200)
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]
  t.match(cookie, /^__Host-gatehouse-console=.+/)
  const headers = { cookie, 'user-agent': BROWSER, 'content-type': 'application/json' }
  const chat = await fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers, body: JSON.stringify({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] }) })
  t.equal(chat.status, 401, '/v1/chat/completions')
  t.equal((await fetch(`${gateway.url}/v1/models`, { headers })).status, 401, '/v1/models')
  t.equal((await fetch(`${gateway.url}/v1beta/models`, { headers })).status, 401, 'the native surface')
  t.equal((await fetch(`${gateway.url}/console/api/keys`, { headers })).status, 200, 'while the console takes it')
})

t.test('sign-in from a page the browser would not keep a Secure cookie from (plain HTTP, not localhost): 403 CONSOLE_NEEDS_HTTPS, before the password, no cookie', async t => {
  const h = await startConsoleHarness()
  t.teardown(h.close)
  const login = (origin: string, password = 'admin-password-for-tests') => h.call('POST', '/api/login', { json: { username: 'system', password }, cookie: null, headers: { origin } })
  for (const origin of ['https://gatehouse.example', 'http://localhost:8888', 'http://console.localhost', 'http://127.0.0.1:8888', 'http://[::1]:8888']) {
    const ok = await login(origin)
    t.equal(ok.status, 200, `${origin}: signed in`)
    t.match(ok.headers['set-cookie'], /^__Host-gatehouse-console=.+; Path=\/; Secure; HttpOnly; SameSite=Strict/, `${origin}: the __Host- Secure cookie`)
  }
  for (const [origin, password] of [['http://gatehouse.lan:8888', 'admin-password-for-tests'], ['http://10.0.0.5', 'a wrong password'], ['null', 'admin-password-for-tests']]) {
    const refused = await login(origin, password)
    t.equal(refused.status, 403, `${origin}: refused, whatever the password`)
    t.match(refused.body, { detail: /^Signing in here needs HTTPS: .*Secure cookie.*http:\/\/localhost.*CONSOLE_ALLOW_HTTP=true \(createConsole's allowHttp\)$/ })
    t.equal(refused.headers['set-cookie'], undefined, `${origin}: no cookie`)
  }
})

t.test('allowHttp signs a plain-HTTP page in with a cookie without Secure (so without __Host-), which then works; it must be a boolean', async t => {
  const h = await startConsoleHarness({ allowHttp: true })
  t.teardown(h.close)
  const origin = 'http://gatehouse.lan:8888'
  const login = await h.call('POST', '/api/login', { json: { username: 'system', password: 'admin-password-for-tests' }, cookie: null, headers: { origin } })
  t.equal(login.status, 200)
  const cookie = login.headers['set-cookie']
  t.match(cookie, /^gatehouse-console=[A-Za-z0-9_-]{20,}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+$/)
  t.notOk(cookie.split('; ').includes('Secure'), 'no Secure: the browser would drop it')
  const token = /^gatehouse-console=([^;]+)/.exec(cookie)![1]
  const me = await h.call('GET', '/api/me', { cookie: null, headers: { cookie: `gatehouse-console=${token}` } })
  t.match([me.status, me.body], [200, { user: { username: 'system' } }], 'the plain cookie names the session')
  const https = await h.call('POST', '/api/login', { json: { username: 'system', password: 'admin-password-for-tests' }, cookie: null, headers: { origin: 'https://gatehouse.example' } })
  t.match(https.headers['set-cookie'], /^__Host-gatehouse-console=.+; Secure;/, 'an HTTPS page still gets the Secure cookie')
  const out = await h.call('POST', '/api/logout', { cookie: null, headers: { origin, cookie: `gatehouse-console=${token}` } })
  t.match(out.headers['set-cookie'], /^gatehouse-console=; Path=\/; HttpOnly; SameSite=Strict; Max-Age=0$/, 'sign-out clears the plain cookie')
  t.match((await h.call('GET', '/api/me', { cookie: null, headers: { cookie: `gatehouse-console=${token}` } })).body, { signed_in: false }, 'and ends its session')

  const strict = await startConsoleHarness()
  t.teardown(strict.close)
  await strict.call('POST', '/api/login', { json: { username: 'system', password: 'admin-password-for-tests' }, cookie: null, headers: { origin: 'https://gatehouse.example' } })
  t.match((await strict.call('GET', '/api/me')).body, { user: { username: 'system' } }, 'signed in there')
  const ignored = await strict.call('GET', '/api/me', { cookie: null, headers: { cookie: `gatehouse-console=${strict.cookie!}` } })
  t.match(ignored.body, { signed_in: false }, 'without allowHttp the plain cookie is not read at all')
  t.throws(() => createConsole({ auth: h.auth, allowHttp: 'yes' as unknown as boolean }), { option: 'allowHttp', message: 'createConsole: allowHttp must be true or false, got "yes"' })
})
