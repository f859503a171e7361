import t from 'tap'
import { startProxy, PASSWORD } from './harness.ts'
import type { HandlerRequest } from '../../lib/index.ts'
import { createProxy } from '../../lib/index.ts'
import { createClientAuth, presentedPasswords } from '../../lib/proxy/access/client-auth.ts'
import { createPasswordAttempts } from '../../lib/proxy/access/password-attempts.ts'

const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`

function request (headers: Record<string, string>, query: Record<string, string> = {}): HandlerRequest {
  return { method: 'GET', path: '/v1/models', params: {}, query, headers }
}

t.test('every accepted form of the password is read', async t => {
  const table: Array<[string, HandlerRequest, string[]]> = [
    ['Bearer', request({ authorization: 'Bearer pw' }), ['pw']],
    ['bearer in any case', request({ authorization: 'bEaReR   pw ' }), ['pw']],
    ['Basic, any username', request({ authorization: basic('anyone', 'pw') }), ['pw']],
    ['Basic, split at the first colon', request({ authorization: basic('u', 'p:w') }), ['p:w']],
    ['Basic, empty username', request({ authorization: basic('', 'pw') }), ['pw']],
    ['Basic without a colon', request({ authorization: `Basic ${Buffer.from('nocolon').toString('base64')}` }), []],
    ['?key=', request({}, { key: 'pw' }), ['pw']],
    ['x-goog-api-key', request({ 'x-goog-api-key': 'pw' }), ['pw']],
    ['x-vendor-api-key', request({ 'x-vendor-api-key': 'pw' }), ['pw']],
    ['other schemes are ignored', request({ authorization: 'Digest pw' }), []],
    ['several forms', request({ 'x-goog-api-key': 'a', authorization: 'Bearer b' }, { key: 'c' }), ['c', 'a', 'b']],
  ]
  for (const [name, req, expected] of table) t.same(presentedPasswords(req), expected, name)
})

t.test('over HTTP: each form is accepted and a wrong password is a 401 in the surface\'s shape', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  const ok: Array<[string, RequestInit, string?]> = [
    ['Bearer', { headers: { authorization: `Bearer ${PASSWORD}` } }],
    ['lower-case bearer', { headers: { authorization: `bearer ${PASSWORD}` } }],
    ['Basic', { headers: { authorization: basic('whoever', PASSWORD) } }],
    ['x-goog-api-key', { headers: { 'x-goog-api-key': PASSWORD } }],
    ['x-vendor-api-key', { headers: { 'x-vendor-api-key': PASSWORD } }],
    ['?key=', {}, `?key=${encodeURIComponent(PASSWORD)}`],
  ]
  for (const [name, init, query] of ok) {
    const res = await fetch(`${h.url}/v1beta/models${query ?? ''}`, init)
    t.equal(res.status, 200, name)
    await res.arrayBuffer()
  }

  const chat = await fetch(`${h.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer wrong', 'content-type': 'application/json' }, body: '{}' })
  t.equal(chat.status, 401)
  t.match(chat.headers.get('www-authenticate'), /Bearer/)
  t.match(await chat.json(), { error: { type: 'authentication_error', code: 401, param: null, message: /Invalid authentication credentials/ } })

  const native = await fetch(`${h.url}/v1beta/models/gemini-2.5-pro:generateContent`, { method: 'POST', headers: { 'x-goog-api-key': 'wrong' }, body: '{}' })
  t.equal(native.status, 401)
  t.match(native.headers.get('www-authenticate'), /Bearer/)
  t.match(await native.json(), { error: { code: 401, status: 'UNAUTHENTICATED' } })

  const garbage = await fetch(`${h.url}/v1beta/no/such/thing`)
  t.equal(garbage.status, 401, 'unauthenticated garbage is 401, not 404')
  await garbage.arrayBuffer()
  t.equal(h.fake.requests.filter(r => r.call === 'generateContent').length, 0, 'nothing reached the upstream')
})

