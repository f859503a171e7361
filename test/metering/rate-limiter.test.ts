// The per-user rate limiter over the storage port, on a fake clock.
import t from 'tap'
import type { Test } from 'tap'
import { createEmbeddedStore, createMongoStore, createRateLimiter } from '../../lib/index.ts'
import type { LimitName, RateLimiterOptions, Store, TokenUsage } from '../../lib/index.ts'
import { resetDuration } from '../../lib/metering/rate-limiter.ts'
import { startMongoStandIn } from '../support/mongo-standin.ts'

const USER = { userId: 'a'.repeat(24), accessLevel: 'member' as const }
const OTHER = { userId: 'b'.repeat(24), accessLevel: 'member' as const }
// 10:00:15 UTC: 45 s left in the minute.
const START = Date.UTC(2026, 0, 5, 10, 0, 15)
const used = (tokens: number): TokenUsage => ({ inputTokens: tokens, outputTokens: 0, thinkingTokens: 0, cachedTokens: 0 })

interface Rig {
  store: Store
  clock: { at: number }
  limited: LimitName[]
  /** Runs every pending lease renewal now (the fake timer). */
  renew: () => void
  limiter: (extra?: Partial<RateLimiterOptions>) => ReturnType<typeof createRateLimiter>
}

async function rig (t: Test, byLevel: RateLimiterOptions['byLevel'], store?: Store): Promise<Rig> {
  const clock = { at: START }
  const s = store ?? await createEmbeddedStore({ now: () => new Date(clock.at) })
  if (store === undefined) t.teardown(() => s.close())
  const limited: LimitName[] = []
  const timers = new Set<() => void>()
  return {
    store: s,
    clock,
    limited,
    renew: () => { for (const fn of timers) fn() },
    limiter: (extra = {}) => createRateLimiter({
      store: s,
      byLevel,
      now: () => new Date(clock.at),
      onLimited: l => limited.push(l),
      repeat: (fn) => { timers.add(fn); return () => timers.delete(fn) },
      ...extra,
    }),
  }
}

t.test('requests per minute: the call past rpm is refused with RATE_LIMITED, Retry-After to the minute end and the headers', async t => {
  const r = await rig(t, { member: { rpm: 2 } })
  const limiter = r.limiter()
  const first = await limiter.admit(USER, 0)
  t.same(first.headers, { 'x-ratelimit-limit-requests': '2', 'x-ratelimit-remaining-requests': '1', 'x-ratelimit-reset-requests': '45s' })
  t.equal((await limiter.admit(USER, 0)).headers['x-ratelimit-remaining-requests'], '0')
  await t.rejects(limiter.admit(USER, 0), {
    code: 'RATE_LIMITED', status: 429, retryAfter: 45, limit: 'requests',
    headers: { 'x-ratelimit-limit-requests': '2', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '45s' },
  })
  t.same(r.limited, ['requests'])
  t.equal((await limiter.admit(OTHER, 0)).headers['x-ratelimit-remaining-requests'], '1', 'each user has their own count')
  r.clock.at += 45_000
  t.equal((await limiter.admit(USER, 0)).headers['x-ratelimit-remaining-requests'], '1', 'the next minute starts afresh')
})

t.test('a refusal on requests per minute carries the token headers too, with what the refused call found left', async t => {
  const r = await rig(t, { member: { rpm: 1, tpm: 1000 } })
  const limiter = r.limiter()
  await (await limiter.admit(USER, 100)).settle(used(100))
  await t.rejects(limiter.admit(USER, 50), {
    code: 'RATE_LIMITED',
    limit: 'requests',
    headers: {
      'x-ratelimit-limit-requests': '1', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '45s',
      'x-ratelimit-limit-tokens': '1000', 'x-ratelimit-remaining-tokens': '900', 'x-ratelimit-reset-tokens': '45s',
    },
  })
})

