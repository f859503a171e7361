// Limits, rate-limit headers, token charges and usage records of model calls (lib/proxy/access/metering.ts),
// with the real rate limiter on the embedded store and a fake clock.
import t from 'tap'
import type { Test } from 'tap'
import { startProxy, PASSWORD } from './harness.ts'
import { geminiResponse, streamReply, errorReply } from '../support/fake-upstream.ts'
import { createEmbeddedStore, createModelCatalog, createProxy, createRateLimiter } from '../../lib/index.ts'
import { DEFAULT_OUTPUT_RESERVATION, outputReservation } from '../../lib/proxy/access/metering.ts'
import type { KeyCaller, LimitsByLevel, RateLimiter, TokenUsage, UsageEntry, UsageLedger } from '../../lib/index.ts'

const KEY = 'ghk_' + 'A'.repeat(43)
const member: KeyCaller = { kind: 'key', userId: 'a'.repeat(24), keyId: 'b'.repeat(24), accessLevel: 'member', models: null }
// 10:00:15 UTC: 45 s left in the minute.
const START = Date.UTC(2026, 0, 5, 10, 0, 15)
const USAGE = { promptTokenCount: 40, candidatesTokenCount: 30, thoughtsTokenCount: 10, cachedContentTokenCount: 4, totalTokenCount: 80 }
const CHARGED: TokenUsage = { inputTokens: 40, outputTokens: 30, thinkingTokens: 10, cachedTokens: 4 }
const chatBody = (extra: Record<string, unknown> = {}): string => JSON.stringify({ model: 'gemini-2.5-pro-maxthinking', messages: [{ role: 'user', content: 'x' }], ...extra })
const nativeBody = '{"contents":[{"parts":[{"text":"x"}]}]}'
const RATE_HEADERS = ['x-ratelimit-limit-requests', 'x-ratelimit-remaining-requests', 'x-ratelimit-reset-requests', 'x-ratelimit-limit-tokens', 'x-ratelimit-remaining-tokens', 'x-ratelimit-reset-tokens']

interface Rig {
  url: string
  clock: { at: number }
  fake: Awaited<ReturnType<typeof startProxy>>['fake']
  entries: UsageEntry[]
  calls: Array<[UsageEntry, string]>
  settled: Array<TokenUsage | undefined>
  /** Resolves once `n` calls were recorded. */
  recorded: (n: number) => Promise<void>
  /** Resolves once `n` admissions were settled. */
  settledCount: (n: number) => Promise<void>
  chat: (body?: string, auth?: string, signal?: AbortSignal) => Promise<Response>
  native: (action?: string, auth?: string, model?: string) => Promise<Response>
}

/** Waits for a list to reach a length, told by the spy that grows it (no wall-clock polling). */
function waiter<T> (list: T[]): { push: (v: T) => void, until: (n: number) => Promise<void> } {
  const waiting: Array<{ n: number, resolve: () => void }> = []
  return {
    push (v) {
      list.push(v)
      for (const w of waiting.filter(w => list.length >= w.n)) { waiting.splice(waiting.indexOf(w), 1); w.resolve() }
    },
    until: async n => { if (list.length < n) await new Promise<void>(resolve => waiting.push({ n, resolve })) },
  }
}

