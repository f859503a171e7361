// Two gateway processes' worth of services on one MongoDB (the wire-protocol stand-in): limits are counted in the
// store, so a replica refuses a user the other one already let in up to the limit.
import t from 'tap'
import { startGateway } from '../support/gateway.ts'
import { startMongoStandIn } from '../support/mongo-standin.ts'
import { geminiResponse, startFakeUpstream } from '../support/fake-upstream.ts'
import { staleCredentials } from '../proxy/harness.ts'
import { ADMIN, keyUser } from '../support/gateway-keys.ts'

t.test('a user over a limit on one replica is refused on the other', async t => {
  const standIn = await startMongoStandIn()
  t.teardown(() => standIn.close())
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  // One second into a minute, fixed: both calls fall in the same rate window whatever the wall clock does.
  const at = Math.floor(Date.now() / 60_000) * 60_000 + 1000
  const env = {
    ...ADMIN,
    MONGODB_URL: standIn.url,
    GEMINI_CREDENTIALS: JSON.stringify(staleCredentials(fake.tokenUri)),
    CODE_ASSIST_ENDPOINT: fake.url,
    GEMINI_LIMITS: JSON.stringify({ member: { rpm: 1 } }),
    LOG_LEVEL: 'silent',
  }
  const one = await startGateway(env, { now: () => new Date(at) })
  t.teardown(() => one.close())
  const two = await startGateway(env, { now: () => new Date(at) })
  t.teardown(() => two.close())
  const user = await keyUser(one.url, 'replica_user')
  const call = async (url: string): Promise<Response> => await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] }),
  })
  const first = await call(one.url)
  t.equal(first.status, 200, 'the first call, on replica one')
  t.equal(first.headers.get('x-ratelimit-remaining-requests'), '0')
  await first.arrayBuffer()
  const second = await call(two.url)
  t.equal(second.status, 429, 'the second, on replica two, is over the limit')
  t.ok(Number(second.headers.get('retry-after')) >= 1)
  t.equal(second.headers.get('x-ratelimit-limit-requests'), '1')
  t.match(await second.json(), { error: { type: 'rate_limit_error' } })
  t.equal(fake.calls('generateContent').length, 1, 'the refused call never reached the upstream')
})

t.test('parallel calls on two replicas overrun tokens_per_day by at most one call\'s reservation', async t => {
  const standIn = await startMongoStandIn()
  t.teardown(() => standIn.close())
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const at = Math.floor(Date.now() / 60_000) * 60_000 + 1000
  const env = {
    ...ADMIN,
    MONGODB_URL: standIn.url,
    GEMINI_CREDENTIALS: JSON.stringify(staleCredentials(fake.tokenUri)),
    CODE_ASSIST_ENDPOINT: fake.url,
    GEMINI_LIMITS: JSON.stringify({ member: { tokens_per_day: 3000 } }),
    LOG_LEVEL: 'silent',
  }
  const one = await startGateway(env, { now: () => new Date(at) })
  t.teardown(() => one.close())
  const two = await startGateway(env, { now: () => new Date(at) })
  t.teardown(() => two.close())
  const user = await keyUser(one.url, 'racing_user')
  const body = JSON.stringify({ model: 'gemini-2.5-flash', max_tokens: 500, messages: [{ role: 'user', content: 'hi' }] })
  const reservation = Math.ceil(Buffer.byteLength(body) / 4) + 500
  // Each admitted call spends its whole reservation, slowly enough that all 30 are admitted or refused meanwhile.
  fake.setDefault('generateContent', { delayMs: 100, body: geminiResponse({ text: 'hi', finishReason: 'STOP', usage: { promptTokenCount: reservation - 500, candidatesTokenCount: 500, totalTokenCount: reservation } }) })
  const statuses = await Promise.all(Array.from({ length: 30 }, async (_, i) => {
    const res = await fetch(`${i % 2 === 0 ? one.url : two.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
      body,
    })
    await res.arrayBuffer()
    return res.status
  }))
  const admitted = statuses.filter(s => s === 200).length
  t.equal(statuses.filter(s => s === 429).length, 30 - admitted, 'the others are over the limit')
  t.equal(admitted, Math.ceil(3000 / reservation), 'exactly the calls that found the day under its limit, whichever replica took them')
  t.ok(admitted * reservation < 3000 + reservation, 'spent under the limit plus one reservation')
  t.equal(fake.calls('generateContent').length, admitted, 'refused calls never reached the upstream')
})
