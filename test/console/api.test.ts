// The console's JSON API (docs/console.md, "Pages and API"): each task a page performs, over HTTP, on the
// accounts service's own rules; usage summed per day on the server; the built files read when first served.
import t from 'tap'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startConsoleHarness } from '../support/console-harness.ts'
import { createRateLimiter } from '../../lib/index.ts'
import type { Proxy, UsageRecord } from '../../lib/index.ts'
import { TOP_SERIES } from '../../lib/console/usage-view.ts'

const day = (offset = 0): string => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10)
const row = (over: Partial<UsageRecord>): UsageRecord => ({
  day: day(), userId: 'operator', keyId: null, model: 'gemini-2.5-flash', surface: 'chat',
  requests: 1, inputTokens: 10, outputTokens: 5, thinkingTokens: 2, cachedTokens: 0, errors4xx: 0, errors5xx: 0, costMicros: 0, unpricedRequests: 0, groundedRequests: 0, toolUseTokens: 0, ...over,
})

t.test('sessions: listed with this browser marked; one ended by its id, or all the others', async t => {
  const h = await startConsoleHarness()
  t.teardown(h.close)
  const { username, password } = await h.member()
  const mine = h.cookie
  for (const ua of ['phone', 'tablet']) {
    const other = await h.raw('POST', '/v1/api/auth/login', { 'user-agent': ua, 'content-type': 'application/json' }, JSON.stringify({ username, password }))
    t.equal(other.status, 200)
  }
  h.cookie = mine
  const list = await h.call('GET', '/api/sessions')
  t.equal(list.body.length, 3)
  t.same(list.body.filter((s: any) => s.current).map((s: any) => s.device), ['console: Mozilla/5.0 (X11; Linux x86_64) test browser'])
  t.notOk(list.text.includes(h.cookie!), 'no token in the list')
  const phone = list.body.find((s: any) => s.device === 'phone')
  t.equal((await h.call('DELETE', `/api/sessions/${phone.id}`)).status, 200)
  t.equal((await h.call('DELETE', `/api/sessions/${phone.id}`)).status, 400, 'gone already')
  t.equal((await h.call('GET', '/api/sessions')).body.length, 2)
  t.same((await h.call('DELETE', '/api/sessions')).body, { ended: 1 })
  const self = (await h.call('GET', '/api/sessions')).body[0]
  const out = await h.call('DELETE', `/api/sessions/${self.id}`)
  t.match(out.headers['set-cookie'], /Max-Age=0/, 'ending this browser\'s own session clears its cookie')
  t.same((await h.call('GET', '/api/me')).body, { signed_in: false })
})

t.test('account: email and password changes go through the self-update rule', async t => {
  const h = await startConsoleHarness()
  t.teardown(h.close)
  const { username } = await h.member()
  const changed = await h.call('PUT', '/api/account', { json: { email: 'Ada@Example.com' } })
  t.equal(changed.status, 200)
  t.equal(changed.body.user.email, 'ada@example.com')
  t.equal((await h.call('PUT', '/api/account', { json: { password: 'password' } })).status, 400, 'a weak password is refused as everywhere')
  t.equal((await h.call('PUT', '/api/account', { json: { password: 'a new long passphrase 7' } })).status, 200)
  const login = await h.call('POST', '/api/login', { json: { username, password: 'a new long passphrase 7' }, cookie: null })
  t.equal(login.status, 200, 'the new password signs in')
})

t.test('me: the limits in effect and what is left, from the rate limiter', async t => {
  // The limiter keeps its counters in a store of its own here; the console only asks it.
  const h0 = await startConsoleHarness()
  t.teardown(h0.close)
  // A fixed clock: the limiter's minute and day windows must not turn between the call and the reading.
  const at = Date.UTC(2026, 10, 27, 12, 0, 1)
  const limiter = createRateLimiter({ store: h0.store, byLevel: { member: { rpm: 10, tokensPerDay: 1000 } }, now: () => new Date(at) })
  const h = await startConsoleHarness({ limiter })
  t.teardown(h.close)
  const { userId } = await h.member()
  await limiter.admit({ userId, accessLevel: 'member' }, 0)
  await h0.store.counters.add(`rate:tpd:${userId}`, new Date(Math.floor(at / 86_400_000) * 86_400_000), 250, new Date(at + 86_400_000))
  const me = (await h.call('GET', '/api/me')).body
  // A listed level without concurrent allows 8 calls at once (lib/metering/limits-rule.ts DEFAULT_CONCURRENT); the call admitted above holds one.
  t.same(me.standing.limits, { rpm: 10, tpm: null, tokens_per_day: 1000, concurrent: 8, usd_per_day: null, usd_per_month: null })
  t.match(me.standing.used, { rpm: 1, tokens_per_day: 250, concurrent: 1 })
  const plain = await startConsoleHarness()
  t.teardown(plain.close)
  await plain.member()
  t.same((await plain.call('GET', '/api/me')).body.standing, { limits: { rpm: null, tpm: null, tokens_per_day: null, concurrent: null, usd_per_day: null, usd_per_month: null }, used: null }, 'without a limiter: the limits only')
})

