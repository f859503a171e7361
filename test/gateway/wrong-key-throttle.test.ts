// The wrong-credential throttle over real HTTP (docs/model-proxy.md, "Password attempts"): one client retrying a
// revoked key is told to back off, and nobody else behind its address is refused.
import t from 'tap'
import { startGateway } from '../support/gateway.ts'
import { startFakeUpstream } from '../support/fake-upstream.ts'
import { staleCredentials } from '../proxy/harness.ts'
import { ADMIN, keyUser } from '../support/gateway-keys.ts'

t.test('a client retrying a revoked key gets 429 past 10 wrong ones, while a valid key from the same address passes', async t => {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const gateway = await startGateway({
    ...ADMIN,
    GEMINI_CREDENTIALS: JSON.stringify(staleCredentials(fake.tokenUri)),
    CODE_ASSIST_ENDPOINT: fake.url,
    LOG_LEVEL: 'silent',
  })
  t.teardown(() => gateway.close())
  const colleague = await keyUser(gateway.url, 'colleague')
  const chat = async (key: string): Promise<Response> => await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] }),
  })
  // A key of the right shape that no longer resolves: what a CI job holding a revoked key sends.
  const stale = 'ghk_' + 'R'.repeat(43)
  for (let i = 0; i < 10; i++) {
    const res = await chat(stale)
    t.equal(res.status, 401, `wrong key ${i + 1}: 401`)
    await res.arrayBuffer()
  }
  const refused = await chat(stale)
  t.equal(refused.status, 429, 'the 11th wrong one: 429')
  t.ok(Number(refused.headers.get('retry-after')) >= 1, 'with Retry-After')
  t.match(await refused.json(), { error: { type: 'rate_limit_error' } })
  const ok = await chat(colleague.key)
  t.equal(ok.status, 200, 'a colleague\'s valid key from the same address passes')
  await ok.arrayBuffer()
  t.equal(fake.calls('generateContent').length, 1, 'only the valid call reached the upstream')
})
