// The one set of behaviour tests every store adapter must pass (embedded in memory, embedded with a
// file, MongoDB over the stand-in, real MongoDB). Each adapter's *.test.ts calls storeConformance.
import { randomBytes } from 'node:crypto'
import type { Test } from 'tap'
import { createHash } from 'node:crypto'
import type { AccessLevel, NewKeyRecord, SessionRecord, Store, UsageRecord, UserLimits, UserRecord } from '../../lib/index.ts'
import { createRateLimiter, GatehouseError, RESPONSE_OWNER_MAX_CHARS, RESPONSE_RECORD_MAX_CHARS } from '../../lib/index.ts'

/** Opens a new, empty store and arranges for it to be closed when `t` ends. */
export type OpenStore = (t: Test) => Promise<Store>
/** Opens a second instance on the data of `of` (another replica); an adapter of one process answers `of` itself. */
export type OpenReplica = (t: Test, of: Store) => Promise<Store>

const HOUR = 60 * 60 * 1000
let joined = Date.parse('2026-01-01T00:00:00.000Z')

export function newId (): string {
  return randomBytes(12).toString('hex')
}

export function makeUser (username: string, fields: Partial<UserRecord> = {}): UserRecord {
  joined += 1000
  return {
    id: newId(),
    username,
    usernameKey: username.toLowerCase(),
    passwordHash: `$argon2id$v=19$m=19456,t=2,p=1$${username}`,
    email: null,
    accessLevel: 'default',
    dateJoined: new Date(joined),
    ...fields,
  }
}

export function makeSession (userId: string, device: string, fields: Partial<SessionRecord> = {}): SessionRecord {
  const createdAt = new Date(Math.floor(Date.now() / 1000) * 1000)
  return {
    tokenHash: randomBytes(32).toString('hex'),
    userId,
    device,
    createdAt,
    expiresAt: new Date(createdAt.getTime() + HOUR),
    ...fields,
  }
}

export function makeKey (userId: string, fields: Partial<NewKeyRecord> = {}): NewKeyRecord {
  const secret = 'gh-' + randomBytes(24).toString('hex')
  return {
    keyId: randomBytes(12).toString('hex'),
    userId,
    name: 'laptop',
    digest: createHash('sha256').update(secret).digest('hex'),
    prefix: secret.slice(0, 8),
    createdAt: new Date(Math.floor(Date.now() / 1000) * 1000),
    expiresAt: null,
    models: null,
    ...fields,
  }
}

export function makeUsage (fields: Partial<UsageRecord> = {}): UsageRecord {
  return {
    day: '2026-03-01',
    userId: 'u1',
    keyId: null,
    model: 'gemini-2.5-flash',
    surface: 'openai',
    requests: 1,
    inputTokens: 10,
    outputTokens: 20,
    thinkingTokens: 3,
    cachedTokens: 4,
    errors4xx: 0,
    errors5xx: 0,
    costMicros: 0,
    unpricedRequests: 0,
    groundedRequests: 0,
    toolUseTokens: 0,
    ...fields,
  }
}

function isTaken (err: unknown): boolean {
  return err instanceof GatehouseError && err.code === 'USERNAME_TAKEN' && err.status === 400
}

