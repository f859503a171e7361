// The official SDKs driven with a user's API key through the gateway: limits surface as each SDK's rate-limit
// error with the headers, a model outside the key's list as a permission error, and the calls appear in the
// admin's usage report. Keys, promotion and usage all go over HTTP.
import t from 'tap'
import OpenAI from 'openai'
import { GoogleGenAI } from '@google/genai'
import Anthropic from '@anthropic-ai/sdk'
import { startGateway } from '../support/gateway.ts'
import { startFakeUpstream, geminiResponse } from '../support/fake-upstream.ts'
import { staleCredentials } from '../proxy/harness.ts'
import { ADMIN, keyUser, usageReport } from '../support/gateway-keys.ts'

async function setup (t: { teardown (fn: () => unknown): void }, env: Record<string, string> = {}): Promise<{ url: string, fake: Awaited<ReturnType<typeof startFakeUpstream>> }> {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  // A fixed clock one second into a minute: the calls share a rate window whatever the wall clock does.
  const at = Math.floor(Date.now() / 60_000) * 60_000 + 1000
  const gateway = await startGateway({
    ...ADMIN,
    GEMINI_CREDENTIALS: JSON.stringify(staleCredentials(fake.tokenUri)),
    CODE_ASSIST_ENDPOINT: fake.url,
    LOG_LEVEL: 'silent',
    ...env,
  }, { now: () => new Date(at) })
  t.teardown(() => gateway.close())
  return { url: gateway.url, fake }
}

t.test('openai SDK with a user key: a 429 is a RateLimitError with the headers, a denied model a PermissionDeniedError', async t => {
  // rpm 2: the denied call spends none of it (refusals count apart, docs/model-proxy.md, "Limits and usage").
  const { url } = await setup(t, { GEMINI_LIMITS: JSON.stringify({ member: { rpm: 2 } }) })
  const user = await keyUser(url, 'openai_user', { name: 'sdk', models: ['gemini-2.5-flash*'] })
  const openai = new OpenAI({ apiKey: user.key, baseURL: `${url}/v1`, maxRetries: 0, timeout: 10000 })
  const ok = await openai.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] }).withResponse()
  t.equal(ok.data.choices[0]!.message.content, 'Hello from the fake upstream.')
  t.equal(ok.response.headers.get('x-ratelimit-remaining-requests'), '1')

  const denied = await openai.chat.completions.create({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'hi' }] }).catch(e => e)
  t.ok(denied instanceof OpenAI.PermissionDeniedError, 'a model outside the key\'s list')
  t.equal(denied.status, 403)

  await openai.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] })
  const limited = await openai.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] }).catch(e => e)
  t.ok(limited instanceof OpenAI.RateLimitError, 'over the limit')
  t.equal(limited.status, 429)
  t.ok(Number(limited.headers.get('retry-after')) >= 1, 'Retry-After')
  t.equal(limited.headers.get('x-ratelimit-limit-requests'), '2')
  t.equal(limited.headers.get('x-ratelimit-remaining-requests'), '0')
  t.ok(limited.headers.get('x-ratelimit-reset-requests'))
})

t.test('@google/genai with a user key: a 429 is an ApiError RESOURCE_EXHAUSTED, a denied model a 403', async t => {
  // rpm 1: the denied call spends none of it (refusals count apart).
  const { url, fake } = await setup(t, { GEMINI_LIMITS: JSON.stringify({ member: { rpm: 1 } }) })
  const user = await keyUser(url, 'genai_user', { name: 'sdk', models: ['gemini-2.5-flash'] })
  const ai = new GoogleGenAI({ apiKey: user.key, httpOptions: { baseUrl: url, timeout: 10000, retryOptions: { attempts: 1 } } })
  const denied = await ai.models.generateContent({ model: 'gemini-2.5-pro', contents: 'hi' }).catch(e => e)
  t.equal(denied.status, 403, 'a model outside the key\'s list')
  t.match(denied.message, /PERMISSION_DENIED/)
  fake.setDefault('generateContent', { body: geminiResponse({ text: 'ok', finishReason: 'STOP', usage: { promptTokenCount: 11, candidatesTokenCount: 7, thoughtsTokenCount: 3, totalTokenCount: 21 } }) })
  t.equal((await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'hi' })).text, 'ok')
  const limited = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'hi' }).catch(e => e)
  t.equal(limited.status, 429)
  t.match(limited.message, /RESOURCE_EXHAUSTED/)

  const report = await usageReport(user, 3)
  t.match(report.rows, [{ model: '(refused)', requests: 1, errors_4xx: 1 }, { user_id: user.userId, key_id: user.keyId, model: 'gemini-2.5-flash', surface: 'native', requests: 2 }], 'the refusal is its key\'s error, not a model\'s row')
  t.match(report.totals, { requests: 3, input_tokens: 11, output_tokens: 7, thinking_tokens: 3 })
})

t.test('@anthropic-ai/sdk with a user key, as Claude Code sends it: usage under the messages surface, a 429 a RateLimitError', async t => {
  const { url, fake } = await setup(t, { GEMINI_LIMITS: JSON.stringify({ member: { rpm: 2 } }) })
  const user = await keyUser(url, 'anthropic_user', { name: 'claude-code' })
  fake.setDefault('generateContent', { body: geminiResponse({ text: 'ok', finishReason: 'STOP', usage: { promptTokenCount: 11, candidatesTokenCount: 7, thoughtsTokenCount: 3, totalTokenCount: 21 } }) })
  // ANTHROPIC_API_KEY sends x-api-key; ANTHROPIC_AUTH_TOKEN sends Authorization: Bearer.
  const byApiKey = new Anthropic({ apiKey: user.key, baseURL: url, maxRetries: 0, timeout: 10000 })
  const byToken = new Anthropic({ authToken: user.key, apiKey: null, baseURL: url, maxRetries: 0, timeout: 10000 })
  const first = await byApiKey.messages.create({ model: 'gemini-3.5-flash', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).withResponse()
  t.same(first.data.content, [{ type: 'text', text: 'ok' }])
  t.equal(first.response.headers.get('x-ratelimit-remaining-requests'), '1')
  t.same((await byToken.messages.create({ model: 'gemini-3.5-flash', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] })).usage.output_tokens, 10)
  const limited = await byApiKey.messages.create({ model: 'gemini-3.5-flash', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).catch(e => e)
  t.ok(limited instanceof Anthropic.RateLimitError, 'over the limit')
  t.ok(Number(limited.headers.get('retry-after')) >= 1, 'Retry-After')

  const report = await usageReport(user, 2)
  t.match(report.rows, [{ user_id: user.userId, key_id: user.keyId, model: 'gemini-3.5-flash', surface: 'messages' }])
  t.match(report.totals, { input_tokens: 22, output_tokens: 14, thinking_tokens: 6 })
})
