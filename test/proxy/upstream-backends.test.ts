import t from 'tap'
import type { Test } from 'tap'
import type { BackendOptions, Backend, GeminiResponse } from '../../lib/index.ts'
import { createBackend } from '../../lib/index.ts'
import { unwrapCodeAssistResponse } from '../../lib/proxy/upstream/code-assist-backend.ts'
import { createGeminiApiBackend } from '../../lib/proxy/upstream/gemini-api-backend.ts'
import { errorReply, geminiResponse, startFakeUpstream, streamReply } from '../support/fake-upstream.ts'
import type { FakeUpstream } from '../support/fake-upstream.ts'
import { credentialsObject } from '../support/credentials-files.ts'

const REQUEST = {
  contents: [{ role: 'user', parts: [{ text: 'two words' }] }],
  systemInstruction: { parts: [{ text: 'be brief' }] },
  generationConfig: { thinkingConfig: { thinkingBudget: 128, includeThoughts: true } },
}

async function setup (t: Test, options: (fake: FakeUpstream) => BackendOptions): Promise<{ fake: FakeUpstream, backend: Backend }> {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const backend = createBackend({ codeAssistEndpoint: fake.url, geminiApiEndpoint: fake.url, retryBaseDelayMs: 1, ...options(fake) })
  t.teardown(() => backend.close())
  return { fake, backend }
}

const oauth = (fake: FakeUpstream): BackendOptions => ({ credentials: credentialsObject('authorized-user', { tokenUri: fake.tokenUri, projectId: 'proj-1' }) })

/** Which upstream API the backend called for a generate: the fake tells them apart by path. */
async function apiCalled (fake: FakeUpstream, backend: Backend): Promise<string | undefined> {
  await backend.generate({ model: 'gemini-2.5-pro', request: REQUEST })
  return fake.last('generateContent')?.api
}

async function collect (events: AsyncIterable<GeminiResponse>): Promise<GeminiResponse[]> {
  const out: GeminiResponse[] = []
  for await (const e of events) out.push(e)
  return out
}

t.test('Code Assist: the request goes inside the {model, project, user_prompt_id, request} envelope', async t => {
  const { fake, backend } = await setup(t, oauth)
  await backend.generate({ model: 'gemini-2.5-pro', request: REQUEST })
  t.equal(fake.last('generateContent')?.api, 'code-assist')
  const sent = fake.last('generateContent')?.body
  t.same(Object.keys(sent).sort(), ['model', 'project', 'request', 'user_prompt_id'])
  t.equal(sent.model, 'gemini-2.5-pro')
  t.equal(sent.project, 'proj-1')
  t.same(sent.request, REQUEST, 'the request is passed as is')
  t.equal(fake.last('generateContent')?.headers.authorization, 'Bearer stored-access-token')

  await backend.generate({ model: 'gemini-2.5-pro', request: REQUEST, sessionId: 'conv-7' })
  t.same(fake.last('generateContent')?.body.request, { ...REQUEST, session_id: 'conv-7' }, 'session_id inside request')
  t.notOk('session_id' in REQUEST, "the caller's request object is not modified")
})

t.test('Code Assist: answers are unwrapped, with responseId from traceId', async t => {
  const { fake, backend } = await setup(t, oauth)
  const res = await backend.generate({ model: 'gemini-2.5-pro', request: REQUEST })
  t.equal(res.candidates?.[0]?.content?.parts?.[0]?.text, 'Hello from the fake upstream.')
  t.same(res.usageMetadata, { promptTokenCount: 5, candidatesTokenCount: 7, totalTokenCount: 12 })
  t.match(res.responseId, /^fake-trace-\d+$/)
  t.notOk('response' in res)

  fake.reply('generateContent', { body: { traceId: 'only-trace' }, raw: true })
  t.same(await backend.generate({ model: 'gemini-2.5-pro', request: REQUEST }), { candidates: [], responseId: 'only-trace' }, 'a missing response is an empty candidates list')

  fake.reply('streamGenerateContent', streamReply([geminiResponse({ thought: 'hmm' }), geminiResponse({ text: 'ok', finishReason: 'STOP', usage: true })]))
  const events = await collect(await backend.stream({ model: 'gemini-2.5-pro', request: REQUEST }))
  t.equal(events.length, 2)
  t.same(events[0].candidates?.[0]?.content?.parts, [{ text: 'hmm', thought: true }])
  t.equal(events[1].candidates?.[0]?.finishReason, 'STOP')
  t.ok(events.every(e => typeof e.responseId === 'string'))
})