async function rig (t: Test, byLevel: LimitsByLevel, more: { start?: number, geminiApi?: boolean } = {}): Promise<Rig> {
  const clock = { at: more.start ?? START }
  const store = await createEmbeddedStore({ now: () => new Date(clock.at) })
  t.teardown(() => store.close())
  const real = createRateLimiter({ store, byLevel, now: () => new Date(clock.at), repeat: () => () => {} })
  const settled: Array<TokenUsage | undefined> = []
  const settledW = waiter(settled)
  // The real limiter, with each settle seen.
  const limiter: RateLimiter = {
    async admit (caller, estimate) {
      const admission = await real.admit(caller, estimate)
      return { headers: admission.headers, settle: async usage => { await admission.settle(usage); settledW.push(usage) } }
    },
  }
  const entries: UsageEntry[] = []
  const entriesW = waiter(entries)
  const usage: UsageLedger = { record: e => entriesW.push(e), flush: async () => {}, close: async () => {} }
  const calls: Array<[UsageEntry, string]> = []
  const h = await startProxy(t, {
    backendName: more.geminiApi === true ? 'gemini-api' : 'code-assist',
    keys: { resolveKey: async secret => secret === KEY ? member : undefined },
    limiter,
    usage,
    onCall: (entry, level) => calls.push([entry, level]),
    now: () => new Date(clock.at),
  })
  return {
    url: h.url,
    clock,
    fake: h.fake,
    entries,
    calls,
    settled,
    recorded: entriesW.until,
    settledCount: settledW.until,
    chat: async (body = chatBody(), auth = KEY, signal) => await fetch(`${h.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' }, body, signal }),
    native: async (action = 'generateContent', auth = KEY, model = 'gemini-2.5-pro') => await fetch(`${h.url}/v1beta/models/${model}:${action}${action === 'streamGenerateContent' ? '?alt=sse' : ''}`, { method: 'POST', headers: { 'x-goog-api-key': auth }, body: nativeBody }),
  }
}

const limits = (l: Record<string, number>): LimitsByLevel => ({ member: l })

t.test('a key over its requests per minute is refused with 429, Retry-After and the rate headers on both surfaces', async t => {
  const r = await rig(t, limits({ rpm: 1, tpm: 100000 }))
  const ok = await r.chat()
  t.equal(ok.status, 200)
  t.equal(ok.headers.get('x-ratelimit-limit-requests'), '1')
  t.equal(ok.headers.get('x-ratelimit-remaining-requests'), '0')
  await ok.arrayBuffer()

  const chat = await r.chat()
  t.equal(chat.status, 429)
  t.equal(chat.headers.get('retry-after'), '45')
  // The limit that refused first: its headers are known (the token ones are not counted for a refused call).
  for (const name of RATE_HEADERS.slice(0, 3)) t.ok(chat.headers.get(name) !== null, `chat 429 has ${name}`)
  const chatError = await chat.json() as { error: { type: string } }
  t.equal(chatError.error.type, 'rate_limit_error')

  const native = await r.native()
  t.equal(native.status, 429)
  t.equal(native.headers.get('retry-after'), '45')
  t.equal(native.headers.get('x-ratelimit-remaining-requests'), '0')
  const nativeError = await native.json() as { error: { status: string, code: number } }
  t.same(nativeError.error.status, 'RESOURCE_EXHAUSTED')
  t.equal(r.fake.calls('generateContent').length, 1, 'refused calls never reached the upstream')
  t.same(r.entries.map(e => e.status), [200, 429, 429], 'refusals are recorded as 429s')
})

t.test('every key response carries the rate headers: success, upstream error, stream, countTokens', async t => {
  const r = await rig(t, limits({ rpm: 100, tpm: 100000 }))
  const check = async (res: Response, status: number, what: string): Promise<void> => {
    t.equal(res.status, status, what)
    for (const name of RATE_HEADERS) t.ok(res.headers.get(name) !== null, `${what}: ${name}`)
    // Browsers hide response headers from scripts unless CORS exposes them.
    const exposed = (res.headers.get('access-control-expose-headers') ?? '').split(/\s*,\s*/)
    for (const name of RATE_HEADERS) t.ok(exposed.includes(name), `${what}: ${name} exposed to browser clients`)
    await res.arrayBuffer()
  }
  await check(await r.chat(), 200, 'chat')
  r.fake.reply('generateContent', errorReply(500))
  await check(await r.chat(), 502, 'chat upstream error')
  await check(await r.chat(chatBody({ stream: true })), 200, 'chat stream')
  await check(await r.native(), 200, 'native')
  r.fake.reply('generateContent', errorReply(400))
  await check(await r.native(), 400, 'native upstream error')
  await check(await r.native('streamGenerateContent'), 200, 'native stream')
  await check(await r.native('countTokens'), 200, 'countTokens')
  await r.recorded(7)
  t.same(r.entries.map(e => [e.surface, e.status]), [['chat', 200], ['chat', 502], ['chat', 200], ['native', 200], ['native', 400], ['native', 200], ['native', 200]])
})

t.test('a call reserves its input estimate plus the output it asks for; settle trues the reservation up to the upstream usage, streams included', async t => {
  const r = await rig(t, limits({ tpm: 200_000 }))
  r.fake.setDefault('generateContent', { body: geminiResponse({ text: 'hi', finishReason: 'STOP', usage: USAGE }) })
  r.fake.setDefault('streamGenerateContent', streamReply([
    geminiResponse({ text: 'a', usage: { promptTokenCount: 40, candidatesTokenCount: 1 } }),
    geminiResponse({ text: 'b', finishReason: 'STOP', usage: USAGE }),
  ]))
  const estimate = (body: string): number => Math.ceil(Buffer.byteLength(body) / 4)
  const firstBody = chatBody({ max_tokens: 100 })
  const first = await r.chat(firstBody)
  t.equal(first.headers.get('x-ratelimit-remaining-tokens'), String(200_000 - estimate(firstBody) - 100), 'max_tokens and the input estimate reserved at admission')
  await first.arrayBuffer()
  await r.settledCount(1)
  t.same(r.settled[0], CHARGED, 'input, output, thinking and cached tokens from usageMetadata')
  const secondBody = chatBody({ stream: true, max_completion_tokens: 200 })
  const second = await r.chat(secondBody)
  t.equal(second.headers.get('x-ratelimit-remaining-tokens'), String(200_000 - 80 - estimate(secondBody) - 200), 'the first reservation was trued up to 80 (cached tokens are part of the input); max_completion_tokens reserved')
  await second.text()
  await r.settledCount(2)
  t.same(r.settled[1], CHARGED, 'a stream is charged the last usage the upstream reported')
  const third = await r.native('streamGenerateContent')
  t.equal(third.headers.get('x-ratelimit-remaining-tokens'), String(200_000 - 160 - estimate(nativeBody) - createModelCatalog(['gemini-2.5-pro']).get('gemini-2.5-pro')!.outputTokenLimit), 'no maxOutputTokens: the model\'s output limit reserved')
  await third.text()
  await r.recorded(3)
  t.same(r.entries.map(e => [e.model, e.usage]), [['gemini-2.5-pro', CHARGED], ['gemini-2.5-pro', CHARGED], ['gemini-2.5-pro', CHARGED]], 'recorded under the base name with the usage')
  t.same(r.calls.map(c => c[1]), ['member', 'member', 'member'], 'reported once per call with the access level')
})

t.test('the output reserved is what the call asks for, never above the model\'s output limit, else that limit', async t => {
  const catalog = createModelCatalog(['gemini-2.5-pro', 'gemini-1.0-pro'])
  const pro = catalog.get('gemini-2.5-pro')!.outputTokenLimit
  t.equal(outputReservation(catalog, 'gemini-2.5-pro', 300), 300)
  t.equal(outputReservation(catalog, 'gemini-2.5-pro', undefined), pro, 'no maximum: the model\'s own limit')
  t.equal(outputReservation(catalog, 'gemini-2.5-pro', 10 ** 9), pro, 'never above the model\'s limit')
  t.equal(outputReservation(catalog, 'gemini-2.5-pro', -5), pro, 'a maximum that is none is ignored')
  t.equal(outputReservation(catalog, 'gemini-2.5-pro', '300'), pro)
  t.equal(outputReservation(catalog, 'gemini-2.5-pro', 300, 3), 900, 'times the answers asked for')
  const small = catalog.get('gemini-1.0-pro')!.outputTokenLimit
  t.equal(outputReservation(catalog, 'gemini-1.0-pro', undefined), small)
  t.equal(outputReservation(catalog, 'gemini-9-unknown', undefined), DEFAULT_OUTPUT_RESERVATION, 'a model the catalog does not know: the default')
  t.equal(outputReservation(catalog, 'gemini-9-unknown', 50_000), 50_000)
})

t.test('30 parallel calls overrun tokens_per_day by at most one call\'s reservation, and the upstream sees only the admitted ones', async t => {
  const r = await rig(t, limits({ tokensPerDay: 3000 }))
  // Every call spends exactly what it reserved: the worst case the bound is about.
  const body = chatBody({ max_tokens: 500 })
  const reservation = Math.ceil(Buffer.byteLength(body) / 4) + 500
  r.fake.setDefault('generateContent', { delayMs: 50, body: geminiResponse({ text: 'hi', finishReason: 'STOP', usage: { promptTokenCount: reservation - 500, candidatesTokenCount: 500, totalTokenCount: reservation } }) })
  const answers = await Promise.all(Array.from({ length: 30 }, async () => {
    const res = await r.chat(body)
    await res.arrayBuffer()
    return res.status
  }))
  const admitted = answers.filter(s => s === 200).length
  t.equal(admitted + answers.filter(s => s === 429).length, 30, 'each call admitted or refused as over the limit')
  t.equal(admitted, Math.ceil(3000 / reservation), 'exactly the calls that found the day under its limit')
  await r.recorded(30)
  const spent = r.entries.reduce((sum, e) => sum + (e.usage === undefined ? 0 : e.usage.inputTokens + e.usage.outputTokens), 0)
  t.ok(spent < 3000 + reservation, `spent ${spent}: under the limit plus one reservation`)
  t.equal(r.fake.calls('generateContent').length, admitted, 'refused calls never reached the upstream')
})

t.test('a stream the client abandons is charged what the upstream reported, and frees its slot', async t => {
  const r = await rig(t, limits({ concurrent: 1, tpm: 1000 }))
  r.fake.reply('streamGenerateContent', streamReply([
    geminiResponse({ text: 'a', usage: { promptTokenCount: 40, candidatesTokenCount: 3 } }),
    geminiResponse({ text: 'b', finishReason: 'STOP', usage: USAGE }),
  ], { chunkDelayMs: 30_000 }))
  const controller = new AbortController()
  const res = await r.chat(chatBody({ stream: true }), KEY, controller.signal)
  t.equal(res.status, 200)
  const reader = res.body!.getReader()
  let text = ''
  while (!text.includes('"a"')) text += new TextDecoder().decode((await reader.read()).value)
  controller.abort()
  await r.settledCount(1)
  t.same(r.settled[0], { inputTokens: 40, outputTokens: 3, thinkingTokens: 0, cachedTokens: 0 })
  await r.recorded(1)
  t.equal(r.entries[0]!.status, 499, 'recorded as abandoned by the client')
  const next = await r.chat()
  t.equal(next.status, 200, 'the slot was freed')
  await next.arrayBuffer()
})

t.test('an abandoned stream is charged at least what was forwarded (characters ÷ 4 for text and thoughts) when the upstream never reported usage', async t => {
  const r = await rig(t, limits({ tpm: 100000 }))
  r.fake.reply('streamGenerateContent', streamReply([
    geminiResponse({ thought: 't'.repeat(100), text: 'a'.repeat(300) }),
    geminiResponse({ text: 'b', finishReason: 'STOP', usage: USAGE }),
  ], { chunkDelayMs: 30_000 }))
  const charged = await abandoned(r, chatBody({ stream: true, max_tokens: 50 }), 'aaaa')
  t.equal(charged.outputTokens + charged.thinkingTokens, 100, '400 characters forwarded: 100 tokens, more than the 50 reserved')
  t.ok(charged.inputTokens > 0, 'and the input the upstream had, estimated')
  await r.recorded(1)
  t.equal(r.entries[0]!.status, 499)
})

/** Opens a chat stream, reads until `until` went by, leaves it; the charge settled. */
async function abandoned (r: Rig, body: string, until: string): Promise<TokenUsage> {
  const controller = new AbortController()
  const res = await r.chat(body, KEY, controller.signal)
  const reader = res.body!.getReader()
  let text = ''
  while (!text.includes(until)) text += new TextDecoder().decode((await reader.read()).value)
  controller.abort()
  await r.settledCount(1)
  return r.settled[0]!
}

t.test('an abandoned stream whose last usage reports no answer tokens is charged the output it reserved: thoughts spent before it are paid', async t => {
  const r = await rig(t, limits({ tpm: 100000 }))
  r.fake.reply('streamGenerateContent', streamReply([
    geminiResponse({ text: 'a', usage: { promptTokenCount: 40, totalTokenCount: 40 } }),
    geminiResponse({ text: 'b', finishReason: 'STOP', usage: USAGE }),
  ], { chunkDelayMs: 30_000 }))
  const charged = await abandoned(r, chatBody({ stream: true, max_tokens: 500 }), '"a"')
  t.same(charged, { inputTokens: 40, outputTokens: 500, thinkingTokens: 0, cachedTokens: 0 }, 'the reported input, and the 500 reserved as output')
})

t.test("an abandoned stream counts a function call's arguments as output forwarded", async t => {
  const r = await rig(t, limits({ tpm: 100000 }))
  r.fake.reply('streamGenerateContent', streamReply([
    geminiResponse({ functionCalls: [{ name: 'lookup', args: { query: 'q'.repeat(3990) }, thoughtSignature: 'sig' }], usage: { promptTokenCount: 40, candidatesTokenCount: 1 } }),
    geminiResponse({ text: 'b', finishReason: 'STOP', usage: USAGE }),
  ], { chunkDelayMs: 30_000 }))
  const charged = await abandoned(r, chatBody({ stream: true, max_tokens: 50 }), 'lookup')
  t.ok(charged.outputTokens >= 1000, `about 4,000 characters of arguments sent: at least 1,000 tokens (${charged.outputTokens}), where usage said 1`)
})

t.test('a concurrency slot is freed on completion and on error', async t => {
  const r = await rig(t, limits({ concurrent: 1 }))
  const replies = [undefined, errorReply(500), errorReply(429), undefined]
  for (const [i, reply] of replies.entries()) {
    if (reply !== undefined) r.fake.reply('generateContent', reply)
    const res = await r.native()
    t.equal(res.status, reply?.status ?? 200, 'admitted: the slot before was freed')
    await res.arrayBuffer()
    await r.settledCount(i + 1)
  }
  // Two at once: the second is refused while the first holds the slot.
  r.fake.reply('generateContent', { delayMs: 200 })
  const slow = r.native()
  await r.fake.waitFor('generateContent', 5)
  const refused = await r.native()
  t.equal(refused.status, 429)
  t.equal(refused.headers.get('retry-after'), '1')
  await refused.arrayBuffer()
  await (await slow).arrayBuffer()
})

t.test('the operator password is never rate limited', async t => {
  const r = await rig(t, limits({ rpm: 1, tpm: 1, tokensPerDay: 1, concurrent: 1 }))
  for (let i = 0; i < 3; i++) {
    const res = await r.chat(chatBody(), PASSWORD)
    t.equal(res.status, 200, `call ${i + 1}`)
    t.equal(res.headers.get('x-ratelimit-limit-requests'), null, 'no rate headers for the operator')
    await res.arrayBuffer()
  }
  t.same(r.settled, [], 'the limiter was never asked')
  t.same(r.entries.map(e => [e.userId, e.keyId, e.status]), [['operator', null, 200], ['operator', null, 200], ['operator', null, 200]], 'recorded once per call as the operator')
  t.same(r.calls.map(c => c[1]), ['operator', 'operator', 'operator'])
})

t.test('usage is recorded once per call with its status; an invalid request of a key as a refusal, never as a model call', async t => {
  const r = await rig(t, {})
  const denied = await r.chat(JSON.stringify({ model: 'no-such-model', messages: [] }))
  t.equal(denied.status, 400)
  await denied.arrayBuffer()
  r.fake.reply('generateContent', errorReply(503))
  const failed = await r.chat()
  t.equal(failed.status, 503)
  await failed.arrayBuffer()
  const ok = await r.native()
  await ok.arrayBuffer()
  await r.recorded(3)
  t.same(r.entries.map(e => [e.model, e.surface, e.status, e.usage === undefined]), [['(refused)', 'chat', 400, true], ['gemini-2.5-pro', 'chat', 503, true], ['gemini-2.5-pro', 'native', 200, false]])
  t.equal(r.calls.length, 2, 'onCall hears of model calls only')
  const unauthenticated = await r.chat(undefined, 'ghk_' + 'Z'.repeat(43))
  t.equal(unauthenticated.status, 401)
  await unauthenticated.arrayBuffer()
  t.equal(r.entries.length, 3, 'a request whose key does not authenticate is not recorded')
})

t.test('createProxy refuses a limiter, usage ledger or onCall that is none, naming the option', async t => {
  for (const [name, value] of [['limiter', {}], ['usage', { flush () {} }], ['onCall', 'metrics'], ['limiter', 5]] as const) {
    t.throws(() => createProxy({ password: PASSWORD, [name]: value } as never), { option: name, message: new RegExp(`^createProxy: ${name} must be`) }, name)
  }
})

// docs/prices.md, "A day of calls, priced by hand", call 1: 4,000 × $4 + 8,000 × $0.20 + 3,000 × $20 per 1M on 2026-12-01.
const ARGON_USAGE = { promptTokenCount: 12_000, cachedContentTokenCount: 8_000, candidatesTokenCount: 900, thoughtsTokenCount: 2_100, totalTokenCount: 15_000 }

t.test('a call\'s usage row carries its cost in micro-dollars, from the usage reported, at the price in force on the call\'s date', async t => {
  const r = await rig(t, {}, { geminiApi: true, start: Date.UTC(2026, 10, 30, 23, 59, 0) })
  r.fake.setDefault('generateContent', { body: geminiResponse({ text: 'hi', finishReason: 'STOP', usage: ARGON_USAGE }) })
  await (await r.native('generateContent', KEY, 'gemini-4-argon')).arrayBuffer()
  r.clock.at = Date.UTC(2026, 11, 1, 0, 0, 0)
  await (await r.native('generateContent', KEY, 'gemini-4-argon')).arrayBuffer()
  await (await r.native('generateContent', KEY, 'gemini-4-argon-cyber-permissive')).arrayBuffer()
  r.fake.reply('generateContent', errorReply(503))
  await (await r.native('generateContent', KEY, 'gemini-4-argon')).arrayBuffer()
  await r.recorded(4)
  t.same(r.entries.map(e => [e.model, e.costMicros, e.unpriced]), [
    ['gemini-4-argon', 38_800, undefined],
    ['gemini-4-argon', 77_600, undefined],
    ['gemini-4-argon-cyber-permissive', undefined, true],
    ['gemini-4-argon', undefined, undefined],
  ], 'November\'s price the day before the change, twice it from 2026-12-01; cached tokens once at the cached rate, thinking as output; an unpriced model counted as such; a call that used nothing costs nothing')
  t.same(r.calls.map(([e]) => e.costMicros), [38_800, 77_600, undefined, undefined], 'onCall (the metrics) hears the same cost')
})

t.test('tool-use prompt tokens are input: charged to the limits, priced at the input rate, and counted apart (toolUseTokens)', async t => {
  const r = await rig(t, limits({ tokensPerDay: 1_000_000 }), { geminiApi: true, start: Date.UTC(2026, 11, 1, 12) })
  r.fake.setDefault('generateContent', { body: geminiResponse({ text: 'hi', finishReason: 'STOP', usage: { ...ARGON_USAGE, toolUsePromptTokenCount: 1_000, totalTokenCount: 16_000 } }) })
  await (await r.native('generateContent', KEY, 'gemini-4-argon')).arrayBuffer()
  await r.recorded(1)
  await r.settledCount(1)
  t.match(r.entries[0].usage, { inputTokens: 13_000, toolUseTokens: 1_000, cachedTokens: 8_000, outputTokens: 900, thinkingTokens: 2_100 }, 'the usage row keeps them apart and within the input')
  t.equal(r.entries[0].costMicros, 81_600, 'the same call without them costs 77,600: 1,000 more at $4 per 1M input')
  t.equal(r.settled[0]?.inputTokens, 13_000, 'the limits are charged them as input')
})

t.test('a grounded call pays Google\'s search fee per query it ran, on top of its tokens, unary and streamed', async t => {
  const r = await rig(t, {}, { geminiApi: true, start: Date.UTC(2026, 11, 1, 12) })
  const grounded = (body: Record<string, any>): Record<string, any> => {
    body.candidates[0].groundingMetadata = { webSearchQueries: ['gatehouse release', 'gatehouse changelog'], groundingChunks: [] }
    return body
  }
  r.fake.setDefault('generateContent', { body: grounded(geminiResponse({ text: 'hi', finishReason: 'STOP', usage: ARGON_USAGE })) })
  await (await r.native('generateContent', KEY, 'gemini-4-argon')).arrayBuffer()
  r.fake.setDefault('streamGenerateContent', streamReply([geminiResponse({ text: 'h' }), grounded(geminiResponse({ text: 'i', finishReason: 'STOP', usage: ARGON_USAGE }))]))
  await (await r.native('streamGenerateContent', KEY, 'gemini-4-argon')).arrayBuffer()
  await r.recorded(2)
  // 77,600 for the tokens (docs/prices.md, call 1) and 2 queries × $14 per 1,000 (14,000 micro-dollars each).
  t.same(r.entries.map(e => e.costMicros), [105_600, 105_600])
})

t.test('a pass-through generate that grounds on search is charged the search fee, unary and streamed, as a native one is', async t => {
  const r = await rig(t, {}, { geminiApi: true, start: Date.UTC(2026, 11, 1, 12) })
  const grounded = (body: Record<string, any>, queries = ['gatehouse release', 'gatehouse [changelog]']): Record<string, any> => {
    body.candidates[0].groundingMetadata = { webSearchQueries: queries, groundingChunks: [] }
    return body
  }
  // Any spelling of the action is a model call passed through as it is (docs/model-proxy.md, "Pass-through").
  const passed = async (action: string): Promise<Response> => await fetch(`${r.url}/v1beta/Models/gemini-4-argon:${action}`, { method: 'POST', headers: { 'x-goog-api-key': KEY }, body: nativeBody })
  r.fake.setDefault('other', { body: grounded(geminiResponse({ text: 'hi', finishReason: 'STOP', usage: ARGON_USAGE })) })
  const unary = await passed('GenerateContent')
  t.equal(unary.status, 200)
  await unary.arrayBuffer()
  // A stream repeats its grounding: the largest count of its events is the call's, never their sum.
  const events = [geminiResponse({ text: 'h' }), grounded(geminiResponse({ text: 'i' }), ['gatehouse release']), grounded(geminiResponse({ text: '!', finishReason: 'STOP', usage: ARGON_USAGE }))]
  r.fake.setDefault('other', { ...streamReply(events), crlf: true })
  await (await passed('StreamGenerateContent?alt=sse')).arrayBuffer()
  await r.recorded(2)
  t.same(r.entries.map(e => [e.surface, e.model]), [['native', 'gemini-4-argon'], ['native', 'gemini-4-argon']], 'model calls on the catalogue model')
  // 77,600 for the tokens and 2 queries × 14,000, as the native surface charges the same answers (the test above).
  t.same(r.entries.map(e => e.costMicros), [105_600, 105_600])
  t.same(r.entries.map(e => e.usage?.searchQueries), [2, 2])
})
