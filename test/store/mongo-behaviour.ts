// MongoDB-only behaviour, run against the stand-in (mongo-standin.test.ts) and against a real
// MongoDB when MONGODB_URL is set (mongo-real.test.ts), after the shared conformance suite.
import { MongoClient, ObjectId } from 'mongodb'
import type { Test } from 'tap'
import { makeKey, makeSession, makeUsage, makeUser, storeConformance } from './conformance.ts'
import type { Store } from '../../lib/index.ts'
import { createMongoStore } from '../../lib/index.ts'

let databases = 0

function newUserId (): string {
  return new ObjectId().toHexString()
}

function newDbName (): string {
  return `gatehouse_test_${process.pid}_${++databases}`
}

/** Runs the conformance suite and the MongoDB-only tests against the server at `url`; each test gets its own database. */
export function mongoStoreSuite (t: Test, url: string): void {
  const admin = new MongoClient(url)
  t.teardown(() => admin.close())

  const databaseOf = new WeakMap<Store, string>()
  async function open (t: Test, dbName = newDbName()): Promise<Store> {
    const store = await createMongoStore({ url, dbName })
    databaseOf.set(store, dbName)
    t.teardown(async () => {
      await store.close()
      await admin.db(dbName).dropDatabase()
    })
    return store
  }

  storeConformance(t, t => open(t), async (t, of) => {
    // A second client on the same database: another replica; its teardown closes only its own client.
    const store = await createMongoStore({ url, dbName: databaseOf.get(of) as string })
    t.teardown(() => store.close())
    return store
  })

  t.test('every query has an index; usernames are unique by key; sessions and attempt windows have TTLs', async t => {
    const dbName = newDbName()
    await open(t, dbName)
    const db = admin.db(dbName)
    const describe = async (name: string): Promise<unknown[]> =>
      (await db.collection(name).listIndexes().toArray())
        .map(i => ({ key: i.key, unique: i.unique === true, ttl: i.expireAfterSeconds ?? null }))
        .sort((a, b) => JSON.stringify(a.key).localeCompare(JSON.stringify(b.key)))
    t.same(await describe('users'), [
      { key: { _id: 1 }, unique: false, ttl: null },
      { key: { accessLevel: 1 }, unique: false, ttl: null },
      { key: { dateJoined: 1, _id: 1 }, unique: false, ttl: null },
      { key: { usernameKey: 1 }, unique: true, ttl: null },
    ])
    t.same(await describe('sessions'), [
      { key: { _id: 1 }, unique: false, ttl: null },
      { key: { expiresAt: 1 }, unique: false, ttl: 86400 },
      { key: { tokenHash: 1 }, unique: true, ttl: null },
      { key: { userId: 1, device: 1 }, unique: true, ttl: null },
    ])
    t.same(await describe('login_attempts'), [
      { key: { _id: 1 }, unique: false, ttl: null },
      { key: { resetAt: 1 }, unique: false, ttl: 3600 },
    ])
    t.same(await describe('api_keys'), [
      { key: { _id: 1 }, unique: false, ttl: null },
      { key: { digest: 1 }, unique: true, ttl: null },
      { key: { userId: 1, createdAt: 1 }, unique: false, ttl: null },
    ], 'keys: by id (_id), by digest (unique), by owner in creation order')
    t.same(await describe('rate_counters'), [
      { key: { _id: 1 }, unique: false, ttl: null },
      { key: { expiresAt: 1 }, unique: false, ttl: 0 },
    ], 'rate windows expire by TTL at their expiresAt')
    t.same(await describe('leases'), [
      { key: { _id: 1 }, unique: false, ttl: null },
      { key: { expiresAt: 1 }, unique: false, ttl: 0 },
    ], 'lease sets expire by TTL once their last lease has')
    t.same(await describe('usage'), [
      { key: { _id: 1 }, unique: false, ttl: null },
      { key: { day: 1, userId: 1, keyId: 1, model: 1, surface: 1 }, unique: true, ttl: null },
      { key: { userId: 1, day: 1 }, unique: false, ttl: null },
    ], 'usage: one row per day, user, key, model and surface; queried by day range, or by user and day range')
  })

  t.test('two store instances on one database share counters, leases, keys and usage', async t => {
    const dbName = newDbName()
    const one = await open(t, dbName)
    const two = await open(t, dbName)
    const minute = new Date(Math.floor(Date.now() / 60_000) * 60_000)
    const expires = new Date(minute.getTime() + 120_000)
    const adds = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? one : two).counters.add('rpm:shared', minute, 1, expires))
    const totals = await Promise.all(adds)
    t.same(totals.sort((a, b) => a - b), Array.from({ length: 40 }, (_, i) => i + 1), 'concurrent adds from two instances each see their own total')
    t.equal(await one.counters.get('rpm:shared', minute), 40)
    t.equal(await two.counters.get('rpm:shared', minute), 40)

    const until = new Date(minute.getTime() + 60_000)
    const acquires = Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? one : two).leases.acquire('conc:shared', `l${i}`, 4, minute, until))
    t.equal((await Promise.all(acquires)).filter(Boolean).length, 4, 'a concurrency limit holds across instances')

    const key = makeKey(newUserId())
    await one.keys.create(key)
    t.same(await two.keys.findByDigest(key.digest), { ...key, lastUsedAt: null }, 'a key made on one is found on the other')
    t.equal(await two.keys.deleteForUser(key.userId, key.keyId), true)
    t.equal(await one.keys.findByDigest(key.digest), null, 'and revoked on both')

    await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? one : two).usage.record([makeUsage(), makeUsage({ surface: 'gemini' })])))
    t.same((await one.usage.query({ from: '2026-03-01', to: '2026-03-01' })).map(r => r.requests), [6, 6], 'usage from both instances adds up')
  })

  t.test('counters, leases and usage are stored as plain documents the TTL index can act on', async t => {
    const dbName = newDbName()
    const store = await open(t, dbName)
    const db = admin.db(dbName)
    const minute = new Date(Math.floor(Date.now() / 60_000) * 60_000)
    const expires = new Date(minute.getTime() + 120_000)
    await store.counters.add('tpm:u1', minute, 5, expires)
    await store.counters.add('tpm:u1', minute, 5, new Date(expires.getTime() - 1000))
    const counter = await db.collection('rate_counters').findOne({})
    t.same(counter, { _id: `tpm:u1@${minute.getTime()}`, total: 10, expiresAt: expires }, 'one document per key and window; the latest expiry wins')
    await store.leases.acquire('conc:u1', 'a', 2, minute, expires)
    await store.leases.acquire('conc:u1', 'b', 2, minute, new Date(expires.getTime() - 1000))
    const lease = await db.collection('leases').findOne({ _id: 'conc:u1' as unknown as ObjectId })
    t.ok(lease?.expiresAt instanceof Date && lease.expiresAt.getTime() === expires.getTime(), 'the lease set expires with its last lease')
    t.equal(lease?.leases.length, 2)
    await store.usage.record([makeUsage({ keyId: 'k1' })])
    const row = await db.collection('usage').findOne({}, { projection: { _id: 0 } })
    t.same(row, makeUsage({ keyId: 'k1' }))
  })

  t.test('starting twice on one database reuses its indexes and data', async t => {
    const dbName = newDbName()
    const first = await open(t, dbName)
    const alice = makeUser('alice')
    await first.users.insert(alice)
    const second = await open(t, dbName)
    t.same(await second.users.findById(alice.id), alice)
  })

  t.test('a user is stored with an ObjectId _id made from its id, and dates as dates', async t => {
    const dbName = newDbName()
    const store = await open(t, dbName)
    const alice = makeUser('Alice')
    await store.users.insert(alice)
    const raw = await admin.db(dbName).collection('users').findOne({ usernameKey: 'alice' })
    t.ok(raw?._id instanceof ObjectId)
    t.equal(raw?._id.toHexString(), alice.id)
    t.ok(raw?.dateJoined instanceof Date)
    t.equal(raw?.username, 'Alice')
  })

  t.test('values shaped like query operators are refused, never run as operators', async t => {
    const store = await open(t)
    const alice = makeUser('alice')
    await store.users.insert(alice)
    await store.sessions.put(makeSession(alice.id, 'curl/8'))
    const operator = { $ne: '' } as unknown as string
    await t.rejects(store.users.findByUsernameKey(operator), TypeError)
    await t.rejects(store.users.searchUsernames(operator, 10), TypeError)
    await t.rejects(store.sessions.findByTokenHash(operator), TypeError)
    await t.rejects(store.sessions.deleteByUser(operator), TypeError)
    await t.rejects(store.sessions.listByUser(operator), TypeError)
    await t.rejects(store.attempts.get(operator, new Date()), TypeError)
    await t.rejects(store.users.update(alice.id, { email: operator }), TypeError)
    t.same(await store.users.searchUsernames('$ne', 10), [], 'an operator name as a fragment is just text')
  })

  t.test('close closes a client the store made, and leaves a given client open', async t => {
    const own = await createMongoStore({ url, dbName: newDbName() })
    await own.ping()
    await own.close()
    await t.rejects(own.ping(), 'its own client is closed')

    const client = new MongoClient(url)
    t.teardown(() => client.close())
    const dbName = newDbName()
    const lent = await createMongoStore({ client, dbName })
    await lent.close()
    await t.resolves(client.db(dbName).command({ ping: 1 }), 'the given client still works')
    await client.db(dbName).dropDatabase()
  })

  t.test('start-up without url or client, or without a database name, is refused', async t => {
    await t.rejects(createMongoStore({ dbName: 'x' }), { message: 'createMongoStore needs `url` or `client`' })
    await t.rejects(createMongoStore({ url, dbName: '' }), { message: 'createMongoStore needs `dbName`' })
  })
}