t.test('keys: created with the secret once, listed without it, revoked; below the key level refused', async t => {
  const h = await startConsoleHarness()
  t.teardown(h.close)
  const created = await h.call('POST', '/api/keys', { json: {}, cookie: null })
  t.equal(created.status, 401, 'signed out')
  await h.member()
  const key = await h.call('POST', '/api/keys', { json: { name: 'ci', expires_in_days: 7, models: ['gemini-2.5-*'] } })
  t.equal(key.status, 201)
  t.match(key.body.key, /^ghk_/)
  const list = await h.call('GET', '/api/keys')
  t.notOk(list.text.includes(key.body.key))
  t.equal((await h.call('POST', '/api/keys', { json: { name: 'x', current_password: 5 } })).status, 400)
  t.equal((await h.call('POST', '/api/keys', { json: [] })).status, 400)
  t.equal((await h.call('DELETE', `/api/keys/${key.body.key_id}`)).status, 200)
  t.equal((await h.call('DELETE', `/api/keys/${key.body.key_id}`)).status, 404)
  await h.member('default')
  t.equal((await h.call('POST', '/api/keys', { json: { name: 'x' } })).status, 403, 'a default user may not')
  t.equal((await h.call('GET', '/api/admin/users')).status, 403, 'nor use the admin routes')
})

t.test('keys: each listed with what it spent this UTC month beside its monthly cap, to its owner and to the admin', async t => {
  const h = await startConsoleHarness()
  t.teardown(h.close)
  const { userId } = await h.member()
  const capped = (await h.call('POST', '/api/keys', { json: { name: 'capped', usd_per_month: 5 } })).body
  const open = (await h.call('POST', '/api/keys', { json: { name: 'open' } })).body
  const today = day()
  const first = `${today.slice(0, 7)}-01`
  const lastMonth = new Date(Date.parse(first + 'T00:00:00Z') - 86_400_000).toISOString().slice(0, 10)
  await h.store.usage.record([
    row({ userId, keyId: capped.key_id, day: first, costMicros: 700_000 }),
    row({ userId, keyId: capped.key_id, model: 'gemini-2.5-pro', costMicros: 500_000 }),
    row({ userId, keyId: capped.key_id, day: lastMonth, costMicros: 9_000_000 }),
    row({ userId, keyId: open.key_id, costMicros: 25 }),
    row({ userId, keyId: null, costMicros: 4_000_000 }),
  ])
  const spend = (keys: any[]): unknown => keys.map(k => [k.name, k.spent_micros_this_month, k.spent_usd_this_month, k.usd_per_month]).sort()
  const own = await h.call('GET', '/api/keys')
  t.equal(own.status, 200)
  t.same(spend(own.body), [['capped', 1_200_000, '1.200000', 5], ['open', 25, '0.000025', null]], 'this month\'s rows of each key; last month\'s and key-less calls left out')
  const { userId: adminId } = await h.admin()
  t.same(spend((await h.call('GET', `/api/admin/users/${userId}/keys`)).body), spend(own.body), 'the admin sees the same')
  t.same((await h.call('GET', `/api/admin/users/${adminId}/keys`)).body, [], 'a user with no keys')
})

