// MongoDB-only behaviour, run against the stand-in (mongo-standin.test.ts) and against a real
// MongoDB when MONGODB_URL is set (mongo-real.test.ts), after the shared conformance suite.
import { MongoClient, ObjectId } from 'mongodb'
import type { Test } from 'tap'
import { makeSession, makeUser, storeConformance } from './conformance.ts'
import type { Store } from '../../lib/index.ts'
import { createMongoStore } from '../../lib/index.ts'

let databases = 0

function newDbName (): string {
  return `gatehouse_test_${process.pid}_${++databases}`
}

/** Runs the conformance suite and the MongoDB-only tests against the server at `url`; each test gets its own database. */
export function mongoStoreSuite (t: Test, url: string): void {
  const admin = new MongoClient(url)
  t.teardown(() => admin.close())

  async function open (t: Test, dbName = newDbName()): Promise<Store> {
    const store = await createMongoStore({ url, dbName })
    t.teardown(async () => {
      await store.close()
      await admin.db(dbName).dropDatabase()
    })
    return store
  }

  storeConformance(t, t => open(t))

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
