// POST /auth/signup over HTTP: field rules, weak passwords, uniqueness, concurrency, the limit per address.
import t from 'tap'
import { startAuthHarness } from '../support/auth-harness.ts'
import type { Reply } from '../support/auth-client.ts'
import { DEFAULT_SIGNUP_LIMITS } from '../../lib/auth/options.ts'
import { weakPasswordReason } from '../../lib/auth/password-policy.ts'

t.test('sign-up answers 201 with a message and creates a default-level user', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const res = await h.signup('Alice', 'velvet-harbor-93')
  t.equal(res.status, 201)
  t.same(res.body, { message: 'User created successfully' })
  const login = await h.login('Alice', 'velvet-harbor-93')
  t.equal(login.status, 200)
  t.equal(login.body.access_level, 'default')
  t.equal(login.body.email, null, 'no email given: null')
  t.match(login.body.user_id, /^[0-9a-f]{24}$/, 'user_id is 24 hex characters')
  t.match(login.body.date_joined, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, 'date_joined is ISO-8601 UTC with Z')
})

t.test('usernames are 3-32 letters, digits, "_", "." or "-"', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const accepted = ['abc', 'A.b-c_9', 'x'.repeat(32), '...', '-_-']
  const refused = ['ab', 'x'.repeat(33), 'has space', 'semi;colon', 'slash/', 'at@sign', 'ålice', 'émile', '名前です', 'tab\there', 'nul\u0000byte']
  for (const name of accepted) t.equal((await h.signup(name, 'velvet-harbor-93')).status, 201, `accepted: ${name}`)
  const before = await h.snapshot()
  for (const name of refused) {
    const res = await h.signup(name, 'velvet-harbor-93')
    t.equal(res.status, 400, `refused: ${JSON.stringify(name)}`)
    t.type(res.body.detail, 'string')
  }
  t.equal(await h.snapshot(), before, 'no refused name was stored')
})

t.test('usernames are unique case-insensitively and keep their display form', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  t.equal((await h.signup('MixedCase', 'velvet-harbor-93')).status, 201)
  for (const clash of ['MixedCase', 'mixedcase', 'MIXEDCASE', 'mIxEdCaSe']) {
    const res = await h.signup(clash, 'velvet-harbor-93')
    t.equal(res.status, 400, clash)
    t.same(res.body, { detail: 'Username already exists' })
  }
  const login = await h.login('mixedcase', 'velvet-harbor-93')
  t.equal(login.body.username, 'MixedCase', 'display form as signed up')
})

t.test('passwords are 8-256 characters', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  t.equal((await h.signup('short_pw', '1234567')).status, 400)
  t.equal((await h.signup('long_pw', 'p'.repeat(257))).status, 400)
  t.equal((await h.signup('min_pw', 'k7#Qp2!x')).status, 201)
  t.equal((await h.signup('max_pw', 'p'.repeat(256))).status, 201)
  t.equal((await h.login('max_pw', 'p'.repeat(256))).status, 200)
  t.equal((await h.signup('unicode_pw', 'pässwörd-ünïcode-🔑')).status, 201)
  t.equal((await h.login('unicode_pw', 'pässwörd-ünïcode-🔑')).status, 200)
})

t.test('email is optional, validated, and stored lower-cased', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  t.equal((await h.signup('with_mail', 'velvet-harbor-93', 'Someone@Example.COM')).status, 201)
  t.equal((await h.login('with_mail', 'velvet-harbor-93')).body.email, 'someone@example.com')
  for (const bad of ['no-at-sign', 'two@@example.com', 'a@b', ' spaced@example.com', 'x'.repeat(250) + '@example.com']) {
    t.equal((await h.signup('bad_mail', 'velvet-harbor-93', bad)).status, 400, bad)
  }
  t.equal((await h.call('POST', '/auth/signup', { json: { username: 'empty_mail', password: 'velvet-harbor-93', email: '' } })).status, 201, 'an empty email means none')
  t.equal((await h.login('empty_mail', 'velvet-harbor-93')).body.email, null)
})

t.test('sign-up accepts only username, password and email', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const res = await h.call('POST', '/auth/signup', { json: { username: 'sneaky', password: 'velvet-harbor-93', access_level: 'hush' } })
  t.equal(res.status, 400)
  t.match(res.body.detail, /access_level.*not allowed/)
  t.equal((await h.login('sneaky', 'velvet-harbor-93')).status, 401, 'no account was created')
})

t.test('50 concurrent sign-ups of one username create exactly one account', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => h.signup(i % 2 === 0 ? 'racer' : 'RACER', `password-${i}`)))
  const created = replies.filter(r => r.status === 201)
  t.equal(created.length, 1, 'one 201')
  t.equal(replies.filter(r => r.status === 400 && r.body.detail === 'Username already exists').length, 49, 'forty-nine 400s')
  const users = JSON.parse(await h.snapshot()) as Array<{ usernameKey: string }>
  t.equal(users.filter(u => u.usernameKey === 'racer').length, 1, 'one stored account')
})

