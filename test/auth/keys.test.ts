// Per-user API keys over HTTP (docs/accounts.md, "API keys"), and resolveKey, the proxy's question about a secret.
import t from 'tap'
import { startAuthHarness } from '../support/auth-harness.ts'
import type { AuthHarness, TestUser } from '../support/auth-harness.ts'
import type { Reply } from '../support/auth-client.ts'
import { createAuthService, createEmbeddedStore, ConfigurationError } from '../../lib/index.ts'
import { CHEAP_ARGON2 } from '../support/auth-harness.ts'
import { tokenDigest } from '../../lib/auth/tokens.ts'

type Who = Pick<TestUser, 'userId' | 'token' | 'device'>

const createKey = (h: AuthHarness, who: Who, json: unknown, query: Record<string, string> = {}): Promise<Reply> =>
  h.call('POST', '/auth/keys', { query: { user_id: who.userId, ...query }, headers: { 'user-agent': who.device, token: who.token }, json })
const listKeys = (h: AuthHarness, who: Who): Promise<Reply> =>
  h.call('GET', '/auth/keys', { query: { user_id: who.userId }, headers: { 'user-agent': who.device, authorization: `Bearer ${who.token}` } })
const deleteKey = (h: AuthHarness, who: Who, keyId: string): Promise<Reply> =>
  h.call('DELETE', `/auth/keys/${keyId}`, { query: { user_id: who.userId, token: who.token }, headers: { 'user-agent': who.device } })
const adminListKeys = (h: AuthHarness, admin: Who, userId: string): Promise<Reply> =>
  h.call('GET', `/admin/user/${userId}/keys`, { query: { admin_id: admin.userId, token: admin.token }, headers: { 'user-agent': admin.device } })
const adminDeleteKey = (h: AuthHarness, admin: Who, keyId: string): Promise<Reply> =>
  h.call('DELETE', `/admin/keys/${keyId}`, { query: { admin_id: admin.userId, token: admin.token }, headers: { 'user-agent': admin.device } })
const setLevel = (h: AuthHarness, admin: Who, userId: string, level: string): Promise<Reply> =>
  h.call('PUT', `/admin/user/${userId}/access-level`, { query: { admin_id: admin.userId, token: admin.token }, headers: { 'user-agent': admin.device }, json: { access_level: level } })
const setDisabled = (h: AuthHarness, admin: Who, userId: string, disabled: boolean): Promise<Reply> =>
  h.call('PUT', `/admin/user/${userId}/status`, { query: { admin_id: admin.userId, token: admin.token }, headers: { 'user-agent': admin.device }, json: { disabled } })

/** A harness, its admin, and a user at level member (the default minimum). */
async function setup (options: Parameters<typeof startAuthHarness>[0] = {}): Promise<{ h: AuthHarness, admin: TestUser, user: TestUser }> {
  const h = await startAuthHarness(options)
  const admin = await h.admin()
  const user = await h.newUser()
  const promoted = await setLevel(h, admin, user.userId, 'member')
  if (promoted.status !== 200) throw new Error(`promotion answered ${promoted.status}`)
  return { h, admin, user }
}

const storedKeys = async (h: AuthHarness, userId: string): Promise<string> => JSON.stringify(await h.store.keys.listByUser(userId))

t.test('a key cannot be created for a model its owner\'s level may not use: 400 naming the model (GEMINI_MODEL_ACCESS)', async t => {
  const { h, user } = await setup({ modelAccess: { member: ['gemini-2.5-flash*'] } })
  t.teardown(h.close)
  const refused = await createKey(h, user, { name: 'pro', models: ['gemini-2.5-flash', 'gemini-2.5-pro'] })
  t.equal(refused.status, 400)
  t.match(refused.body.detail, /Access level member may not use the model `gemini-2\.5-pro`/)
  const wide = await createKey(h, user, { name: 'wide', models: ['gemini-3-*'] })
  t.equal(wide.status, 400, 'a pattern sharing no model name with the level\'s')
  t.match(wide.body.detail, /`gemini-3-\*`/)
  for (const models of [['gemini-2.5-flash-lite'], ['gemini-*'], ['gemini-2.5-flash*'], ['*']]) {
    t.equal((await createKey(h, user, { name: 'fits', models })).status, 201, `${models[0]} names a model the level may use`)
  }
  t.equal((await createKey(h, user, { name: 'all' })).status, 201, 'a key without models is held to the level\'s at each call')
  t.equal(await h.store.keys.listByUser(user.userId).then(k => k.length), 5, 'the refused keys were not stored')
})