t.test('without a configured password every proxy route answers 503 with a clear message', async t => {
  const h = await startProxy(t, { backendName: 'code-assist', password: undefined })
  const chat = await fetch(`${h.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer anything' }, body: '{}' })
  t.equal(chat.status, 503)
  t.match(await chat.json(), { error: { type: 'api_error', message: /GEMINI_AUTH_PASSWORD/ } })
  const models = await fetch(`${h.url}/v1/models`)
  t.equal(models.status, 503)
  await models.arrayBuffer()
  const native = await fetch(`${h.url}/v1beta/models/gemini-2.5-pro:generateContent`, { method: 'POST', body: '{}' })
  t.equal(native.status, 503)
  t.match(await native.json(), { error: { code: 503, status: 'UNAVAILABLE', message: /GEMINI_AUTH_PASSWORD/ } })
  const list = await fetch(`${h.url}/v1beta/models`, { headers: { 'x-goog-api-key': '123456' } })
  t.equal(list.status, 503, 'there is no default password')
  await list.arrayBuffer()
})

t.test('CORS: preflights are answered without a password, and responses allow any origin without credentials', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  for (const path of ['/v1/chat/completions', '/v1/models', '/v1beta/models', '/v1beta/models/gemini-2.5-pro:streamGenerateContent', '/v1/models/gemini-2.5-pro:generateContent']) {
    const res = await fetch(`${h.url}${path}`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    })
    t.equal(res.status, 204, path)
    t.equal(res.headers.get('access-control-allow-origin'), '*')
    t.equal(res.headers.get('access-control-allow-credentials'), null, 'never credentials together with *')
    t.equal(res.headers.get('access-control-allow-headers'), 'authorization, content-type')
    t.match(res.headers.get('access-control-allow-methods'), /POST/)
  }
  const res = await fetch(`${h.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${PASSWORD}`, origin: 'https://app.example' }, body: JSON.stringify({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'x' }] }),
  })
  t.equal(res.status, 200)
  t.equal(res.headers.get('access-control-allow-origin'), '*')
  await res.arrayBuffer()
  const denied = await fetch(`${h.url}/v1/models`, { headers: { origin: 'https://app.example' } })
  t.equal(denied.headers.get('access-control-allow-origin'), '*', 'errors are readable cross-origin too')
  await denied.arrayBuffer()
})

t.test('proxy password guessing is throttled for the guessing address only: past 10 wrong passwords in 5 minutes its wrong ones are a 429 with Retry-After, while the right password passes', async t => {
  let now = new Date('2026-01-01T00:00:00Z')
  const h = await startProxy(t, { backendName: 'code-assist', now: () => now })
  const call = async (path: string, init: RequestInit = {}): Promise<{ status: number, retryAfter: string | null, body: any }> => {
    const res = await fetch(`${h.url}${path}`, init)
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() }
  }
  const guess = (i: number): RequestInit => ({ headers: { authorization: `Bearer guess-number-${i}` } })
  for (let i = 0; i < 10; i++) t.equal((await call('/v1/models', guess(i))).status, 401, `guess ${i + 1} is a 401`)
  now = new Date(now.getTime() + 60_000)
  const refused = await call('/v1/models', guess(10))
  t.equal(refused.status, 429, 'the 11th wrong one is a 429')
  t.equal(refused.retryAfter, '240', 'until 5 minutes after the first wrong password')
  t.match(refused.body, { error: { type: 'rate_limit_error', code: 429, message: /Too many wrong proxy passwords or keys/ } })
  const native = await call('/v1beta/models/gemini-2.5-pro:generateContent', { method: 'POST', headers: { 'x-goog-api-key': 'still-guessing' }, body: '{"contents":[{"parts":[{"text":"x"}]}]}' })
  t.match([native.status, native.retryAfter, native.body], [429, '240', { error: { code: 429, status: 'RESOURCE_EXHAUSTED' } }], 'native shape')

  const right = { authorization: `Bearer ${PASSWORD}`, 'content-type': 'application/json' }
  const chat = await call('/v1/chat/completions', { method: 'POST', headers: right, body: JSON.stringify({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'x' }] }) })
  t.equal(chat.status, 200, 'the right password from the same address passes')
  t.equal((await call('/v1/models')).status, 401, 'no password at all is no guess: a 401')

  now = new Date(now.getTime() + 239_000)
  t.equal((await call('/v1/models', guess(11))).retryAfter, '1', 'one second left')
  now = new Date(now.getTime() + 1_000)
  t.equal((await call('/v1/models', guess(12))).status, 401, 'once the window has ended a wrong one starts a new window')
})

t.test('wrong proxy passwords are counted per client address (an IPv6 /64 as one); requests presenting none are not guesses; the right one is never refused', async t => {
  const now = new Date('2026-01-01T00:00:00Z')
  const check = createClientAuth('the-right-password-16', createPasswordAttempts({ attempts: 2, windowSeconds: 60 }, () => now))
  const from = (remoteAddress: string, authorization?: string): HandlerRequest =>
    ({ method: 'GET', path: '/v1/models', params: {}, query: {}, headers: authorization === undefined ? {} : { authorization }, remoteAddress })
  const outcome = async (req: HandlerRequest): Promise<string> => { try { await check(req); return 'ok' } catch (err) { return (err as { code: string }).code } }

  for (let i = 0; i < 5; i++) t.equal(await outcome(from('192.0.2.1')), 'PROXY_UNAUTHENTICATED', 'no password: 401, not counted')
  t.equal(await outcome(from('192.0.2.1', 'Bearer the-right-password-16')), 'ok')
  t.equal(await outcome(from('2001:db8:1:2::a', 'Bearer wrong')), 'PROXY_UNAUTHENTICATED')
  t.equal(await outcome(from('2001:db8:1:2:ffff::b', 'Bearer wrong')), 'PROXY_UNAUTHENTICATED')
  t.equal(await outcome(from('2001:db8:1:2::c', 'Bearer wrong')), 'PROXY_TOO_MANY_ATTEMPTS', 'two addresses of one /64 are one client')
  t.equal(await outcome(from('2001:db8:1:2::c', 'Bearer the-right-password-16')), 'ok', 'the right password from it still passes')
  t.equal(await outcome(from('2001:db8:1:3::c', 'Bearer wrong')), 'PROXY_UNAUTHENTICATED', 'the next /64 is another')
  t.equal(await outcome(from('::ffff:192.0.2.1', 'Bearer wrong')), 'PROXY_UNAUTHENTICATED')
  t.equal(await outcome(from('192.0.2.1', 'Bearer wrong')), 'PROXY_UNAUTHENTICATED')
  t.equal(await outcome(from('192.0.2.1', 'Bearer wrong')), 'PROXY_TOO_MANY_ATTEMPTS', 'an IPv4-mapped address counts as its IPv4 form')
  t.equal(await outcome(from('192.0.2.2', 'Bearer wrong')), 'PROXY_UNAUTHENTICATED', 'other addresses are not affected')
})

t.test('a proxy password shorter than 16 characters is refused when the proxy is created, naming the option', async t => {
  t.throws(() => createProxy({ password: 'fifteen-chars!!' }), { name: 'TypeError', message: /^createProxy: password must be at least 16 characters/ })
  t.throws(() => createProxy({ password: 'x'.repeat(16), passwordAttempts: { attempts: 0 } }), { message: /passwordAttempts\.attempts/ })
  t.throws(() => createProxy({ password: 'x'.repeat(16), bodyRead: { timeoutMs: 0 } }), { message: /bodyRead\.timeoutMs/ })
  t.throws(() => createProxy({ password: 'x'.repeat(16), bodyRead: { minBytesPerSecond: -1 } }), { message: /bodyRead\.minBytesPerSecond/ })
  t.throws(() => createProxy({ imageFetch: { allowedPorts: [0] } }), { message: /imageFetch\.allowedPorts/ })
  const proxy = createProxy({ password: 'sixteen-chars!!!', passwordAttempts: false })
  t.teardown(() => proxy.close())
  t.ok(proxy.routes.length > 0, '16 characters are enough')
})

t.test('the password-attempt counters stay bounded: at most 10 000 addresses, expired windows dropped first, then the oldest', async t => {
  let now = new Date('2026-01-01T00:00:00Z')
  const warnings: unknown[] = []
  const attempts = createPasswordAttempts({ attempts: 1, windowSeconds: 60 }, () => now, { debug () {}, info () {}, warn: (obj: unknown) => warnings.push(obj), error () {} })
  attempts.failed('198.51.100.1')
  t.throws(() => attempts.failed('198.51.100.1'), { code: 'PROXY_TOO_MANY_ATTEMPTS', retryAfter: 60 })
  t.throws(() => attempts.failed('198.51.100.1'), { code: 'PROXY_TOO_MANY_ATTEMPTS' })
  t.match(warnings, [{ address: '198.51.100.1', attempts: 1 }], 'passing the limit is logged, once')
  now = new Date(now.getTime() + 30_000)
  for (let i = 0; i < 9_999; i++) attempts.failed(`10.0.${i >> 8}.${i & 255}`)
  attempts.failed('203.0.113.1')
  t.doesNotThrow(() => attempts.failed('198.51.100.1'), 'the oldest window went to make room: a first wrong one again')
  t.throws(() => attempts.failed('203.0.113.1'), { code: 'PROXY_TOO_MANY_ATTEMPTS' }, 'the newest is kept')
  now = new Date(now.getTime() + 60_000)
  attempts.failed('203.0.113.2')
  t.doesNotThrow(() => attempts.failed('10.0.0.1'), 'expired windows are gone')
  t.throws(() => attempts.failed('203.0.113.2'), { code: 'PROXY_TOO_MANY_ATTEMPTS' })
})
