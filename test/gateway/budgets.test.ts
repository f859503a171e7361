// Dollar budgets through the gateway (docs/prices.md, "Budgets"): GEMINI_LIMITS' usd_per_day and a key's own
// usd_per_month, seen by the official SDKs as their rate-limit errors with the message naming the budget; a model
// with no price refused under a budget; the remaining budget in a header. Keys go over HTTP; the clock is fixed.
import t from 'tap'
import OpenAI from 'openai'
import Anthropic from '@anthropic-ai/sdk'
import { GoogleGenAI } from '@google/genai'
import { startGateway } from '../support/gateway.ts'
import { startFakeUpstream, geminiResponse } from '../support/fake-upstream.ts'
import { ADMIN, keyUser, usageReport } from '../support/gateway-keys.ts'

// 2026-12-01 12:00:01 UTC: gemini-4-argon at $4 / $20 per 1M input / output, $0.20 cached (docs/prices.md).
const AT = Date.UTC(2026, 11, 1, 12, 0, 1)
// 4,000 × $4 + 8,000 × $0.20 + 3,000 × $20 per 1M: $0.0776 a call (docs/prices.md, "A day of calls, priced by hand").
const ARGON_USAGE = { promptTokenCount: 12_000, cachedContentTokenCount: 8_000, candidatesTokenCount: 900, thoughtsTokenCount: 2_100, totalTokenCount: 15_000 }
const SPENT_DAY = /Budget reached: usd_per_day of \$0\.100000, \$0\.000000 left; it resets at 2026-12-02T00:00:00\.000Z/

async function setup (t: { teardown (fn: () => unknown): void }, limits: unknown): Promise<{ url: string, fake: Awaited<ReturnType<typeof startFakeUpstream>> }> {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  fake.setDefault('generateContent', { body: geminiResponse({ text: 'ok', finishReason: 'STOP', usage: ARGON_USAGE }) })
  const gateway = await startGateway({
    ...ADMIN,
    GEMINI_API_KEY: 'upstream-key',
    GEMINI_API_ENDPOINT: fake.url,
    GEMINI_LIMITS: JSON.stringify(limits),
    LOG_LEVEL: 'silent',
  }, { now: () => new Date(AT) })
  t.teardown(() => gateway.close())
  return { url: gateway.url, fake }
}

const openaiOf = (url: string, key: string): OpenAI => new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0, timeout: 10000 })
const ask = { model: 'gemini-4-argon', messages: [{ role: 'user' as const, content: 'hi' }] }

t.test('openai SDK: a spent usd_per_day is a RateLimitError whose message names the budget, what is left and the reset', async t => {
  const { url, fake } = await setup(t, { member: { usd_per_day: 0.1 } })
  const user = await keyUser(url, 'budget_user')
  const openai = openaiOf(url, user.key)
  const first = await openai.chat.completions.create(ask).withResponse()
  t.equal(first.response.headers.get('x-gatehouse-budget'), 'usd_per_day')
  t.match(first.response.headers.get('x-gatehouse-budget-remaining-usd'), /^0\.\d{6}$/, 'the remaining budget, the call\'s reservation held')
  t.equal(first.response.headers.get('x-gatehouse-budget-reset'), '2026-12-02T00:00:00.000Z')
  const second = await openai.chat.completions.create(ask).withResponse()
  t.equal(second.response.headers.get('x-gatehouse-budget-remaining-usd'), '0.000000', 'the first call cost its $0.0776; the second\'s reservation takes the rest')
  const limited = await openai.chat.completions.create(ask).catch((e: unknown) => e)
  t.ok(limited instanceof OpenAI.RateLimitError, 'over the budget')
  const err = limited as InstanceType<typeof OpenAI.RateLimitError>
  t.equal(err.status, 429)
  t.match(err.message, SPENT_DAY)
  t.equal(err.headers?.get('retry-after'), String(12 * 3600 - 1), 'Retry-After: till the UTC day ends')
  t.equal(err.headers?.get('x-gatehouse-budget-remaining-usd'), '0.000000')

  const responses = await openai.responses.create({ model: 'gemini-4-argon', input: 'hi' }).catch((e: unknown) => e)
  t.ok(responses instanceof OpenAI.RateLimitError, 'the Responses surface too')
  t.match((responses as Error).message, SPENT_DAY)
  t.match((responses as { code?: string }).code, 'insufficient_quota', 'a spent budget is not worth retrying soon (Codex reads the code)')
  t.equal(fake.calls('generateContent').length, 2, 'refused calls never reached the upstream')

  const report = await usageReport(user, 4)
  t.match(report.totals, { cost_micros: 155_200 }, 'the usage report shows what the budget counted: two calls at $0.0776')
  const metrics = await (await fetch(`${url}/metrics`)).text()
  t.match(metrics, /^gatehouse_rate_limited_total\{limit="usd_per_day"\} 2$/m, 'each refusal counts in gatehouse_rate_limited_total under its budget')
})