t.test('tokens per minute: admission reserves the call\'s tokens and settle trues them up; refused once the window is full, till the minute ends', async t => {
  const r = await rig(t, { member: { tpm: 1000 } })
  const limiter = r.limiter()
  const a = await limiter.admit(USER, 100)
  t.same(a.headers, { 'x-ratelimit-limit-tokens': '1000', 'x-ratelimit-remaining-tokens': '900', 'x-ratelimit-reset-tokens': '45s' }, 'the reservation counts at once')
  await a.settle({ inputTokens: 500, outputTokens: 200, thinkingTokens: 100, cachedTokens: 400 })
  const b = await limiter.admit(USER, 150)
  t.equal(b.headers['x-ratelimit-remaining-tokens'], '50', 'trued up to input, output and thinking (800); cached tokens are part of the input')
  const c = await limiter.admit(USER, 500)
  t.equal(c.headers['x-ratelimit-remaining-tokens'], '0', 'the window was under its limit: the call is let in with its whole reservation')
  await t.rejects(limiter.admit(USER, 0), { code: 'RATE_LIMITED', limit: 'tokens', retryAfter: 45, headers: { 'x-ratelimit-remaining-tokens': '0' } }, 'full: refused')
  await c.settle(undefined)
  t.equal((await limiter.admit(USER, 0)).headers['x-ratelimit-remaining-tokens'], '50', 'a call that spent nothing releases its reservation')
  await b.settle(used(200))
  await t.rejects(limiter.admit(USER, 0), { code: 'RATE_LIMITED', limit: 'tokens' }, 'an excess over the reservation is added: at the limit')
  t.same(r.limited, ['tokens', 'tokens'])
  r.clock.at += 45_000
  t.equal((await limiter.admit(USER, 1000)).headers['x-ratelimit-remaining-tokens'], '0', 'the window rolls')
})

t.test('a refused call leaves no reservation and no request behind', async t => {
  const r = await rig(t, { member: { rpm: 1, tpm: 1000, tokensPerDay: 10_000 } })
  const limiter = r.limiter()
  await limiter.admit(USER, 300)
  await t.rejects(limiter.admit(USER, 300), { code: 'RATE_LIMITED', limit: 'requests' })
  const minute = new Date(START - 15_000)
  t.equal(await r.store.counters.get(`rate:rpm:${USER.userId}`, minute), 1)
  t.equal(await r.store.counters.get(`rate:tpm:${USER.userId}`, minute), 300, 'the refused call\'s reservation was taken back')
  t.equal(await r.store.counters.get(`rate:tpd:${USER.userId}`, new Date(Date.UTC(2026, 0, 5))), 300)
})

t.test('a call that ends in a later window is charged there; its reservation stays in the window it was made in', async t => {
  const r = await rig(t, { member: { tpm: 1000, tokensPerDay: 10_000 } })
  const limiter = r.limiter()
  const a = await limiter.admit(USER, 400)
  r.clock.at += 60_000
  await a.settle(used(100))
  const minute = START - 15_000
  t.equal(await r.store.counters.get(`rate:tpm:${USER.userId}`, new Date(minute)), 400, 'the earlier minute keeps the reservation')
  t.equal(await r.store.counters.get(`rate:tpm:${USER.userId}`, new Date(minute + 60_000)), 100, 'the minute the call ended in is charged the usage')
  t.equal(await r.store.counters.get(`rate:tpd:${USER.userId}`, new Date(Date.UTC(2026, 0, 5))), 100, 'the same day: trued up')
})

/** `n` calls reserving `each` at once, spread over the limiters; how many were let in. */
async function race (limiters: Array<ReturnType<typeof createRateLimiter>>, n: number, each: number): Promise<number> {
  const answers = await Promise.allSettled(Array.from({ length: n }, async (_, i) => await limiters[i % limiters.length].admit(USER, each)))
  return answers.filter(a => a.status === 'fulfilled').length
}

t.test('parallel calls overrun a token limit by at most one call\'s reservation (30 at once, one store)', async t => {
  const r = await rig(t, { member: { tokensPerDay: 3000, tpm: 100_000 } })
  const admitted = await race([r.limiter()], 30, 520)
  t.equal(admitted, 6, 'exactly the calls that found the day under its limit')
  t.ok(admitted * 520 < 3000 + 520, 'reserved: under the limit plus one reservation')
  t.equal(await r.store.counters.get(`rate:tpd:${USER.userId}`, new Date(Date.UTC(2026, 0, 5))), 6 * 520, 'the refused calls took their reservations back')
})