t.test('unwrapping keeps an upstream responseId and tolerates odd envelopes', async t => {
  t.same(unwrapCodeAssistResponse({ response: { candidates: [], responseId: 'own' }, traceId: 't' }), { candidates: [], responseId: 'own' })
  t.same(unwrapCodeAssistResponse({ response: null }), { candidates: [] })
  t.same(unwrapCodeAssistResponse('nonsense'), { candidates: [] })
  t.same(unwrapCodeAssistResponse({ response: { candidates: [{ index: 0 }] }, traceId: 'abc', consumedCredits: 1 }), { candidates: [{ index: 0 }], responseId: 'abc' })
})

t.test('Code Assist: countTokens sends {request:{model:"models/<base>", contents}} with thought parts made countable', async t => {
  const { fake, backend } = await setup(t, oauth)
  const contents = [
    { role: 'user', parts: [{ text: 'count these three' }] },
    { role: 'model', parts: [{ text: 'reasoning here', thought: true, thoughtSignature: 'sig' }, { functionCall: { name: 'f', args: {} }, thought: true }] },
  ]
  const res = await backend.countTokens({ model: 'gemini-2.5-flash', request: { contents } })
  t.same(fake.last('countTokens')?.body, {
    request: {
      model: 'models/gemini-2.5-flash',
      contents: [
        { role: 'user', parts: [{ text: 'count these three' }] },
        { role: 'model', parts: [{ text: 'reasoning here' }, { functionCall: { name: 'f', args: {} } }] },
      ],
    },
  })
  t.equal(res.totalTokens, 5)
  t.equal(fake.calls('loadCodeAssist').length, 0, 'no project needed')

  await backend.countTokens({ model: 'gemini-2.5-flash', request: { generateContentRequest: { contents: [{ role: 'user', parts: [{ text: 'nested' }] }] } } })
  t.same(fake.last('countTokens')?.body.request.contents, [{ role: 'user', parts: [{ text: 'nested' }] }], 'generateContentRequest form accepted')
})

