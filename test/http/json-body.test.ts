// Request bodies as JSON (lib/http/json-body.ts): every surface refuses bodies nested too deeply or holding
// too many values with a 400 in its own shape, before anything walks them.
import t from 'tap'
import { parseJson, MAX_JSON_DEPTH, MAX_JSON_KEYS, MAX_JSON_VALUES } from '../../lib/http/json-body.ts'
import { readJsonBody } from '../../lib/index.ts'
import type { HandlerRequest } from '../../lib/index.ts'
import { startGateway } from '../support/gateway.ts'
import { startFakeUpstream } from '../support/fake-upstream.ts'
import { staleCredentials } from '../proxy/harness.ts'

const PASSWORD = 'json-body-proxy-password'

const nested = (depth: number, inner = '1'): string => '['.repeat(depth) + inner + ']'.repeat(depth)
const request = (body: unknown): HandlerRequest => ({ method: 'POST', path: '/', params: {}, query: {}, headers: {}, body })

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

t.test('a body a host has parsed already gets the same limits, without recursion', async t => {
  let deep: unknown = 1
  for (let i = 0; i < 200_000; i++) deep = [deep]
  t.throws(() => readJsonBody(request({ a: deep })), { code: 'JSON_TOO_DEEP', status: 400 })
  t.throws(() => readJsonBody(request({ a: Array.from({ length: MAX_JSON_VALUES + 1 }, () => 0) })), { code: 'JSON_TOO_MANY_VALUES', status: 400 })
  const cyclic: Record<string, unknown> = {}
  cyclic.self = cyclic
  t.throws(() => readJsonBody(request(cyclic)), { code: 'JSON_TOO_DEEP' }, 'even a cycle ends')
  const fine = { a: [{ b: [1, 2, 3] }], c: 'x' }
  t.equal(readJsonBody(request(fine)), fine)
})

t.test('a JSON body may hold at most 100000 values: more is a 400 before JSON.parse builds them', async t => {
  t.throws(() => parseJson('[' + '{},'.repeat(MAX_JSON_VALUES) + '{}]'), { code: 'JSON_TOO_MANY_VALUES', status: 400 })
  t.throws(() => parseJson('{' + Array.from({ length: MAX_JSON_VALUES + 1 }, (_, i) => `"k${i}":0`).join(',') + '}'), { code: 'JSON_TOO_MANY_VALUES' })
  t.same((parseJson('[' + '0,'.repeat(MAX_JSON_VALUES / 2) + '0]') as unknown[]).length, MAX_JSON_VALUES / 2 + 1)
  const { url } = await gateway(t)
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${PASSWORD}`, 'content-type': 'application/json' },
    body: `{"model":"gemini-2.5-flash","messages":[{"role":"user","content":"x"}],"metadata":[${'{},'.repeat(200_000)}{}]}`,
  })
  t.equal(res.status, 400)
  t.match(await res.json(), { error: { type: 'invalid_request_error', message: /more than 100000 values/ } })
})

t.test('a JSON body may hold at most 10000 different object keys; repeated keys count only as values', async t => {
  const keys = (n: number, from = 0): string => Array.from({ length: n }, (_, i) => `"k${from + i}": 0`).join(',')
  t.equal(Object.keys(parseJson(`{${keys(MAX_JSON_KEYS)}}`) as object).length, MAX_JSON_KEYS)
  t.throws(() => parseJson(`{${keys(MAX_JSON_KEYS + 1)}}`), { code: 'JSON_TOO_MANY_VALUES', status: 400, message: /more than 10000 different object keys/ })
  t.throws(() => parseJson(`[${Array.from({ length: MAX_JSON_KEYS + 1 }, (_, i) => `{"k${i}" : 0}`).join(',')}]`), { code: 'JSON_TOO_MANY_VALUES' }, 'spread over many objects, and with spaces before the colon')
  t.equal((parseJson(`[${'{"role":"user","text":"x"},'.repeat(30_000)}{}]`) as unknown[]).length, 30_001, 'repeated keys are fine')
  t.equal((parseJson(`[${Array.from({ length: MAX_JSON_KEYS + 1 }, (_, i) => `"k${i}"`).join(',')}]`) as unknown[]).length, MAX_JSON_KEYS + 1, 'strings that are not keys are no keys')
  const many: Record<string, number> = {}
  for (let i = 0; i <= MAX_JSON_KEYS; i++) many[`k${i}`] = i
  t.throws(() => readJsonBody(request({ a: many })), { code: 'JSON_TOO_MANY_VALUES' }, 'a body a host parsed too')
})

t.test('the depth check reads strings as strings: brackets, quotes and escapes inside them do not count', async t => {
  const tricky = ['"' + '['.repeat(200) + '"', '"\\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["', '["\\\\", ' + nested(60) + ']', '"' + '\\"'.repeat(1000) + '"']
  for (const text of tricky) t.same(parseJson(text), JSON.parse(text), text.slice(0, 30))
  t.throws(() => parseJson('["\\\\", ' + nested(70) + ']'), { code: 'JSON_TOO_DEEP' }, 'an escaped backslash ends no string early')
  t.throws(() => parseJson('{"a": ' + nested(64) + '}'), { code: 'JSON_TOO_DEEP' })
  t.throws(() => parseJson('[1,'), { code: 'INVALID_JSON' })
  t.throws(() => parseJson('"never closed ['), { code: 'INVALID_JSON' })
  t.same(parseJson(' '.repeat(100) + '{"a" : [ 1 , 2 ] }' + ' '.repeat(100)), { a: [1, 2] })
})