t.test('parallel calls overrun a token limit by at most one call\'s reservation across replicas (two MongoDB stores on the stand-in)', async t => {
  const standIn = await startMongoStandIn()
  t.teardown(() => standIn.close())
  const one = await createMongoStore({ url: standIn.url, dbName: 'race' })
  const two = await createMongoStore({ url: standIn.url, dbName: 'race' })
  t.teardown(async () => { await one.close(); await two.close() })
  const r1 = await rig(t, { member: { tokensPerDay: 3000 } }, one)
  const r2 = await rig(t, { member: { tokensPerDay: 3000 } }, two)
  const admitted = await race([r1.limiter(), r2.limiter()], 30, 520)
  t.equal(admitted, 6, 'the same six as on one replica')
  t.equal(await one.counters.get(`rate:tpd:${USER.userId}`, new Date(Date.UTC(2026, 0, 5))), 6 * 520)
})

t.test('tokens per day: refused till the UTC day ends, with no token headers of its own', async t => {
  const r = await rig(t, { member: { tokensPerDay: 5000 } })
  const limiter = r.limiter()
  const a = await limiter.admit(USER, 10)
  t.same(a.headers, {}, 'an unlimited dimension sends no headers')
  await a.settle(used(5000))
  r.clock.at += 3_600_000
  await t.rejects(limiter.admit(USER, 0), { code: 'RATE_LIMITED', limit: 'tokens_per_day', retryAfter: 13 * 3600 - 15 })
  r.clock.at = Date.UTC(2026, 0, 6)
  await limiter.admit(USER, 10)
})

t.test('a refused call does not count as a request', async t => {
  const r = await rig(t, { member: { rpm: 2, tpm: 10 } })
  const limiter = r.limiter()
  await (await limiter.admit(USER, 0)).settle(used(10))
  await t.rejects(limiter.admit(USER, 0), { code: 'RATE_LIMITED', limit: 'tokens' })
  await t.rejects(limiter.admit(USER, 0), { code: 'RATE_LIMITED', limit: 'tokens' })
  t.equal(await r.store.counters.get(`rate:rpm:${USER.userId}`, new Date(START - 15_000)), 1)
})

t.test('concurrency: a call past the limit waits 1 s; its slot frees on settle, and settle is idempotent', async t => {
  const r = await rig(t, { member: { concurrent: 1, tpm: 100 } })
  const limiter = r.limiter()
  const a = await limiter.admit(USER, 0)
  await t.rejects(limiter.admit(USER, 0), { code: 'RATE_LIMITED', limit: 'concurrent', retryAfter: 1 })
  await a.settle(used(10))
  await a.settle(used(10))
  const b = await limiter.admit(USER, 0)
  t.equal(b.headers['x-ratelimit-remaining-tokens'], '90', 'a second settle charges nothing more')
  await b.settle(undefined)
  await limiter.admit(USER, 0)
})

t.test("a crashed process's concurrency slot frees when its lease expires; a running call's lease is renewed", async t => {
  const r = await rig(t, { member: { concurrent: 1 } })
  const running = r.limiter({ leaseSeconds: 30 })
  const other = r.limiter({ leaseSeconds: 30 })
  await running.admit(USER, 0)
  r.clock.at += 20_000
  r.renew()
  r.clock.at += 20_000
  await t.rejects(other.admit(USER, 0), { code: 'RATE_LIMITED', limit: 'concurrent' }, 'renewed: still held after the first lease would have ended')
  r.clock.at += 30_001
  // No renewal ran (the process crashed): the slot is free again.
  await other.admit(USER, 0)
})

t.test('a user override replaces the level values field by field; null lifts a limit; changes hold within overridesCacheMs', async t => {
  const r = await rig(t, { member: { rpm: 1, tpm: 100 } })
  const limiter = r.limiter({ overridesCacheMs: 4000 })
  await r.store.limits.set(USER.userId, { rpm: 3 })
  const a = await limiter.admit(USER, 0)
  t.equal(a.headers['x-ratelimit-limit-requests'], '3')
  t.equal(a.headers['x-ratelimit-limit-tokens'], '100', 'an absent field keeps the level value')
  await r.store.limits.set(USER.userId, { rpm: null, tpm: 5 })
  t.equal((await limiter.admit(USER, 0)).headers['x-ratelimit-limit-requests'], '3', 'cached')
  r.clock.at += 4000
  const b = await limiter.admit(USER, 0)
  t.equal(b.headers['x-ratelimit-limit-requests'], undefined, 'null: unlimited')
  t.equal(b.headers['x-ratelimit-limit-tokens'], '5')
  t.equal((await limiter.admit({ ...OTHER, accessLevel: 'default' }, 1e9)).headers['x-ratelimit-limit-requests'], undefined, 'a level with no listed level at or below it is unlimited')
})

