// No secret reaches a collector: the gateway as `npm start` runs it, exporting to a local OTLP receiver, is sent every
// form of session token, proxy password and secret query value; the exported spans must hold none of them.
import t from 'tap'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { spawnGateway } from '../support/gateway.ts'
import { authClient } from '../support/auth-client.ts'
import { startOtlpReceiver, SPAN_KIND } from '../support/otlp-receiver.ts'
import { startFakeUpstream } from '../support/fake-upstream.ts'

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
  }, { startTimeoutMs: 60_000 })
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
