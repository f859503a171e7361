// The Interactions surface's rules before and after the upstream (docs/interactions.md): the model policy and the
// key's limits apply to a create as to any model call (refused before the upstream, the reservation made at admission,
// a 429 with all six x-ratelimit headers), Api-Revision passes (checked), fields a key may not send are refused, an
// abandoned stream is charged what it reported, and a backend without interactions refuses them clearly.
import t from 'tap'
import { createProxy } from '../../lib/index.ts'
import { keyUser, usageReport } from '../support/gateway-keys.ts'
import { serveProxy } from '../support/serve-proxy.ts'
import { startFakeUpstream } from '../support/fake-upstream.ts'
import { setup } from './interactions-harness.ts'
import { PASSWORD } from './harness.ts'

async function create (url: string, key: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<{ status: number, body: any, headers: Headers }> {
  const res = await fetch(`${url}/v1beta/interactions`, { method: 'POST', headers: { 'x-goog-api-key': key, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
  const text = await res.text()
  let parsed: unknown = text
  try { parsed = JSON.parse(text) } catch {}
  return { status: res.status, body: parsed, headers: res.headers }
}

const SIX = ['limit-requests', 'remaining-requests', 'reset-requests', 'limit-tokens', 'remaining-tokens', 'reset-tokens'].map(n => `x-ratelimit-${n}`)

t.test('a model the key may not use is refused before the upstream, in Google\'s error shape', async t => {
  const { url, fake } = await setup(t)
  const carol = await keyUser(url, 'carol_argon', { name: 'only argon', models: ['gemini-4-argon'] })
  const refused = await create(url, carol.key, { model: 'gemini-4-neon', input: 'hi' })
  t.equal(refused.status, 403)
  t.match(refused.body, { error: { code: 403, status: 'PERMISSION_DENIED' } })
  t.equal(fake.calls('interactions').length, 0, 'nothing went upstream')
  t.equal((await create(url, carol.key, { model: 'gemini-4-argon', input: 'hi' })).status, 200)
})

t.test('a create reserves its input and asked output at admission and is trued up to the upstream usage; over the limit a 429 with the six headers, before the upstream', async t => {
  const { url, fake, alice } = await setup(t, { GEMINI_LIMITS: JSON.stringify({ member: { rpm: 2, tpm: 20000 } }) })
  const first = await create(url, alice.key, { model: 'gemini-4-argon', input: 'Hello', generation_config: { max_output_tokens: 500 } })
  t.equal(first.status, 200)
  const left = Number(first.headers.get('x-ratelimit-remaining-tokens'))
  t.ok(left <= 20000 - 500 && left > 20000 - 600, `the asked output and the input estimate reserved at admission (${left})`)
  const second = await create(url, alice.key, { model: 'gemini-4-argon', input: 'Hello', generation_config: { max_output_tokens: 500 } })
  const trued = Number(second.headers.get('x-ratelimit-remaining-tokens'))
  t.ok(trued < left && trued >= left - 20, `the first call trued up to its 9 tokens (${trued})`)
  const limited = await create(url, alice.key, { model: 'gemini-4-argon', input: 'Hello' })
  t.equal(limited.status, 429)
  t.match(limited.body, { error: { code: 429, status: 'RESOURCE_EXHAUSTED' } })
  for (const name of SIX) t.ok(limited.headers.get(name) !== null, name)
  t.ok(Number(limited.headers.get('retry-after')) >= 1)
  t.equal(fake.calls('interactions').length, 2, 'the refused call never reached the upstream')
})

t.test('Api-Revision is passed to the upstream; one of another shape is refused before it; none is fine (the SDK sends none)', async t => {
  const { url, fake, alice } = await setup(t)
  t.equal((await create(url, alice.key, { model: 'gemini-4-argon', input: 'hi' }, { 'api-revision': '2026-05-20' })).status, 200)
  t.equal(fake.last('interactions')!.headers['api-revision'], '2026-05-20')
  const made = await create(url, alice.key, { model: 'gemini-4-argon', input: 'hi' })
  t.equal(fake.last('interactions')!.headers['api-revision'], undefined)
  await fetch(`${url}/v1beta/interactions/${made.body.id as string}`, { headers: { 'x-goog-api-key': alice.key, 'api-revision': '2026-05-20' } }).then(r => r.text())
  t.equal(fake.last('interactions')!.headers['api-revision'], '2026-05-20', 'on a get too')
  t.equal(fake.last('interactions')!.headers['x-goog-api-key'], 'upstream-key', 'the member\'s key never goes upstream')
  const before = fake.calls('interactions').length
  for (const bad of ['latest', '2026-05-20; drop', 'x'.repeat(300)]) {
    const refused = await create(url, alice.key, { model: 'gemini-4-argon', input: 'hi' }, { 'api-revision': bad })
    t.equal(refused.status, 400, `Api-Revision ${bad.slice(0, 20)}`)
  }
  t.equal(fake.calls('interactions').length, before)
})

t.test('a key may not create background or agent interactions, nor one naming no model', async t => {
  const { url, fake, alice } = await setup(t)
  for (const body of [
    { model: 'gemini-4-argon', input: 'hi', background: true },
    { agent: 'deep-research-pro-preview-12-2025', input: 'hi' },
    { input: 'hi' },
    { model: 'gemini-4-argon', input: 'hi', previous_interaction_id: '../files/x' },
  ]) {
    const refused = await create(url, alice.key, body)
    t.equal(refused.status, 400, JSON.stringify(body))
    t.match(refused.body, { error: { code: 400, status: 'INVALID_ARGUMENT' } })
  }
  t.equal(fake.calls('interactions').length, 0)
})

t.test('both JSON spellings are canonicalised before any check: previousInteractionId naming another member\'s interaction is a 404, both spellings a 400, the upstream sees snake_case', async t => {
  const { url, fake, alice } = await setup(t)
  const bob = await keyUser(url, 'bob_interacts')
  const hers = await create(url, alice.key, { model: 'gemini-4-argon', input: 'mine' })
  t.equal(hers.status, 200)
  const before = fake.calls('interactions').length
  const foreign = await create(url, bob.key, { model: 'gemini-4-argon', input: 'and then', previousInteractionId: hers.body.id })
  t.equal(foreign.status, 404, 'the camelCase spelling is checked as the snake_case one is')
  t.match(foreign.body, { error: { code: 404, status: 'NOT_FOUND' } })
  const both = await create(url, alice.key, { model: 'gemini-4-argon', input: 'x', previous_interaction_id: hers.body.id, previousInteractionId: 'v1_other' })
  t.equal(both.status, 400)
  t.match(both.body, { error: { message: /previous_interaction_id twice/ } })
  t.equal((await create(url, bob.key, { model: 'gemini-4-argon', input: 'hi', generationConfig: { maxOutputTokens: 5 }, generation_config: {} })).status, 400, 'generation_config in both spellings')
  t.equal(fake.calls('interactions').length, before, 'nothing went upstream')
  t.equal((await create(url, alice.key, { model: 'gemini-4-argon', input: 'and then', previousInteractionId: hers.body.id, generationConfig: { maxOutputTokens: 5 } })).status, 200)
  t.same([fake.last('interactions')!.body.previous_interaction_id, fake.last('interactions')!.body.previousInteractionId], [hers.body.id, undefined])
  t.same(fake.last('interactions')!.body.generation_config, { max_output_tokens: 5 })
})

t.test('string booleans are refused: background "true", stream or store as text is a 400 before the upstream', async t => {
  const { url, fake, alice } = await setup(t)
  for (const body of [
    { model: 'gemini-4-argon', input: 'hi', background: 'true' },
    { model: 'gemini-4-argon', input: 'hi', background: 1 },
    { model: 'gemini-4-argon', input: 'hi', stream: 'true' },
    { model: 'gemini-4-argon', input: 'hi', store: 'false' },
  ]) {
    const refused = await create(url, alice.key, body)
    t.equal(refused.status, 400, JSON.stringify(body))
    t.match(refused.body, { error: { code: 400, status: 'INVALID_ARGUMENT', message: /must be true or false/ } })
  }
  t.equal(fake.calls('interactions').length, 0)
})

t.test('an abandoned stream is charged the usage it reported so far, recorded as the client closing', async t => {
  const { url, fake, alice } = await setup(t)
  fake.reply('interactions', {
    chunks: [
      { event_type: 'interaction.created', interaction: { id: 'v1_left', status: 'in_progress' } },
      { event_type: 'interaction.status_update', interaction_id: 'v1_left', status: 'in_progress', usage: { total_input_tokens: 40, total_output_tokens: 30 } },
      { event_type: 'step.delta', index: 0, delta: { type: 'text', text: 'never read' } },
    ],
    chunkDelayMs: 300,
  })
  const controller = new AbortController()
  const res = await fetch(`${url}/v1beta/interactions`, { method: 'POST', headers: { 'x-goog-api-key': alice.key, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gemini-4-argon', input: 'hi', stream: true }), signal: controller.signal })
  const reader = res.body!.getReader()
  let seen = ''
  while (!seen.includes('total_output_tokens')) seen += new TextDecoder().decode((await reader.read()).value)
  controller.abort()
  await fake.last('interactions')!.closed
  const report = await usageReport(alice, 1)
  t.match(report.rows, [{ surface: 'interactions', model: 'gemini-4-argon', requests: 1, input_tokens: 40, output_tokens: 30 }])
})

t.test('a backend that does not serve interactions refuses them with a clear error, before any upstream call', async t => {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const proxy = createProxy({ password: PASSWORD, upstream: { backend: 'vertex', apiKey: 'express-key', vertexEndpoint: fake.url, maxRetries: 0 } })
  const url = await serveProxy(t, proxy)
  const refused = await create(url, PASSWORD, { model: 'gemini-4-argon', input: 'hi' })
  t.equal(refused.status, 404)
  t.match(refused.body, { error: { message: /gemini-api backend only/ } })
  t.equal(fake.requests.length, 0)
})

t.test('Gemini Omni is served only through the Interactions API: chat completions and generateContent refuse it, naming the route', async t => {
  const { url, fake, alice } = await setup(t)
  const chat = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${alice.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gemini-omni-flash-preview', messages: [{ role: 'user', content: 'a cat' }] }) })
  t.equal(chat.status, 400)
  t.match(await chat.json(), { error: { message: /served only through the Interactions API \(POST \/v1beta\/interactions\)/, param: 'model' } })
  const native = await fetch(`${url}/v1beta/models/gemini-omni-flash-preview:generateContent`, { method: 'POST', headers: { 'x-goog-api-key': alice.key, 'content-type': 'application/json' }, body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'a cat' }] }] }) })
  t.equal(native.status, 400)
  t.match(await native.json(), { error: { code: 400, message: /served only through the Interactions API/ } })
  t.equal(fake.calls('generateContent').length, 0, 'nothing went upstream')
  const made = await create(url, alice.key, { model: 'gemini-omni-flash-preview', input: 'a cat', response_modalities: ['video'] })
  t.equal(made.status, 200)
  t.equal(fake.last('interactions')!.body.model, 'gemini-omni-flash-preview')
})
