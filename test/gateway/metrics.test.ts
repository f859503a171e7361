import t from 'tap'
import { startGateway } from '../support/gateway.ts'
import { startFakeUpstream, streamReply, geminiResponse } from '../support/fake-upstream.ts'
import { authClient } from '../support/auth-client.ts'
import { createMetrics } from '../../gateway/metrics.ts'
import { staleCredentials } from '../proxy/harness.ts'
import { keyUser } from '../support/gateway-keys.ts'

const ADMIN = { AUTH_ADMIN_USERNAME: 'metrics_admin', AUTH_ADMIN_PASSWORD: 'admin-password' }

/** Sample value of `name{labels}` in Prometheus text, matching the given labels (others ignored). */
function sample (text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  let total: number | undefined
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (m === null || m[1] !== name) continue
    const have: Record<string, string> = {}
    for (const pair of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) have[pair[1]] = pair[2]
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) total = (total ?? 0) + Number(m[3])
  }
  return total
}

function labelValues (text: string, label: string): Set<string> {
  const out = new Set<string>()
  for (const m of text.matchAll(new RegExp(`[{,]${label}="([^"]*)"`, 'g'))) out.add(m[1])
  return out
}

async function scrape (url: string): Promise<string> {
  const res = await fetch(url)
  if (res.status !== 200) throw new Error(`scrape answered ${res.status}`)
  return await res.text()
}

t.test('/metrics serves Prometheus text with the default process metrics', async t => {
  const gw = await startGateway(ADMIN)
  t.teardown(gw.close)
  const res = await fetch(gw.url + '/metrics')
  t.equal(res.status, 200)
  t.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/)
  const text = await res.text()
  for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
    t.ok(sample(text, name) !== undefined, name)
  }
})

t.test('requests are counted and timed by method, route template and status class, never by raw path', async t => {
  const gw = await startGateway(ADMIN)
  t.teardown(gw.close)
  const api = authClient(gw.url + '/v1/api')
  t.equal((await api.signup('metric_user', 'velvet-harbor-93')).status, 201)
  const login = await api.login('metric_user', 'velvet-harbor-93')
  const userId: string = login.body.user_id
  await api.validate(userId, login.body.access_token)
  await api.validate(userId, 'wrong-token')
  const admin = await api.login('metrics_admin', 'admin-password', 'console/1')
  const adminQuery = { admin_id: admin.body.user_id, token: admin.body.access_token }
  t.equal((await api.call('GET', `/admin/user/${userId}`, { query: adminQuery, headers: { 'user-agent': 'console/1' } })).status, 200)
  await fetch(gw.url + `/no/such/path/${userId}`)
  await fetch(gw.url + '/v1/api/unknown-route')

  const text = await scrape(gw.url + '/metrics')
  t.equal(sample(text, 'gatehouse_http_requests_total', { method: 'POST', route: '/v1/api/auth/signup', status_class: '2xx' }), 1)
  t.equal(sample(text, 'gatehouse_http_requests_total', { method: 'POST', route: '/v1/api/auth/login', status_class: '2xx' }), 2)
  t.equal(sample(text, 'gatehouse_http_requests_total', { route: '/v1/api/auth/validate', status_class: '4xx' }), 1)
  t.equal(sample(text, 'gatehouse_http_requests_total', { method: 'GET', route: '/v1/api/admin/user/{user_id}', status_class: '2xx' }), 1)
  t.equal(sample(text, 'gatehouse_http_requests_total', { route: 'unmatched', status_class: '4xx' }), 2)
  t.equal(sample(text, 'gatehouse_http_request_duration_seconds_count', { method: 'POST', route: '/v1/api/auth/signup', status_class: '2xx' }), 1)
  t.ok((sample(text, 'gatehouse_http_request_duration_seconds_sum', { route: '/v1/api/auth/login' }) ?? 0) > 0, 'durations recorded')
  t.notMatch(text, userId, 'no user id anywhere in the metrics')
  t.notMatch(text, /no\/such\/path/, 'no raw path')
  for (const route of labelValues(text, 'route')) t.ok(route === 'unmatched' || route.startsWith('/'), `route label ${route} is a template`)
})