t.test('usage: summed per day by model and key for the user, by user for the admin, with top users and CSV', async t => {
  const h = await startConsoleHarness()
  t.teardown(h.close)
  const { userId, username } = await h.member()
  const key = (await h.call('POST', '/api/keys', { json: { name: '=cmd|calc' } })).body
  await h.store.usage.record([
    row({ userId, keyId: key.key_id, costMicros: 1_234_567, groundedRequests: 1 }),
    row({ userId, keyId: key.key_id, day: day(-1), model: 'gemini-2.5-pro', requests: 2, inputTokens: 100 }),
    row({ userId, keyId: null, day: day(-1) }),
    ...Array.from({ length: TOP_SERIES + 2 }, (_, i) => row({ userId: 'operator', model: `model-${i}` })),
  ])
  const own = await h.call('GET', `/api/usage?from=${day(-2)}&to=${day()}`)
  t.equal(own.status, 200)
  t.same(own.body.days, [day(-2), day(-1), day()])
  t.same(own.body.totals, { requests: 4, input_tokens: 120, output_tokens: 15, thinking_tokens: 6, errors_4xx: 0, errors_5xx: 0, cost_micros: 1_234_567, grounded_requests: 1 }, 'the spend and the grounded requests beside the tokens')
  t.same(own.body.by.key.find((g: any) => g.label === '=cmd|calc').totals.cost_micros, 1_234_567, 'spend by key')
  t.same(own.body.daily.map((d: any) => d.requests), [0, 3, 1])
  t.same(own.body.by.model.map((g: any) => g.label), ['gemini-2.5-pro', 'gemini-2.5-flash'])
  t.same(own.body.by.key.map((g: any) => g.label).sort(), ['(no key)', '=cmd|calc'])
  t.same(own.body.by.model[0].series.input_tokens, [0, 100, 0])
  t.equal(own.body.top_users, undefined, 'only the admin sees users')
  t.equal((await h.call('GET', `/api/usage?user_id=${userId}`)).status, 400, 'a user names no other user')
  t.equal((await h.call('GET', '/api/usage?from=2026-02-30')).status, 400, 'the range rules of the usage routes')

  const csv = await h.call('GET', `/api/usage.csv?from=${day(-2)}&to=${day()}`)
  t.match(csv.headers['content-type'], /^text\/csv/)
  t.match(csv.headers['content-disposition'], /^attachment; filename="gatehouse-usage-/)
  t.equal(csv.headers['cache-control'], 'no-store')
  const lines = csv.text.trim().split('\r\n')
  t.equal(lines.length, 4)
  t.ok(lines.some(l => l.includes(`${userId},${username},${key.key_id},'=cmd|calc,`)), 'a formula-like key name is defused')
  t.match(lines[0], /,errors_5xx,cost_micros,cost_usd,unpriced_requests,grounded_requests,tool_use_tokens$/, 'the CSV has the cost in micro-dollars, as dollars, the unpriced calls, the grounded ones and the tool-use tokens')
  t.ok(lines.some(l => l.endsWith(',1234567,1.234567,0,1,0')), 'a row\'s cost and its grounded requests')

  await h.admin()
  const all = await h.call('GET', `/api/admin/usage?from=${day(-2)}&to=${day()}`)
  t.equal(all.status, 200)
  t.equal(all.body.by.model.length, TOP_SERIES + 1, 'the largest models, then the rest as one')
  t.match(all.body.by.model.at(-1).label, /others/)
  t.same(all.body.top_users.map((u: any) => u.label).sort(), ['(operator password)', username].sort())
  t.same(all.body.top_spenders.map((u: any) => [u.label, u.cost_micros]), [[username, 1_234_567]], 'the admin sees who spent most; users who spent nothing are not listed')
  const one = await h.call('GET', `/api/admin/usage?user_id=${userId}&from=${day(-2)}`)
  t.equal(one.body.totals.requests, 4)
  const allCsv = await h.call('GET', `/api/admin/usage.csv?from=${day(-2)}`)
  t.equal(allCsv.text.trim().split('\r\n').length, 1 + 3 + TOP_SERIES + 2)
  t.equal((await h.call('GET', `/api/admin/usage.csv?user_id=${userId}&from=${day(-2)}`)).text.trim().split('\r\n').length, 4)
})

t.test('usage reads right: refusals are errors of their key and user, not a model; 4xx and 5xx carried; the admin\'s by-key view names each key\'s owner', async t => {
  const h = await startConsoleHarness()
  t.teardown(h.close)
  const { userId, username } = await h.member()
  const key = (await h.call('POST', '/api/keys', { json: { name: 'ci' } })).body
  await h.store.usage.record([
    row({ userId, keyId: key.key_id, requests: 3, errors5xx: 1 }),
    row({ userId, keyId: key.key_id, model: '(refused)', requests: 2, inputTokens: 0, outputTokens: 0, thinkingTokens: 0, errors4xx: 2 }),
  ])
  const own = await h.call('GET', `/api/usage?from=${day(-1)}&to=${day()}`)
  t.match(own.body.totals, { requests: 5, errors_4xx: 2, errors_5xx: 1 }, 'the errors columns the API and CSV carry')
  t.same(own.body.by.model.map((g: any) => g.label), ['gemini-2.5-flash'], 'no model named for the refusals')
  t.match(own.body.by.key, [{ label: 'ci', totals: { requests: 5, errors_4xx: 2 } }], 'the refusals are the key\'s errors')
  t.equal(own.body.by.key[0].owner, undefined, 'a user\'s own view names no owner')
  t.same(own.body.daily.at(-1).errors_4xx, 2)
  await h.admin()
  const all = await h.call('GET', `/api/admin/usage?from=${day(-1)}&to=${day()}`)
  t.match(all.body.by.key, [{ label: 'ci', owner: username }], 'the owner beside each key')
})

t.test('a revoked key\'s name is kept in usage: the views mark it revoked, the CSV names it', async t => {
  const h = await startConsoleHarness()
  t.teardown(h.close)
  const { userId } = await h.member()
  const key = (await h.call('POST', '/api/keys', { json: { name: 'old laptop' } })).body
  await h.store.usage.record([row({ userId, keyId: key.key_id })])
  t.equal((await h.call('DELETE', `/api/keys/${key.key_id}`)).status, 200)
  const own = await h.call('GET', `/api/usage?from=${day(-1)}&to=${day()}`)
  t.same(own.body.by.key.map((g: any) => g.label), ['old laptop (revoked)'])
  const csv = await h.call('GET', `/api/usage.csv?from=${day(-1)}&to=${day()}`)
  t.match(csv.text, `,${key.key_id},old laptop,`)
})

t.test('admin: users searched and paged with their last sign-in; level, status, lockout, sessions and limits', async t => {
  const h = await startConsoleHarness()
  t.teardown(h.close)
  const members = [await h.member(), await h.member(), await h.member()]
  const admin = await h.admin()
  const page1 = await h.call('GET', '/api/admin/users?limit=2')
  t.equal(page1.body.users.length, 2)
  t.equal(page1.body.more, true)
  const page2 = await h.call('GET', '/api/admin/users?limit=2&offset=2')
  t.equal(page2.body.more, false)
  t.equal(page2.body.users.length, 2)
  const everyone = [...page1.body.users, ...page2.body.users]
  t.same(new Set(everyone.map((u: any) => u.username)), new Set(['system', ...members.map(m => m.username)]), 'the two pages hold everyone once')
  t.match(everyone.find((u: any) => u.username === 'system'), { access_level: 'hush', disabled: false, last_login: String })
  const found = await h.call('GET', `/api/admin/users?q=${members[1].username.toUpperCase()}`)
  t.same(found.body.users.map((u: any) => u.username), [members[1].username])
  t.equal((await h.call('GET', '/api/admin/users?limit=101')).status, 400)

  const id = members[0].userId
  const detail = await h.call('GET', `/api/admin/users/${id}`)
  t.match(detail.body, { user: { user_id: id }, sessions: 1, keys: 0, limits: { limits: null } })
  t.equal((await h.call('GET', '/api/admin/users/000000000000000000000000')).status, 404)
  t.equal((await h.call('PUT', `/api/admin/users/${id}/level`, { json: { access_level: 'dev' } })).body.user.access_level, 'dev')
  t.equal((await h.call('PUT', `/api/admin/users/${admin.userId}/level`, { json: { access_level: 'member' } })).status, 400, 'the last hush user stays')
  t.equal((await h.call('PUT', `/api/admin/users/${id}/status`, { json: { disabled: true } })).body.user.disabled, true)
  t.equal((await h.call('GET', `/api/admin/users/${id}`)).body.sessions, 0, 'disabling ended their sessions')
  t.equal((await h.call('PUT', `/api/admin/users/${id}/status`, { json: { disabled: false } })).body.user.disabled, false)
  const limits = await h.call('PUT', `/api/admin/users/${id}/limits`, { json: { rpm: 7, tokens_per_day: null } })
  t.same(limits.body.limits, { rpm: 7, tokens_per_day: null })
  t.equal((await h.call('PUT', `/api/admin/users/${id}/limits`, { json: { rpm: -1 } })).status, 400)
  t.same((await h.call('PUT', `/api/admin/users/${id}/limits`, { json: {} })).body.limits, null, 'an empty body clears the override')
  t.equal((await h.call('DELETE', `/api/admin/users/${id}/lockout`)).status, 200)
  t.equal((await h.call('DELETE', `/api/admin/users/${members[1].userId}/sessions`)).body.ended, 1)
  t.equal((await h.call('DELETE', `/api/admin/users/${admin.userId}/sessions`)).body.ended, 0, 'the admin keeps the session in use')
  t.equal((await h.call('DELETE', '/api/admin/users/000000000000000000000000/sessions')).status, 404)
})

t.test('upstream: the pool\'s credentials and the models by family, newest first, a shut-down one with its replacement; or that there is no proxy', async t => {
  const none = await startConsoleHarness()
  t.teardown(none.close)
  await none.admin()
  t.same((await none.call('GET', '/api/admin/upstream')).body, { configured: false, backend: null, credentials: [], models: [], families: [] })
  const proxy = {
    ready: async () => ({ ok: false, reason: 'every credential is set aside' }),
    upstream: () => ({ backend: 'gemini-api', models: ['gemini-2.5-flash', 'gemini-2.5-flash-search'], unpriced: ['gemini-2.5-flash'], standings: [{ id: 'gemini-2.5-flash', family: 'gemini-2.5-flash', stage: 'ga' }, { id: 'gemini-3-pro-preview', family: 'gemini-3', stage: 'shutdown', shutdownOn: '2026-03-09', replacement: 'gemini-3.1-pro-preview' }], credentials: [{ name: 'key 1', state: 'cooling', until: Date.UTC(2030, 0, 1) }, { name: 'key 2', state: 'set_aside', reason: 'API key not valid' }] }),
  } as unknown as Proxy
  const h = await startConsoleHarness({ proxy })
  t.teardown(h.close)
  await h.member()
  t.same((await h.call('GET', '/api/me')).body.models, ['gemini-2.5-flash'], 'the key form offers base models')
  await h.admin()
  t.same((await h.call('GET', '/api/admin/upstream')).body, {
    configured: true,
    backend: 'gemini-api',
    ready: false,
    reason: 'every credential is set aside',
    credentials: [{ name: 'key 1', state: 'cooling', reason: null, until: '2030-01-01T00:00:00.000Z' }, { name: 'key 2', state: 'set_aside', reason: 'API key not valid', until: null }],
    models: ['gemini-2.5-flash', 'gemini-2.5-flash-search'],
    families: [
      { family: 'gemini-3', models: [{ id: 'gemini-3-pro-preview', stage: 'shutdown', shutdown_on: '2026-03-09', replacement: 'gemini-3.1-pro-preview' }] },
      { family: 'gemini-2.5-flash', models: [{ id: 'gemini-2.5-flash', stage: 'ga', shutdown_on: null, replacement: null }] },
    ],
    unpriced: ['gemini-2.5-flash'],
  }, 'a model with no price known is named, for the page to mark')
})

t.test('the built files are read when first served: 503 CONSOLE_NOT_BUILT until they exist, then 200 and 304', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-console-late-'))
  const h = await startConsoleHarness({ assetsDir: join(dir, 'build') })
  t.teardown(h.close)
  const missing = await h.raw('GET', '/console/')
  t.equal(missing.status, 503)
  t.match(missing.body.detail, /npm run build:console/)
  const { mkdirSync } = await import('node:fs')
  mkdirSync(join(dir, 'build'))
  writeFileSync(join(dir, 'build', 'index.html'), '<!doctype html><title>x</title>')
  writeFileSync(join(dir, 'build', 'notes.txt'), 'not served')
  const page = await h.raw('GET', '/console/')
  t.equal(page.status, 200)
  t.equal(page.headers['cache-control'], 'no-cache')
  const again = await h.raw('GET', '/console/', { 'if-none-match': page.headers.etag })
  t.equal(again.status, 304)
  t.equal((await h.raw('GET', '/console/assets/notes.txt')).status, 404)
})

t.test('admin: disabling a member or lowering their level in the console stops their keys at once on this replica', async t => {
  const h = await startConsoleHarness()
  t.teardown(h.close)
  const member = await h.member()
  const key = (await h.call('POST', '/api/keys', { json: { name: 'ci' } })).body.key as string
  t.ok(await h.auth.resolveKey(key), 'the key works, and its answer is cached')
  await h.admin()
  t.equal((await h.call('PUT', `/api/admin/users/${member.userId}/status`, { json: { disabled: true } })).status, 200)
  t.equal(await h.auth.resolveKey(key), undefined, 'disabled: the cached answer is gone')
  t.equal((await h.call('PUT', `/api/admin/users/${member.userId}/status`, { json: { disabled: false } })).status, 200)
  t.ok(await h.auth.resolveKey(key), 'enabled again')
  t.equal((await h.call('PUT', `/api/admin/users/${member.userId}/level`, { json: { access_level: 'default' } })).status, 200)
  t.equal(await h.auth.resolveKey(key), undefined, 'below the key level: the cached answer is gone')
})
