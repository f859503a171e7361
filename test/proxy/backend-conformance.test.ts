// The Backend contract (lib/proxy/upstream/backend.ts) held against every backend of test/proxy/backends.ts, the way
// test/proxy/surface-conformance.test.ts holds every surface: a rule one backend keeps and another misses fails
// here, naming the backend.
import t from 'tap'
import type { Test } from 'tap'
import { createBackend } from '../../lib/index.ts'
import type { Backend } from '../../lib/index.ts'
import { errorReply, geminiResponse, startFakeUpstream, streamReply } from '../support/fake-upstream.ts'
import type { FakeUpstream } from '../support/fake-upstream.ts'
import { BACKENDS } from './backends.ts'
import type { BackendUnderTest } from './backends.ts'

const MODEL = 'gemini-3.8-flash'
const REQUEST = {
  contents: [{ role: 'user', parts: [{ text: 'two words' }] }],
  systemInstruction: { parts: [{ text: 'be brief' }] },
  generationConfig: { temperature: 0.5, maxOutputTokens: 64 },
}
const USAGE = { promptTokenCount: 12, candidatesTokenCount: 5, thoughtsTokenCount: 3, cachedContentTokenCount: 2, toolUsePromptTokenCount: 4, totalTokenCount: 24 }

async function setup (t: Test, under: BackendUnderTest): Promise<{ fake: FakeUpstream, backend: Backend }> {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const backend = createBackend({ maxRetries: 0, retryBaseDelayMs: 1, ...under.options(fake) })
  t.teardown(() => backend.close())
  return { fake, backend }
}

async function each (t: Test, rule: (t: Test, under: BackendUnderTest, fake: FakeUpstream, backend: Backend) => Promise<void>): Promise<void> {
  for (const under of BACKENDS) {
    await t.test(under.name, async t => {
      const { fake, backend } = await setup(t, under)
      await rule(t, under, fake, backend)
    })
  }
}

t.test('every backend is named as the model file and the price list name it', async t => {
  await each(t, async (t, under, _fake, backend) => { t.equal(backend.name, under.name) })
})

t.test('every backend sends the GenerateContentRequest as given and answers Google\'s response with every usage field', async t => {
  await each(t, async (t, under, fake, backend) => {
    fake.reply('generateContent', { body: geminiResponse({ text: 'Two words', usage: USAGE }) })
    const answer = await backend.generate({ model: MODEL, request: structuredClone(REQUEST) })
    t.match(answer, { candidates: [{ content: { parts: [{ text: 'Two words' }] } }], usageMetadata: USAGE }, 'the answer unwrapped, usage kept whole')
    const sent = fake.last('generateContent')!
    t.equal(sent.api, under.name, 'called on its own API')
    t.match(under.sentRequest(sent.body), REQUEST, 'contents, systemInstruction and generationConfig as given')
  })
})

t.test('every backend streams Google\'s events in order, the last one carrying the usage', async t => {
  await each(t, async (t, _under, fake, backend) => {
    fake.reply('streamGenerateContent', streamReply([geminiResponse({ text: 'Two' }), geminiResponse({ text: ' words', finishReason: 'STOP', usage: USAGE })]))
    const texts: string[] = []
    let usage: unknown
    for await (const event of await backend.stream({ model: MODEL, request: structuredClone(REQUEST) })) {
      for (const part of event.candidates?.[0]?.content?.parts ?? []) texts.push(part.text ?? '')
      if (event.usageMetadata !== undefined) usage = event.usageMetadata
    }
    t.same(texts.join(''), 'Two words')
    t.match(usage, USAGE)
  })
})

t.test('every backend counts tokens as totalTokens', async t => {
  await each(t, async (t, _under, fake, backend) => {
    fake.reply('countTokens', { body: { totalTokens: 7 } })
    t.match(await backend.countTokens({ model: MODEL, request: structuredClone(REQUEST) }), { totalTokens: 7 })
  })
})

t.test('every backend refuses with the upstream\'s status and message, and a 429\'s retry delay', async t => {
  await each(t, async (t, _under, fake, backend) => {
    fake.reply('generateContent', errorReply(400, { message: 'Invalid JSON payload: unknown field "x"' }))
    await t.rejects(backend.generate({ model: MODEL, request: structuredClone(REQUEST) }), { status: 400, message: /unknown field "x"/ })
    fake.reply('generateContent', errorReply(429, { message: 'Resource exhausted', retryDelay: '7s', reason: 'RATE_LIMIT_EXCEEDED' }))
    await t.rejects(backend.generate({ model: MODEL, request: structuredClone(REQUEST) }), { status: 429, retryAfter: 7, message: /Resource exhausted/ })
  })
})

t.test('every backend stops the upstream stream when the caller\'s signal aborts', async t => {
  await each(t, async (t, _under, fake, backend) => {
    fake.reply('streamGenerateContent', { ...streamReply([geminiResponse({ text: 'first' }), geminiResponse({ text: 'never' })]), holdAfter: 1 })
    const controller = new AbortController()
    const events = await backend.stream({ model: MODEL, request: structuredClone(REQUEST), signal: controller.signal })
    for await (const _event of events) break
    controller.abort()
    t.equal(await fake.last('streamGenerateContent')!.closed, 'aborted', 'the upstream request was cut')
  })
})
