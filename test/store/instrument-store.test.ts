import t from 'tap'
import { makeKey, makeSession, makeUsage, makeUser, storeConformance } from './conformance.ts'
import { createEmbeddedStore, instrumentStore } from '../../lib/index.ts'

interface Observation { adapter: string, operation: string, seconds: number, ok: boolean }

t.test('an instrumented store still passes the store conformance suite', async t => {
  storeConformance(t, async t => {
    const store = instrumentStore(await createEmbeddedStore(), () => {})
    t.teardown(() => store.close())
    return store
  })
})

t.test('every store operation reports adapter, operation, duration and outcome', async t => {
  const seen: Observation[] = []
  const store = instrumentStore(await createEmbeddedStore(), (adapter, operation, seconds, ok) => seen.push({ adapter, operation, seconds, ok }))
  t.equal(store.kind, 'embedded')
  const alice = makeUser('alice')
  await store.users.insert(alice)
  await t.rejects(store.users.insert(makeUser('Alice')), { code: 'USERNAME_TAKEN' })
  await store.users.findById(alice.id)
  await store.users.findByUsernameKey('alice')
  await store.users.searchUsernames('a', 5)
  await store.users.list(5, 0)
  await store.users.update(alice.id, { email: null })
  await store.users.countByAccessLevel('default')
  const s = makeSession(alice.id, 'curl/8')
  await store.sessions.put(s)
  await store.sessions.findByTokenHash(s.tokenHash)
  await store.sessions.delete(s.tokenHash)
  await store.sessions.deleteByUser(alice.id)
  await store.sessions.listByUser(alice.id)
  await store.attempts.hit('k', 1000, new Date())
  await store.attempts.get('k', new Date())
  await store.attempts.clear('k')
  const key = makeKey(alice.id)
  await store.keys.create(key)
  await store.keys.findByDigest(key.digest)
  await store.keys.get(key.keyId)
  await store.keys.listByUser(alice.id)
  await store.keys.touch(key.keyId, new Date())
  await store.keys.names([key.keyId])
  await store.keys.deleteForUser(alice.id, key.keyId)
  await store.keys.delete(key.keyId)
  await store.keys.deleteAllForUser(alice.id)
  await store.limits.set(alice.id, { rpm: 1 })
  await store.limits.get(alice.id)
  await store.limits.clear(alice.id)
  await store.counters.add('c', new Date(), 1, new Date())
  await store.counters.get('c', new Date())
  await store.leases.acquire('l', 'a', 1, new Date(), new Date())
  await store.leases.renew('l', 'a', new Date(), new Date())
  await store.leases.release('l', 'a')
  await store.leases.count('l', new Date())
  await store.usage.record([makeUsage()])
  await store.usage.query({ from: '2026-03-01', to: '2026-03-01' })
  await store.ping()
  await store.flush()
  await store.close()
  await t.rejects(store.users.insert(makeUser('bob')), { message: 'The embedded store is closed' })

  t.same(seen.map(o => `${o.operation}:${o.ok}`), [
    'users.insert:true',
    'users.insert:true', // USERNAME_TAKEN is an answer, not a store fault
    'users.findById:true', 'users.findByUsernameKey:true', 'users.searchUsernames:true', 'users.list:true',
    'users.update:true', 'users.countByAccessLevel:true',
    'sessions.put:true', 'sessions.findByTokenHash:true', 'sessions.delete:true', 'sessions.deleteByUser:true', 'sessions.listByUser:true',
    'attempts.hit:true', 'attempts.get:true', 'attempts.clear:true',
    'keys.create:true', 'keys.findByDigest:true', 'keys.get:true', 'keys.listByUser:true', 'keys.touch:true', 'keys.names:true',
    'keys.deleteForUser:true', 'keys.delete:true', 'keys.deleteAllForUser:true',
    'limits.set:true', 'limits.get:true', 'limits.clear:true',
    'counters.add:true', 'counters.get:true',
    'leases.acquire:true', 'leases.renew:true', 'leases.release:true', 'leases.count:true',
    'usage.record:true', 'usage.query:true',
    'ping:true', 'flush:true', 'close:true',
    'users.insert:false',
  ])
  t.ok(seen.every(o => o.adapter === 'embedded' && o.seconds >= 0 && o.seconds < 5), 'durations in seconds, adapter label')
})
