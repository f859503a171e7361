import t from 'tap'
import { Writable } from 'node:stream'
import { startGateway } from '../support/gateway.ts'
import { startFakeUpstream } from '../support/fake-upstream.ts'
import { authClient } from '../support/auth-client.ts'
import { createLogger, redact, REDACTED } from '../../gateway/logger.ts'

const ADMIN = { AUTH_ADMIN_USERNAME: 'log_admin', AUTH_ADMIN_PASSWORD: 'admin-password-not-in-logs' }
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

t.test('every request is one JSON line with request id, method, route template, status and duration', async t => {
  const gw = await startGateway(ADMIN)
  t.teardown(gw.close)
  const res = await fetch(gw.url + '/v1/api/auth/get-user-id?username=log_admin')
  t.equal(res.status, 200)
  await res.text()
  const lines = gw.logs.filter(l => l.msg === 'request')
  t.equal(lines.length, 1)
  t.match(lines[0], {
    level: 'info',
    method: 'GET',
    route: '/v1/api/auth/get-user-id',
    status: 200,
    durationMs: Number,
    reqId: UUID,
    time: String,
  })
  t.equal(lines[0].reqId, res.headers.get('x-request-id'), 'the generated id is echoed')
})

t.test('an x-request-id from the client is kept, logged and echoed; a malformed one is replaced', async t => {
  const gw = await startGateway(ADMIN)
  t.teardown(gw.close)
  const kept = await fetch(gw.url + '/health', { headers: { 'x-request-id': 'trace-abc.123' } })
  t.equal(kept.headers.get('x-request-id'), 'trace-abc.123')
  await kept.text()
  const bad = await fetch(gw.url + '/health', { headers: { 'x-request-id': 'has spaces and "quotes"' } })
  t.match(bad.headers.get('x-request-id'), UUID)
  await bad.text()
  const ids = gw.logs.filter(l => l.msg === 'request').map(l => l.reqId)
  t.same(ids, ['trace-abc.123', bad.headers.get('x-request-id')])
})

t.test('error responses and unknown paths carry the request id too', async t => {
  const gw = await startGateway(ADMIN)
  t.teardown(gw.close)
  for (const [path, init] of [['/nowhere', {}], ['/v1/api/auth/signup', { method: 'POST', body: '{bad', headers: { 'content-type': 'application/json' } }]] as const) {
    const res = await fetch(gw.url + path, { ...init, headers: { ...init.headers, 'x-request-id': `id-${path.length}` } })
    t.equal(res.headers.get('x-request-id'), `id-${path.length}`, path)
    await res.text()
  }
  t.same(gw.logs.filter(l => l.msg === 'request').map(l => [l.route, l.status]), [['unmatched', 404], ['/v1/api/auth/signup', 400]])
})

t.test('passwords, tokens and keys never reach the log, whatever the route', async t => {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const gw = await startGateway({ ...ADMIN, LOG_LEVEL: 'debug', GEMINI_AUTH_PASSWORD: 'proxy-password-secret', GEMINI_API_KEY: 'upstream-key-secret', GEMINI_API_ENDPOINT: fake.url })
  t.teardown(gw.close)
  const api = authClient(gw.url + '/v1/api')
  await api.signup('log_user', 'user-password-secret')
  const login = await api.login('log_user', 'user-password-secret')
  const token: string = login.body.access_token
  await api.validate(login.body.user_id, token)
  await api.call('GET', '/auth/validate', { query: { user_id: login.body.user_id, token } })
  await api.login('log_user', 'wrong-password-secret')
  const chat = JSON.stringify({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'hi' }] })
  await (await fetch(gw.url + '/v1/chat/completions', { method: 'POST', body: chat, headers: { authorization: 'Bearer proxy-password-secret', 'content-type': 'application/json' } })).text()
  await (await fetch(gw.url + '/v1beta/models/gemini-2.5-pro:generateContent?key=proxy-password-secret', { method: 'POST', body: '{"contents":[{"parts":[{"text":"hi"}]}]}', headers: { 'content-type': 'application/json' } })).text()
  await (await fetch(gw.url + '/v1/models?token=some-token-secret&x=1')).text()

  const all = JSON.stringify(gw.logs)
  for (const secret of ['admin-password-not-in-logs', 'user-password-secret', 'wrong-password-secret', token, 'proxy-password-secret', 'upstream-key-secret', 'some-token-secret']) {
    t.notOk(all.includes(secret), `${secret.slice(0, 12)}… is not logged`)
  }
  const urls = gw.logs.filter(l => l.msg === 'request').map(l => l.url as string)
  t.ok(urls.includes(`/v1beta/models/gemini-2.5-pro:generateContent?key=${REDACTED}`), '?key= is redacted in the logged URL')
  t.ok(urls.includes(`/v1/models?token=${REDACTED}&x=1`), '?token= is redacted, other parameters kept')
  t.ok(urls.some(u => u.startsWith('/v1/api/auth/validate?') && u.includes(`token=${REDACTED}`)))
})

