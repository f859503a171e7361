import t from 'tap'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { spawnGateway } from '../support/gateway.ts'
import { authClient } from '../support/auth-client.ts'
import { startOtlpReceiver, SPAN_KIND } from '../support/otlp-receiver.ts'
import type { ReceivedSpan } from '../support/otlp-receiver.ts'
import { startFakeUpstream } from '../support/fake-upstream.ts'
import { startMongoStandIn } from '../support/mongo-standin.ts'

t.test('a proxied request exports one span tree: HTTP server, Hapi route, undici client; context reaches the upstream', async t => {
  const receiver = await startOtlpReceiver()
  t.teardown(() => receiver.close())
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const gw = await spawnGateway({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_SERVICE_NAME: 'gatehouse-under-test',
    OTEL_BSP_SCHEDULE_DELAY: '50',
    LOG_LEVEL: 'warn',
    AUTH_ADMIN_PASSWORD: 'admin-password',
    GEMINI_AUTH_PASSWORD: 'gateway-proxy-password',
    GEMINI_API_KEY: 'upstream-key',
    GEMINI_API_ENDPOINT: fake.url,
  })
  t.teardown(() => gw.stop('SIGKILL'))

  await (await fetch(gw.url + '/readyz')).text()
  const res = await fetch(gw.url + '/v1/chat/completions', {
    method: 'POST',
    headers: { authorization: 'Bearer gateway-proxy-password', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'hi' }] }),
  })
  t.equal(res.status, 200)
  await res.text()

  const server = await receiver.waitForSpan(s => s.kind === SPAN_KIND.SERVER && s.attributes['http.route'] === '/v1/chat/completions')
  const client = await receiver.waitForSpan(s => s.kind === SPAN_KIND.CLIENT && s.traceId === server.traceId)
  const route = await receiver.waitForSpan(s => s.scope.includes('hapi') && s.traceId === server.traceId && s.name.includes('/v1/chat/completions'))

  t.equal(server.parentSpanId, '', 'the incoming request span is the root')
  t.match(server.scope, /instrumentation-http/)
  t.equal(server.resource['service.name'], 'gatehouse-under-test', 'service name from OTEL_SERVICE_NAME')
  t.equal(route.parentSpanId, server.spanId, 'the Hapi route span is a child of the request span')
  t.match(client.scope, /instrumentation-undici/)
  const byId = new Map(receiver.spans.map(s => [s.spanId, s]))
  const ancestors: ReceivedSpan[] = []
  for (let s = byId.get(client.parentSpanId); s !== undefined; s = byId.get(s.parentSpanId)) ancestors.push(s)
  t.ok(ancestors.includes(route), 'the upstream call sits under the Hapi route span')
  t.ok(ancestors.includes(server), '...and under the incoming request span')
  t.match(String(client.attributes['url.full'] ?? client.attributes['http.url']), /:generateContent/)

  const traceparent = fake.last('generateContent')?.headers.traceparent
  t.equal(traceparent, `00-${client.traceId}-${client.spanId}-01`, 'the upstream received the trace context of the client span')
  t.notOk(receiver.spans.some(s => s.name.includes('readyz') || s.attributes['http.route'] === '/readyz'), 'probes are not traced')
})