const COMMON = 'This password is one of the most common passwords; choose a less predictable one'
const HAS_USERNAME = 'The password must not contain the username'

t.test('a common password is refused at sign-up with 400 and a clear detail, in any letter case', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  for (const password of ['password123', 'PASSWORD123', 'iloveyou1', 'qwertyuiop', '1q2w3e4r5t']) {
    const res = await h.signup('weak_pw', password)
    t.equal(res.status, 400, password)
    t.same(res.body, { detail: COMMON })
  }
  t.equal(await h.store.users.findByUsernameKey('weak_pw'), null, 'no account was made')
  t.equal((await h.signup('weak_pw', 'velvet-harbor-93')).status, 201)
})

t.test('the common-password list holds at least 10,000 passwords, from @zxcvbn-ts/language-common', async t => {
  const { dictionary } = await import('@zxcvbn-ts/language-common')
  const list = dictionary['passwords-common']
  t.ok(list.length >= 10_000, `${list.length} passwords`)
  const longEnough = list.filter(p => p.length >= 8)
  t.ok(longEnough.length >= 10_000, `${longEnough.length} of them at least 8 characters long`)
  // Spot checks across the whole list, the far end included.
  for (const password of [longEnough[0], longEnough[5000], longEnough[10_000], longEnough[longEnough.length - 1]]) {
    t.equal(weakPasswordReason(password, 'someone'), COMMON, password)
  }
})

t.test('a password equal to or containing the username is refused at sign-up, in any letter case', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  for (const password of ['Maximilian', 'maximilian-2030!', 'xx-MAXIMILIAN-xx']) {
    const res = await h.signup('Maximilian', password)
    t.equal(res.status, 400, password)
    t.same(res.body, { detail: HAS_USERNAME })
  }
  t.equal((await h.signup('Maximilian', 'velvet-harbor-93')).status, 201)
})

t.test('sign-ups are limited per client address: the 11th within an hour answers 429 with Retry-After, other addresses go on', async t => {
  const h = await startAuthHarness({ trustedProxies: '127.0.0.1', signupLimits: DEFAULT_SIGNUP_LIMITS })
  t.teardown(h.close)
  const signupFrom = (address: string, username: string): Promise<Reply> =>
    h.call('POST', '/auth/signup', { json: { username, password: 'velvet-harbor-93' }, headers: { 'x-forwarded-for': address } })
  for (let i = 0; i < 10; i++) t.equal((await signupFrom('203.0.113.5', `farm_${i}`)).status, 201)
  h.advance(600)
  const refused = await signupFrom('203.0.113.5', 'farm_10')
  t.equal(refused.status, 429)
  t.same(refused.body, { detail: 'Too many sign-ups from this address; try again later' })
  t.equal(refused.headers['retry-after'], '3000', 'the rest of the hour')
  t.equal(await h.store.users.findByUsernameKey('farm_10'), null)
  t.equal((await signupFrom('2001:db8:5:5::1', 'farm_v6_0')).status, 201, 'another client')
  t.equal((await signupFrom('203.0.113.6', 'farm_other')).status, 201, 'another client')
  h.advance(3001)
  t.equal((await signupFrom('203.0.113.5', 'farm_10')).status, 201, 'the next hour')
})

t.test('sign-ups from one IPv6 /64 share one limit', async t => {
  const h = await startAuthHarness({ trustedProxies: '127.0.0.1', signupLimits: { perAddress: 2 } })
  t.teardown(h.close)
  const signupFrom = (address: string, username: string): Promise<Reply> =>
    h.call('POST', '/auth/signup', { json: { username, password: 'velvet-harbor-93' }, headers: { 'x-forwarded-for': address } })
  t.equal((await signupFrom('2001:db8:7:7::1', 'six_a')).status, 201)
  t.equal((await signupFrom('2001:db8:7:7:ffff::2', 'six_b')).status, 201)
  t.equal((await signupFrom('2001:db8:7:7::3', 'six_c')).status, 429, 'a third address of the same /64')
})

t.test('publicSignup: false closes sign-up with 403 SIGNUP_CLOSED before the body is judged; it must be a boolean', async t => {
  const h = await startAuthHarness({ publicSignup: false })
  t.teardown(h.close)
  for (const password of ['velvet-harbor-93', 'password']) {
    const res = await h.signup('Alice', password)
    t.same([res.status, res.body], [403, { detail: 'Sign-up is closed here: ask an admin to add you' }], `refused (password ${password})`)
  }
  t.equal((await h.login('Alice', 'velvet-harbor-93')).status, 401, 'no user was made')
  const { createAuthService, createEmbeddedStore } = await import('../../lib/index.ts')
  const store = await createEmbeddedStore({})
  t.teardown(() => store.close())
  t.throws(() => createAuthService({ store, publicSignup: 'no' as unknown as boolean }), { option: 'publicSignup', message: 'createAuthService: publicSignup must be true or false (got no)' })
})