t.test('sessions created/ended/expired and login successes/failures/lockouts are counted', async t => {
  // The accounts service's clock runs ahead of the system clock by `ahead` ms: the session's second passes at once.
  let ahead = 0
  const gw = await startGateway({ ...ADMIN, AUTH_SESSION_TTL_SECONDS: '1' }, { now: () => new Date(Date.now() + ahead) })
  t.teardown(gw.close)
  const before = await scrape(gw.url + '/metrics')
  for (const event of ['created', 'ended', 'expired']) t.equal(sample(before, 'gatehouse_sessions_total', { event }), 0, `${event} starts at 0`)
  for (const result of ['success', 'failure', 'lockout']) t.equal(sample(before, 'gatehouse_logins_total', { result }), 0, `${result} starts at 0`)

  const api = authClient(gw.url + '/v1/api')
  await api.signup('counted', 'velvet-harbor-93')
  const first = await api.login('counted', 'velvet-harbor-93')
  await api.logout(first.body.user_id, first.body.access_token)
  const second = await api.login('counted', 'velvet-harbor-93')
  for (let i = 0; i < 6; i++) await api.login('counted', 'wrong-password')
  ahead += 1100
  await api.validate(second.body.user_id, second.body.access_token)

  const text = await scrape(gw.url + '/metrics')
  t.equal(sample(text, 'gatehouse_sessions_total', { event: 'created' }), 2)
  t.equal(sample(text, 'gatehouse_sessions_total', { event: 'ended' }), 1)
  t.equal(sample(text, 'gatehouse_sessions_total', { event: 'expired' }), 1)
  t.equal(sample(text, 'gatehouse_logins_total', { result: 'success' }), 2)
  t.ok((sample(text, 'gatehouse_logins_total', { result: 'failure' }) ?? 0) >= 5)
  t.ok((sample(text, 'gatehouse_logins_total', { result: 'lockout' }) ?? 0) >= 1)
})

t.test('store operation durations are recorded by adapter and operation', async t => {
  const gw = await startGateway(ADMIN)
  t.teardown(gw.close)
  await authClient(gw.url + '/v1/api').signup('stored_user', 'velvet-harbor-93')
  await fetch(gw.url + '/readyz')
  const text = await scrape(gw.url + '/metrics')
  t.ok((sample(text, 'gatehouse_store_operation_duration_seconds_count', { adapter: 'embedded', operation: 'users.insert', outcome: 'ok' }) ?? 0) >= 2, 'system user and sign-up')
  t.ok((sample(text, 'gatehouse_store_operation_duration_seconds_count', { adapter: 'embedded', operation: 'ping' }) ?? 0) >= 1)
})

t.test('upstream calls are counted by model base name and status; streams by chunks and open streams', async t => {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  fake.apiKey = 'upstream-key'
  const gw = await startGateway({ ...ADMIN, GEMINI_AUTH_PASSWORD: 'gateway-proxy-password', GEMINI_API_KEY: 'upstream-key', GEMINI_API_ENDPOINT: fake.url })
  t.teardown(gw.close)
  const chat = (body: Record<string, unknown>): Promise<Response> => fetch(gw.url + '/v1/chat/completions', {
    method: 'POST',
    headers: { authorization: 'Bearer gateway-proxy-password', 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], ...body }),
  })

  t.equal((await chat({ model: 'gemini-3.8-flash' })).status, 200)
  fake.reply('generateContent', { status: 429 })
  fake.reply('generateContent', { status: 429 })
  fake.reply('generateContent', { status: 429 })
  await (await chat({ model: 'gemini-3.5-flash' })).text()

  fake.reply('streamGenerateContent', streamReply([geminiResponse({ text: 'a' }), geminiResponse({ text: 'b' }), geminiResponse({ text: 'c', finishReason: 'STOP' })], { chunkDelayMs: 150 }))
  const streaming = await chat({ model: 'gemini-3.8-flash', stream: true })
  t.equal(streaming.status, 200)
  const reader = streaming.body!.getReader()
  await reader.read()
  const during = await scrape(gw.url + '/metrics')
  t.equal(sample(during, 'gatehouse_active_streams'), 1, 'one stream open while it runs')
  while (!(await reader.read()).done);

  // The stream's end is recorded just after its last byte: scrape until it is (or a deadline passes).
  let text = await scrape(gw.url + '/metrics')
  for (const deadline = Date.now() + 5000; sample(text, 'gatehouse_active_streams') !== 0 && Date.now() < deadline;) {
    await new Promise(resolve => setTimeout(resolve, 5))
    text = await scrape(gw.url + '/metrics')
  }
  t.equal(sample(text, 'gatehouse_upstream_requests_total', { model: 'gemini-3.8-flash', status: '200' }), 2)
  t.ok((sample(text, 'gatehouse_upstream_requests_total', { model: 'gemini-3.5-flash', status: '429' }) ?? 0) >= 1)
  t.ok((sample(text, 'gatehouse_upstream_request_duration_seconds_count', { model: 'gemini-3.8-flash' }) ?? 0) >= 2)
  t.ok((sample(text, 'gatehouse_stream_chunks_total') ?? 0) >= 3, 'chunks counted')
  t.equal(sample(text, 'gatehouse_streams_total'), 1)
  t.equal(sample(text, 'gatehouse_active_streams'), 0, 'no stream open afterwards')
  for (const model of labelValues(text, 'model')) t.ok(/^gemini-|^other$/.test(model), `model label ${model} is bounded`)
})

