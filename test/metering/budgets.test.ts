// Dollar budgets in the rate limiter (lib/metering/budgets.ts): usd_per_day, usd_per_month and a key's own
// usd_per_month, reserved at admission and settled to the call's cost, on a fake clock.
import t from 'tap'
import type { Test } from 'tap'
import { createEmbeddedStore, createRateLimiter } from '../../lib/index.ts'
import type { LimitName, RateLimiterOptions, TokenUsage } from '../../lib/index.ts'
import { monthOf } from '../../lib/metering/budgets.ts'

const USER = { userId: 'a'.repeat(24), accessLevel: 'member' as const }
// 2026-01-05 10:00:15 UTC.
const START = Date.UTC(2026, 0, 5, 10, 0, 15)
const used: TokenUsage = { inputTokens: 100, outputTokens: 10, thinkingTokens: 0, cachedTokens: 0 }
const price = (micros: number | undefined): { model: string, reservedMicros: number | undefined } => ({ model: 'gemini-4-argon', reservedMicros: micros })

async function rig (t: Test, byLevel: RateLimiterOptions['byLevel']): Promise<{ clock: { at: number }, limited: LimitName[], limiter: ReturnType<typeof createRateLimiter> }> {
  const clock = { at: START }
  const store = await createEmbeddedStore({ now: () => new Date(clock.at) })
  t.teardown(() => store.close())
  const limited: LimitName[] = []
  const limiter = createRateLimiter({ store, byLevel, now: () => new Date(clock.at), onLimited: l => limited.push(l), repeat: () => () => {} })
  return { clock, limited, limiter }
}

t.test('usd_per_day: the reservation counts at once and settles to the call\'s cost; a spent day is refused naming the budget, what is left and the reset', async t => {
  const r = await rig(t, { member: { usdPerDayMicros: 1_000_000 } })
  const first = await r.limiter.admit(USER, 1000, price(300_000))
  t.same(first.headers, { 'x-gatehouse-budget': 'usd_per_day', 'x-gatehouse-budget-remaining-usd': '0.700000', 'x-gatehouse-budget-reset': '2026-01-06T00:00:00.000Z' }, 'the reservation is held')
  await first.settle(used, 600_000)
  const second = await r.limiter.admit(USER, 1000, price(300_000))
  t.equal(second.headers['x-gatehouse-budget-remaining-usd'], '0.100000', 'the first call cost its real 0.60, not its reservation')
  await second.settle(used, 500_000)
  const refusal = await r.limiter.admit(USER, 1000, price(300_000)).catch((err: unknown) => err)
  t.match(refusal, {
    code: 'RATE_LIMITED',
    status: 429,
    limit: 'usd_per_day',
    retryAfter: 50_385,
    message: 'Budget reached: usd_per_day of $1.000000, $0.000000 left; it resets at 2026-01-06T00:00:00.000Z',
    headers: { 'x-gatehouse-budget': 'usd_per_day', 'x-gatehouse-budget-remaining-usd': '0.000000' },
  })
  t.same(r.limited, ['usd_per_day'])
  r.clock.at = Date.UTC(2026, 0, 6, 0, 0, 1)
  t.equal((await r.limiter.admit(USER, 0, price(0))).headers['x-gatehouse-budget-remaining-usd'], '1.000000', 'the next UTC day starts afresh')
})

t.test('usd_per_month: the window is the UTC calendar month, whatever its length', async t => {
  t.same(monthOf(Date.UTC(2026, 1, 28, 23, 59)).map(ms => new Date(ms).toISOString()), ['2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z'])
  t.same(monthOf(Date.UTC(2026, 11, 31, 12)).map(ms => new Date(ms).toISOString()), ['2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z'])
  const r = await rig(t, { member: { usdPerMonthMicros: 2_000_000 } })
  await (await r.limiter.admit(USER, 10, price(10))).settle(used, 2_000_000)
  r.clock.at = Date.UTC(2026, 0, 31, 23, 0)
  await t.rejects(r.limiter.admit(USER, 10, price(10)), { limit: 'usd_per_month', message: /usd_per_month of \$2\.000000, \$0\.000000 left; it resets at 2026-02-01T00:00:00\.000Z/ })
  r.clock.at = Date.UTC(2026, 1, 1)
  t.ok(await r.limiter.admit(USER, 10, price(10)), 'the first of the next month starts afresh')
})