t.test('createAuthService refuses a modelAccess that is not patterns by level, naming the option', async t => {
  const store = await createEmbeddedStore()
  t.teardown(() => store.close())
  t.throws(() => createAuthService({ store, modelAccess: { member: 'gemini-*' } as never }), { constructor: ConfigurationError, message: /^createAuthService: modelAccess\.member must be an array of model-name patterns/ })
})

t.test('POST /auth/keys answers 201 with the key once; GET lists it without secrets', async t => {
  const { h, user } = await setup()
  t.teardown(h.close)
  const created = await createKey(h, user, { name: 'laptop script', expires_in_days: 30, models: ['gemini-2.5-*'] })
  t.equal(created.status, 201)
  t.same(Object.keys(created.body).sort(), ['created_at', 'expires_at', 'key', 'key_id', 'models', 'name', 'prefix', 'usd_per_month'])
  t.match(created.body, { key_id: /^[0-9a-f]{24}$/, name: 'laptop script', key: /^ghk_[A-Za-z0-9_-]{43}$/, models: ['gemini-2.5-*'] })
  t.equal(created.body.prefix, created.body.key.slice(0, 12))
  t.equal(Date.parse(created.body.expires_at) - Date.parse(created.body.created_at), 30 * 86_400_000)
  t.equal(created.headers['cache-control'], 'no-store')
  h.advance(1) // listed by created_at
  const bare = await createKey(h, user, { name: 'no expiry' })
  t.match(bare.body, { models: null })
  t.equal(Date.parse(bare.body.expires_at) - Date.parse(bare.body.created_at), 90 * 86_400_000, 'without expires_in_days: the default 90 days')

  const list = await listKeys(h, user)
  t.equal(list.status, 200)
  t.same(list.body.map((k: { name: string }) => k.name), ['laptop script', 'no expiry'])
  t.same(Object.keys(list.body[0]).sort(), ['created_at', 'expires_at', 'key_id', 'last_used_at', 'models', 'name', 'prefix', 'usd_per_month'])
  t.match(list.body[0], { key_id: created.body.key_id, prefix: created.body.prefix, last_used_at: null })
  t.notOk(list.text.includes(created.body.key), 'the secret is never listed')
  t.notOk(list.text.includes(tokenDigest(created.body.key)), 'nor its digest')
})

t.test('an API key is shown once and only its digest is stored', async t => {
  const { h, user, admin } = await setup()
  t.teardown(h.close)
  const { key, key_id: keyId } = (await createKey(h, user, { name: 'ci' })).body
  const stored = await h.store.keys.get(keyId)
  t.equal(stored?.digest, tokenDigest(key))
  t.notOk(JSON.stringify(stored).includes(key.slice(4)), 'the store holds no part of the secret beyond the shown prefix')
  for (const reply of [await listKeys(h, user), await adminListKeys(h, admin, user.userId)]) {
    t.equal(reply.status, 200)
    t.notOk(reply.text.includes(key), 'no answer after the creation holds the secret')
    t.notOk(reply.text.includes(stored!.digest), 'nor the digest')
  }
  t.notOk(JSON.stringify(h.logs).includes(key.slice(12)), 'nor any log line')
})

t.test('DELETE /auth/keys/{key_id} removes the caller\'s key: 200 {message}, then 404', async t => {
  const { h, user } = await setup()
  t.teardown(h.close)
  const { key_id: keyId } = (await createKey(h, user, { name: 'ci' })).body
  const deleted = await deleteKey(h, user, keyId)
  t.equal(deleted.status, 200)
  t.same(Object.keys(deleted.body), ['message'])
  t.same((await listKeys(h, user)).body, [])
  t.same([(await deleteKey(h, user, keyId)).status, (await deleteKey(h, user, keyId)).body], [404, { detail: 'API key not found' }])
})

t.test('another user\'s key cannot be listed or deleted (404)', async t => {
  const { h, admin, user } = await setup()
  t.teardown(h.close)
  const other = await h.newUser()
  t.equal((await setLevel(h, admin, other.userId, 'member')).status, 200)
  const { key_id: keyId, key } = (await createKey(h, user, { name: 'mine' })).body
  const theirs = await deleteKey(h, other, keyId)
  t.same([theirs.status, theirs.body], [404, { detail: 'API key not found' }])
  t.same((await listKeys(h, other)).body, [], 'the other user lists only their own keys')
  // A user id of someone else beside one's own token is no session of theirs.
  const forged = await h.call('GET', '/auth/keys', { query: { user_id: user.userId }, headers: { 'user-agent': other.device, token: other.token } })
  t.equal(forged.status, 401)
  t.equal((await listKeys(h, user)).body.length, 1, 'the key is still there')
  t.ok(await h.service.resolveKey(key), 'and still works')
})