t.test('log redaction works on decoded query names: ?tok%65n=, ?k%65y=, ?TOKEN= and the like are never logged in clear', async t => {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const gw = await startGateway({ ...ADMIN, GEMINI_AUTH_PASSWORD: 'proxy-password-encoded', GEMINI_API_KEY: 'upstream-key', GEMINI_API_ENDPOINT: fake.url })
  t.teardown(gw.close)
  const api = authClient(gw.url + '/v1/api')
  await api.signup('enc_user', 'user-password-1')
  const login = await api.login('enc_user', 'user-password-1')
  const { user_id: userId, access_token: token } = login.body
  // The server decodes the names, so these are the real token and password forms, and they work.
  const validate = await fetch(`${gw.url}/v1/api/auth/validate?user_id=${userId}&tok%65n=${token}`, { headers: { 'user-agent': 'gatehouse-tests/1.0 (device A)' } })
  t.equal(validate.status, 200, '?tok%65n= is read as the session token')
  await validate.text()
  const models = await fetch(`${gw.url}/v1beta/models?k%65y=proxy-password-encoded`)
  t.equal(models.status, 200, '?k%65y= is read as the proxy password')
  await models.text()
  for (const query of ['TOKEN=upper-token-secret', 'K%45Y=upper-key-secret', 'acc%65ss_token=access-secret', 'pass%77ord=password-secret', 'api%5Fkey=api-key-secret', 'Key=mixed-key-secret']) {
    await (await fetch(`${gw.url}/v1/models?${query}&x=1`)).text()
  }
  const all = JSON.stringify(gw.logs)
  for (const secret of [token, 'proxy-password-encoded', 'upper-token-secret', 'upper-key-secret', 'access-secret', 'password-secret', 'api-key-secret', 'mixed-key-secret']) {
    t.notOk(all.includes(secret), `${secret.slice(0, 12)}… is not logged`)
  }
  const urls = gw.logs.filter(l => l.msg === 'request').map(l => l.url as string)
  t.ok(urls.includes(`/v1/api/auth/validate?user_id=${userId}&tok%65n=${REDACTED}`), 'the name is kept as sent, the value redacted, other parameters kept')
  t.ok(urls.includes(`/v1beta/models?k%65y=${REDACTED}`))
})

/** Waits (a deadline, not a fixed time) until the sink holds `count` lines. */
async function linesIn (lines: string[], count: number): Promise<void> {
  const deadline = performance.now() + 5000
  while (lines.join('').trim().split('\n').length < count && performance.now() < deadline) await new Promise(resolve => setImmediate(resolve))
}