t.test('a limit of 0 refuses every call', async t => {
  const r = await rig(t, { default: { rpm: 0 } })
  await t.rejects(r.limiter().admit({ ...USER, accessLevel: 'default' }, 0), { code: 'RATE_LIMITED', limit: 'requests', retryAfter: 45 })
})

t.test('a failing onLimited hook does not change the answer', async t => {
  const r = await rig(t, { member: { rpm: 0 } })
  await t.rejects(r.limiter({ onLimited: () => { throw new Error('metrics down') } }).admit(USER, 0), { code: 'RATE_LIMITED' })
})

t.test('createRateLimiter refuses bad options, naming them', async t => {
  const store = await createEmbeddedStore()
  t.teardown(() => store.close())
  t.throws(() => createRateLimiter({ store: {} as Store }), { name: 'TypeError', option: 'store' })
  t.throws(() => createRateLimiter({ store, byLevel: { member: { rpm: -1 } } }), { name: 'TypeError', option: 'byLevel', message: /byLevel\.member\.rpm/ })
  t.throws(() => createRateLimiter({ store, overridesCacheMs: 1.5 }), { name: 'TypeError', option: 'overridesCacheMs' })
  t.throws(() => createRateLimiter({ store, leaseSeconds: 0 }), { name: 'TypeError', option: 'leaseSeconds' })
})

t.test('reset durations are written as OpenAI writes them', async t => {
  t.same([850, 1000, 1001, 45_000, 60_000, 360_000, 3_723_000].map(resetDuration), ['850ms', '1s', '2s', '45s', '1m0s', '6m0s', '1h2m3s'])
})

async function sharedLimits (t: Test, stores: [Store, Store]): Promise<void> {
  const clock = { at: START }
  const make = (store: Store): ReturnType<typeof createRateLimiter> =>
    createRateLimiter({ store, byLevel: { member: { rpm: 2, tpm: 100, concurrent: 1 } }, now: () => new Date(clock.at), repeat: () => () => {} })
  const [one, two] = stores.map(make)
  const a = await one.admit(USER, 0)
  await t.rejects(two.admit(USER, 0), { code: 'RATE_LIMITED', limit: 'concurrent' }, 'a slot held on one replica is held on the other')
  await a.settle(used(100))
  await t.rejects(two.admit(USER, 0), { code: 'RATE_LIMITED', limit: 'tokens' }, 'tokens charged on one replica count on the other')
  clock.at += 60_000
  await (await two.admit(USER, 0)).settle(undefined)
  await (await one.admit(USER, 0)).settle(undefined)
  await t.rejects(two.admit(USER, 0), { code: 'RATE_LIMITED', limit: 'requests' }, 'requests counted on both replicas')
}

t.test('a user over a limit on one replica is refused on the other (two limiters on one embedded store)', async t => {
  const store = await createEmbeddedStore({ now: () => new Date(START) })
  t.teardown(() => store.close())
  await sharedLimits(t, [store, store])
})

t.test('a user over a limit on one replica is refused on the other (two MongoDB stores on the stand-in)', async t => {
  const standIn = await startMongoStandIn()
  t.teardown(() => standIn.close())
  const one = await createMongoStore({ url: standIn.url, dbName: 'limits' })
  const two = await createMongoStore({ url: standIn.url, dbName: 'limits' })
  t.teardown(async () => { await one.close(); await two.close() })
  await sharedLimits(t, [one, two])
})