t.test('admin routes list and delete any user\'s keys; below hush 403; unknown ids 404', async t => {
  const { h, admin, user } = await setup()
  t.teardown(h.close)
  const { key_id: keyId, key } = (await createKey(h, user, { name: 'ci' })).body
  const listed = await adminListKeys(h, admin, user.userId)
  t.equal(listed.status, 200)
  t.match(listed.body, [{ key_id: keyId, name: 'ci', last_used_at: null }])
  t.notOk('key' in listed.body[0])
  t.same([(await adminListKeys(h, admin, 'f'.repeat(24))).status], [404], 'an unknown user')
  for (const reply of [await adminListKeys(h, user, user.userId), await adminDeleteKey(h, user, keyId)]) {
    t.same([reply.status, reply.body], [403, { detail: 'Insufficient permissions' }])
  }
  const deleted = await adminDeleteKey(h, admin, keyId)
  t.same([deleted.status, Object.keys(deleted.body)], [200, ['message']])
  t.equal(await h.service.resolveKey(key), undefined, 'a deleted key stops at once on the replica that deleted it')
  t.same([(await adminDeleteKey(h, admin, keyId)).status], [404])
})

t.test('the key routes need user-agent and a live session', async t => {
  const { h, user, admin } = await setup()
  t.teardown(h.close)
  const noAgent = await h.call('POST', '/auth/keys', { query: { user_id: user.userId, token: user.token }, json: { name: 'x' } })
  t.same([noAgent.status, noAgent.body], [400, { detail: 'The user-agent header is required' }])
  t.equal((await h.call('GET', '/auth/keys', { query: { user_id: user.userId }, headers: { 'user-agent': user.device } })).status, 401, 'no token')
  t.equal((await listKeys(h, { ...user, token: 'A'.repeat(43) })).status, 401, 'an unknown token')
  t.equal((await listKeys(h, { ...user, device: 'another device' })).status, 401, 'another device')
  t.equal((await h.call('GET', `/admin/user/${user.userId}/keys`, { query: { admin_id: admin.userId }, headers: { 'user-agent': admin.device } })).status, 401)
  t.same(await h.store.keys.listByUser(user.userId), [])
})

t.test('a user below PROXY_MIN_ACCESS_LEVEL cannot create keys (403)', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const admin = await h.admin()
  const user = await h.newUser() // level default, below the default minimum member
  const refused = await createKey(h, user, { name: 'ci' })
  t.same([refused.status, refused.body], [403, { detail: 'Only users at level member or above may create API keys' }])
  t.same(await h.store.keys.listByUser(user.userId), [])
  t.equal((await setLevel(h, admin, user.userId, 'member')).status, 200)
  t.equal((await createKey(h, user, { name: 'ci' })).status, 201, 'at the minimum it may')

  const strict = await startAuthHarness({ proxyMinAccessLevel: 'dev' })
  t.teardown(strict.close)
  const strictAdmin = await strict.admin()
  const member = await strict.newUser()
  t.equal((await setLevel(strict, strictAdmin, member.userId, 'admin')).status, 200)
  t.equal((await createKey(strict, member, { name: 'ci' })).status, 403, 'admin is below dev')
  t.equal((await createKey(strict, strictAdmin, { name: 'ci' })).status, 201, 'hush is above dev')
})

