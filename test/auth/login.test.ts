// POST /auth/login over HTTP: the answer, credentials, user-agent, and the failed-login limiter.
import t from 'tap'
import { startAuthHarness, ADMIN_PASSWORD } from '../support/auth-harness.ts'
import type { AuthHarness } from '../support/auth-harness.ts'
import { DEVICE } from '../support/auth-client.ts'
import type { Reply } from '../support/auth-client.ts'

t.test('login answers user_id, username, email, access_level, date_joined, access_token and token_type bearer', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  await h.signup('Login_User', 'velvet-harbor-93', 'Login@Example.com')
  const res = await h.login('login_user', 'velvet-harbor-93')
  t.equal(res.status, 200)
  t.same(Object.keys(res.body).sort(), ['access_level', 'access_token', 'date_joined', 'email', 'token_type', 'user_id', 'username'])
  t.match(res.body, {
    user_id: /^[0-9a-f]{24}$/,
    username: 'Login_User',
    email: 'login@example.com',
    access_level: 'default',
    date_joined: /Z$/,
    access_token: /^[A-Za-z0-9_-]{43}$/,
    token_type: 'bearer',
  })
  t.equal(res.headers['cache-control'], 'no-store', 'the token is not cached')
  t.same(h.events.filter(e => e === 'login_success' || e === 'session_created'), ['session_created', 'login_success'])
})

t.test('wrong password and unknown username both answer 401 Invalid credentials', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  await h.signup('known', 'velvet-harbor-93')
  const wrong = await h.login('known', 'password124')
  const unknown = await h.login('nobody_here', 'velvet-harbor-93')
  t.equal(wrong.status, 401)
  t.equal(unknown.status, 401)
  t.same(wrong.body, { detail: 'Invalid credentials' })
  t.same(unknown.body, wrong.body, 'the same answer: no username enumeration')
  t.equal(h.events.filter(e => e === 'login_failure').length, 2)
})

t.test('login requires the user-agent header (400)', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  await h.signup('no_agent', 'velvet-harbor-93')
  const missing = await h.call('POST', '/auth/login', { json: { username: 'no_agent', password: 'velvet-harbor-93' } })
  t.equal(missing.status, 400)
  t.same(missing.body, { detail: 'The user-agent header is required' })
  const blank = await h.call('POST', '/auth/login', { json: { username: 'no_agent', password: 'velvet-harbor-93' }, headers: { 'user-agent': '   ' } })
  t.equal(blank.status, 400)
  t.notOk(h.events.includes('session_created'), 'no session was opened')
})

t.test('after 5 failed logins for a username, login answers 429 with Retry-After until the window passes', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  await h.signup('target', 'velvet-harbor-93')
  for (let i = 1; i <= 5; i++) t.equal((await h.login('target', `wrong-${i}-pass`)).status, 401, `failure ${i}`)
  const locked = await h.login('target', 'velvet-harbor-93')
  t.equal(locked.status, 429, 'even the right password is refused while locked')
  t.same(locked.body, { detail: 'Too many failed login attempts; try again later' })
  t.equal(locked.headers['retry-after'], '900', 'Retry-After: the rest of the 15-minute window')
  t.ok(h.events.includes('login_lockout'))
  h.advance(600)
  const later = await h.login('TARGET', 'velvet-harbor-93')
  t.equal(later.status, 429, 'still locked 10 minutes in, whatever the case of the name')
  t.equal(later.headers['retry-after'], '300')
  h.advance(301)
  t.equal((await h.login('target', 'velvet-harbor-93')).status, 200, 'the window has passed')
})

t.test('a successful login clears the username failure count', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  await h.signup('forgetful', 'velvet-harbor-93')
  for (let i = 0; i < 4; i++) t.equal((await h.login('forgetful', 'not-the-password')).status, 401)
  t.equal((await h.login('forgetful', 'velvet-harbor-93')).status, 200)
  for (let i = 0; i < 5; i++) t.equal((await h.login('forgetful', 'not-the-password')).status, 401, 'five fresh failures allowed')
  t.equal((await h.login('forgetful', 'velvet-harbor-93')).status, 429)
})