t.test('every line carries the time it was written, ISO-8601 UTC to the millisecond', async t => {
  // A fake clock (Date only): the second line is written 20 ms after the first without waiting 20 ms.
  const { mock } = await import('node:test')
  mock.timers.enable({ apis: ['Date'], now: Date.parse('2026-01-02T03:04:05.678Z') })
  t.teardown(() => mock.timers.reset())
  const lines: string[] = []
  const sink = new Writable({ write (chunk: Buffer, _e, done) { lines.push(chunk.toString()); done() } })
  const logger = createLogger({ level: 'info', destination: sink })
  const before = Date.now()
  logger.info('first')
  mock.timers.tick(20)
  logger.info('second')
  const after = Date.now()
  await linesIn(lines, 2)
  const times = lines.join('').trim().split('\n').map(l => JSON.parse(l).time as string)
  t.equal(times.length, 2)
  for (const time of times) t.match(time, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
  const [first, second] = times.map(time => Date.parse(time))
  t.ok(first >= before && second <= after, 'within the test')
  t.ok(second - first >= 15, `a later line has a later time (${second - first} ms apart)`)
})

t.test('secret fields are redacted at any depth in anything logged', async t => {
  const lines: string[] = []
  const sink = new Writable({ write (chunk: Buffer, _e, done) { lines.push(chunk.toString()); done() } })
  const logger = createLogger({ level: 'info', destination: sink })
  const err = Object.assign(new Error('upstream said no to https://x/y?key=abc123'), {
    config: { headers: { Authorization: 'Bearer ya29.secret-access', 'x-goog-api-key': 'AIzaSecret' }, data: { refresh_token: 'rt-secret' } },
  })
  logger.error({ err, request: { headers: { authorization: 'Basic dXNlcjpwYXNz', cookie: 'sid=1' }, body: { username: 'u', password: 'pw-secret', nested: [{ token: 't-secret', apiKey: 'k1', client_secret: 'cs' }] } } }, 'failed with Bearer abc.def-ghi')
  logger.info('plain message with ?token=tok-secret&ok=1')
  await linesIn(lines, 2)
  const out = lines.join('')
  for (const secret of ['ya29.secret-access', 'AIzaSecret', 'rt-secret', 'dXNlcjpwYXNz', 'sid=1', 'pw-secret', 't-secret', 'k1', '"cs"', 'abc123', 'abc.def-ghi', 'tok-secret']) {
    t.notOk(out.includes(secret), `${secret} redacted`)
  }
  t.match(out, /"username":"u"/, 'ordinary fields kept')
  t.match(out, /ok=1/)
  t.match(out, /upstream said no/, 'error message kept')
})

t.test('redact() is a pure copy: table of inputs and outputs', async t => {
  const cases: Array<[unknown, unknown]> = [
    ['no secrets here', 'no secrets here'],
    ['/path?key=abc&b=2', `/path?key=${REDACTED}&b=2`],
    ['https://h/p?a=1&access_token=xyz', `https://h/p?a=1&access_token=${REDACTED}`],
    ['Authorization: Bearer abc', `Authorization: Bearer ${REDACTED}`],
    [{ password: 'p', user: 'x' }, { password: REDACTED, user: 'x' }],
    [{ headers: { 'x-vendor-api-key': 'k', 'content-type': 'a' } }, { headers: { 'x-vendor-api-key': REDACTED, 'content-type': 'a' } }],
    [{ GEMINI_CREDENTIALS: '{}', credentialsFile: '/f' }, { GEMINI_CREDENTIALS: REDACTED, credentialsFile: REDACTED }],
    [{ tokenHash: 'h', passwordHash: 'h2' }, { tokenHash: REDACTED, passwordHash: REDACTED }],
    [[1, { key: 'k' }], [1, { key: REDACTED }]],
    ['/p?tok%65n=t&k%65y=k&KEY=K&Access_Token=a&pass%77ord=p&api%5Fkey=x&to+ken=kept', `/p?tok%65n=${REDACTED}&k%65y=${REDACTED}&KEY=${REDACTED}&Access_Token=${REDACTED}&pass%77ord=${REDACTED}&api%5Fkey=${REDACTED}&to+ken=kept`],
    ['/p?tok%zzen=kept&user_id=u', '/p?tok%zzen=kept&user_id=u'],
    ['connect to mongodb://gate:db-pw@mongo:27017/?authSource=admin failed', `connect to mongodb://gate:${REDACTED}@mongo:27017/?authSource=admin failed`],
    ['ada@example.com', 'ada@example.com'],
    [{ rawHeaders: ['x-goog-api-key', 'AIza', 'Authorization', 'Bearer b', 'accept', 'json'] }, { rawHeaders: ['x-goog-api-key', REDACTED, 'Authorization', REDACTED, 'accept', 'json'] }],
    [['password reset link sent', 'to ada'], ['password reset link sent', 'to ada']],
    [42, 42],
    [null, null],
  ]
  for (const [input, output] of cases) {
    const before = JSON.stringify(input)
    t.same(redact(input), output, JSON.stringify(input))
    t.equal(JSON.stringify(input), before, 'input unchanged')
  }
  const cyclic: Record<string, unknown> = { a: 1 }
  cyclic.self = cyclic
  t.same(redact(cyclic), { a: 1, self: '[…]' }, 'cycles do not loop')
})

t.test('keys never logged: an API key is redacted in a key field, a header, a query and free text', async t => {
  const secret = 'ghk_' + 'Q'.repeat(43)
  const out = JSON.stringify(redact({
    key: secret,
    apiKey: secret,
    headers: { 'x-goog-api-key': secret, authorization: `Bearer ${secret}` },
    url: `/v1beta/models?key=${secret}`,
    msg: `no such key ${secret} here`,
    rawHeaders: ['x-vendor-api-key', secret],
  }))
  t.notOk(out.includes('Q'.repeat(20)), out)
  t.match(JSON.parse(out), { key: REDACTED, apiKey: REDACTED, msg: `no such key ${REDACTED} here` })
})

t.test('a refusal says why in one info line: code, status, the field at fault and the message, never the body', async t => {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const gw = await startGateway({ ...ADMIN, GEMINI_AUTH_PASSWORD: 'proxy-password-secret', GEMINI_API_KEY: 'upstream-key', GEMINI_API_ENDPOINT: fake.url })
  t.teardown(gw.close)
  const body = JSON.stringify({ model: 'gemini-3.8-flash', max_tokens: 10, messages: [{ role: 'user', content: 'body-text-not-in-logs' }, { role: 'tool', content: 'x' }] })
  const res = await fetch(gw.url + '/v1/messages', { method: 'POST', body, headers: { 'x-api-key': 'proxy-password-secret', 'content-type': 'application/json' } })
  t.equal(res.status, 400)
  await res.text()
  const refusals = gw.logs.filter(l => l.code === 'INVALID_INPUT')
  t.equal(refusals.length, 1, 'one line')
  t.match(refusals[0], { level: 'info', route: '/v1/messages', status: 400, param: 'messages[1]', msg: 'messages[1].role must be user, assistant or system' })
  t.notOk(JSON.stringify(gw.logs).includes('body-text-not-in-logs'), 'the body is not logged')
})