t.test('Gemini API: public paths, x-goog-api-key, no envelope, no onboarding', async t => {
  const { fake, backend } = await setup(t, () => ({ apiKey: 'key-123' }))
  fake.apiKey = 'key-123'
  t.same(await backend.ready(), { ok: true })
  const res = await backend.generate({ model: 'gemini-2.5-flash', request: REQUEST, sessionId: 'ignored' })
  t.equal(res.candidates?.[0]?.content?.parts?.[0]?.text, 'Hello from the fake upstream.')
  const gen = fake.last('generateContent')
  t.equal(gen?.api, 'gemini-api')
  t.equal(gen?.path, '/v1beta/models/gemini-2.5-flash:generateContent')
  t.equal(gen?.headers['x-goog-api-key'], 'key-123')
  t.notOk(gen?.headers.authorization)
  t.same(gen?.body, REQUEST, 'the request as is: no envelope, no session_id')
  t.match(gen?.headers['user-agent'], /^GeminiCLI\/[\d.]+\/gemini-2\.5-flash \(/)

  const events = await collect(await backend.stream({ model: 'gemini-2.5-flash', request: REQUEST }))
  t.same(events.map(e => e.candidates?.[0]?.content?.parts?.[0]?.text), ['Hello from', ' the fake upstream.'])
  t.equal(fake.last('streamGenerateContent')?.path, '/v1beta/models/gemini-2.5-flash:streamGenerateContent')
  t.equal(fake.last('streamGenerateContent')?.query.alt, 'sse')

  const count = await backend.countTokens({ model: 'gemini-2.5-flash', request: { contents: REQUEST.contents } })
  t.equal(count.totalTokens, 2)
  t.same(fake.last('countTokens')?.body, { contents: REQUEST.contents })
  await backend.countTokens({ model: 'gemini-2.5-flash', request: { generateContentRequest: { contents: REQUEST.contents, systemInstruction: REQUEST.systemInstruction } } })
  t.same(fake.last('countTokens')?.body, { generateContentRequest: { contents: REQUEST.contents, systemInstruction: REQUEST.systemInstruction, model: 'models/gemini-2.5-flash' } })

  t.equal(fake.calls('loadCodeAssist').length + fake.calls('token').length, 0)
})

t.test('Gemini API: upstream errors map like Code Assist ones', async t => {
  const { fake, backend } = await setup(t, () => ({ apiKey: 'wrong' }))
  fake.apiKey = 'right'
  const err = await backend.generate({ model: 'gemini-2.5-flash', request: REQUEST }).catch(e => e)
  t.equal(err.code, 'UPSTREAM_BAD_REQUEST')
  t.match(err.message, /API key not valid/)
  fake.apiKey = undefined
  fake.reply('streamGenerateContent', errorReply(429, { array: true, retryDelay: '3s' }))
  const limited = await backend.stream({ model: 'gemini-2.5-flash', request: REQUEST }).catch(e => e)
  t.equal(limited.code, 'UPSTREAM_RATE_LIMITED')
  t.equal(limited.retryAfter, 3)
})

t.test('Gemini API: ready only with a key', async t => {
  const backend = createGeminiApiBackend({})
  t.teardown(() => backend.close())
  t.same(await backend.ready(), { ok: false, reason: 'GEMINI_API_KEY is not set' })
})

t.test('the backend is chosen from configuration', async t => {
  const both = await setup(t, fake => ({ ...oauth(fake), apiKey: 'k' }))
  t.equal(await apiCalled(both.fake, both.backend), 'code-assist', 'OAuth credentials win by default')
  const explicit = await setup(t, fake => ({ ...oauth(fake), apiKey: 'k', backend: 'gemini-api' }))
  t.equal(await apiCalled(explicit.fake, explicit.backend), 'gemini-api', 'unless gemini-api is asked for')
  const keyOnly = await setup(t, () => ({ apiKey: 'k' }))
  t.equal(await apiCalled(keyOnly.fake, keyOnly.backend), 'gemini-api')

  t.throws(() => createBackend({ backend: 'code-assist', apiKey: 'k' }), { code: 'UPSTREAM_NOT_CONFIGURED', message: /GEMINI_CREDENTIALS nor GOOGLE_APPLICATION_CREDENTIALS/ })
  t.throws(() => createBackend({ backend: 'gemini-api' }), { code: 'UPSTREAM_NOT_CONFIGURED', message: /GEMINI_API_KEY is not set/ })
})

t.test('with nothing configured every call answers 503 UPSTREAM_NOT_CONFIGURED and the backend is not ready', async t => {
  const warnings: unknown[] = []
  const backend = createBackend({ logger: { debug () {}, info () {}, warn: (m: unknown) => { warnings.push(m) }, error () {} } })
  for (const call of [backend.generate, backend.stream, backend.countTokens]) {
    const err = await call({ model: 'gemini-2.5-pro', request: {} }).catch((e: unknown) => e) as { code: string, status: number, message: string }
    t.equal(err.code, 'UPSTREAM_NOT_CONFIGURED')
    t.equal(err.status, 503)
    t.match(err.message, /createProxy an `upstream`.*apiKey.*GEMINI_CREDENTIALS, GOOGLE_APPLICATION_CREDENTIALS.*GEMINI_API_KEY/)
  }
  t.equal((await backend.ready()).ok, false)
  t.equal(warnings.length, 1, 'said so once at start-up')
  await backend.close()
})