export function storeConformance (t: Test, open: OpenStore, openReplica: OpenReplica = async (_t, of) => of): void {
  t.test('a user reads back exactly as inserted, by id and by username key', async t => {
    const store = await open(t)
    const alice = makeUser('Alice', { email: 'alice@example.com', accessLevel: 'member' })
    await store.users.insert(alice)
    t.same(await store.users.findById(alice.id), alice)
    t.same(await store.users.findByUsernameKey('alice'), alice)
    const found = await store.users.findById(alice.id)
    t.ok(found?.dateJoined instanceof Date, 'dateJoined is a Date')
    t.equal(found?.dateJoined.getTime(), alice.dateJoined.getTime())
    t.equal(await store.users.findById(newId()), null, 'unknown id')
    t.equal(await store.users.findById('not-an-id'), null, 'malformed id')
    t.equal(await store.users.findByUsernameKey('bob'), null, 'unknown username')
  })

  t.test('records handed out are copies: changing them does not change the store', async t => {
    const store = await open(t)
    const alice = makeUser('alice')
    await store.users.insert(alice)
    alice.accessLevel = 'hush'
    const read = await store.users.findById(alice.id)
    t.equal(read?.accessLevel, 'default')
    read!.dateJoined.setTime(0)
    t.not((await store.users.findById(alice.id))?.dateJoined.getTime(), 0)
  })

  t.test('usernames are unique case-insensitively', async t => {
    const store = await open(t)
    await store.users.insert(makeUser('Alice'))
    await t.rejects(store.users.insert(makeUser('ALICE')), { code: 'USERNAME_TAKEN', status: 400 })
    await t.rejects(store.users.insert(makeUser('alice')), GatehouseError)
    t.equal((await store.users.list(10, 0)).length, 1)
  })

  t.test('of concurrent sign-ups with one name exactly one wins', async t => {
    const store = await open(t)
    const contenders = Array.from({ length: 12 }, (_, i) => makeUser(i % 2 === 0 ? 'Racer' : 'racer'))
    const results = await Promise.allSettled(contenders.map(u => store.users.insert(u)))
    const winners = results.flatMap((r, i) => r.status === 'fulfilled' ? [contenders[i]] : [])
    t.equal(winners.length, 1, 'one insert succeeds')
    t.ok(results.every(r => r.status === 'fulfilled' || isTaken(r.reason)), 'the others fail with USERNAME_TAKEN')
    t.equal((await store.users.findByUsernameKey('racer'))?.id, winners[0].id)
  })

  t.test('an update changes the given fields and returns the new record', async t => {
    const store = await open(t)
    const alice = makeUser('alice')
    await store.users.insert(alice)
    const updated = await store.users.update(alice.id, { username: 'Alicia', usernameKey: 'alicia', email: 'a@example.com', accessLevel: 'admin' })
    t.same(updated, { ...alice, username: 'Alicia', usernameKey: 'alicia', email: 'a@example.com', accessLevel: 'admin' })
    t.same(await store.users.findById(alice.id), updated)
    t.equal(await store.users.findByUsernameKey('alice'), null, 'the old key is free')
    t.equal((await store.users.findByUsernameKey('alicia'))?.id, alice.id)
    t.same(await store.users.update(alice.id, { email: null }), { ...updated, email: null }, 'email can be cleared')
    t.same(await store.users.update(alice.id, {}), { ...updated, email: null }, 'an empty patch changes nothing')
    t.same(await store.users.update(alice.id, { username: 'ALICIA', usernameKey: 'alicia' }), { ...updated, username: 'ALICIA', email: null },
      'a user may change the case of their own name')
    t.equal(await store.users.update(newId(), { email: null }), null, 'unknown id')
    t.equal(await store.users.update('nope', { email: null }), null, 'malformed id')
  })

  t.test('renaming onto a taken username fails and changes nothing', async t => {
    const store = await open(t)
    const alice = makeUser('alice')
    const bob = makeUser('bob')
    await store.users.insert(alice)
    await store.users.insert(bob)
    await t.rejects(store.users.update(bob.id, { username: 'Alice', usernameKey: 'alice', email: 'b@example.com' }), { code: 'USERNAME_TAKEN' })
    t.same(await store.users.findById(bob.id), bob)
    t.same(await store.users.findById(alice.id), alice)
  })

  t.test('search matches the fragment literally, sorted by username key, up to the limit', async t => {
    const store = await open(t)
    for (const name of ['a.b', 'axb', 'A*', 'aaa', 'a+b(c)', '[x]', '^caret$', 'back\\slash', 'Zed.b', 'dot.']) {
      await store.users.insert(makeUser(name))
    }
    t.same(await store.users.searchUsernames('.', 10), ['a.b', 'dot.', 'Zed.b'], 'dot is a dot, results in key order')
    t.same(await store.users.searchUsernames('a.b', 10), ['a.b'], 'no wildcard match on axb')
    t.same(await store.users.searchUsernames('*', 10), ['A*'])
    t.same(await store.users.searchUsernames('+b(', 10), ['a+b(c)'])
    t.same(await store.users.searchUsernames('[x]', 10), ['[x]'])
    t.same(await store.users.searchUsernames('^c', 10), ['^caret$'])
    t.same(await store.users.searchUsernames('$', 10), ['^caret$'])
    t.same(await store.users.searchUsernames('\\', 10), ['back\\slash'])
    t.same(await store.users.searchUsernames('.*', 10), [], 'a regex that would match everything matches nothing')
    t.same(await store.users.searchUsernames('a', 3), ['^caret$', 'A*', 'a+b(c)'], 'limit keeps the first in key order')
    t.same(await store.users.searchUsernames('a', 0), [], 'limit 0')
    t.equal((await store.users.searchUsernames('', 100)).length, 10, 'an empty fragment matches all')
    t.same(await store.users.searchUsernames('zzz', 10), [])
  })

  t.test('list is ordered by join date, then id, with limit and offset', async t => {
    const store = await open(t)
    const sameDay = new Date('2025-06-01T12:00:00.000Z')
    const ids = ['aaaaaaaaaaaaaaaaaaaaaaa2', 'aaaaaaaaaaaaaaaaaaaaaaa1', 'aaaaaaaaaaaaaaaaaaaaaaa3']
    const early = makeUser('early', { dateJoined: new Date('2024-01-01T00:00:00.000Z') })
    const late = makeUser('late', { dateJoined: new Date('2027-01-01T00:00:00.000Z') })
    await store.users.insert(late)
    for (const [i, id] of ids.entries()) await store.users.insert(makeUser(`tie${i}`, { id, dateJoined: sameDay }))
    await store.users.insert(early)
    const all = await store.users.list(100, 0)
    t.same(all.map(u => u.username), ['early', 'tie1', 'tie0', 'tie2', 'late'])
    t.same((await store.users.list(2, 1)).map(u => u.username), ['tie1', 'tie0'])
    t.same((await store.users.list(10, 4)).map(u => u.username), ['late'])
    t.same(await store.users.list(10, 5), [])
    t.same(await store.users.list(0, 0), [])
    t.same(all[0], early, 'full records')
  })

  t.test('users are counted by access level', async t => {
    const store = await open(t)
    const levels: AccessLevel[] = ['hush', 'member', 'member', 'default']
    for (const [i, level] of levels.entries()) await store.users.insert(makeUser(`u${i}`, { accessLevel: level }))
    t.equal(await store.users.countByAccessLevel('member'), 2)
    t.equal(await store.users.countByAccessLevel('hush'), 1)
    t.equal(await store.users.countByAccessLevel('dev'), 0)
    const hush = (await store.users.list(10, 0)).find(u => u.accessLevel === 'hush')!
    await store.users.update(hush.id, { accessLevel: 'dev' })
    t.equal(await store.users.countByAccessLevel('hush'), 0)
    t.equal(await store.users.countByAccessLevel('dev'), 1)
  })

  t.test('a user can be disabled and enabled again; only enabled users are counted by access level', async t => {
    const store = await open(t)
    const alice = makeUser('alice', { accessLevel: 'hush' })
    const bob = makeUser('bob', { accessLevel: 'hush', disabled: true })
    await store.users.insert(alice)
    await store.users.insert(bob)
    t.same(await store.users.findById(bob.id), bob, 'inserted disabled, read back disabled')
    t.equal((await store.users.findById(alice.id))?.disabled, undefined, 'an enabled user has no disabled field')
    t.equal(await store.users.countByAccessLevel('hush'), 1, 'the disabled hush user is not counted')
    t.same(await store.users.update(alice.id, { disabled: true }), { ...alice, disabled: true })
    t.equal(await store.users.countByAccessLevel('hush'), 0)
    t.same(await store.users.findByUsernameKey('alice'), { ...alice, disabled: true })
    t.same(await store.users.update(alice.id, { disabled: false }), alice, 'enabled again: the field is gone')
    t.same(await store.users.findById(alice.id), alice)
    t.equal(await store.users.countByAccessLevel('hush'), 1)
    t.same((await store.users.update(bob.id, { email: 'b@example.com' }))?.disabled, true, 'other updates keep it disabled')
  })

  t.test('a session is found by its digest until deleted', async t => {
    const store = await open(t)
    const s = makeSession(newId(), 'curl/8')
    await store.sessions.put(s)
    t.same(await store.sessions.findByTokenHash(s.tokenHash), s)
    t.equal(await store.sessions.findByTokenHash('0'.repeat(64)), null)
    t.equal(await store.sessions.delete(s.tokenHash), true)
    t.equal(await store.sessions.delete(s.tokenHash), false, 'second delete finds nothing')
    t.equal(await store.sessions.findByTokenHash(s.tokenHash), null)
  })

  t.test('a recently expired session is still returned, so callers can say it expired', async t => {
    const store = await open(t)
    const past = new Date(Math.floor(Date.now() / 1000) * 1000 - 2 * HOUR)
    const s = makeSession(newId(), 'curl/8', { createdAt: past, expiresAt: new Date(past.getTime() + HOUR) })
    await store.sessions.put(s)
    t.same(await store.sessions.findByTokenHash(s.tokenHash), s)
  })

  t.test('a new login on the same device replaces that session; other devices and users keep theirs', async t => {
    const store = await open(t)
    const userId = newId()
    const otherUser = newId()
    const first = makeSession(userId, 'Firefox')
    const phone = makeSession(userId, 'Phone')
    const otherUsersFirefox = makeSession(otherUser, 'Firefox')
    await store.sessions.put(first)
    await store.sessions.put(phone)
    await store.sessions.put(otherUsersFirefox)
    const second = makeSession(userId, 'Firefox')
    await store.sessions.put(second)
    t.equal(await store.sessions.findByTokenHash(first.tokenHash), null, 'the old session on that device is gone')
    t.same(await store.sessions.findByTokenHash(second.tokenHash), second)
    t.same(await store.sessions.findByTokenHash(phone.tokenHash), phone, 'other device kept')
    t.same(await store.sessions.findByTokenHash(otherUsersFirefox.tokenHash), otherUsersFirefox, 'other user kept')
  })

  t.test('concurrent logins on one device leave exactly one session', async t => {
    const store = await open(t)
    const userId = newId()
    const logins = Array.from({ length: 8 }, () => makeSession(userId, 'Racer/1'))
    await Promise.all(logins.map(s => store.sessions.put(s)))
    const alive = (await Promise.all(logins.map(s => store.sessions.findByTokenHash(s.tokenHash)))).filter(s => s !== null)
    t.equal(alive.length, 1)
  })

  t.test('a token digest held by another session is refused', async t => {
    const store = await open(t)
    const s = makeSession(newId(), 'A')
    await store.sessions.put(s)
    await t.rejects(store.sessions.put({ ...s, device: 'B' }))
    t.same(await store.sessions.findByTokenHash(s.tokenHash), s)
  })

  t.test("deleteByUser ends a user's sessions except the one kept", async t => {
    const store = await open(t)
    const userId = newId()
    const other = makeSession(newId(), 'A')
    const mine = ['A', 'B', 'C'].map(device => makeSession(userId, device))
    for (const s of [other, ...mine]) await store.sessions.put(s)
    t.equal(await store.sessions.deleteByUser(userId, mine[1].tokenHash), 2)
    t.equal(await store.sessions.findByTokenHash(mine[0].tokenHash), null)
    t.same(await store.sessions.findByTokenHash(mine[1].tokenHash), mine[1], 'kept')
    t.equal(await store.sessions.findByTokenHash(mine[2].tokenHash), null)
    t.same(await store.sessions.findByTokenHash(other.tokenHash), other, "another user's session is untouched")
    t.equal(await store.sessions.deleteByUser(userId), 1, 'without keep, all go')
    t.equal(await store.sessions.findByTokenHash(mine[1].tokenHash), null)
    t.equal(await store.sessions.deleteByUser(userId), 0)
  })

  t.test("listByUser answers every session of the user, expired ones too, and no one else's", async t => {
    const store = await open(t)
    const userId = newId()
    const past = new Date(Math.floor(Date.now() / 1000) * 1000 - 2 * HOUR)
    const mine = [makeSession(userId, 'A'), makeSession(userId, 'B'), makeSession(userId, 'C', { createdAt: past, expiresAt: new Date(past.getTime() + HOUR) })]
    for (const s of [makeSession(newId(), 'A'), ...mine]) await store.sessions.put(s)
    const byDevice = (a: SessionRecord, b: SessionRecord): number => a.device.localeCompare(b.device)
    t.same((await store.sessions.listByUser(userId)).sort(byDevice), mine)
    t.same(await store.sessions.listByUser(newId()), [], 'a user without sessions')
    t.same(await store.sessions.listByUser('not-an-id'), [])
    await store.sessions.delete(mine[0].tokenHash)
    t.same((await store.sessions.listByUser(userId)).sort(byDevice), mine.slice(1), 'a deleted session is gone from the list')
  })

  t.test('login attempts count up in a fixed window from the first failure', async t => {
    const store = await open(t)
    // Times near the real clock: MongoDB's TTL monitor drops windows long past, whatever the test's clock says.
    const start = new Date(Math.floor(Date.now() / 1000) * 1000)
    const windowMs = 15 * 60 * 1000
    const resetAt = new Date(start.getTime() + windowMs)
    t.same(await store.attempts.get('user:alice', start), { count: 0, resetAt: start }, 'nothing yet')
    t.same(await store.attempts.hit('user:alice', windowMs, start), { count: 1, resetAt })
    t.same(await store.attempts.hit('user:alice', windowMs, new Date(start.getTime() + 60_000)), { count: 2, resetAt }, 'window end does not move')
    t.same(await store.attempts.get('user:alice', new Date(start.getTime() + 120_000)), { count: 2, resetAt })
    t.same(await store.attempts.get('ip:10.0.0.1', start), { count: 0, resetAt: start }, 'keys are independent')
    const after = new Date(resetAt.getTime())
    t.same(await store.attempts.get('user:alice', after), { count: 0, resetAt: after }, 'the window has passed')
    t.same(await store.attempts.hit('user:alice', windowMs, after), { count: 1, resetAt: new Date(after.getTime() + windowMs) }, 'a new window starts')
    await store.attempts.clear('user:alice')
    t.same(await store.attempts.get('user:alice', after), { count: 0, resetAt: after }, 'cleared')
    await store.attempts.clear('user:nobody')
  })

  t.test('clearPrefix removes exactly the keys that start with a literal prefix', async t => {
    const store = await open(t)
    const now = new Date(Math.floor(Date.now() / 1000) * 1000)
    const keys = ['login:acct:ada:10.0.0.1', 'login:acct:ada:2001:db8::/64', 'login:acct:ada.b:10.0.0.1', 'login:acct:adam:10.0.0.1', 'login:acct:a.a:10.0.0.1', 'login:user:ada']
    for (const key of keys) await store.attempts.hit(key, 60_000, now)
    await store.attempts.clearPrefix('login:acct:ada:')
    const left = []
    for (const key of keys) if ((await store.attempts.get(key, now)).count > 0) left.push(key)
    t.same(left, keys.slice(2), 'only the two keys under the prefix went')
    await store.attempts.clearPrefix('login:acct:a.')
    t.equal((await store.attempts.get('login:acct:ada.b:10.0.0.1', now)).count, 1, 'a "." in the prefix is literal')
    t.equal((await store.attempts.get('login:acct:a.a:10.0.0.1', now)).count, 0)
    await store.attempts.clearPrefix('nothing:')
  })

  t.test('concurrent failures all count', async t => {
    const store = await open(t)
    const now = new Date()
    const results = await Promise.all(Array.from({ length: 40 }, () => store.attempts.hit('ip:192.0.2.1', 60_000, now)))
    t.same(results.map(r => r.count).sort((a, b) => a - b), Array.from({ length: 40 }, (_, i) => i + 1), 'each hit sees its own count')
    t.equal((await store.attempts.get('ip:192.0.2.1', now)).count, 40)
  })

  t.test('a key reads back by digest and by id, with lastUsedAt null, until deleted', async t => {
    const store = await open(t)
    const userId = newId()
    const key = makeKey(userId, { models: ['gemini-*'], expiresAt: new Date(Date.UTC(2027, 0, 1)) })
    await store.keys.create(key)
    const stored = { ...key, lastUsedAt: null }
    t.same(await store.keys.findByDigest(key.digest), stored)
    t.same(await store.keys.get(key.keyId), stored)
    t.ok((await store.keys.get(key.keyId))?.createdAt instanceof Date, 'dates are Dates')
    t.equal(await store.keys.findByDigest('0'.repeat(64)), null, 'unknown digest')
    t.equal(await store.keys.get('nope'), null, 'unknown id')
    const read = await store.keys.get(key.keyId)
    read!.models!.push('*')
    t.same((await store.keys.get(key.keyId))?.models, ['gemini-*'], 'records handed out are copies')
    t.equal(await store.keys.delete(key.keyId), true)
    t.equal(await store.keys.delete(key.keyId), false, 'second delete finds nothing')
    t.equal(await store.keys.findByDigest(key.digest), null, 'a deleted key is not found by its digest')
  })

  t.test('names: a key\'s name while it lives and after it is deleted (usage still names a revoked key); unknown ids left out', async t => {
    const store = await open(t)
    const alice = newId()
    const one = makeKey(alice, { keyId: 'k-one', name: 'laptop' })
    const two = makeKey(alice, { keyId: 'k-two', name: 'ci' })
    const three = makeKey(newId(), { keyId: 'k-three', name: 'phone' })
    for (const k of [one, two, three]) await store.keys.create(k)
    t.same([...(await store.keys.names(['k-one', 'k-two', 'k-three', 'k-none']))].sort(), [['k-one', 'laptop'], ['k-three', 'phone'], ['k-two', 'ci']])
    await store.keys.delete('k-one')
    await store.keys.deleteAllForUser(alice)
    await store.keys.deleteForUser(three.userId, 'k-three')
    t.same([...(await store.keys.names(['k-one', 'k-two', 'k-three', 'k-none']))].sort(), [['k-one', 'laptop'], ['k-three', 'phone'], ['k-two', 'ci']], 'deleted by any of the three deletes, still named')
    t.same(await store.keys.get('k-one'), null, 'and gone as a key')
    t.same([...await store.keys.names([])], [])
  })

  t.test('a key id or digest already held is refused and changes nothing', async t => {
    const store = await open(t)
    const key = makeKey(newId())
    await store.keys.create(key)
    await t.rejects(store.keys.create(makeKey(newId(), { digest: key.digest })))
    await t.rejects(store.keys.create(makeKey(newId(), { keyId: key.keyId })))
    t.same(await store.keys.findByDigest(key.digest), { ...key, lastUsedAt: null })
    const racers = Array.from({ length: 6 }, () => makeKey(newId(), { keyId: 'same-id' }))
    const results = await Promise.allSettled(racers.map(k => store.keys.create(k)))
    t.equal(results.filter(r => r.status === 'fulfilled').length, 1, 'of concurrent creates of one id exactly one wins')
  })

  t.test("listByUser answers the user's keys by creation time; another user's key cannot be deleted through deleteForUser", async t => {
    const store = await open(t)
    const alice = newId()
    const bob = newId()
    const base = Date.UTC(2026, 2, 1)
    const later = makeKey(alice, { keyId: 'k-b', createdAt: new Date(base + 2000) })
    const tieB = makeKey(alice, { keyId: 'k-z', createdAt: new Date(base) })
    const tieA = makeKey(alice, { keyId: 'k-a', createdAt: new Date(base) })
    const bobs = makeKey(bob)
    for (const k of [later, tieB, bobs, tieA]) await store.keys.create(k)
    t.same((await store.keys.listByUser(alice)).map(k => k.keyId), ['k-a', 'k-z', 'k-b'])
    t.same(await store.keys.listByUser(newId()), [])
    t.equal(await store.keys.deleteForUser(alice, bobs.keyId), false, "another user's key is not found")
    t.same(await store.keys.get(bobs.keyId), { ...bobs, lastUsedAt: null }, "and it still works")
    t.equal(await store.keys.deleteForUser(bob, bobs.keyId), true)
    t.equal(await store.keys.deleteForUser(bob, bobs.keyId), false)
    t.equal(await store.keys.deleteAllForUser(alice), 3)
    t.same(await store.keys.listByUser(alice), [])
    t.equal(await store.keys.deleteAllForUser(alice), 0)
  })

  t.test('touch records the latest use; an older touch does not move it back', async t => {
    const store = await open(t)
    const key = makeKey(newId())
    await store.keys.create(key)
    const first = new Date(Date.UTC(2026, 2, 1, 12))
    await store.keys.touch(key.keyId, first)
    t.same((await store.keys.get(key.keyId))?.lastUsedAt, first)
    await store.keys.touch(key.keyId, new Date(first.getTime() - 60_000))
    t.same((await store.keys.findByDigest(key.digest))?.lastUsedAt, first, 'an older touch is ignored')
    const second = new Date(first.getTime() + 60_000)
    await store.keys.touch(key.keyId, second)
    t.same((await store.keys.listByUser(key.userId))[0].lastUsedAt, second)
    await t.resolves(store.keys.touch('unknown', second), 'an unknown key is ignored')
  })

  t.test('limits overrides are set whole, read back, and cleared', async t => {
    const store = await open(t)
    const userId = newId()
    t.equal(await store.limits.get(userId), null, 'none yet')
    await store.limits.set(userId, { rpm: 60, tpm: null, concurrent: 0 })
    t.same(await store.limits.get(userId), { rpm: 60, tpm: null, concurrent: 0 }, 'null lifts a limit, absent keeps the level\'s')
    await store.limits.set(userId, { tokensPerDay: 1_000_000 })
    t.same(await store.limits.get(userId), { tokensPerDay: 1_000_000 }, 'set replaces the whole override')
    await store.limits.set(newId(), { rpm: 5, $where: 'sleep(1000)', extra: 1 } as UserLimits)
    await store.limits.set(userId, { tokensPerDay: 1_000_000, $where: 'sleep(1000)' } as UserLimits)
    t.same(await store.limits.get(userId), { tokensPerDay: 1_000_000 }, 'unknown fields are not stored')
    t.equal(await store.limits.get(newId()), null, 'other users are untouched')
    await t.rejects(store.limits.set(userId, { rpm: -1 }), TypeError)
    await t.rejects(store.limits.set(userId, { rpm: 1.5 }), TypeError)
    await t.rejects(store.limits.set(userId, { rpm: '60' as unknown as number }), TypeError)
    await t.rejects(store.limits.set(userId, { rpm: { $gt: 0 } as unknown as number }), TypeError)
    t.same(await store.limits.get(userId), { tokensPerDay: 1_000_000 }, 'a refused set changes nothing')
    t.equal(await store.limits.clear(userId), true)
    t.equal(await store.limits.clear(userId), false)
    t.equal(await store.limits.get(userId), null)
  })

  t.test('settings an admin sets are read back on every replica, refused unless known and boolean, and cleared', async t => {
    const store = await open(t)
    const other = await openReplica(t, store)
    const setAt = new Date(Date.UTC(2026, 11, 2, 9))
    t.equal(await store.settings.get('publicSignup'), null, 'none yet: the configured default holds')
    await store.settings.set({ name: 'publicSignup', value: false, setBy: 'a'.repeat(24), setAt })
    t.same(await other.settings.get('publicSignup'), { name: 'publicSignup', value: false, setBy: 'a'.repeat(24), setAt }, 'another replica reads it')
    t.equal(await store.settings.get('publicLookup'), null, 'settings are apart')
    await store.settings.set({ name: 'publicSignup', value: true, setBy: 'b'.repeat(24), setAt })
    t.equal((await other.settings.get('publicSignup'))?.value, true, 'set replaces')
    await t.rejects(store.settings.set({ name: 'nope' as 'publicSignup', value: true, setBy: 'x', setAt }), TypeError)
    await t.rejects(store.settings.set({ name: 'publicSignup', value: 'false' as unknown as boolean, setBy: 'x', setAt }), TypeError)
    await t.rejects(store.settings.get({ $ne: '' } as unknown as 'publicSignup'), TypeError)
    t.equal((await store.settings.get('publicSignup'))?.value, true, 'a refused set changes nothing')
    t.equal(await other.settings.clear('publicSignup'), true)
    t.equal(await store.settings.clear('publicSignup'), false)
    t.equal(await store.settings.get('publicSignup'), null)
  })

  t.test('counters sum adds per key and window, and windows are independent', async t => {
    const store = await open(t)
    const minute = new Date(Math.floor(Date.now() / 60_000) * 60_000)
    const next = new Date(minute.getTime() + 60_000)
    const expires = new Date(minute.getTime() + 120_000)
    t.equal(await store.counters.get('rpm:u1', minute), 0, 'nothing yet')
    t.equal(await store.counters.add('rpm:u1', minute, 1, expires), 1)
    t.equal(await store.counters.add('rpm:u1', minute, 1, expires), 2)
    t.equal(await store.counters.add('tpm:u1', minute, 1500, expires), 1500, 'another key')
    t.equal(await store.counters.add('rpm:u1', next, 1, new Date(next.getTime() + 120_000)), 1, 'the next window starts at zero')
    t.equal(await store.counters.get('rpm:u1', minute), 2)
    t.equal(await store.counters.add('rpm:u1@1', minute, 5, expires), 5, 'a key that looks like a window suffix is its own key')
    t.equal(await store.counters.add('rpm:u1', minute, 0, expires), 2, 'adding zero reads the total')
    await t.rejects(store.counters.add('rpm:u1', minute, 0.5, expires), TypeError)
    await t.rejects(store.counters.add('rpm:u1', minute, { $set: 1 } as unknown as number, expires), TypeError)
    t.equal(await store.counters.get('rpm:u1', minute), 2)
  })

  t.test('a counter batch adds and reads several windows in one call, as add and get do one by one', async t => {
    const store = await open(t)
    const minute = new Date(Math.floor(Date.now() / 60_000) * 60_000)
    const day = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000)
    const expires = new Date(minute.getTime() + 120_000)
    await store.counters.add('tpm:b1', minute, 40, expires)
    await store.counters.add('tpd:b1', day, 900, new Date(day.getTime() + 90_000_000))
    t.same(await store.counters.batch([
      { key: 'rpm:b1', windowStart: minute, amount: 1, expiresAt: expires },
      { key: 'tpm:b1', windowStart: minute },
      { key: 'tpd:b1', windowStart: day },
      { key: 'tpd:none', windowStart: day },
    ]), [1, 40, 900, 0], 'the add\'s new total, then each read window\'s total, in order')
    t.same(await store.counters.batch([
      { key: 'rpm:b1', windowStart: minute, amount: 1, expiresAt: expires },
      { key: 'tpm:b1', windowStart: minute, amount: 10, expiresAt: expires },
      { key: 'tpd:b1', windowStart: day, amount: 10, expiresAt: new Date(day.getTime() + 90_000_000) },
    ]), [2, 50, 910])
    t.equal(await store.counters.get('rpm:b1', minute), 2, 'batched adds are the same windows add and get see')
    t.equal(await store.counters.add('tpm:b1', minute, 5, expires), 55)
    t.same(await store.counters.batch([]), [], 'an empty batch does nothing')
    const totals = await Promise.all(Array.from({ length: 20 }, () => store.counters.batch([{ key: 'rpm:b2', windowStart: minute, amount: 3, expiresAt: expires }, { key: 'rpm:b1', windowStart: minute }])))
    t.same(totals.map(([n]) => n).sort((a, b) => a - b), Array.from({ length: 20 }, (_, i) => (i + 1) * 3), 'concurrent batched adds all count, each sees its own total')
    await t.rejects(store.counters.batch([{ key: 'rpm:b1', windowStart: minute, amount: 1, expiresAt: expires }, { key: 'rpm:b1', windowStart: minute, amount: 0.5, expiresAt: expires }]), TypeError)
    await t.rejects(store.counters.batch([{ key: 'rpm:b1', windowStart: minute, amount: 1, expiresAt: expires }, { key: { $ne: '' } as unknown as string, windowStart: minute }]), TypeError)
    await t.rejects(store.counters.batch([{ key: 'rpm:b1', windowStart: minute, amount: 1, expiresAt: 'later' as unknown as Date }]), TypeError)
    await t.rejects(store.counters.batch([{ key: 'rpm:b1', windowStart: minute, amount: 1, expiresAt: expires }, null as unknown as { key: string, windowStart: Date }]), TypeError)
    t.equal(await store.counters.get('rpm:b1', minute), 2, 'a batch with a malformed op writes nothing')
  })

  t.test('a negative amount takes back what an add put in (a refused call\'s reservation), in add and batch alike', async t => {
    const store = await open(t)
    const minute = new Date(Math.floor(Date.now() / 60_000) * 60_000)
    const expires = new Date(minute.getTime() + 120_000)
    t.equal(await store.counters.add('tpm:r1', minute, 520, expires), 520)
    t.same(await store.counters.batch([{ key: 'tpm:r1', windowStart: minute, amount: 300, expiresAt: expires }, { key: 'tpd:r1', windowStart: minute, amount: 300, expiresAt: expires }]), [820, 300])
    t.same(await store.counters.batch([{ key: 'tpm:r1', windowStart: minute, amount: -300, expiresAt: expires }, { key: 'tpd:r1', windowStart: minute, amount: -300, expiresAt: expires }]), [520, 0])
    t.equal(await store.counters.add('tpm:r1', minute, -20, expires), 500)
    t.equal(await store.counters.get('tpm:r1', minute), 500)
  })

  t.test('concurrent counter adds all count', async t => {
    const store = await open(t)
    const minute = new Date(Math.floor(Date.now() / 60_000) * 60_000)
    const expires = new Date(minute.getTime() + 120_000)
    const totals = await Promise.all(Array.from({ length: 30 }, () => store.counters.add('tpm:u2', minute, 7, expires)))
    t.same(totals.sort((a, b) => a - b), Array.from({ length: 30 }, (_, i) => (i + 1) * 7), 'each add sees its own total')
    t.equal(await store.counters.get('tpm:u2', minute), 210)
  })

  t.test('dollar budgets are stored in micro-dollars: a user override\'s usd fields and a key\'s monthly cap read back, bad ones are refused', async t => {
    const store = await open(t)
    const userId = newId()
    await store.limits.set(userId, { usdPerDayMicros: 2_500_000, usdPerMonthMicros: null })
    t.same(await store.limits.get(userId), { usdPerDayMicros: 2_500_000, usdPerMonthMicros: null })
    await t.rejects(store.limits.set(userId, { usdPerDayMicros: 2.5 }), TypeError)
    const capped = makeKey(userId, { usdPerMonthMicros: 40_000_000 })
    await store.keys.create(capped)
    t.equal((await store.keys.findByDigest(capped.digest))?.usdPerMonthMicros, 40_000_000, 'the cap reads back by digest')
    t.equal((await store.keys.listByUser(userId))[0].usdPerMonthMicros, 40_000_000, 'and in the listing')
    const plain = makeKey(userId)
    await store.keys.create(plain)
    t.equal((await store.keys.get(plain.keyId))?.usdPerMonthMicros, undefined, 'a key without a cap has none')
    await t.rejects(store.keys.create(makeKey(userId, { usdPerMonthMicros: -1 })), TypeError)
    await t.rejects(store.keys.create(makeKey(userId, { usdPerMonthMicros: { $gt: 0 } as unknown as number })), TypeError)
  })

  t.test('a budget is refused across two replicas sharing one store', async t => {
    const one = await open(t)
    const two = await openReplica(t, one)
    // One fixed instant for every call: the windows never turn over mid-test, whatever the date.
    const at = new Date(Math.floor(Date.now() / 1000) * 1000)
    const limiter = (store: Store): ReturnType<typeof createRateLimiter> => createRateLimiter({ store, byLevel: { member: { usdPerDayMicros: 1_000_000 } }, now: () => at, repeat: () => () => {} })
    const [first, second] = [limiter(one), limiter(two)]
    const caller = { userId: newId(), accessLevel: 'member' as const }
    const price = { model: 'gemini-4-argon', reservedMicros: 400_000 }
    const call = await first.admit(caller, 100, price)
    t.equal(call.headers['x-gatehouse-budget-remaining-usd'], '0.600000', 'replica one holds the reservation')
    t.equal((await second.admit(caller, 100, { ...price, reservedMicros: 0 })).headers['x-gatehouse-budget-remaining-usd'], '0.600000', 'replica two sees it')
    await call.settle({ inputTokens: 100, outputTokens: 100, thinkingTokens: 0, cachedTokens: 0 }, 1_000_000)
    await t.rejects(second.admit(caller, 100, price), { code: 'RATE_LIMITED', status: 429, limit: 'usd_per_day', message: /^Budget reached: usd_per_day of \$1\.000000, \$0\.000000 left; it resets at / }, 'replica two refuses what replica one spent')
    await t.rejects(first.admit(caller, 100, price), { code: 'RATE_LIMITED', limit: 'usd_per_day' }, 'and so does replica one')

    const racer = { userId: newId(), accessLevel: 'member' as const }
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? first : second).admit(racer, 100, { ...price, reservedMicros: 300_000 })))
    t.equal(outcomes.filter(o => o.status === 'fulfilled').length, 4, 'of parallel calls on both replicas exactly those that found the day under $1 are let in: an overrun of one reservation at most')
  })

  t.test('acquire past the limit is refused; release frees a slot', async t => {
    const store = await open(t)
    const now = new Date(Math.floor(Date.now() / 1000) * 1000)
    const until = new Date(now.getTime() + 60_000)
    t.equal(await store.leases.acquire('conc:u1', 'a', 2, now, until), true)
    t.equal(await store.leases.acquire('conc:u1', 'b', 2, now, until), true)
    t.equal(await store.leases.acquire('conc:u1', 'c', 2, now, until), false, 'a third lease is refused')
    t.equal(await store.leases.count('conc:u1', now), 2)
    t.equal(await store.leases.acquire('conc:u1', 'a', 2, now, until), true, 'a held lease may be acquired again (a renewal)')
    t.equal(await store.leases.acquire('conc:u2', 'c', 2, now, until), true, 'keys are independent')
    await store.leases.release('conc:u1', 'a')
    t.equal(await store.leases.count('conc:u1', now), 1)
    t.equal(await store.leases.acquire('conc:u1', 'c', 2, now, until), true, 'the freed slot is taken')
    await store.leases.release('conc:u1', 'nobody')
    await store.leases.release('conc:none', 'a')
    t.equal(await store.leases.acquire('conc:u3', 'x', 0, now, until), false, 'limit 0 refuses everything')
    await t.rejects(store.leases.acquire('conc:u3', 'x', -1, now, until), TypeError)
  })

  t.test('a lease past its expiry does not count, and cannot be renewed', async t => {
    const store = await open(t)
    const now = new Date(Math.floor(Date.now() / 1000) * 1000)
    t.equal(await store.leases.acquire('conc:crash', 'dead', 1, now, new Date(now.getTime() + 30_000)), true)
    t.equal(await store.leases.acquire('conc:crash', 'new', 1, new Date(now.getTime() + 10_000), new Date(now.getTime() + 60_000)), false, 'live: refused')
    const later = new Date(now.getTime() + 30_000)
    t.equal(await store.leases.count('conc:crash', later), 0, 'at its expiry it no longer counts')
    t.equal(await store.leases.renew('conc:crash', 'dead', later, new Date(later.getTime() + 30_000)), false, 'an expired lease is not revived')
    t.equal(await store.leases.acquire('conc:crash', 'new', 1, later, new Date(later.getTime() + 30_000)), true, 'a killed holder leaks nothing')
  })

  t.test('renew extends a live lease', async t => {
    const store = await open(t)
    const now = new Date(Math.floor(Date.now() / 1000) * 1000)
    await store.leases.acquire('conc:r', 'a', 1, now, new Date(now.getTime() + 30_000))
    t.equal(await store.leases.renew('conc:r', 'a', new Date(now.getTime() + 20_000), new Date(now.getTime() + 90_000)), true)
    const after = new Date(now.getTime() + 60_000)
    t.equal(await store.leases.count('conc:r', after), 1, 'still live past its first expiry')
    t.equal(await store.leases.acquire('conc:r', 'b', 1, after, new Date(after.getTime() + 30_000)), false)
    t.equal(await store.leases.renew('conc:r', 'unknown', now, after), false)
    t.equal(await store.leases.renew('conc:none', 'a', now, after), false)
    await store.leases.release('conc:r', 'a')
    t.equal(await store.leases.renew('conc:r', 'a', now, after), false, 'a released lease is gone')
  })

  t.test('of concurrent acquires past the limit exactly the limit win', async t => {
    const store = await open(t)
    const now = new Date(Math.floor(Date.now() / 1000) * 1000)
    const until = new Date(now.getTime() + 60_000)
    const won = await Promise.all(Array.from({ length: 12 }, (_, i) => store.leases.acquire('conc:race', `l${i}`, 3, now, until)))
    t.equal(won.filter(Boolean).length, 3)
    t.equal(await store.leases.count('conc:race', now), 3)
  })

  t.test('usage records add up per day, user, key, model and surface; query filters by day range and user', async t => {
    const store = await open(t)
    await store.usage.record([
      makeUsage(),
      makeUsage({ keyId: 'k1' }),
      makeUsage({ surface: 'gemini' }),
      makeUsage({ userId: 'u2', day: '2026-03-02', errors5xx: 1 }),
    ])
    await store.usage.record([makeUsage({ requests: 2, inputTokens: 5, errors4xx: 1 }), makeUsage({ day: '2026-03-03' })])
    await store.usage.record([])
    const all = await store.usage.query({ from: '2026-03-01', to: '2026-03-31' })
    t.same(all, [
      makeUsage({ surface: 'gemini' }),
      makeUsage({ requests: 3, inputTokens: 15, outputTokens: 40, thinkingTokens: 6, cachedTokens: 8, errors4xx: 1 }),
      makeUsage({ keyId: 'k1' }),
      makeUsage({ userId: 'u2', day: '2026-03-02', errors5xx: 1 }),
      makeUsage({ day: '2026-03-03' }),
    ], 'rows ordered by day, user, key (none first), model, surface')
    t.same((await store.usage.query({ from: '2026-03-02', to: '2026-03-02' })).map(r => r.userId), ['u2'], 'days are inclusive')
    t.same((await store.usage.query({ from: '2026-03-01', to: '2026-03-31', userId: 'u1' })).length, 4)
    t.same(await store.usage.query({ from: '2026-04-01', to: '2026-04-30' }), [])
    await t.rejects(store.usage.query({ from: '2026-3-1', to: '2026-03-31' }), TypeError)
  })

  t.test('usage rows add up their cost in micro-dollars and their unpriced calls; a row written before cost existed counts 0', async t => {
    const store = await open(t)
    await store.usage.record([makeUsage({ costMicros: 77_600 }), makeUsage({ costMicros: 1, unpricedRequests: 1 })])
    const { costMicros, unpricedRequests, ...older } = makeUsage({ day: '2026-03-02' })
    await store.usage.record([older as UsageRecord])
    t.same(await store.usage.query({ from: '2026-03-01', to: '2026-03-31' }), [
      makeUsage({ requests: 2, inputTokens: 20, outputTokens: 40, thinkingTokens: 6, cachedTokens: 8, costMicros: 77_601, unpricedRequests: 1 }),
      makeUsage({ day: '2026-03-02' }),
    ])
    await t.rejects(store.usage.record([makeUsage({ costMicros: 0.5 })]), TypeError, 'a cost is whole micro-dollars')
    await t.rejects(store.usage.record([makeUsage({ unpricedRequests: -1 })]), TypeError)
  })

  t.test('usage rows add up their grounded requests; a row written before grounded requests existed counts 0', async t => {
    const store = await open(t)
    await store.usage.record([makeUsage({ groundedRequests: 1 }), makeUsage(), makeUsage({ groundedRequests: 2 })])
    const { groundedRequests, ...older } = makeUsage({ day: '2026-03-02' })
    await store.usage.record([older as UsageRecord])
    t.same(await store.usage.query({ from: '2026-03-01', to: '2026-03-31' }), [
      makeUsage({ requests: 3, inputTokens: 30, outputTokens: 60, thinkingTokens: 9, cachedTokens: 12, groundedRequests: 3 }),
      makeUsage({ day: '2026-03-02' }),
    ])
    await t.rejects(store.usage.record([makeUsage({ groundedRequests: -1 })]), TypeError)
    await t.rejects(store.usage.record([makeUsage({ groundedRequests: 0.5 })]), TypeError)
  })

  t.test('usage rows add up their tool-use tokens; a row written before they were counted counts 0', async t => {
    const store = await open(t)
    await store.usage.record([makeUsage({ toolUseTokens: 4 }), makeUsage({ toolUseTokens: 6 })])
    const { toolUseTokens, ...older } = makeUsage({ day: '2026-03-02' })
    await store.usage.record([older as UsageRecord])
    t.same(await store.usage.query({ from: '2026-03-01', to: '2026-03-31' }), [
      makeUsage({ requests: 2, inputTokens: 20, outputTokens: 40, thinkingTokens: 6, cachedTokens: 8, toolUseTokens: 10 }),
      makeUsage({ day: '2026-03-02' }),
    ])
    await t.rejects(store.usage.record([makeUsage({ toolUseTokens: -1 })]), TypeError)
  })

  t.test('a usage query with a limit answers the first rows in the same order, and only a positive integer is a limit', async t => {
    const store = await open(t)
    await store.usage.record([
      makeUsage({ day: '2026-03-02' }),
      makeUsage({ keyId: 'k1' }),
      makeUsage(),
      makeUsage({ userId: 'u0', surface: 'gemini' }),
    ])
    const all = await store.usage.query({ from: '2026-03-01', to: '2026-03-31' })
    t.equal(all.length, 4)
    t.same(await store.usage.query({ from: '2026-03-01', to: '2026-03-31', limit: 3 }), all.slice(0, 3), 'the first three, a null key before a key')
    t.same(await store.usage.query({ from: '2026-03-01', to: '2026-03-31', limit: 10 }), all, 'a limit above the count changes nothing')
    t.same(await store.usage.query({ from: '2026-03-01', to: '2026-03-31', userId: 'u1', limit: 1 }), [makeUsage()])
    for (const limit of [0, -1, 1.5, Number.NaN, '2' as unknown as number]) {
      await t.rejects(store.usage.query({ from: '2026-03-01', to: '2026-03-31', limit }), TypeError, `limit ${String(limit)}`)
    }
  })

  t.test('a malformed usage batch is refused whole', async t => {
    const store = await open(t)
    await t.rejects(store.usage.record([makeUsage(), makeUsage({ requests: -1 })]), TypeError)
    await t.rejects(store.usage.record([makeUsage({ day: '01/03/2026' })]), TypeError)
    await t.rejects(store.usage.record([makeUsage({ inputTokens: 1.5 })]), TypeError)
    t.same(await store.usage.query({ from: '2000-01-01', to: '2999-12-31' }), [], 'nothing was written')
  })

  t.test('concurrent usage records all count', async t => {
    const store = await open(t)
    await Promise.all(Array.from({ length: 10 }, () => store.usage.record([makeUsage(), makeUsage({ keyId: 'k' })])))
    const rows = await store.usage.query({ from: '2026-03-01', to: '2026-03-01' })
    t.same(rows.map(r => r.requests), [10, 10])
  })

  t.test('hostile values in the new parts are refused or stored as plain values, never run as queries', async t => {
    const store = await open(t)
    const operator = { $ne: '' } as unknown as string
    const key = makeKey(newId())
    await store.keys.create(key)
    await t.rejects(store.keys.findByDigest(operator), TypeError)
    await t.rejects(store.keys.get(operator), TypeError)
    await t.rejects(store.keys.listByUser(operator), TypeError)
    await t.rejects(store.keys.delete(operator), TypeError)
    await t.rejects(store.keys.deleteForUser(operator, key.keyId), TypeError)
    await t.rejects(store.keys.deleteForUser(key.userId, operator), TypeError)
    await t.rejects(store.keys.deleteAllForUser(operator), TypeError)
    await t.rejects(store.keys.touch(operator, new Date()), TypeError)
    await t.rejects(store.keys.create(makeKey(newId(), { name: operator })), TypeError)
    await t.rejects(store.keys.create(makeKey(newId(), { models: [operator] })), TypeError)
    await t.rejects(store.limits.get(operator), TypeError)
    await t.rejects(store.limits.set(operator, {}), TypeError)
    await t.rejects(store.counters.add(operator, new Date(), 1, new Date()), TypeError)
    await t.rejects(store.counters.get('k', 'now' as unknown as Date), TypeError)
    await t.rejects(store.leases.acquire(operator, 'a', 1, new Date(), new Date()), TypeError)
    await t.rejects(store.leases.release('k', operator), TypeError)
    await t.rejects(store.usage.record([makeUsage({ userId: operator })]), TypeError)
    await t.rejects(store.usage.query({ from: '2026-03-01', to: '2026-03-01', userId: operator }), TypeError)
    t.same(await store.keys.findByDigest(key.digest), { ...key, lastUsedAt: null }, 'the key is untouched')

    const now = new Date(Math.floor(Date.now() / 1000) * 1000)
    const until = new Date(now.getTime() + 60_000)
    t.equal(await store.leases.acquire('$where', '$$this.id', 1, now, until), true, 'operator-like strings are plain lease names')
    t.equal(await store.leases.acquire('$where', '$leases', 1, now, until), false)
    t.equal(await store.leases.renew('$where', '$$this.id', now, until), true)
    await store.leases.release('$where', '$$this.id')
    t.equal(await store.leases.count('$where', now), 0)
    const named = makeKey('$gt', { name: '{"$ne":""}', models: ['$where'] })
    await store.keys.create(named)
    t.same(await store.keys.listByUser('$gt'), [{ ...named, lastUsedAt: null }], 'operator-like strings are plain values')
    t.equal(await store.counters.add('$inc', now, 2, until), 2)
    await store.usage.record([makeUsage({ userId: '$ne', model: '$where', surface: '$expr' })])
    t.same((await store.usage.query({ from: '2026-03-01', to: '2026-03-01', userId: '$ne' })).map(r => r.model), ['$where'])
  })

  t.test('an owner record reads back by resource until deleted; another put replaces it', async t => {
    const store = await open(t)
    const now = new Date(Math.floor(Date.now() / 1000) * 1000)
    const record = { resource: 'files/abc-1', userId: 'u1', keyId: 'k1', createdAt: now, expiresAt: new Date(now.getTime() + 48 * HOUR) }
    await store.owners.put(record)
    t.same(await store.owners.get('files/abc-1', now), record)
    t.equal(await store.owners.get('files/abc-2', now), null, 'an unknown resource has no owner')
    const mine = await store.owners.get('files/abc-1', now)
    mine!.userId = 'changed'
    t.equal((await store.owners.get('files/abc-1', now))!.userId, 'u1', 'records handed out are copies')
    await store.owners.put({ ...record, userId: 'u2', keyId: 'k2' })
    t.same(await store.owners.get('files/abc-1', now), { ...record, userId: 'u2', keyId: 'k2' })
    // What naming the resource brings into a call (lib/proxy/access/reservation.ts) is kept with its owner.
    await store.owners.put({ ...record, inputTokens: 100_000 })
    t.same(await store.owners.getMany(['files/abc-1'], now), [{ ...record, inputTokens: 100_000 }])
    await t.rejects(store.owners.put({ ...record, inputTokens: -1 }), TypeError, 'a count that is none is refused')
    t.equal(await store.owners.delete('files/abc-1'), true)
    t.equal(await store.owners.delete('files/abc-1'), false)
    t.equal(await store.owners.get('files/abc-1', now), null)
  })

  t.test('an owner record past its expiry is not returned or counted', async t => {
    const store = await open(t)
    const now = new Date(Math.floor(Date.now() / 1000) * 1000)
    await store.owners.put({ resource: 'cachedContents/c1', userId: 'u1', keyId: 'k1', createdAt: now, expiresAt: new Date(now.getTime() + 60_000) })
    t.ok(await store.owners.get('cachedContents/c1', now))
    const later = new Date(now.getTime() + 60_000)
    t.equal(await store.owners.get('cachedContents/c1', later), null, 'expired at its expiresAt')
    t.same(await store.owners.getMany(['cachedContents/c1'], later), [])
    t.equal(await store.owners.countByUser('u1', later), 0)
    t.equal(await store.owners.countByUser('u1', now), 1)
  })

  t.test("getMany answers the live records of the names asked for; countByUser counts one user's", async t => {
    const store = await open(t)
    const now = new Date(Math.floor(Date.now() / 1000) * 1000)
    const until = new Date(now.getTime() + HOUR)
    for (const [resource, userId] of [['files/a', 'u1'], ['files/b', 'u2'], ['batches/c', 'u1'], ['models/veo/operations/d', 'u1']]) {
      await store.owners.put({ resource, userId, keyId: `key-${userId}`, createdAt: now, expiresAt: until })
    }
    const found = await store.owners.getMany(['files/a', 'files/b', 'files/zz', 'files/a', 'models/veo/operations/d'], now)
    t.same(found.map(o => `${o.resource} ${o.userId}`).sort(), ['files/a u1', 'files/b u2', 'models/veo/operations/d u1'])
    t.same(await store.owners.getMany([], now), [])
    t.equal(await store.owners.countByUser('u1', now), 3)
    t.equal(await store.owners.countByUser('u2', now), 1)
    t.equal(await store.owners.countByUser('u3', now), 0)
    await store.owners.put({ resource: 'interactions/i1', userId: 'u1', keyId: 'key-u1', createdAt: now, expiresAt: until })
    t.equal(await store.owners.countByUser('u1', now), 4)
    t.equal(await store.owners.countByUser('u1', now, 'interactions/'), 3, 'a prefix left out')
    t.equal(await store.owners.countByUser('u1', now, 'models/veo/'), 3, 'taken literally')
    t.equal(await store.owners.countByUser('u1', now, '.*'), 4, 'no pattern: nothing starts with ".*"')
  })

  t.test('owner records refuse malformed values; operator-like names are plain strings', async t => {
    const store = await open(t)
    const now = new Date(Math.floor(Date.now() / 1000) * 1000)
    const until = new Date(now.getTime() + HOUR)
    await t.rejects(store.owners.put({ resource: { $ne: '' } as unknown as string, userId: 'u', keyId: 'k', createdAt: now, expiresAt: until }), TypeError)
    await t.rejects(store.owners.put({ resource: 'files/x', userId: '', keyId: 'k', createdAt: now, expiresAt: until }), TypeError)
    await t.rejects(store.owners.put({ resource: 'files/x', userId: 'u', keyId: 'k', createdAt: now, expiresAt: new Date(Number.NaN) }), TypeError)
    await t.rejects(store.owners.get({ $gt: '' } as unknown as string, now), TypeError)
    await t.rejects(store.owners.getMany([{ $gt: '' } as unknown as string], now), TypeError)
    await t.rejects(store.owners.countByUser({ $ne: '' } as unknown as string, now), TypeError)
    t.equal(await store.owners.get('files/x', now), null, 'nothing was written')
    await store.owners.put({ resource: '$where', userId: '$ne', keyId: '$gt', createdAt: now, expiresAt: until })
    t.equal((await store.owners.get('$where', now))?.userId, '$ne')
    t.equal(await store.owners.countByUser('$ne', now), 1)
  })

  t.test('a stored response is found only by its owner, only until it expires, and replaced by its owner only', async t => {
    const store = await open(t)
    const now = new Date(Math.floor(Date.now() / 1000) * 1000)
    const record = { id: 'resp_1', ownerId: 'u1', data: '{"response":{}}', createdAt: now, expiresAt: new Date(now.getTime() + HOUR) }
    await store.responses.put(record)
    t.same(await store.responses.get('resp_1', 'u1', now), record)
    t.equal(await store.responses.get('resp_1', 'u2', now), null, 'another owner does not find it')
    t.equal(await store.responses.get('resp_1', 'u1', new Date(now.getTime() + HOUR)), null, 'not once it expired')
    t.equal(await store.responses.get('resp_2', 'u1', now), null)
    await store.responses.put({ ...record, data: '{"v":2}' })
    t.equal((await store.responses.get('resp_1', 'u1', now))?.data, '{"v":2}', 'the owner replaces it')
    await t.rejects(store.responses.put({ ...record, ownerId: 'u2', data: '{"v":3}' }), 'another owner cannot take the id')
    t.equal((await store.responses.get('resp_1', 'u1', now))?.data, '{"v":2}')
    t.equal(await store.responses.delete('resp_1', 'u2'), false, 'nor delete it')
    t.equal(await store.responses.delete('resp_1', 'u1'), true)
    t.equal(await store.responses.get('resp_1', 'u1', now), null)
    t.equal(await store.responses.delete('resp_1', 'u1'), false)
  })

  t.test("stored responses have a per-owner budget: past RESPONSE_OWNER_MAX_CHARS an owner's oldest go, never another owner's", async t => {
    const store = await open(t)
    const now = new Date(Math.floor(Date.now() / 1000) * 1000)
    const big = 'x'.repeat(RESPONSE_RECORD_MAX_CHARS)
    const at = (s: number): { createdAt: Date, expiresAt: Date } => ({ createdAt: new Date(now.getTime() + s * 1000), expiresAt: new Date(now.getTime() + HOUR) })
    await store.responses.put({ id: 'resp_b1', ownerId: 'u2', data: big, ...at(0) })
    const per = Math.floor(RESPONSE_OWNER_MAX_CHARS / RESPONSE_RECORD_MAX_CHARS)
    for (let i = 1; i <= per + 1; i++) await store.responses.put({ id: `resp_a${i}`, ownerId: 'u1', data: big, ...at(i) })
    t.equal(await store.responses.get('resp_a1', 'u1', now), null, "the owner's oldest went")
    for (let i = 2; i <= per + 1; i++) t.not(await store.responses.get(`resp_a${i}`, 'u1', now), null, `resp_a${i} is kept`)
    t.not(await store.responses.get('resp_b1', 'u2', now), null, "another owner's older record is not touched")
  })

  t.test('a stored response over the size bound, or malformed, is refused; operator-like ids are plain values', async t => {
    const store = await open(t)
    const now = new Date(Math.floor(Date.now() / 1000) * 1000)
    const record = { id: 'resp_x', ownerId: 'u1', data: '{}', createdAt: now, expiresAt: new Date(now.getTime() + HOUR) }
    await t.rejects(store.responses.put({ ...record, data: 'x'.repeat(RESPONSE_RECORD_MAX_CHARS + 1) }), TypeError)
    await t.rejects(store.responses.put({ ...record, expiresAt: 'later' as unknown as Date }), TypeError)
    await t.rejects(store.responses.put({ ...record, ownerId: { $ne: '' } as unknown as string }), TypeError)
    await t.rejects(store.responses.get({ $ne: '' } as unknown as string, 'u1', now), TypeError)
    await t.rejects(store.responses.get('resp_x', { $ne: '' } as unknown as string, now), TypeError)
    await t.rejects(store.responses.delete('resp_x', { $ne: '' } as unknown as string), TypeError)
    await store.responses.put({ ...record, id: '$where', ownerId: '$ne' })
    t.equal((await store.responses.get('$where', '$ne', now))?.id, '$where')
    t.equal(await store.responses.get('resp_x', 'u1', now), null, 'nothing malformed was written')
  })

  t.test('ping answers and close can be called twice', async t => {
    const store = await open(t)
    await t.resolves(store.ping())
    await t.resolves(store.flush())
    t.type(store.kind, 'string')
    await t.resolves(store.close())
    await t.resolves(store.close())
  })
}