t.test('@anthropic-ai/sdk and @google/genai: a spent budget is their rate-limit error, with the budget named', async t => {
  const { url } = await setup(t, { member: { usd_per_day: 0.05 } })
  const user = await keyUser(url, 'budget_sdks')
  const anthropic = new Anthropic({ apiKey: user.key, baseURL: url, maxRetries: 0, timeout: 10000 })
  await anthropic.messages.create({ model: 'gemini-4-argon', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] })
  const limited = await anthropic.messages.create({ model: 'gemini-4-argon', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e)
  t.ok(limited instanceof Anthropic.RateLimitError)
  t.match((limited as Error).message, /Budget reached: usd_per_day of \$0\.050000/)
  const ai = new GoogleGenAI({ apiKey: user.key, httpOptions: { baseUrl: url, timeout: 10000, retryOptions: { attempts: 1 } } })
  const native = await ai.models.generateContent({ model: 'gemini-4-argon', contents: 'hi' }).catch((e: unknown) => e) as { status: number, message: string }
  t.equal(native.status, 429)
  t.match(native.message, /RESOURCE_EXHAUSTED/)
  t.match(native.message, /usd_per_day of \$0\.050000/)
})

t.test('under a dollar budget a model with no price is refused 403 MODEL_UNPRICED, saying so, before the upstream', async t => {
  const { url, fake } = await setup(t, { member: { usd_per_month: 100 } })
  const user = await keyUser(url, 'unpriced_user')
  const openai = openaiOf(url, user.key)
  const refused = await openai.chat.completions.create({ ...ask, model: 'gemini-4-argon-cyber-permissive' }).catch((e: unknown) => e)
  t.ok(refused instanceof OpenAI.PermissionDeniedError)
  t.match((refused as Error).message, /No price is known for gemini-4-argon-cyber-permissive on gemini-api, so the usd_per_month budget cannot be enforced on it/)
  t.equal(fake.calls('generateContent').length, 0)
  t.ok(await openai.chat.completions.create(ask), 'a priced model goes on')
  const report = await usageReport(user, 2)
  t.match(report.rows, [{ model: 'gemini-4-argon', requests: 1 }, { model: 'gemini-4-argon-cyber-permissive', requests: 1, errors_4xx: 1 }], 'the refusal is counted and recorded once, under its model')
})

t.test('a key created with usd_per_month is refused once its month is spent, naming the key\'s budget', async t => {
  const { url } = await setup(t, {})
  const capped = await keyUser(url, 'key_cap_user', { name: 'capped', usd_per_month: '0.05' })
  const openai = openaiOf(url, capped.key)
  const first = await openai.chat.completions.create(ask).withResponse()
  t.equal(first.response.headers.get('x-gatehouse-budget'), 'key_usd_per_month')
  t.equal(first.response.headers.get('x-gatehouse-budget-reset'), '2027-01-01T00:00:00.000Z', 'the UTC calendar month')
  const limited = await openai.chat.completions.create(ask).catch((e: unknown) => e)
  t.ok(limited instanceof OpenAI.RateLimitError)
  t.match((limited as Error).message, /Budget reached: this key's usd_per_month of \$0\.050000, \$0\.000000 left; it resets at 2027-01-01T00:00:00\.000Z/)
})