t.test('the budget of large request bodies is reported: capacity, bytes reserved, requests waiting', async t => {
  const gw = await startGateway({ ...ADMIN, GEMINI_AUTH_PASSWORD: 'gateway-proxy-password', GEMINI_API_KEY: 'upstream-key', GEMINI_API_ENDPOINT: 'http://127.0.0.1:9' })
  t.teardown(gw.close)
  const text = await scrape(gw.url + '/metrics')
  t.ok((sample(text, 'gatehouse_body_budget_bytes', { state: 'capacity' }) ?? 0) >= 25 * 1024 * 1024, 'at least the largest body')
  t.equal(sample(text, 'gatehouse_body_budget_bytes', { state: 'reserved' }), 0)
  t.equal(sample(text, 'gatehouse_body_budget_waiting_requests'), 0)
})

t.test('the unpriced models the gateway serves are a gauge, with no label (docs/prices.md, "Unpriced models")', async t => {
  const gw = await startGateway({ ...ADMIN, GEMINI_AUTH_PASSWORD: 'gateway-proxy-password', GEMINI_API_KEY: 'upstream-key', GEMINI_API_ENDPOINT: 'http://127.0.0.1:9' })
  t.teardown(gw.close)
  const text = await scrape(gw.url + '/metrics')
  // gemini-nano-banana-2.1 has no price on any date in the shipped list.
  t.ok((sample(text, 'gatehouse_models_unpriced') ?? 0) >= 1)
  t.ok(text.split('\n').some(l => /^gatehouse_models_unpriced \d+$/.test(l)), 'one sample, no label')
})

t.test('with METRICS_PORT set, /metrics is served on that port only', async t => {
  const gw = await startGateway({ ...ADMIN, METRICS_PORT: '0' })
  t.teardown(gw.close)
  t.not(gw.gateway.metricsUrl, `${gw.url}/metrics`)
  const main = await fetch(gw.url + '/metrics')
  t.equal(main.status, 404, 'not on the main port')
  await main.text()
  const text = await scrape(gw.gateway.metricsUrl)
  t.ok(sample(text, 'process_cpu_user_seconds_total') !== undefined)
  const other = await fetch(gw.gateway.metricsUrl.replace('/metrics', '/health'))
  t.equal(other.status, 404, 'the metrics port serves nothing else')
  await other.text()
})

t.test('model tokens and requests are counted by model base name, kind, access level and status class', async t => {
  const metrics = createMetrics({ models: ['gemini-2.5-pro', 'gemini-2.5-flash'], defaultMetrics: false })
  const userId = 'a1'.repeat(12)
  const keyId = 'b2'.repeat(12)
  const call = { at: new Date(), userId, keyId, model: 'gemini-2.5-pro', surface: 'chat' as const, status: 200, usage: { inputTokens: 100, outputTokens: 40, thinkingTokens: 7, cachedTokens: 0 } }
  metrics.metering.onCall(call, 'member')
  metrics.metering.onCall({ ...call, model: 'models/gemini-2.5-pro' }, 'member')
  metrics.metering.onCall({ ...call, status: 503, usage: undefined }, 'dev')
  metrics.metering.onCall({ ...call, userId: 'operator', keyId: null, model: 'gemini-2.5-flash' }, 'operator')
  const text = (await metrics.render()).body
  t.equal(sample(text, 'gatehouse_model_tokens_total', { model: 'gemini-2.5-pro', kind: 'input', access_level: 'member' }), 200)
  t.equal(sample(text, 'gatehouse_model_tokens_total', { model: 'gemini-2.5-pro', kind: 'output', access_level: 'member' }), 80)
  t.equal(sample(text, 'gatehouse_model_tokens_total', { model: 'gemini-2.5-pro', kind: 'thinking', access_level: 'member' }), 14)
  t.equal(sample(text, 'gatehouse_model_tokens_total', { kind: 'cached' }), undefined, 'no zero increments for a kind never seen')
  t.equal(sample(text, 'gatehouse_model_tokens_total', { model: 'gemini-2.5-flash', kind: 'input', access_level: 'operator' }), 100)
  t.equal(sample(text, 'gatehouse_model_requests_total', { model: 'gemini-2.5-pro', access_level: 'member', status_class: '2xx' }), 2)
  t.equal(sample(text, 'gatehouse_model_requests_total', { model: 'gemini-2.5-pro', access_level: 'dev', status_class: '5xx' }), 1)
  t.equal(sample(text, 'gatehouse_model_requests_total', { access_level: 'operator' }), 1)
})

