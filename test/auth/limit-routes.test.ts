// PUT and GET /admin/user/{user_id}/limits: an admin's per-user override of the proxy rate limits.
import t from 'tap'
import { startAuthHarness } from '../support/auth-harness.ts'
import type { AuthHarness, TestUser } from '../support/auth-harness.ts'
import type { Reply } from '../support/auth-client.ts'
import { limitsAtEachLevel } from '../../lib/auth/limit-routes.ts'
import { resolveLimitsOption } from '../../lib/metering/limits-rule.ts'

const BY_LEVEL = { default: { rpm: 10, tpm: 1000 }, member: { rpm: 60, concurrent: 2 } }

const limitsCall = (h: AuthHarness, admin: TestUser, method: 'GET' | 'PUT', target: string, json?: unknown, extra: { raw?: string, query?: Record<string, string> } = {}): Promise<Reply> =>
  h.call(method, `/admin/user/${target}/limits`, {
    query: extra.query ?? { admin_id: admin.userId, token: admin.token },
    headers: { 'user-agent': admin.device, ...(extra.raw === undefined ? {} : { 'content-type': 'application/json' }) },
    json,
    raw: extra.raw,
  })

t.test('GET shows no override and the level limits in effect, every field named (null: unlimited; a listed level calls at most 8 at once by default)', async t => {
  const h = await startAuthHarness({ limits: BY_LEVEL })
  t.teardown(h.close)
  const admin = await h.admin()
  const user = await h.newUser()
  const reply = await limitsCall(h, admin, 'GET', user.userId)
  t.equal(reply.status, 200)
  t.equal(reply.headers['cache-control'], 'no-store')
  t.same(reply.body, { user_id: user.userId, limits: null, effective: { rpm: 10, tpm: 1000, tokens_per_day: null, concurrent: 8, usd_per_day: null, usd_per_month: null } })
})

t.test('PUT sets an override: a number replaces the level value, null lifts it, absent keeps it', async t => {
  const h = await startAuthHarness({ limits: BY_LEVEL })
  t.teardown(h.close)
  const admin = await h.admin()
  const user = await h.newUser()
  const put = await limitsCall(h, admin, 'PUT', user.userId, { rpm: 5, tpm: null, tokens_per_day: 20000 })
  t.equal(put.status, 200)
  const expected = { user_id: user.userId, limits: { rpm: 5, tpm: null, tokens_per_day: 20000 }, effective: { rpm: 5, tpm: null, tokens_per_day: 20000, concurrent: 8, usd_per_day: null, usd_per_month: null } }
  t.same(put.body, expected)
  t.same(await h.store.limits.get(user.userId), { rpm: 5, tpm: null, tokensPerDay: 20000 })
  t.same((await limitsCall(h, admin, 'GET', user.userId)).body, expected)
  t.equal((await limitsCall(h, admin, 'PUT', user.userId, { concurrent: 1 })).status, 200)
  t.same(await h.store.limits.get(user.userId), { concurrent: 1 }, 'a PUT replaces the whole override')
  const cleared = await limitsCall(h, admin, 'PUT', user.userId, {})
  t.same(cleared.body, { user_id: user.userId, limits: null, effective: { rpm: 10, tpm: 1000, tokens_per_day: null, concurrent: 8, usd_per_day: null, usd_per_month: null } }, 'an empty body removes the override')
  t.equal(await h.store.limits.get(user.userId), null)
})

t.test('without GEMINI_LIMITS every level is unlimited', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const admin = await h.admin()
  t.same((await limitsCall(h, admin, 'GET', admin.userId)).body.effective, { rpm: null, tpm: null, tokens_per_day: null, concurrent: null, usd_per_day: null, usd_per_month: null })
})

t.test('only a hush admin may read or set limits; an unknown user is 404', async t => {
  const h = await startAuthHarness({ limits: BY_LEVEL })
  t.teardown(h.close)
  const admin = await h.admin()
  const user = await h.newUser()
  await h.call('PUT', `/admin/user/${user.userId}/access-level`, { query: { admin_id: admin.userId, token: admin.token }, headers: { 'user-agent': admin.device }, json: { access_level: 'dev' } })
  t.same((await limitsCall(h, user, 'PUT', user.userId, { rpm: null })).body, { detail: 'Insufficient permissions' })
  t.equal((await limitsCall(h, user, 'GET', user.userId)).status, 403)
  t.equal((await limitsCall(h, admin, 'PUT', user.userId, { rpm: 1 }, { query: { admin_id: admin.userId, token: 'wrong' } })).status, 401)
  t.equal((await h.call('GET', `/admin/user/${user.userId}/limits`, { query: { admin_id: admin.userId, token: admin.token } })).status, 400, 'user-agent required')
  t.same((await limitsCall(h, admin, 'PUT', 'f'.repeat(24), { rpm: 1 })).body, { detail: 'User not found' })
  t.equal((await limitsCall(h, admin, 'GET', 'f'.repeat(24))).status, 404)
  t.equal(await h.store.limits.get(user.userId), null)
  t.equal(await h.store.limits.get('f'.repeat(24)), null)
})

