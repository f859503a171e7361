// Issue 20's "deny by default" over real HTTP against the gateway, two members with their own keys on the Gemini API
// backend: pass-through model calls are admitted and charged, files and model lists are counted, invented model
// names fold into one usage row, and every answer to a key carries the rate headers (@google/genai for files).
import http from 'node:http'
import t from 'tap'
import { GoogleGenAI } from '@google/genai'
import { startGateway } from '../support/gateway.ts'
import { startFakePassThrough } from '../support/fake-pass-through.ts'
import { ADMIN, keyUser, usageReport } from '../support/gateway-keys.ts'
import type { KeyUser } from '../support/gateway-keys.ts'

const RATE_HEADERS = ['x-ratelimit-limit-requests', 'x-ratelimit-remaining-requests', 'x-ratelimit-reset-requests', 'x-ratelimit-limit-tokens', 'x-ratelimit-remaining-tokens', 'x-ratelimit-reset-tokens']

async function setup (t: { teardown (fn: () => unknown): void }, limits: Record<string, number>): Promise<{ url: string, alice: KeyUser, bob: KeyUser }> {
  const fake = await startFakePassThrough()
  t.teardown(() => fake.close())
  // A fixed clock one second into a minute: the calls share a rate window whatever the wall clock does.
  const at = Math.floor(Date.now() / 60_000) * 60_000 + 1000
  const gateway = await startGateway({
    ...ADMIN,
    GEMINI_API_KEY: 'upstream-key',
    GEMINI_API_ENDPOINT: fake.url,
    GEMINI_LIMITS: JSON.stringify({ member: limits }),
    LOG_LEVEL: 'silent',
  }, { now: () => new Date(at) })
  t.teardown(() => gateway.close())
  return { url: gateway.url, alice: await keyUser(gateway.url, 'alice_gov'), bob: await keyUser(gateway.url, 'bob_gov') }
}

t.test('token limits hold through pass-through: batchEmbedContents is admitted on its estimate, charged, and refused once the minute is spent', async t => {
  const { url, alice, bob } = await setup(t, { tpm: 2000 })
  const embed = async (key: string, text: string): Promise<Response> => await fetch(`${url}/v1beta/models/gemini-embedding-2:batchEmbedContents`, {
    method: 'POST',
    headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ requests: [{ model: 'models/gemini-embedding-2', content: { parts: [{ text }] } }] }),
  })
  const first = await embed(alice.key, 'x'.repeat(6000))
  t.equal(first.status, 200)
  await first.arrayBuffer()
  const second = await embed(alice.key, 'x'.repeat(6000))
  t.equal(second.status, 200, 'the minute had room left')
  await second.arrayBuffer()
  const third = await embed(alice.key, 'x'.repeat(6000))
  t.equal(third.status, 429, 'both calls were charged their estimates: the minute is spent')
  await third.arrayBuffer()
  const other = await embed(bob.key, 'y')
  t.equal(other.status, 200, 'each member has their own limits')
  await other.arrayBuffer()
  const report = await usageReport(alice, 2, bob)
  t.match(report.rows, [{ model: 'gemini-embedding-2', surface: 'native' }], JSON.stringify(report))
  t.ok(report.totals.input_tokens >= 1500, `charged: ${String(report.totals.input_tokens)} input tokens`)
})

t.test('a pass-through model call is never charged 0: a chunked batchEmbedContents (no Content-Length) whose answer reports no usage is charged the bytes the gateway read', async t => {
  const { url, alice, bob } = await setup(t, { tpm: 2000 })
  const { hostname, port } = new URL(url)
  const body = JSON.stringify({ requests: [{ model: 'models/gemini-embedding-2', content: { parts: [{ text: 'x'.repeat(6000) }] } }] })
  const chunked = async (): Promise<number> => await new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port, method: 'POST', path: '/v1beta/models/gemini-embedding-2:batchEmbedContents', headers: { 'x-goog-api-key': alice.key, 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, res => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('error', reject)
    req.write(body.slice(0, 100))
    req.end(body.slice(100))
  })
  t.equal(await chunked(), 200)
  t.equal(await chunked(), 200, 'the minute had room left')
  t.equal(await chunked(), 429, 'both calls were charged their estimates though no Content-Length was sent')
  const report = await usageReport(alice, 2, bob)
  t.ok(report.totals.input_tokens >= 2 * 1500, `charged: ${String(report.totals.input_tokens)} input tokens`)
})

t.test('every request a key makes is counted and answered with all six rate headers: files through @google/genai, model lists', async t => {
  const { url, alice, bob } = await setup(t, { rpm: 3, tpm: 100000 })
  const seen: Response[] = []
  const ai = new GoogleGenAI({
    apiKey: alice.key,
    httpOptions: { baseUrl: url, apiVersion: 'v1beta', timeout: 10000, retryOptions: { attempts: 1 } },
  })
  const fetchSpy = globalThis.fetch
  globalThis.fetch = async (...args: Parameters<typeof fetch>) => { const res = await fetchSpy(...args); seen.push(res.clone()); return res }
  t.teardown(() => { globalThis.fetch = fetchSpy })
  await ai.files.list().catch(() => undefined)
  globalThis.fetch = fetchSpy
  t.equal(seen.length, 1)
  t.equal(seen[0].status, 200, seen[0].url + ' ' + await seen[0].clone().text())
  for (const name of RATE_HEADERS) t.ok(seen[0].headers.get(name) !== null, `files.list: ${name}`)
  const list = await fetch(`${url}/v1beta/models`, { headers: { 'x-goog-api-key': alice.key } })
  t.equal(list.status, 200)
  for (const name of RATE_HEADERS) t.ok(list.headers.get(name) !== null, `model list: ${name}`)
  await list.arrayBuffer()
  const operation = await fetch(`${url}/v1beta/operations/x`, { headers: { 'x-goog-api-key': alice.key } })
  t.equal(operation.status, 403, 'operations are the operator\'s only (GEMINI_LIMITS `allow`): refused before any call')
  for (const name of RATE_HEADERS) t.ok(operation.headers.get(name) !== null, `refusal: ${name}`)
  await operation.arrayBuffer()
  // The model list has its own allowance (RateLimiter.listing) and the refusal its own: two files requests are left.
  for (let i = 0; i < 2; i++) await (await fetch(`${url}/v1beta/files`, { headers: { 'x-goog-api-key': alice.key } })).arrayBuffer()
  const refused = await fetch(`${url}/v1beta/files`, { headers: { 'x-goog-api-key': alice.key } })
  t.equal(refused.status, 429, 'the fourth request of the minute, on no model: neither the model list nor the refusal spent one')
  await refused.arrayBuffer()
  const report = await usageReport(alice, 6, bob)
  t.match(report.rows, [{ model: '(refused)', surface: 'native', requests: 1, errors_4xx: 1 }, { model: 'none', surface: 'native', requests: 5, errors_4xx: 1 }])
})

t.test('a member cannot make usage unreadable: invented model names share one `other` row', async t => {
  const { url, alice, bob } = await setup(t, {})
  for (let i = 0; i < 20; i++) {
    const res = await fetch(`${url}/v1beta/models/gemini-2.5-flash-zz${Math.random().toString(36).slice(2)}:embedContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': alice.key, 'content-type': 'application/json' },
      body: '{"content":{"parts":[{"text":"x"}]}}',
    })
    await res.arrayBuffer()
  }
  const report = await usageReport(alice, 20, bob)
  t.same(report.rows.map((r: { model: string }) => r.model), ['other'], 'one row for every invented name')
})