t.test('hostile input on the key routes answers 4xx and changes no stored key', async t => {
  const { h, admin, user } = await setup()
  t.teardown(h.close)
  const { key_id: keyId } = (await createKey(h, user, { name: 'keep me' })).body
  const before = await storedKeys(h, user.userId)
  const bodies: unknown[] = [
    undefined, null, [], 'name', 42, {},
    { name: '' }, { name: 'x'.repeat(65) }, { name: 'x'.repeat(70_000) }, { name: 42 }, { name: ['a'] }, { name: { $gt: '' } },
    { name: 'line\nbreak' }, { name: 'bell\u0007' }, { name: 'rtl\u202eoverride' },
    { name: 'ok', expires_in_days: 0 }, { name: 'ok', expires_in_days: 3651 }, { name: 'ok', expires_in_days: '30' },
    { name: 'ok', expires_in_days: 1.5 }, { name: 'ok', expires_in_days: { $gt: 0 } }, { name: 'ok', expires_in_days: null },
    { name: 'ok', models: [] }, { name: 'ok', models: 'gemini-*' }, { name: 'ok', models: ['a b'] }, { name: 'ok', models: ['$where'] },
    { name: 'ok', models: [{ $ne: null }] }, { name: 'ok', models: ['m'.repeat(129)] }, { name: 'ok', models: Array.from({ length: 33 }, (_, i) => `m${i}`) },
    { name: 'ok', models: ['a', 'a'] }, { name: 'ok', user_id: admin.userId }, { name: 'ok', key: 'ghk_chosen' }, { name: 'ok', $set: { userId: admin.userId } },
    JSON.parse('{"name":"ok","__proto__":{"admin":true}}'),
  ]
  for (const json of bodies) {
    const res = await createKey(h, user, json)
    t.ok(res.status >= 400 && res.status < 500, `body ${JSON.stringify(json)?.slice(0, 60)} → ${res.status}`)
    t.ok(res.text.length < 400, 'the answer does not echo the input')
  }
  const raw = await h.call('POST', '/auth/keys', { query: { user_id: user.userId }, headers: { 'user-agent': user.device, token: user.token, 'content-type': 'application/json' }, raw: '{"name":' })
  t.equal(raw.status, 400)
  const queries: Array<Record<string, string>> = [{ extra: '1' }, { 'user_id[$ne]': 'x' }]
  for (const query of queries) t.equal((await createKey(h, user, { name: 'ok' }, query)).status, 400, JSON.stringify(query))
  for (const id of ['not-hex', '0'.repeat(23), '0'.repeat(25), '%24ne', 'x'.repeat(5000)]) {
    const own = await deleteKey(h, user, id)
    t.ok(own.status >= 400 && own.status < 500, `DELETE /auth/keys/${id.slice(0, 10)} → ${own.status}`)
    const asAdmin = await adminDeleteKey(h, admin, id)
    t.ok(asAdmin.status >= 400 && asAdmin.status < 500, `DELETE /admin/keys/${id.slice(0, 10)} → ${asAdmin.status}`)
    const listing = await adminListKeys(h, admin, id)
    t.ok(listing.status >= 400 && listing.status < 500, `GET /admin/user/${id.slice(0, 10)}/keys → ${listing.status}`)
  }
  const adminWrongQuery = await h.call('DELETE', `/admin/keys/${keyId}`, { query: { admin_id: admin.userId, token: admin.token, extra: 'x' }, headers: { 'user-agent': admin.device } })
  t.equal(adminWrongQuery.status, 400)
  const listExtra = await h.call('GET', '/auth/keys', { query: { user_id: user.userId, token: user.token, limit: '5' }, headers: { 'user-agent': user.device } })
  t.equal(listExtra.status, 400)
  t.equal(await storedKeys(h, user.userId), before, 'the store is unchanged')
  t.same(await h.store.keys.listByUser(admin.userId), [])
})

t.test('a user holds at most 100 keys (400 TOO_MANY_KEYS beyond)', async t => {
  const { h, user } = await setup()
  t.teardown(h.close)
  for (let i = 0; i < 100; i++) {
    await h.store.keys.create({ keyId: i.toString(16).padStart(24, '0'), userId: user.userId, name: `k${i}`, digest: tokenDigest(`k${i}`), prefix: 'ghk_', createdAt: new Date(), expiresAt: null, models: null })
  }
  const refused = await createKey(h, user, { name: 'one more' })
  t.same([refused.status, refused.body], [400, { detail: 'This user holds as many API keys as allowed (100); delete one first' }])
  t.equal((await h.store.keys.listByUser(user.userId)).length, 100)
})

