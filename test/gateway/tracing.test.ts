import t from 'tap'
import { spawnGateway } from '../support/gateway.ts'
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
  // No fixed wait: a SIGTERM stop flushes the span processors before the process exits, and the receiver
  // records spans before it answers an export, so any span the gateway made would be in by now.
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
  // The lookup's own rate window is counted first (lib/auth: TOO_MANY_LOOKUPS), then the user is read.
  const query = await receiver.waitForSpan(s => s.scope.includes('mongodb') && s.traceId === server.traceId && /users/.test(s.name))
  t.equal(query.kind, SPAN_KIND.CLIENT)
  t.match(query.name, /users/)
  const route = receiver.spans.find(s => s.spanId === query.parentSpanId)
  t.equal(route?.parentSpanId, server.spanId, 'the query sits under the Hapi route span of the request')
})

t.test('a Responses turn over a WebSocket is a server span of its own (POST /v1/responses, websocket), its upstream call a span under it', async t => {
  const receiver = await startOtlpReceiver()
  t.teardown(() => receiver.close())
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const gw = await spawnGateway({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_BSP_SCHEDULE_DELAY: '50',
    LOG_LEVEL: 'warn',
    AUTH_ADMIN_PASSWORD: 'admin-password',
    GEMINI_AUTH_PASSWORD: 'gateway-proxy-password',
    GEMINI_API_KEY: 'upstream-key',
    GEMINI_API_ENDPOINT: fake.url,
  })
  t.teardown(() => gw.stop('SIGKILL'))
  const ws = new WebSocket(`${gw.url.replace('http', 'ws')}/v1/responses`, { headers: { authorization: 'Bearer gateway-proxy-password' } } as unknown as string[])
  t.teardown(() => ws.close())
  const done = new Promise<void>(resolve => ws.addEventListener('message', e => { if (/"response\.(completed|failed)"|"error"/.test(e.data as string)) resolve() }))
  await new Promise<void>(resolve => ws.addEventListener('open', () => resolve()))
  ws.send(JSON.stringify({ type: 'response.create', model: 'gemini-2.5-pro', input: 'hi', store: false }))
  await done
  const server = await receiver.waitForSpan(s => s.kind === SPAN_KIND.SERVER && s.attributes['network.protocol.name'] === 'websocket')
  t.match(server, { name: 'POST /v1/responses', parentSpanId: '', attributes: { 'http.route': '/v1/responses', 'http.request.method': 'POST', 'http.response.status_code': 200 } })
  const client = await receiver.waitForSpan(s => s.kind === SPAN_KIND.CLIENT && s.traceId === server.traceId)
  t.match(String(client.attributes['url.full'] ?? client.attributes['http.url']), /:streamGenerateContent/, 'the upstream call is in the turn\'s trace')
})