t.test('a model with no price under a dollar budget is refused MODEL_UNPRICED, counting nothing; with no budget it is admitted', async t => {
  const r = await rig(t, { member: { usdPerDayMicros: 5_000_000, rpm: 10 }, dev: { rpm: 10 } })
  await t.rejects(r.limiter.admit(USER, 10, { model: 'gemini-x', reservedMicros: undefined, unpriced: 'No price is known for gemini-x on gemini-api' }), {
    code: 'MODEL_UNPRICED',
    status: 403,
    message: 'No price is known for gemini-x on gemini-api, so the usd_per_day budget cannot be enforced on it: use a model with a price, or ask the operator to add one (docs/prices.md)',
  })
  t.equal((await r.limiter.admit(USER, 0)).headers['x-ratelimit-remaining-requests'], '9', 'the refusal counted no request')
  t.ok(await r.limiter.admit({ ...USER, accessLevel: 'dev' }, 10, price(undefined)), 'no budget: nothing to enforce')
  t.ok(await r.limiter.admit(USER, 0), 'a request on no model (no price given) costs nothing and is admitted')
})

t.test('a key\'s own usd_per_month caps that key alone; the user\'s other keys go on', async t => {
  const r = await rig(t, {})
  const capped = { ...USER, keyId: 'k1', usdPerMonthMicros: 1_000_000 }
  const other = { ...USER, keyId: 'k2', usdPerMonthMicros: null }
  const a = await r.limiter.admit(capped, 10, price(200_000))
  t.same(a.headers, { 'x-gatehouse-budget': 'key_usd_per_month', 'x-gatehouse-budget-remaining-usd': '0.800000', 'x-gatehouse-budget-reset': '2026-02-01T00:00:00.000Z' })
  await a.settle(used, 1_000_000)
  await t.rejects(r.limiter.admit(capped, 10, price(200_000)), { code: 'RATE_LIMITED', limit: 'key_usd_per_month', message: /^Budget reached: this key's usd_per_month of \$1\.000000, \$0\.000000 left/ })
  t.same((await r.limiter.admit(other, 10, price(200_000))).headers, {}, 'another key of the user has no cap')
})

t.test('the budget headers show the budget with least left', async t => {
  const r = await rig(t, { member: { usdPerDayMicros: 5_000_000, usdPerMonthMicros: 6_000_000 } })
  await (await r.limiter.admit(USER, 10, price(0))).settle(used, 4_500_000)
  t.equal((await r.limiter.admit(USER, 10, price(0))).headers['x-gatehouse-budget'], 'usd_per_day')
  r.clock.at += 86_400_000
  await (await r.limiter.admit(USER, 10, price(0))).settle(used, 1_000_000)
  const h = (await r.limiter.admit(USER, 10, price(0))).headers
  t.same(h, { 'x-gatehouse-budget': 'usd_per_month', 'x-gatehouse-budget-remaining-usd': '0.500000', 'x-gatehouse-budget-reset': '2026-02-01T00:00:00.000Z' })
})

t.test('a call that ends in the next UTC day is charged its whole cost there; its reservation stays in the day it was made in', async t => {
  const r = await rig(t, { member: { usdPerDayMicros: 1_000_000 } })
  r.clock.at = Date.UTC(2026, 0, 5, 23, 59, 59)
  const call = await r.limiter.admit(USER, 10, price(400_000))
  r.clock.at = Date.UTC(2026, 0, 6, 0, 0, 1)
  await call.settle(used, 300_000)
  t.equal((await r.limiter.admit(USER, 0, price(0))).headers['x-gatehouse-budget-remaining-usd'], '0.700000')
})

t.test('a refused or failed call gives its dollar reservation back', async t => {
  const r = await rig(t, { member: { usdPerDayMicros: 1_000_000, rpm: 1 } })
  const call = await r.limiter.admit(USER, 10, price(900_000))
  await t.rejects(r.limiter.admit(USER, 10, price(50_000)), { code: 'RATE_LIMITED', limit: 'requests', headers: { 'x-gatehouse-budget-remaining-usd': '0.100000' } })
  await call.settle(undefined)
  r.clock.at += 60_000
  t.equal((await r.limiter.admit(USER, 0, price(0))).headers['x-gatehouse-budget-remaining-usd'], '1.000000', 'no usage: the whole reservation is released')
})