t.test('unknown usernames are locked out like known ones', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  for (let i = 0; i < 5; i++) t.equal((await h.login('ghost', 'whatever-pass')).status, 401)
  t.equal((await h.login('ghost', 'whatever-pass')).status, 429)
})

t.test('30 failed logins from one client address lock that address out for every username', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  await h.signup('bystander', 'velvet-harbor-93')
  // 30 failures spread over 10 usernames: no single username reaches its own limit.
  for (let i = 0; i < 30; i++) t.equal((await h.login(`spray_${i % 10}`, 'guess-pass')).status, 401)
  const res = await h.login('bystander', 'velvet-harbor-93')
  t.equal(res.status, 429, 'the address is locked')
  t.ok(Number(res.headers['retry-after']) > 0)
  h.advance(901)
  t.equal((await h.login('bystander', 'velvet-harbor-93')).status, 200, 'until the window passes')
})

t.test('parallel guesses cannot slip past the username limit', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  await h.signup('parallel', 'velvet-harbor-93')
  const replies = await Promise.all(Array.from({ length: 20 }, () => h.login('parallel', 'wrong-guess')))
  t.equal(replies.filter(r => r.status === 401).length, 5, 'only five guesses were checked')
  t.equal(replies.filter(r => r.status === 429).length, 15)
})

t.test('login limits are configurable', async t => {
  const h = await startAuthHarness({ loginLimits: { perUsername: 2, windowSeconds: 60 } })
  t.teardown(h.close)
  await h.signup('tight', 'velvet-harbor-93')
  await h.login('tight', 'bad-password')
  await h.login('tight', 'bad-password')
  const res = await h.login('tight', 'velvet-harbor-93')
  t.equal(res.status, 429)
  t.equal(res.headers['retry-after'], '60')
})

t.test('logging in from the same device replaces that device\'s session; other devices keep theirs', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  await h.signup('multi', 'velvet-harbor-93')
  const first = await h.login('multi', 'velvet-harbor-93', DEVICE)
  const other = await h.login('multi', 'velvet-harbor-93', 'other-device/2.0')
  const second = await h.login('multi', 'velvet-harbor-93', DEVICE)
  t.not(second.body.access_token, first.body.access_token, 'a new token')
  t.equal((await h.validate(first.body.user_id, first.body.access_token, DEVICE)).status, 401, 'the replaced token is dead')
  t.equal((await h.validate(second.body.user_id, second.body.access_token, DEVICE)).status, 200)
  t.equal((await h.validate(other.body.user_id, other.body.access_token, 'other-device/2.0')).status, 200, 'the other device is untouched')
})

// The tests below trust 127.0.0.1 as a proxy, so each request can name its client in X-Forwarded-For.
const loginFrom = (h: AuthHarness, address: string, username: string, password: string): Promise<Reply> =>
  h.call('POST', '/auth/login', { json: { username, password }, headers: { 'user-agent': DEVICE, 'x-forwarded-for': address } })

t.test('a correct password is never refused because of what other clients did: an attacker on other addresses only delays the owner, at most 4 s', async t => {
  const h = await startAuthHarness({ trustedProxies: '127.0.0.1' })
  t.teardown(h.close)
  await h.signup('owner', 'velvet-harbor-93')
  // 12 addresses, each guessing until refused: 60 wrong passwords for one account, and again for `system`
  // (each waits out its delay on the fake clock: 7 minutes in all, inside the 15-minute window).
  for (const username of ['owner', 'system']) {
    for (let a = 1; a <= 12; a++) {
      for (let i = 0; i < 5; i++) t.equal((await loginFrom(h, `203.0.113.${a}`, username, `guess-${a}-${i}-pw`)).status, 401)
      const refused = await loginFrom(h, `203.0.113.${a}`, username, `guess-${a}-last`)
      t.equal(refused.status, 429, 'that address may no longer try that account')
      t.ok(Number(refused.headers['retry-after']) > 0, 'with Retry-After')
    }
  }
  h.delays.length = 0
  const owner = await loginFrom(h, '198.51.100.7', 'owner', 'velvet-harbor-93')
  t.equal(owner.status, 200, "the owner logs in from their own address")
  const admin = await loginFrom(h, '198.51.100.8', 'system', ADMIN_PASSWORD)
  t.equal(admin.status, 200, 'so does the system user')
  t.same(h.delays, [4000, 4000], 'each after the longest delay, 4 s')
})