t.test('spend is counted in micro-dollars by model and access level, and unpriced calls apart, with no user label', async t => {
  const metrics = createMetrics({ models: ['gemini-4-argon', 'gemini-2.5-pro'], defaultMetrics: false })
  const userId = 'e5'.repeat(12)
  const call = { at: new Date(0), userId, keyId: null, model: 'gemini-4-argon', surface: 'chat' as const, status: 200, usage: { inputTokens: 10, outputTokens: 1, thinkingTokens: 0, cachedTokens: 0 } }
  metrics.metering.onCall({ ...call, costMicros: 77_600 }, 'member')
  metrics.metering.onCall({ ...call, costMicros: 400 }, 'member')
  metrics.metering.onCall({ ...call, costMicros: 5 }, 'operator')
  metrics.metering.onCall({ ...call, model: 'gemini-2.5-pro', unpriced: true }, 'member')
  const text = (await metrics.render()).body
  t.equal(sample(text, 'gatehouse_model_spend_microdollars_total', { model: 'gemini-4-argon', access_level: 'member' }), 78_000)
  t.equal(sample(text, 'gatehouse_model_spend_microdollars_total', { model: 'gemini-4-argon', access_level: 'operator' }), 5)
  t.equal(sample(text, 'gatehouse_model_spend_microdollars_total', { model: 'gemini-2.5-pro' }), undefined, 'an unpriced call adds no spend')
  t.equal(sample(text, 'gatehouse_model_unpriced_requests_total', { model: 'gemini-2.5-pro', access_level: 'member' }), 1)
  t.notMatch(text, userId, 'no user id')
})

t.test('model metrics never carry a user or key id, and their labels stay bounded', async t => {
  const metrics = createMetrics({ models: ['gemini-2.5-pro'], defaultMetrics: false })
  const userId = 'c3'.repeat(12)
  const keyId = 'd4'.repeat(12)
  const tokens = { inputTokens: 1, outputTokens: 1, thinkingTokens: 1, cachedTokens: 1 }
  for (let i = 0; i < 50; i++) {
    metrics.metering.onCall({ at: new Date(), userId, keyId, model: `made-up-model-${i}`, surface: 'native', status: 200 + i, usage: tokens }, 'member')
  }
  metrics.metering.onCall({ at: new Date(), userId, keyId, model: 'gemini-2.5-pro', surface: 'chat', status: 200, usage: tokens }, userId as never)
  metrics.metering.onLimited(keyId as never)
  const text = (await metrics.render()).body
  t.notMatch(text, userId, 'no user id')
  t.notMatch(text, keyId, 'no key id')
  t.notMatch(text, /made-up-model/, 'no model name outside the catalogue')
  t.same([...labelValues(text, 'model')].sort(), ['gemini-2.5-pro', 'other'])
  t.same([...labelValues(text, 'access_level')].sort(), ['member', 'other'])
  t.same([...labelValues(text, 'kind')].sort(), ['cached', 'input', 'output', 'thinking'])
  t.equal(sample(text, 'gatehouse_model_requests_total', { model: 'other' }), 50)
})