t.test('hostile input on the limits routes is a 400 and leaves the store unchanged', async t => {
  const h = await startAuthHarness({ limits: BY_LEVEL })
  t.teardown(h.close)
  const admin = await h.admin()
  const user = await h.newUser()
  await limitsCall(h, admin, 'PUT', user.userId, { rpm: 7 })
  const bodies: unknown[] = [
    null, [], 'rpm', 5, { rpm: -1 }, { rpm: 1.5 }, { rpm: '5' }, { rpm: true }, { rpm: 2 ** 53 }, { rpm: { $gt: 0 } }, { tpm: [1] },
    { rpm: 1, user_id: admin.userId }, { tokensPerDay: 5 }, { ['k'.repeat(60_000)]: 1 }, { $set: { rpm: 1 } },
  ]
  for (const json of bodies) {
    const reply = await limitsCall(h, admin, 'PUT', user.userId, json)
    t.equal(reply.status, 400, JSON.stringify(json).slice(0, 40))
    t.ok(reply.text.length < 400, 'the answer does not echo a huge value')
  }
  for (const raw of ['{"__proto__": {"rpm": 1}}', '{"rpm": 1', '']) t.equal((await limitsCall(h, admin, 'PUT', user.userId, undefined, { raw })).status, 400, raw)
  for (const target of ['nothex', 'f'.repeat(25), '$where']) t.equal((await limitsCall(h, admin, 'PUT', target, { rpm: 1 })).status, 400, target)
  t.equal((await limitsCall(h, admin, 'GET', user.userId, undefined, { query: { admin_id: admin.userId, token: admin.token, user_id: 'x' } })).status, 400, 'unknown query keys')
  t.same(await h.store.limits.get(user.userId), { rpm: 7 })
})

t.test('PUT takes dollar budgets in dollars: stored in micro-dollars, shown in dollars; a bad amount is 400 naming it', async t => {
  const h = await startAuthHarness({ limits: { member: { usdPerMonthMicros: 100_000_000 } } })
  t.teardown(h.close)
  const admin = await h.admin()
  const user = await h.newUser()
  const put = await limitsCall(h, admin, 'PUT', user.userId, { usd_per_day: '2.50', usd_per_month: null })
  t.equal(put.status, 200)
  t.same(put.body.limits, { usd_per_day: 2.5, usd_per_month: null })
  t.match(put.body.effective, { usd_per_day: 2.5, usd_per_month: null }, 'null lifts the level\'s budget')
  t.same(await h.store.limits.get(user.userId), { usdPerDayMicros: 2_500_000, usdPerMonthMicros: null })
  const bad = await limitsCall(h, admin, 'PUT', user.userId, { usd_per_day: '2.5000001' })
  t.match(bad, { status: 400, body: { detail: /usd_per_day must be US dollars/ } })
  t.same(await h.store.limits.get(user.userId), { usdPerDayMicros: 2_500_000, usdPerMonthMicros: null }, 'a refused PUT changes nothing')
})

t.test('limitsAtEachLevel: what a user would have at each level, the level fallback and their override included (the console\'s warning)', async t => {
  const byLevel = resolveLimitsOption({ member: { rpm: 60, tpm: 1000 }, dev: {} })
  const at = limitsAtEachLevel(byLevel, { tpm: 5 })
  t.same(at.default, { rpm: null, tpm: 5, tokens_per_day: null, concurrent: null, usd_per_day: null, usd_per_month: null }, 'no level at or below: unlimited, the override on top')
  t.same(at.member, { rpm: 60, tpm: 5, tokens_per_day: null, concurrent: 8, usd_per_day: null, usd_per_month: null }, 'a listed level\'s default concurrent')
  t.same(at.admin, at.member, 'admin has no entry: member\'s')
  t.same(at.dev, { rpm: null, tpm: 5, tokens_per_day: null, concurrent: null, usd_per_day: null, usd_per_month: null }, '{} is unlimited, concurrency included')
  t.same(at.hush.rpm, null, 'hush is unlimited unless listed')
})
