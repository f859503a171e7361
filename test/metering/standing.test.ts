// RateLimiter.standing: what the console shows as "what is left now" (docs/console.md, "Pages and API"): the
// limits in effect and the current windows' counts, read without counting anything.
import t from 'tap'
import { createEmbeddedStore, createRateLimiter } from '../../lib/index.ts'

t.test('standing reads the limits in effect and the windows without adding to them', async t => {
  const at = Math.floor(Date.now() / 60_000) * 60_000 + 1000
  const store = await createEmbeddedStore({ now: () => new Date(at) })
  t.teardown(() => store.close())
  const limiter = createRateLimiter({ store, byLevel: { member: { rpm: 5, tpm: 1000, concurrent: 2 } }, now: () => new Date(at) })
  const caller = { userId: 'aaaaaaaaaaaaaaaaaaaaaaaa', accessLevel: 'member' as const }
  const admission = await limiter.admit(caller, 10)
  await admission.settle({ inputTokens: 30, outputTokens: 20, thinkingTokens: 0, cachedTokens: 0 })
  const held = await limiter.admit(caller, 0)
  const first = await limiter.standing!(caller)
  t.same(first.limits, { rpm: 5, tpm: 1000, tokensPerDay: null, concurrent: 2, usdPerDayMicros: null, usdPerMonthMicros: null })
  t.same(first.used, { rpm: 2, tpm: 50, tokensPerDay: 0, concurrent: 1, usdPerDayMicros: 0, usdPerMonthMicros: 0 })
  t.same(await limiter.standing!(caller), first, 'asking counts nothing')
  await held.settle(undefined)
  t.equal((await limiter.standing!(caller)).used.concurrent, 0, 'a finished call frees its slot')
  await store.limits.set(caller.userId, { rpm: null })
  const lifted = createRateLimiter({ store, byLevel: { member: { rpm: 5 } }, now: () => new Date(at) })
  t.equal((await lifted.standing!(caller)).limits.rpm, null, 'an override lifting a limit shows as unlimited')
})
