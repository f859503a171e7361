// Body admission on the gateway itself: the route's header-only authentication comes before the body budget
// (test/http/body-admission.test.ts drives the same on every host the library ships an adapter for).
import t from 'tap'
import { startGateway } from '../support/gateway.ts'
import { startFakeUpstream } from '../support/fake-upstream.ts'
import { chatBody, socketHost } from '../support/raw-http.ts'

const PASSWORD = 'body-admission-password'
const MiB = 1024 * 1024

t.test('the gateway: an unauthenticated large body holds none of the budget, and an authenticated one is served', async t => {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const gw = await startGateway({ GEMINI_AUTH_PASSWORD: PASSWORD, GEMINI_API_KEY: 'upstream-key', GEMINI_API_ENDPOINT: fake.url, LOG_LEVEL: 'warn' })
  t.teardown(() => gw.close())
  const reserved = async (): Promise<number> => {
    const text = await (await fetch(gw.gateway.metricsUrl)).text()
    return Number(/gatehouse_body_budget_bytes\{state="reserved"\} (\d+)/.exec(text)?.[1])
  }
  const h = socketHost(gw.port, reserved, async () => {})
  t.teardown(h.close)
  const strangers = await Promise.all([0, 1].map(async () => await h.partial('/v1/chat/completions', {}, 25 * 1000 * 1000, '{"model":"')))
  t.same(strangers.map(a => a.status), [401, 401])
  t.equal(await reserved(), 0, 'nothing reserved for them')
  const large = await h.post('/v1/chat/completions', chatBody(2 * MiB), { authorization: `Bearer ${PASSWORD}` })
  t.equal(large.status, 200)
  t.equal(fake.calls('generateContent').length, 1)
})
