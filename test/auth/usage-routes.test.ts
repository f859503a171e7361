// The usage routes (lib/auth/usage-routes.ts) over HTTP: GET /auth/usage (own) and GET /admin/usage.
import t from 'tap'
import type { Test } from 'tap'
import { startAuthHarness } from '../support/auth-harness.ts'
import type { AuthHarness, TestUser } from '../support/auth-harness.ts'
import type { Reply } from '../support/auth-client.ts'
import type { UsageRecord } from '../../lib/index.ts'

// The service's clock: today is 2031-03-15 (UTC), so the default range is 2031-02-14 .. 2031-03-15.
const NOW = new Date('2031-03-15T22:30:00.000Z')

const row = (over: Partial<UsageRecord> & Pick<UsageRecord, 'day' | 'userId'>): UsageRecord => ({
  keyId: null,
  model: 'gemini-2.5-pro',
  surface: 'chat',
  requests: 1,
  inputTokens: 10,
  outputTokens: 20,
  thinkingTokens: 3,
  cachedTokens: 1,
  errors4xx: 0,
  errors5xx: 0,
  costMicros: 0,
  unpricedRequests: 0,
  groundedRequests: 0,
  toolUseTokens: 0,
  ...over,
})

async function setup (t: Test): Promise<{ h: AuthHarness, ada: TestUser, bob: TestUser, admin: TestUser }> {
  const h = await startAuthHarness({ now: () => NOW })
  t.teardown(h.close)
  const [ada, bob, admin] = [await h.newUser(), await h.newUser(), await h.admin()]
  await h.store.usage.record([
    row({ day: '2031-02-13', userId: ada.userId }),
    row({ day: '2031-02-14', userId: ada.userId, keyId: 'a'.repeat(24), requests: 2, errors4xx: 1, costMicros: 1_250_000, groundedRequests: 2 }),
    row({ day: '2031-03-15', userId: ada.userId, keyId: 'a'.repeat(24), surface: 'native', errors5xx: 1, costMicros: 75, unpricedRequests: 1 }),
    row({ day: '2031-03-01', userId: bob.userId, model: 'gemini-2.5-flash', inputTokens: 100 }),
    row({ day: '2031-03-02', userId: 'operator' }),
  ])
  return { h, ada, bob, admin }
}

const ownUsage = (h: AuthHarness, user: TestUser, query: Record<string, string | undefined> = {}, path = '/auth/usage'): Promise<Reply> =>
  h.call('GET', path, { query: { user_id: user.userId, ...query }, headers: { 'user-agent': user.device, token: user.token } })

const adminUsage = (h: AuthHarness, admin: TestUser, query: Record<string, string | undefined> = {}, path = '/admin/usage'): Promise<Reply> =>
  h.call('GET', path, { query: { admin_id: admin.userId, ...query }, headers: { 'user-agent': admin.device, token: admin.token } })

/** Every usage row and user, to prove a request changed nothing. */
const snapshot = async (h: AuthHarness): Promise<string> =>
  JSON.stringify([await h.store.usage.query({ from: '2000-01-01', to: '2099-12-31' }), await h.snapshot()])

