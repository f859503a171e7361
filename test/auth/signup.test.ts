// POST /auth/signup over HTTP: field rules, uniqueness, concurrency.
import t from 'tap'
import { startAuthHarness } from '../support/auth-harness.ts'

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
