// JSON limits on the gateway (lib/http/json-body.ts behind every surface): bodies nested too deeply or holding
// too many values are a 400 in each surface's own shape, before anything walks them.
import t from 'tap'
import { MAX_JSON_DEPTH } from '../../lib/http/json-body.ts'
import { startGateway } from '../support/gateway.ts'
import { startFakeUpstream } from '../support/fake-upstream.ts'
import { staleCredentials } from '../proxy/harness.ts'

const PASSWORD = 'json-body-proxy-password'

const nested = (depth: number, inner = '1'): string => '['.repeat(depth) + inner + ']'.repeat(depth)

async function gateway (t: { teardown (fn: () => unknown): void }): Promise<{ url: string, logs: Array<Record<string, any>>, fake: Awaited<ReturnType<typeof startFakeUpstream>> }> {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const gw = await startGateway({
    AUTH_ADMIN_PASSWORD: 'admin-password-123',
    GEMINI_AUTH_PASSWORD: PASSWORD,
    GEMINI_CREDENTIALS: JSON.stringify(staleCredentials(fake.tokenUri)),
    CODE_ASSIST_ENDPOINT: fake.url,
  })
  t.teardown(() => gw.close())
  return { url: gw.url, logs: gw.logs, fake }
}

t.test('JSON nested deeper than 64 levels is a 400 in every surface\'s shape, never a 500', async t => {
  const { url, logs, fake } = await gateway(t)
  const json = { 'content-type': 'application/json' }
  const post = async (path: string, body: string, headers: Record<string, string>): Promise<{ status: number, body: any }> => {
    const res = await fetch(url + path, { method: 'POST', headers: { ...json, ...headers }, body })
    return { status: res.status, body: await res.json() }
  }
  const deepChat = `{"model":"gemini-2.5-flash","messages":[{"role":"user","content":"x"}],"metadata":${nested(100)}}`
  const deepNative = `{"contents":[{"role":"user","parts":[{"text":"x"}]}],"cachedContent":${nested(100_000)}}`
  const brackets = '['.repeat(1024 * 1024)
  const cases: Array<[string, string, string, Record<string, string>, unknown]> = [
    ['accounts, 100 levels', '/v1/api/auth/signup', `{"username":"deep_user","password":"password123","email":${nested(100)}}`, {}, { detail: /nested more than 64 levels/ }],
    ['accounts, 60 KB of [', '/v1/api/auth/signup', '['.repeat(60 * 1024), {}, { detail: /nested more than 64 levels/ }],
    ['chat, 100 levels', '/v1/chat/completions', deepChat, { authorization: `Bearer ${PASSWORD}` }, { error: { type: 'invalid_request_error', code: 400, message: /nested more than 64 levels/ } }],
    ['chat, 1 MB of [', '/v1/chat/completions', brackets, { authorization: `Bearer ${PASSWORD}` }, { error: { type: 'invalid_request_error', code: 400 } }],
    ['native, 100 000 levels', '/v1beta/models/gemini-2.5-flash:generateContent', deepNative, { 'x-goog-api-key': PASSWORD }, { error: { code: 400, status: 'INVALID_ARGUMENT', message: /nested more than 64 levels/ } }],
    ['native, 1 MB of [', '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', brackets, { 'x-goog-api-key': PASSWORD }, { error: { code: 400, status: 'INVALID_ARGUMENT' } }],
  ]
  for (const [name, path, body, headers, expected] of cases) {
    const res = await post(path, body, headers)
    t.equal(res.status, 400, name)
    t.match(res.body, expected, name)
  }
  t.equal(fake.requests.filter(r => r.call === 'generateContent' || r.call === 'streamGenerateContent').length, 0, 'nothing reached the upstream')
  t.notOk(logs.some(l => l.level >= 50 || l.err !== undefined), 'no error and no stack trace in the log')

  const sixtyFour = await post('/v1beta/models/gemini-2.5-flash:generateContent', `{"contents":[{"role":"user","parts":[{"text":"x"}]}],"cachedContent":${nested(MAX_JSON_DEPTH - 1)}}`, { 'x-goog-api-key': PASSWORD })
  t.equal(sixtyFour.status, 200, '64 levels in all are fine')
})

t.test('a JSON body of more than 100000 values is a 400 on the gateway', async t => {
  const { url } = await gateway(t)
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${PASSWORD}`, 'content-type': 'application/json' },
    body: `{"model":"gemini-2.5-flash","messages":[{"role":"user","content":"x"}],"metadata":[${'{},'.repeat(200_000)}{}]}`,
  })
  t.equal(res.status, 400)
  t.match(await res.json(), { error: { type: 'invalid_request_error', message: /more than 100000 values/ } })
})