t.test('GET /auth/usage answers the caller\'s own rows of the last 30 days, with totals, cost in micro-dollars and as dollars, and grounded requests', async t => {
  const { h, ada } = await setup(t)
  const res = await ownUsage(h, ada)
  t.equal(res.status, 200)
  t.equal(res.headers['cache-control'], 'no-store')
  t.same(res.body, {
    from: '2031-02-14',
    to: '2031-03-15',
    rows: [
      { day: '2031-02-14', user_id: ada.userId, key_id: 'a'.repeat(24), model: 'gemini-2.5-pro', surface: 'chat', requests: 2, input_tokens: 10, output_tokens: 20, thinking_tokens: 3, cached_tokens: 1, errors_4xx: 1, errors_5xx: 0, cost_micros: 1_250_000, unpriced_requests: 0, grounded_requests: 2, tool_use_tokens: 0, cost_usd: '1.250000' },
      { day: '2031-03-15', user_id: ada.userId, key_id: 'a'.repeat(24), model: 'gemini-2.5-pro', surface: 'native', requests: 1, input_tokens: 10, output_tokens: 20, thinking_tokens: 3, cached_tokens: 1, errors_4xx: 0, errors_5xx: 1, cost_micros: 75, unpriced_requests: 1, grounded_requests: 0, tool_use_tokens: 0, cost_usd: '0.000075' },
    ],
    totals: { requests: 3, input_tokens: 20, output_tokens: 40, thinking_tokens: 6, cached_tokens: 2, errors_4xx: 1, errors_5xx: 1, cost_micros: 1_250_075, unpriced_requests: 1, grounded_requests: 2, tool_use_tokens: 0, cost_usd: '1.250075' },
  })
  const one = await ownUsage(h, ada, { from: '2031-02-13', to: '2031-02-13' })
  t.match(one.body, { from: '2031-02-13', to: '2031-02-13', rows: [{ day: '2031-02-13', key_id: null }], totals: { requests: 1 } })
  t.match((await ownUsage(h, ada, { to: '2031-02-20' })).body, { from: '2031-01-22', to: '2031-02-20' }, 'from defaults to 29 days before to')
  t.same((await ownUsage(h, ada, { from: '2030-01-01', to: '2030-12-31' })).body.rows, [])
})

t.test('a user reads only their own usage: another user\'s user_id with their token is refused', async t => {
  const { h, ada, bob } = await setup(t)
  const res = await h.call('GET', '/auth/usage', { query: { user_id: bob.userId }, headers: { 'user-agent': ada.device, token: ada.token } })
  t.equal(res.status, 401)
  t.same(res.body, { detail: 'Invalid token' })
  t.equal((await ownUsage(h, { ...ada, token: '' })).status, 401, 'no token')
  t.equal((await ownUsage(h, { ...ada, device: 'other-device' })).status, 401, 'another device')
  t.equal((await h.call('GET', '/auth/usage', { query: { user_id: ada.userId }, headers: { token: ada.token } })).status, 400, 'no user-agent')
})

t.test('GET /admin/usage answers everyone\'s rows, or one user\'s, operator calls included', async t => {
  const { h, ada, bob, admin } = await setup(t)
  const all = await adminUsage(h, admin)
  t.equal(all.status, 200)
  t.same(all.body.rows.map((r: { day: string, user_id: string }) => [r.day, r.user_id]), [
    ['2031-02-14', ada.userId], ['2031-03-01', bob.userId], ['2031-03-02', 'operator'], ['2031-03-15', ada.userId],
  ])
  t.same(all.body.totals, { requests: 5, input_tokens: 130, output_tokens: 80, thinking_tokens: 12, cached_tokens: 4, errors_4xx: 1, errors_5xx: 1, cost_micros: 1_250_075, unpriced_requests: 1, grounded_requests: 2, tool_use_tokens: 0, cost_usd: '1.250075' })
  const bobs = await adminUsage(h, admin, { user_id: bob.userId.toUpperCase() })
  t.same(bobs.body.rows.map((r: { user_id: string, model: string }) => [r.user_id, r.model]), [[bob.userId, 'gemini-2.5-flash']])
  t.same((await adminUsage(h, admin, { user_id: 'operator' })).body.rows.map((r: { user_id: string }) => r.user_id), ['operator'])
  t.same((await adminUsage(h, admin, { user_id: 'f'.repeat(24) })).body, { from: '2031-02-14', to: '2031-03-15', rows: [], totals: { requests: 0, input_tokens: 0, output_tokens: 0, thinking_tokens: 0, cached_tokens: 0, errors_4xx: 0, errors_5xx: 0, cost_micros: 0, unpriced_requests: 0, grounded_requests: 0, tool_use_tokens: 0, cost_usd: '0.000000' } })
})

t.test('only hush reads everyone\'s usage: GET /admin/usage answers 403 below hush', async t => {
  const { h, ada } = await setup(t)
  const res = await adminUsage(h, ada)
  t.equal(res.status, 403)
  t.same(res.body, { detail: 'Insufficient permissions' })
  t.equal((await adminUsage(h, { ...ada, token: 'x'.repeat(43) })).status, 401)
})