t.test('a call costs one counter store call to admit and one to settle, and no store work for a limit that is not set', async t => {
  const r = await rig(t, { member: { rpm: 100, tpm: 10_000, tokensPerDay: 100_000, concurrent: 5 }, admin: { rpm: 100, concurrent: null } })
  const calls: string[] = []
  const counted = <T extends object>(name: string, part: T): T => new Proxy(part, {
    get: (target, method: string) => {
      const fn = (target as Record<string, unknown>)[method]
      return typeof fn === 'function' ? (...args: unknown[]) => { calls.push(`${name}.${method}`); return fn.apply(target, args) } : fn
    },
  })
  const limiter = r.limiter({ store: { counters: counted('counters', r.store.counters), leases: counted('leases', r.store.leases), limits: counted('limits', r.store.limits) } })
  const a = await limiter.admit(USER, 10)
  t.same(calls, ['limits.get', 'counters.batch', 'leases.acquire'], 'admitted: the override, then the request count and both token windows in one call, then the slot')
  t.same(a.headers, {
    'x-ratelimit-limit-requests': '100', 'x-ratelimit-remaining-requests': '99', 'x-ratelimit-reset-requests': '45s',
    'x-ratelimit-limit-tokens': '10000', 'x-ratelimit-remaining-tokens': '9990', 'x-ratelimit-reset-tokens': '45s',
  })
  calls.length = 0
  await a.settle(used(30))
  t.same(calls.sort(), ['counters.batch', 'leases.release'], 'settled: both token windows trued up in one call, the slot freed')
  calls.length = 0
  await (await limiter.admit(USER, 0)).settle(undefined)
  t.same(calls, ['counters.batch', 'leases.acquire', 'leases.release'], 'the override is reused within the cache period; nothing reserved, nothing spent: no true-up')
  t.equal((await limiter.admit(USER, 0)).headers['x-ratelimit-remaining-tokens'], '9970', 'the batched charge counts')
  calls.length = 0
  await (await limiter.admit({ ...OTHER, accessLevel: 'admin' }, 10)).settle(used(30))
  t.same(calls, ['limits.get', 'counters.batch'], 'rpm only: no token reads, no lease, nothing to charge')
})

t.test("a caller's new access level applies at once, within the override cache period", async t => {
  const r = await rig(t, { member: { rpm: 5 }, admin: { rpm: 50 } })
  const limiter = r.limiter({ overridesCacheMs: 4000 })
  t.equal((await limiter.admit(USER, 0)).headers['x-ratelimit-limit-requests'], '5')
  t.equal((await limiter.admit({ ...USER, accessLevel: 'admin' }, 0)).headers['x-ratelimit-limit-requests'], '50', 'promoted')
  t.equal((await limiter.admit(USER, 0)).headers['x-ratelimit-limit-requests'], '5', 'demoted')
})

t.test('a level without its own entry takes the nearest lower level\'s: promoting a member to admin or dev keeps their limits; {} is unlimited; hush is unlimited unless listed', async t => {
  const limitOf = async (byLevel: RateLimiterOptions['byLevel'], accessLevel: typeof USER.accessLevel | 'admin' | 'dev' | 'hush'): Promise<string | undefined> => {
    const r = await rig(t, byLevel)
    return (await r.limiter().admit({ ...USER, accessLevel }, 0)).headers['x-ratelimit-limit-requests']
  }
  t.equal(await limitOf({ member: { rpm: 5 } }, 'admin'), '5', 'admin has no entry: member\'s')
  t.equal(await limitOf({ member: { rpm: 5 } }, 'dev'), '5', 'dev has no entry, nor admin: member\'s')
  t.equal(await limitOf({ member: { rpm: 5 }, admin: { rpm: 50 } }, 'dev'), '50', 'the nearest lower entry wins')
  t.equal(await limitOf({ member: { rpm: 5 }, admin: {} }, 'dev'), undefined, 'an explicit {} is unlimited, and passes on as such')
  t.equal(await limitOf({ member: { rpm: 5 } }, 'hush'), undefined, 'hush is unlimited unless listed')
  t.equal(await limitOf({ member: { rpm: 5 }, hush: { rpm: 500 } }, 'hush'), '500')
})

t.test('one renewal task renews every running call\'s lease, and stops when no call holds one', async t => {
  const r = await rig(t, { member: { concurrent: 3 } })
  const tasks = new Set<() => void>()
  let started = 0
  const limiter = r.limiter({ leaseSeconds: 30, repeat: (fn: () => void) => { started++; tasks.add(fn); return () => tasks.delete(fn) } })
  const a = await limiter.admit(USER, 0)
  const b = await limiter.admit(USER, 0)
  t.equal(started, 1, 'one task for both calls')
  r.clock.at += 20_000
  for (const fn of tasks) fn()
  r.clock.at += 20_000
  await new Promise(resolve => setImmediate(resolve))
  t.equal(await r.store.leases.count(`rate:concurrent:${USER.userId}`, new Date(r.clock.at)), 2, 'both renewed past their first expiry')
  await a.settle(undefined)
  t.equal(tasks.size, 1, 'still running while a call holds a slot')
  await b.settle(undefined)
  t.equal(tasks.size, 0, 'stopped when none does')
  t.equal(await r.store.leases.count(`rate:concurrent:${USER.userId}`, new Date(r.clock.at)), 0)
  await (await limiter.admit(USER, 0)).settle(undefined)
  t.equal(started, 2, 'started again for the next call')
})