t.test('resolveKey answers the caller of a live key', async t => {
  const { h, user } = await setup()
  t.teardown(h.close)
  const { key, key_id: keyId } = (await createKey(h, user, { name: 'ci', models: ['gemini-*'] })).body
  t.same(await h.service.resolveKey(key), { kind: 'key', userId: user.userId, keyId, accessLevel: 'member', models: ['gemini-*'] })
  for (const junk of ['', 'ghk_', key + 'x', key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A'), 'A'.repeat(43), `Bearer ${key}`]) {
    t.equal(await h.service.resolveKey(junk), undefined, `not a live key: ${junk.slice(0, 8)}`)
  }
})

t.test('resolveKey: secrets without the ghk_ prefix are answered without a store lookup; answers are cached', async t => {
  const { h, user } = await setup()
  t.teardown(h.close)
  const { key } = (await createKey(h, user, { name: 'ci' })).body
  let lookups = 0
  const findByDigest = h.store.keys.findByDigest.bind(h.store.keys)
  h.store.keys.findByDigest = async (digest) => { lookups++; return await findByDigest(digest) }
  t.equal(await h.service.resolveKey('sk-not-ours-' + 'x'.repeat(40)), undefined)
  t.equal(lookups, 0, 'no lookup for a foreign secret')
  await h.service.resolveKey(key)
  await h.service.resolveKey(key)
  t.equal(lookups, 1, 'the second answer came from the cache')
  const unknown = 'ghk_' + 'Z'.repeat(43)
  await h.service.resolveKey(unknown)
  await h.service.resolveKey(unknown)
  t.equal(lookups, 2, 'a negative answer is cached too')
  h.advance(4)
  await h.service.resolveKey(key)
  t.equal(lookups, 3, 'after 4 s the store is asked again')
})

t.test('resolveKey records last use at most once a minute', async t => {
  const { h, user } = await setup()
  t.teardown(h.close)
  const { key, key_id: keyId } = (await createKey(h, user, { name: 'ci' })).body
  let touches = 0
  const touch = h.store.keys.touch.bind(h.store.keys)
  h.store.keys.touch = async (id, at) => { touches++; await touch(id, at) }
  await h.service.resolveKey(key)
  await new Promise(resolve => setImmediate(resolve))
  t.equal(touches, 1)
  const used = (await h.store.keys.get(keyId))?.lastUsedAt
  t.ok(used instanceof Date)
  for (let i = 0; i < 10; i++) { h.advance(5); await h.service.resolveKey(key) }
  t.equal(touches, 1, 'not again within the minute, across cache refreshes')
  h.advance(11)
  await h.service.resolveKey(key)
  await new Promise(resolve => setImmediate(resolve))
  t.equal(touches, 2)
  t.match((await listKeys(h, user)).body[0], { last_used_at: /Z$/ })
})

t.test('a revoked key stops resolving within 5 seconds', async t => {
  // Two services on one store: two replicas. The one that did not revoke the key answers from its cache for
  // at most KEY_CACHE_MS (4 s).
  const { h, user } = await setup()
  t.teardown(h.close)
  let clock = Date.now()
  const replica = createAuthService({ store: h.store, argon2: CHEAP_ARGON2, now: () => new Date(clock) })
  const { key, key_id: keyId } = (await createKey(h, user, { name: 'ci' })).body
  t.ok(await replica.resolveKey(key), 'live on the other replica')
  t.equal((await deleteKey(h, user, keyId)).status, 200)
  t.equal(await h.service.resolveKey(key), undefined, 'at once on the replica that revoked it')
  clock += 4000
  t.equal(await replica.resolveKey(key), undefined, 'within 4 s on the other')

  const expiring = (await createKey(h, user, { name: 'short', expires_in_days: 1 })).body
  t.ok(await h.service.resolveKey(expiring.key))
  h.advance(86_400)
  t.equal(await h.service.resolveKey(expiring.key), undefined, 'an expired key stops at its expiry, cached or not')
})

t.test('a key of a disabled user or one below PROXY_MIN_ACCESS_LEVEL stops resolving within 5 seconds', async t => {
  const { h, admin, user } = await setup()
  t.teardown(h.close)
  let clock = Date.now()
  const replica = createAuthService({ store: h.store, argon2: CHEAP_ARGON2, now: () => new Date(clock) })
  const { key } = (await createKey(h, user, { name: 'ci' })).body
  t.ok(await h.service.resolveKey(key))
  t.ok(await replica.resolveKey(key))

  t.equal((await setDisabled(h, admin, user.userId, true)).status, 200)
  t.equal(await h.service.resolveKey(key), undefined, 'disabled: at once on this replica')
  clock += 4000
  t.equal(await replica.resolveKey(key), undefined, 'and within 4 s on another')
  t.equal((await setDisabled(h, admin, user.userId, false)).status, 200)
  clock += 4000
  t.ok(await h.service.resolveKey(key), 'enabled again: the key works again')
  t.ok(await replica.resolveKey(key))

  t.equal((await setLevel(h, admin, user.userId, 'default')).status, 200)
  t.equal(await h.service.resolveKey(key), undefined, 'demoted below member: at once on this replica')
  clock += 4000
  t.equal(await replica.resolveKey(key), undefined, 'and within 4 s on another')
  t.equal((await setLevel(h, admin, user.userId, 'dev')).status, 200)
  t.match(await h.service.resolveKey(key), { accessLevel: 'dev' }, 'the caller carries the current level')
})

t.test('proxyMinAccessLevel is validated at construction', async t => {
  const store = await createEmbeddedStore({})
  t.teardown(() => store.close())
  for (const bad of ['root', '', 'Member', 3]) {
    let thrown: unknown
    try { createAuthService({ store, argon2: CHEAP_ARGON2, proxyMinAccessLevel: bad as any }) } catch (err) { thrown = err }
    t.ok(thrown instanceof ConfigurationError, JSON.stringify(bad))
    t.match(thrown, { option: 'proxyMinAccessLevel', message: /proxyMinAccessLevel must be one of default, member, admin, dev, hush/ })
  }
  t.doesNotThrow(() => createAuthService({ store, argon2: CHEAP_ARGON2, proxyMinAccessLevel: 'default' }))
})

t.test('resolveKey keeps at most 10,000 answers, dropping the oldest first', async t => {
  const { h, user } = await setup()
  t.teardown(h.close)
  const { key } = (await createKey(h, user, { name: 'ci' })).body
  let lookups = 0
  const findByDigest = h.store.keys.findByDigest.bind(h.store.keys)
  h.store.keys.findByDigest = async (digest) => { lookups++; return await findByDigest(digest) }
  await h.service.resolveKey(key)
  for (let i = 0; i < 10_000; i++) await h.service.resolveKey('ghk_' + i.toString().padStart(43, '0'))
  t.equal(lookups, 10_001)
  await h.service.resolveKey('ghk_' + '9999'.padStart(43, '0'))
  t.equal(lookups, 10_001, 'a recent answer is still cached')
  t.ok(await h.service.resolveKey(key))
  t.equal(lookups, 10_002, 'the oldest was dropped, and is asked again')
})

t.test('a failed last-use write is logged without the key and does not refuse the call', async t => {
  const { h, user } = await setup()
  t.teardown(h.close)
  const { key } = (await createKey(h, user, { name: 'ci' })).body
  h.store.keys.touch = async () => { throw new Error('disk full') }
  t.ok(await h.service.resolveKey(key))
  await new Promise(resolve => setImmediate(resolve))
  const warning = h.logs.find(l => l.msg === 'could not record an API key\'s last use')
  t.ok(warning)
  t.notOk(JSON.stringify(warning).includes(key.slice(12)))
})

t.test('resolveKey: calls with one key arriving together cost one store lookup; a store failure reaches each of them', async t => {
  const { h, user } = await setup()
  t.teardown(h.close)
  const { key } = (await createKey(h, user, { name: 'ci' })).body
  let lookups = 0
  const findByDigest = h.store.keys.findByDigest.bind(h.store.keys)
  h.store.keys.findByDigest = async (digest) => { lookups++; return await findByDigest(digest) }
  const answers = await Promise.all(Array.from({ length: 20 }, () => h.service.resolveKey(key)))
  t.equal(lookups, 1)
  t.ok(answers.every(a => a?.userId === user.userId))
  h.advance(5)
  h.store.keys.findByDigest = async () => { lookups++; throw new Error('store down') }
  const failed = await Promise.allSettled([h.service.resolveKey(key), h.service.resolveKey(key)])
  t.same(failed.map(f => f.status), ['rejected', 'rejected'])
  t.equal(lookups, 2)
  h.store.keys.findByDigest = findByDigest
  t.ok(await h.service.resolveKey(key), 'the next call asks again')
})

t.test('a key deleted while a lookup of it is under way stops at once on that replica', async t => {
  const { h, user } = await setup()
  t.teardown(h.close)
  const { key, key_id: keyId } = (await createKey(h, user, { name: 'ci' })).body
  const findByDigest = h.store.keys.findByDigest.bind(h.store.keys)
  let release!: () => void
  const gate = new Promise<void>(resolve => { release = resolve })
  h.store.keys.findByDigest = async (digest) => { const found = await findByDigest(digest); await gate; return found }
  const during = h.service.resolveKey(key)
  t.equal((await deleteKey(h, user, keyId)).status, 200)
  release()
  t.ok(await during, 'the call that began before the deletion is answered as it was found')
  h.store.keys.findByDigest = findByDigest
  t.equal(await h.service.resolveKey(key), undefined, 'the next one is refused, not served from a cached answer')
})

const REAUTH = 'Changing a password, email or username, an access level, status or limits, creating an API key, or as an admin deleting one or ending sessions or a lockout, needs a fresh login or the current password (current_password)'

t.test('creating a key needs a recent login or current_password, as a sensitive self-update does', async t => {
  const { h, user } = await setup()
  t.teardown(h.close)
  h.advance(600)
  const stale = await createKey(h, user, { name: 'stolen token' })
  t.same([stale.status, stale.body], [401, { detail: REAUTH }], 'a session as old as reauthSeconds cannot mint a key')
  const wrong = await createKey(h, user, { name: 'guess', current_password: 'not-the-password' })
  t.same([wrong.status, wrong.body], [401, { detail: 'current_password is not the current password' }])
  t.equal(await storedKeys(h, user.userId), '[]', 'no key was made')
  const proven = await createKey(h, user, { name: 'ci', current_password: user.password })
  t.equal(proven.status, 201, 'the current password shows the owner is present')
  t.notOk(proven.text.includes(user.password), 'and is never echoed')
  const fresh = await h.login(user.username, user.password, 'laptop/2.0')
  t.equal((await createKey(h, { userId: user.userId, token: fresh.body.access_token, device: 'laptop/2.0' }, { name: 'fresh' })).status, 201, 'a new login is a recent one')
})

t.test('a wrong current_password when creating a key counts as a failed login', async t => {
  const { h, user } = await setup({ loginLimits: { perUsername: 2 } })
  t.teardown(h.close)
  for (let i = 0; i < 2; i++) t.equal((await createKey(h, user, { name: 'x', current_password: 'wrong-password' })).status, 401)
  const locked = await createKey(h, user, { name: 'x', current_password: user.password })
  t.equal(locked.status, 429, 'the login limiter refuses the address for this account')
})

t.test('a key without expires_in_days expires after keyDefaultDays (PROXY_KEY_DEFAULT_DAYS, default 90); 0 means never', async t => {
  const { h, user } = await setup()
  t.teardown(h.close)
  const { key } = (await createKey(h, user, { name: 'ci' })).body
  h.advance(90 * 86_400 - 1)
  t.ok(await h.service.resolveKey(key) !== undefined, 'alive until the end of its 90th day')
  h.advance(1)
  t.equal(await h.service.resolveKey(key), undefined, 'expired after 90 days')

  const forever = await setup({ keyDefaultDays: 0 })
  t.teardown(forever.h.close)
  t.match((await createKey(forever.h, forever.user, { name: 'ci' })).body, { expires_at: null }, 'keyDefaultDays 0: no expiry')
  t.match((await createKey(forever.h, forever.user, { name: 'ci', expires_in_days: 7 })).body, { expires_at: /Z$/ }, 'a key\'s own expires_in_days still applies')
  const week = await setup({ keyDefaultDays: 7 })
  t.teardown(week.h.close)
  const made = (await createKey(week.h, week.user, { name: 'ci' })).body
  t.equal(Date.parse(made.expires_at) - Date.parse(made.created_at), 7 * 86_400_000)
})

t.test('keyDefaultDays is validated at construction, naming the option', async t => {
  const store = await createEmbeddedStore({})
  t.teardown(() => store.close())
  for (const bad of [-1, 3651, 1.5, '90']) {
    t.throws(() => createAuthService({ store, argon2: CHEAP_ARGON2, keyDefaultDays: bad as any }), { option: 'keyDefaultDays', message: /keyDefaultDays must be a whole number of days from 0 \(no expiry\) to 3650/ }, JSON.stringify(bad))
  }
  t.doesNotThrow(() => createAuthService({ store, argon2: CHEAP_ARGON2, keyDefaultDays: 0 }))
  t.doesNotThrow(() => createAuthService({ store, argon2: CHEAP_ARGON2, keyDefaultDays: 3650 }))
})

const selfUpdate = (h: AuthHarness, who: Who, json: unknown): Promise<Reply> =>
  h.call('PUT', '/auth/user/update', { query: { user_id: who.userId }, headers: { 'user-agent': who.device, token: who.token }, json })
const endSessions = (h: AuthHarness, who: Who, json?: unknown): Promise<Reply> =>
  h.call('DELETE', '/auth/sessions', { query: { user_id: who.userId }, headers: { 'user-agent': who.device, token: who.token }, json })

t.test('a password change with revoke_keys: true revokes the user\'s keys at once; without it they stay', async t => {
  const { h, user, admin } = await setup()
  t.teardown(h.close)
  const kept = (await createKey(h, user, { name: 'kept' })).body.key
  t.equal((await selfUpdate(h, user, { password: 'second-password-1' })).status, 200)
  t.ok(await h.service.resolveKey(kept) !== undefined, 'a password change alone leaves the keys')
  const other = await h.newUser()
  await setLevel(h, admin, other.userId, 'member')
  const othersKey = (await createKey(h, other, { name: 'other' })).body.key
  t.equal((await selfUpdate(h, user, { password: 'third-password-12', revoke_keys: true })).status, 200)
  t.equal(await h.service.resolveKey(kept), undefined, 'revoked, at once on this replica')
  t.equal(await storedKeys(h, user.userId), '[]')
  t.ok(await h.service.resolveKey(othersKey) !== undefined, 'another user\'s keys stay')
})

t.test('a refused self-update revokes no key', async t => {
  const { h, user } = await setup()
  t.teardown(h.close)
  const { key } = (await createKey(h, user, { name: 'ci' })).body
  h.advance(600)
  t.equal((await selfUpdate(h, user, { password: 'attacker-password', revoke_keys: true })).status, 401)
  t.equal((await selfUpdate(h, user, { password: 'attacker-password', revoke_keys: 'yes' })).status, 400, 'revoke_keys is a boolean')
  t.ok(await h.service.resolveKey(key) !== undefined)
})

t.test('ending all other sessions with revoke_keys: true revokes the user\'s keys too', async t => {
  const { h, user } = await setup()
  t.teardown(h.close)
  const { key } = (await createKey(h, user, { name: 'ci' })).body
  const plain = await endSessions(h, user)
  t.same([plain.status, plain.body], [200, { message: 'Other sessions ended', ended: 0 }])
  t.ok(await h.service.resolveKey(key) !== undefined, 'without revoke_keys the keys stay')
  const revoked = await endSessions(h, user, { revoke_keys: true })
  t.same([revoked.status, revoked.body], [200, { message: 'Other sessions ended', ended: 0, revoked_keys: 1 }])
  t.equal(await h.service.resolveKey(key), undefined)
  t.equal((await endSessions(h, user, { revoke: true })).status, 400, 'an unknown field is refused')
})

t.test('an admin\'s password reset or ending of a user\'s sessions with revoke_keys: true revokes that user\'s keys', async t => {
  const { h, admin, user } = await setup()
  t.teardown(h.close)
  const first = (await createKey(h, user, { name: 'one' })).body.key
  const reset = await h.call('PUT', `/admin/user/${user.userId}`, { query: { admin_id: admin.userId, token: admin.token }, headers: { 'user-agent': admin.device }, json: { password: 'reset-by-admin-1', revoke_keys: true } })
  t.equal(reset.status, 200)
  t.equal(await h.service.resolveKey(first), undefined, 'revoked with the password reset')
  t.equal((await h.call('PUT', `/admin/user/${user.userId}`, { query: { admin_id: admin.userId, token: admin.token }, headers: { 'user-agent': admin.device }, json: { revoke_keys: true } })).status, 400, 'revoke_keys alone changes nothing: 400')

  const relogin = await h.login(user.username, 'reset-by-admin-1', user.device)
  const second = (await createKey(h, { userId: user.userId, token: relogin.body.access_token, device: user.device }, { name: 'two' })).body.key
  const end = (json?: unknown): Promise<Reply> => h.call('DELETE', `/admin/user/${user.userId}/sessions`, { query: { admin_id: admin.userId, token: admin.token }, headers: { 'user-agent': admin.device }, json })
  t.same((await end()).body, { message: 'Sessions ended', ended: 1 })
  t.ok(await h.service.resolveKey(second) !== undefined, 'without revoke_keys the keys stay')
  t.same((await end({ revoke_keys: true })).body, { message: 'Sessions ended', ended: 0, revoked_keys: 1 })
  t.equal(await h.service.resolveKey(second), undefined)
})

t.test('usd_per_month on the key create body: the key\'s own monthly cap in dollars, shown on the key and carried by its caller', async t => {
  const { h, user } = await setup()
  t.teardown(h.close)
  const created = await createKey(h, user, { name: 'capped', usd_per_month: '25.50' })
  t.equal(created.status, 201)
  t.equal(created.body.usd_per_month, 25.5)
  t.equal((await listKeys(h, user)).body[0].usd_per_month, 25.5, 'listed with its cap')
  t.equal((await h.store.keys.get(created.body.key_id))?.usdPerMonthMicros, 25_500_000, 'stored in micro-dollars')
  t.match(await h.service.resolveKey(created.body.key), { usdPerMonthMicros: 25_500_000 }, 'the proxy\'s caller carries it to the limiter')
  const plain = await createKey(h, user, { name: 'plain', usd_per_month: 10 })
  t.equal(plain.body.usd_per_month, 10)
  t.equal((await createKey(h, user, { name: 'none' })).body.usd_per_month, null, 'absent: no cap')
  for (const bad of [-1, '1.1234567', 'ten', true, { $gt: 0 }]) {
    const refused = await createKey(h, user, { name: 'bad', usd_per_month: bad })
    t.match(refused, { status: 400, body: { detail: /usd_per_month/ } }, JSON.stringify(bad))
  }
})