t.test('from and to: real UTC days, from not after to, at most 366 days apart', async t => {
  const { h, ada, admin } = await setup(t)
  t.equal((await ownUsage(h, ada, { from: '2030-03-14', to: '2031-03-15' })).status, 200, '366 days apart')
  t.equal((await ownUsage(h, ada, { from: '2030-03-13', to: '2031-03-15' })).status, 400, '367 days apart')
  t.equal((await adminUsage(h, admin, { from: '2030-03-13', to: '2031-03-15' })).status, 400, '367 days apart (admin)')
  t.equal((await ownUsage(h, ada, { from: '2031-03-02', to: '2031-03-01' })).status, 400, 'reversed')
  t.equal((await ownUsage(h, ada, { from: '2031-02-30' })).status, 400, 'not a day')
  t.equal((await ownUsage(h, ada, { to: '2031-13-01' })).status, 400, 'not a month')
  t.match((await ownUsage(h, ada, { from: '2031-3-1' })).body, { detail: /"from" must be a UTC day, YYYY-MM-DD/ })
})

t.test('an answer holds at most 10 000 rows: a larger range answers 400 asking for less, and the store reads one row past the cap at most', async t => {
  const { h, ada, admin } = await setup(t)
  // 10 000 rows of ada's on one day, beside the two of hers the default range already holds.
  await h.store.usage.record(Array.from({ length: 10_000 }, (_, i) => row({ day: '2031-03-10', userId: ada.userId, model: `model-${String(i).padStart(5, '0')}` })))
  const limits: Array<number | undefined> = []
  const query = h.store.usage.query.bind(h.store.usage)
  h.store.usage.query = async q => { limits.push(q.limit); return await query(q) }

  const own = await ownUsage(h, ada)
  t.equal(own.status, 400)
  t.same(own.body, { detail: 'The range holds more than 10000 usage rows; ask for fewer days (from, to)' })
  const oneDay = await ownUsage(h, ada, { from: '2031-03-10', to: '2031-03-10' })
  t.equal(oneDay.status, 200, 'exactly 10 000 rows are one answer')
  t.equal(oneDay.body.rows.length, 10_000)
  t.equal(oneDay.body.totals.requests, 10_000)

  t.same((await adminUsage(h, admin)).body, { detail: 'The range holds more than 10000 usage rows; ask for fewer days (from, to) or one user (user_id)' })
  t.equal((await adminUsage(h, admin, { user_id: ada.userId, from: '2031-03-10', to: '2031-03-10' })).status, 200)
  t.same(limits, [10_001, 10_001, 10_001, 10_001], 'every query asks the store for one row past the cap, never for all')
})

t.test('hostile input on the usage routes answers 400 and changes nothing', async t => {
  const { h, ada, admin } = await setup(t)
  const before = await snapshot(h)
  const own: Array<[string, Record<string, string | undefined>, string?]> = [
    ['from: an object', { from: '{"$gt":""}' }],
    ['from: a regex', { from: '.*' }],
    ['to: 60 KB', { to: 'x'.repeat(60_000) }],
    ['from: a datetime', { from: '2031-03-01T00:00:00Z' }],
    ['unknown key', { limit: '5' }],
    ['user_id: an operator', {}, '/auth/usage?user_id[$ne]=x'],
  ]
  for (const [name, query, path] of own) {
    const res = await ownUsage(h, ada, query, path)
    t.equal(res.status, 400, `own: ${name}`)
    t.ok(res.text.length < 600, `own: ${name}: the answer does not echo the input`)
  }
  const admins: Array<[string, Record<string, string | undefined>, string?]> = [
    ['user_id: not an id', { user_id: 'ada' }],
    ['user_id: 25 hex', { user_id: 'a'.repeat(25) }],
    ['user_id: an operator', { user_id: '{"$ne":null}' }],
    ['to: an array', {}, '/admin/usage?to[]=2031-03-01'],
    ['unknown key', { offset: '1' }],
  ]
  for (const [name, query, path] of admins) t.equal((await adminUsage(h, admin, query, path)).status, 400, `admin: ${name}`)
  t.equal(await snapshot(h), before)
})