t.test('rate-limit refusals are counted by limit, every limit from zero', async t => {
  const metrics = createMetrics({ models: [], defaultMetrics: false })
  const before = (await metrics.render()).body
  for (const limit of ['requests', 'tokens', 'tokens_per_day', 'concurrent']) t.equal(sample(before, 'gatehouse_rate_limited_total', { limit }), 0, `${limit} starts at 0`)
  metrics.metering.onLimited('tokens')
  metrics.metering.onLimited('tokens')
  metrics.metering.onLimited('concurrent')
  const text = (await metrics.render()).body
  t.equal(sample(text, 'gatehouse_rate_limited_total', { limit: 'tokens' }), 2)
  t.equal(sample(text, 'gatehouse_rate_limited_total', { limit: 'concurrent' }), 1)
  t.equal(sample(text, 'gatehouse_rate_limited_total', { limit: 'requests' }), 0)
})

t.test('every store operation is in the next scrape, however few or many (observations handed over in batches)', async t => {
  const metrics = createMetrics({ models: [], defaultMetrics: false })
  const count = async (labels: Record<string, string>): Promise<number | undefined> => sample((await metrics.render()).body, 'gatehouse_store_operation_duration_seconds_count', labels)
  metrics.store('embedded', 'counters.batch', 0.0001, true)
  metrics.store('embedded', 'leases.acquire', 0.002, false)
  t.equal(await count({ operation: 'counters.batch', outcome: 'ok' }), 1, 'one operation, scraped at once')
  t.equal(await count({ operation: 'leases.acquire', outcome: 'error' }), 1)
  for (let i = 0; i < 1000; i++) metrics.store('embedded', 'counters.batch', 0.0001, true)
  t.equal(await count({ operation: 'counters.batch', outcome: 'ok' }), 1001, 'many: every one counted')
  t.equal(sample((await metrics.render()).body, 'gatehouse_store_operation_duration_seconds_bucket', { operation: 'leases.acquire', le: '0.001' }), 0, 'durations land in their buckets')
  t.equal(sample((await metrics.render()).body, 'gatehouse_store_operation_duration_seconds_bucket', { operation: 'leases.acquire', le: '0.0025' }), 1)
})

t.test('after real calls with a user key and the operator password, the three model metrics move, with no user or key id', async t => {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  fake.setDefault('generateContent', { body: geminiResponse({ text: 'ok', finishReason: 'STOP', usage: { promptTokenCount: 9, candidatesTokenCount: 4, thoughtsTokenCount: 2, totalTokenCount: 15 } }) })
  // One second into a minute, fixed: both key calls share a rate window.
  const at = Math.floor(Date.now() / 60_000) * 60_000 + 1000
  const gw = await startGateway({
    ...ADMIN,
    GEMINI_AUTH_PASSWORD: 'metrics-operator-password',
    GEMINI_CREDENTIALS: JSON.stringify(staleCredentials(fake.tokenUri)),
    CODE_ASSIST_ENDPOINT: fake.url,
    GEMINI_LIMITS: JSON.stringify({ member: { rpm: 1 } }),
    LOG_LEVEL: 'silent',
  }, { now: () => new Date(at) })
  t.teardown(gw.close)
  const user = await keyUser(gw.url, 'metered_user', { name: 'metrics' }, ADMIN)
  const call = async (secret: string): Promise<number> => {
    const res = await fetch(`${gw.url}/v1beta/models/gemini-2.5-pro:generateContent`, { method: 'POST', headers: { 'x-goog-api-key': secret }, body: '{"contents":[{"parts":[{"text":"x"}]}]}' })
    await res.arrayBuffer()
    return res.status
  }
  t.equal(await call(user.key), 200)
  t.equal(await call(user.key), 429)
  t.equal(await call('metrics-operator-password'), 200)
  const text = await scrape(gw.gateway.metricsUrl)
  t.equal(sample(text, 'gatehouse_model_tokens_total', { model: 'gemini-2.5-pro', kind: 'input', access_level: 'member' }), 9)
  t.equal(sample(text, 'gatehouse_model_tokens_total', { model: 'gemini-2.5-pro', kind: 'thinking', access_level: 'operator' }), 2)
  t.equal(sample(text, 'gatehouse_model_requests_total', { model: 'gemini-2.5-pro', access_level: 'member', status_class: '2xx' }), 1)
  t.equal(sample(text, 'gatehouse_model_requests_total', { model: 'gemini-2.5-pro', access_level: 'member', status_class: '4xx' }), 1)
  t.equal(sample(text, 'gatehouse_model_requests_total', { access_level: 'operator' }), 1)
  t.equal(sample(text, 'gatehouse_rate_limited_total', { limit: 'requests' }), 1)
  t.notMatch(text, user.userId, 'no user id')
  t.notMatch(text, user.keyId, 'no key id')
})