t.test('an accounts request is traced too, and OTEL_TRACES_EXPORTER=none turns tracing off', async t => {
  const receiver = await startOtlpReceiver()
  t.teardown(() => receiver.close())
  const traced = await spawnGateway({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50', LOG_LEVEL: 'warn', AUTH_ADMIN_PASSWORD: 'admin-password' })
  t.teardown(() => traced.stop('SIGKILL'))
  await (await fetch(traced.url + '/v1/api/auth/get-user-id?username=system')).text()
  const server = await receiver.waitForSpan(s => s.kind === SPAN_KIND.SERVER && s.attributes['http.route'] === '/v1/api/auth/get-user-id')
  const route = await receiver.waitForSpan(s => s.scope.includes('hapi') && s.parentSpanId === server.spanId && s.name.includes('/v1/api/auth/get-user-id'))
  t.equal(route.traceId, server.traceId)
  t.equal(server.resource['service.name'], 'gatehouse', 'default service name')
  t.equal((await traced.stop('SIGTERM')).code, 0)

  const before = receiver.spans.length
  const untraced = await spawnGateway({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_EXPORTER: 'none', OTEL_BSP_SCHEDULE_DELAY: '50', LOG_LEVEL: 'warn', AUTH_ADMIN_PASSWORD: 'admin-password' })
  t.teardown(() => untraced.stop('SIGKILL'))
  await (await fetch(untraced.url + '/v1/api/auth/get-user-id?username=system')).text()
  await new Promise(resolve => setTimeout(resolve, 300))
  t.equal((await untraced.stop('SIGTERM')).code, 0)
  t.equal(receiver.spans.length, before, 'no spans from the gateway with tracing turned off')
})

t.test('with MongoDB, the store queries of a request are client spans under it', async t => {
  const receiver = await startOtlpReceiver()
  t.teardown(() => receiver.close())
  const mongo = await startMongoStandIn()
  t.teardown(() => mongo.close())
  const gw = await spawnGateway({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50', MONGODB_URL: mongo.url, LOG_LEVEL: 'warn', AUTH_ADMIN_PASSWORD: 'admin-password' })
  t.teardown(() => gw.stop('SIGKILL'))
  t.equal((await fetch(gw.url + '/v1/api/auth/get-user-id?username=system')).status, 200)
  const server = await receiver.waitForSpan(s => s.kind === SPAN_KIND.SERVER && s.attributes['http.route'] === '/v1/api/auth/get-user-id')
  const query = await receiver.waitForSpan(s => s.scope.includes('mongodb') && s.traceId === server.traceId)
  t.equal(query.kind, SPAN_KIND.CLIENT)
  t.match(query.name, /users/)
  const route = receiver.spans.find(s => s.spanId === query.parentSpanId)
  t.equal(route?.parentSpanId, server.spanId, 'the query sits under the Hapi route span of the request')
})

t.test('tracing spans carry no session token, proxy password, API key or key/token/password/access_token query value', async t => {
  const receiver = await startOtlpReceiver()
  t.teardown(() => receiver.close())
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  // An image server for a chat image URL: the gateway's own outgoing request carries a signed URL.
  const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex')
  const images = http.createServer((_req, res) => { res.writeHead(200, { 'content-type': 'image/png' }).end(PNG) })
  await new Promise<void>(resolve => images.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise(resolve => images.close(resolve)))
  const PW = 'proxy-password-in-no-span'
  const gw = await spawnGateway({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_BSP_SCHEDULE_DELAY: '50',
    LOG_LEVEL: 'warn',
    AUTH_ADMIN_PASSWORD: 'admin-password',
    GEMINI_AUTH_PASSWORD: PW,
    GEMINI_API_KEY: 'upstream-api-key-in-no-span',
    GEMINI_API_ENDPOINT: fake.url,
    IMAGE_FETCH_ALLOW_PRIVATE_NETWORKS: 'true',
    IMAGE_FETCH_ALLOWED_PORTS: String((images.address() as AddressInfo).port),
  })
  t.teardown(() => gw.stop('SIGKILL'))

  const api = authClient(gw.url + '/v1/api')
  t.equal((await api.signup('span_user', 'user-password-in-no-span')).status, 201)
  const login = await api.login('span_user', 'user-password-in-no-span')
  const { user_id: userId, access_token: token } = login.body
  const ua = { 'user-agent': 'gatehouse-tests/1.0 (device A)' }
  const statuses: number[] = []
  const send = async (path: string, init: RequestInit = {}): Promise<void> => {
    const res = await fetch(gw.url + path, init)
    statuses.push(res.status)
    await res.text()
  }
  // The session token in every form it is accepted in.
  await send(`/v1/api/auth/validate?user_id=${userId}&token=${token}`, { headers: ua })
  await send(`/v1/api/auth/validate?user_id=${userId}&tok%65n=${token}`, { headers: ua })
  await send(`/v1/api/auth/validate?user_id=${userId}&TOKEN=${token}`, { headers: ua })
  await send(`/v1/api/auth/user/update?user_id=${userId}`, { method: 'PUT', headers: { ...ua, token, 'content-type': 'application/json' }, body: '{"email":"span@example.com"}' })
  await send(`/v1/api/auth/validate?user_id=${userId}`, { headers: { ...ua, authorization: `Bearer ${token}` } })
  // The proxy password in every form, and other secret query parameters.
  const chat = (image?: string): string => JSON.stringify({
    model: 'gemini-2.5-flash',
    messages: [{ role: 'user', content: image === undefined ? 'hi' : [{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: { url: image } }] }],
  })
  const json = { 'content-type': 'application/json' }
  await send('/v1/chat/completions', { method: 'POST', headers: { ...json, authorization: `Bearer ${PW}` }, body: chat() })
  await send('/v1/chat/completions', { method: 'POST', headers: { ...json, authorization: `Basic ${Buffer.from(`any:${PW}`).toString('base64')}` }, body: chat() })
  await send('/v1beta/models/gemini-2.5-flash:generateContent', { method: 'POST', headers: { ...json, 'x-goog-api-key': PW }, body: '{"contents":[{"parts":[{"text":"hi"}]}]}' })
  await send('/v1beta/models', { headers: { 'x-vendor-api-key': PW } })
  await send(`/v1beta/models?key=${PW}`)
  await send(`/v1beta/models?k%65y=${PW}&alt=json`)
  await send(`/v1/models?password=query-password-in-no-span&access_token=access-token-in-no-span&x=1`)
  await send('/v1/chat/completions', {
    method: 'POST',
    headers: { ...json, authorization: `Bearer ${PW}` },
    body: chat(`http://127.0.0.1:${(images.address() as AddressInfo).port}/cat.png?token=image-token-in-no-span&size=1`),
  })
  // TOKEN= and Authorization: Bearer on validate are not accepted forms; they must stay out of spans all the same.
  t.same(statuses, [200, 200, 400, 200, statuses[4], 200, 200, 200, 200, 200, 200, 401, 200], 'the accepted forms were used (the /v1/models call carries no proxy password)')

  const last = await receiver.waitForSpan(s => s.kind === SPAN_KIND.CLIENT && String(s.attributes['url.full']).includes('/cat.png'))
  await receiver.waitForSpan(s => s.kind === SPAN_KIND.SERVER && s.traceId === last.traceId)
  await receiver.waitForSpan(s => s.kind === SPAN_KIND.SERVER && String(s.attributes['url.query']).includes('password='))
  const exported = JSON.stringify(receiver.spans.map(s => s.raw))
  for (const secret of [token, PW, 'upstream-api-key-in-no-span', 'user-password-in-no-span', 'query-password-in-no-span', 'access-token-in-no-span', 'image-token-in-no-span']) {
    t.notOk(exported.includes(secret), `${secret.slice(0, 12)}… is in no exported span`)
  }
  const queries = receiver.spans.filter(s => s.kind === SPAN_KIND.SERVER).map(s => String(s.attributes['url.query'] as string | undefined ?? ''))
  t.ok(queries.some(q => q.includes(`user_id=${userId}`) && /tok(en|%65n)=\[redacted\]/.test(q)), 'ordinary parameters are kept, the token is marked redacted')
  t.ok(queries.some(q => /password=\[redacted\]/.test(q) && q.includes('x=1')))
  t.match(String(last.attributes['url.full']), /\/cat\.png\?token=\[redacted\]&size=1$/, 'outgoing URLs are redacted too')
})