t.test('guessing one account from many addresses is slowed progressively: 0.5 s after 5 failures, doubling to at most 4 s', async t => {
  const h = await startAuthHarness({ trustedProxies: '127.0.0.1' })
  t.teardown(h.close)
  await h.signup('slowed', 'velvet-harbor-93')
  for (let a = 1; a <= 9; a++) t.equal((await loginFrom(h, `192.0.2.${a}`, 'slowed', 'wrong-password')).status, 401)
  t.same(h.delays, [500, 1000, 2000, 4000], 'no delay for the first 5 failures, then 0.5, 1, 2, 4 s')
  h.advance(900)
  h.delays.length = 0
  t.equal((await loginFrom(h, '192.0.2.100', 'slowed', 'velvet-harbor-93')).status, 200)
  t.same(h.delays, [], 'the delays end with the 15-minute window')
})

t.test('one address failing 5 times for one account is refused for that account only', async t => {
  const h = await startAuthHarness({ trustedProxies: '127.0.0.1' })
  t.teardown(h.close)
  await h.signup('alice', 'velvet-harbor-93')
  await h.signup('bob_b', 'velvet-harbor-93')
  for (let i = 0; i < 5; i++) t.equal((await loginFrom(h, '192.0.2.1', 'alice', 'wrong-password')).status, 401)
  const refused = await loginFrom(h, '192.0.2.1', 'alice', 'velvet-harbor-93')
  t.equal(refused.status, 429)
  t.same(refused.body, { detail: 'Too many failed login attempts; try again later' })
  t.equal(refused.headers['retry-after'], '900')
  t.equal((await loginFrom(h, '192.0.2.1', 'bob_b', 'velvet-harbor-93')).status, 200, 'another account from that address')
  t.equal((await loginFrom(h, '192.0.2.2', 'alice', 'velvet-harbor-93')).status, 200, 'that account from another address')
})

t.test('IPv6 clients are counted per /64: another address of the same /64 is the same client', async t => {
  const h = await startAuthHarness({ trustedProxies: '127.0.0.1' })
  t.teardown(h.close)
  await h.signup('six', 'velvet-harbor-93')
  for (let i = 1; i <= 5; i++) t.equal((await loginFrom(h, `2001:db8:1:2::${i}`, 'six', 'wrong-password')).status, 401)
  t.equal((await loginFrom(h, '2001:0DB8:0001:0002:ffff:0:0:9', 'six', 'velvet-harbor-93')).status, 429, 'the same /64, spelled differently')
  t.equal((await loginFrom(h, '2001:db8:1:3::1', 'six', 'velvet-harbor-93')).status, 200, 'the next /64 is another client')
})

t.test('a delayed login holds no password-hashing slot: other logins go on meanwhile', async t => {
  const waiting: Array<() => void> = []
  const h = await startAuthHarness({
    trustedProxies: '127.0.0.1',
    argon2Concurrency: 1,
    sleep: () => new Promise<void>(resolve => waiting.push(resolve)),
    loginLimits: { delayAfter: 1 },
  })
  t.teardown(h.close)
  await h.signup('delayed', 'velvet-harbor-93')
  await h.signup('bystander2', 'velvet-harbor-93')
  t.equal((await loginFrom(h, '192.0.2.1', 'delayed', 'wrong-password')).status, 401)
  const held = loginFrom(h, '192.0.2.2', 'delayed', 'velvet-harbor-93')
  while (waiting.length === 0) await new Promise(resolve => setImmediate(resolve))
  t.equal((await loginFrom(h, '192.0.2.3', 'bystander2', 'velvet-harbor-93')).status, 200, 'served while the delayed login waits')
  waiting[0]()
  t.equal((await held).status, 200, 'and the delayed one is served once its delay is over')
})
