// The governed lifecycle (lib/proxy/call/lifecycle.ts) over real HTTP, on the gemini-api backend: every request a key
// makes is counted and recorded, every call on a model (any spelling, tuned models, cache creation, pass-through) is
// admitted and charged from the upstream's own usage, an abandoned stream pays what it was sent, and invented model
// names make no usage rows of their own. Real rate limiter on the embedded store, fake clock.
import t from 'tap'
import type { Test } from 'tap'
import http from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { createEmbeddedStore, createProxy, createRateLimiter } from '../../../lib/index.ts'
import type { KeyCaller, LimitsByLevel, RateLimiter, TokenUsage, UsageEntry, UsageLedger } from '../../../lib/index.ts'
import { serveProxy } from '../../support/serve-proxy.ts'

const PASSWORD = 'lifecycle-test-password'
const KEY = 'ghk_' + 'L'.repeat(43)
const member: KeyCaller = { kind: 'key', userId: 'c'.repeat(24), keyId: 'd'.repeat(24), accessLevel: 'member', models: null }
const START = Date.UTC(2026, 0, 5, 10, 0, 15)
const USAGE = { promptTokenCount: 40, candidatesTokenCount: 30, thoughtsTokenCount: 10, totalTokenCount: 80 }
const CHARGED: TokenUsage = { inputTokens: 40, outputTokens: 30, thinkingTokens: 10, cachedTokens: 0 }
const RATE_HEADERS = ['x-ratelimit-limit-requests', 'x-ratelimit-remaining-requests', 'x-ratelimit-reset-requests', 'x-ratelimit-limit-tokens', 'x-ratelimit-remaining-tokens', 'x-ratelimit-reset-tokens']

interface Seen { method: string, url: string, body: string }

/** A Gemini API stand-in for the paths passed through: generate answers with usage (JSON and SSE), embeddings and caches as Google answers them. */
async function startUpstream (t: Test): Promise<{ url: string, seen: Seen[], streamHold: { release?: () => void } }> {
  const seen: Seen[] = []
  const sockets = new Set<Socket>()
  const streamHold: { release?: () => void } = {}
  const server = http.createServer((req, res) => {
    let body = ''
    req.on('data', c => { body += String(c) })
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', body })
      const path = (req.url ?? '').split('?')[0].toLowerCase()
      const json = (value: unknown): void => { res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' }).end(JSON.stringify(value, null, 2)) }
      if (path.endsWith(':streamgeneratecontent')) {
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        res.write(`data: ${JSON.stringify({ candidates: [{ content: { parts: [{ text: 'a' }] } }], usageMetadata: { promptTokenCount: 40, candidatesTokenCount: 1, totalTokenCount: 41 } })}\r\n\r\n`)
        res.end(`data: ${JSON.stringify({ candidates: [{ content: { parts: [{ text: 'b' }] }, finishReason: 'STOP' }], usageMetadata: USAGE })}\r\n\r\n`)
      } else if (path.endsWith(':predict')) {
        res.writeHead(429, { 'content-type': 'application/json; charset=UTF-8' }).end(JSON.stringify({ error: { code: 429, message: 'Resource has been exhausted', status: 'RESOURCE_EXHAUSTED' } }))
      } else if (path.endsWith(':generatecontent')) {
        json({ candidates: [{ content: { parts: [{ text: 'hi' }] }, finishReason: 'STOP' }], usageMetadata: USAGE })
      } else if (path.endsWith(':batchembedcontents')) {
        json({ embeddings: [{ values: [0.1, 0.2] }] })
      } else if (path.endsWith('/cachedcontents') && req.method === 'POST') {
        json({ name: 'cachedContents/abc', model: 'models/gemini-2.5-flash', usageMetadata: { totalTokenCount: 500 } })
      } else {
        json({})
      }
    })
  })
  server.on('connection', s => { sockets.add(s); s.on('close', () => sockets.delete(s)) })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    for (const s of sockets) s.destroy()
    await new Promise<void>(resolve => server.close(() => resolve()))
  })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, streamHold }
}

interface Rig {
  url: string
  seen: Seen[]
  entries: UsageEntry[]
  settled: Array<TokenUsage | undefined>
  settledCount: (n: number) => Promise<void>
  recorded: (n: number) => Promise<void>
  send: (method: string, path: string, body?: string | Uint8Array, headers?: Record<string, string>) => Promise<Response>
}

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

async function rig (t: Test, byLevel: LimitsByLevel, modelAccess?: Record<string, string[]>): Promise<Rig> {
  const upstream = await startUpstream(t)
  const clock = { at: START }
  const store = await createEmbeddedStore({ now: () => new Date(clock.at) })
  t.teardown(() => store.close())
  const real = createRateLimiter({ store, byLevel, now: () => new Date(clock.at), repeat: () => () => {} })
  const settled: Array<TokenUsage | undefined> = []
  const settledW = waiter(settled)
  const limiter: RateLimiter = {
    async admit (caller, estimate) {
      const admission = await real.admit(caller, estimate)
      return { headers: admission.headers, settle: async usage => { await admission.settle(usage); settledW.push(usage) } }
    },
    refusal: real.refusal,
  }
  const entries: UsageEntry[] = []
  const entriesW = waiter(entries)
  const usage: UsageLedger = { record: e => entriesW.push(e), flush: async () => {}, close: async () => {} }
  const proxy = createProxy({
    password: PASSWORD,
    upstream: { backend: 'gemini-api', apiKey: 'upstream-key', geminiApiEndpoint: upstream.url, maxRetries: 0 },
    keys: { resolveKey: async secret => secret === KEY ? member : undefined },
    limiter,
    usage,
    now: () => new Date(clock.at),
    // Keys create caches and files only where their owners are recorded (lib/proxy/access/ownership.ts).
    resources: { owners: (await createEmbeddedStore()).owners },
    ...(modelAccess === undefined ? {} : { modelAccess }),
  })
  const url = await serveProxy(t, proxy)
  return {
    url,
    seen: upstream.seen,
    entries,
    settled,
    settledCount: settledW.until,
    recorded: entriesW.until,
    send: async (method, path, body, headers = {}) => await fetch(`${url}${path}`, { method, headers: { 'x-goog-api-key': KEY, 'content-type': 'application/json', ...headers }, body }),
  }
}

const limits = (l: Record<string, number>): LimitsByLevel => ({ member: l })
const GENERATE = '{"contents":[{"parts":[{"text":"x"}]}]}'

t.test('deny by default: every request a key makes, on a model or not, is counted against its requests per minute and recorded', async t => {
  const r = await rig(t, limits({ rpm: 3, tpm: 100000 }))
  for (const path of ['/v1beta/files', '/v1beta/cachedContents', '/v1beta/models']) {
    const res = await r.send('GET', path)
    t.equal(res.status, 200, path)
    for (const name of RATE_HEADERS) t.ok(res.headers.get(name) !== null, `${path}: ${name}`)
    await res.arrayBuffer()
  }
  const refused = await r.send('GET', '/v1beta/files')
  t.equal(refused.status, 429, 'the fourth request of the minute is refused, whatever it names')
  await refused.arrayBuffer()
  t.equal(r.seen.length, 2, 'the refused request never reached the upstream (the model list is the proxy\'s own)')
  await r.recorded(4)
  t.same(r.entries.map(e => [e.model, e.status, e.usage]), [['none', 200, undefined], ['none', 200, undefined], ['none', 200, undefined], ['none', 429, undefined]], 'recorded under no model, charged nothing')
})

t.test('deny by default: a model list on the chat surface is counted and carries the rate headers', async t => {
  const r = await rig(t, limits({ rpm: 1, tpm: 100000 }))
  const list = await fetch(`${r.url}/v1/models`, { headers: { authorization: `Bearer ${KEY}` } })
  t.equal(list.status, 200)
  for (const name of RATE_HEADERS) t.ok(list.headers.get(name) !== null, name)
  await list.arrayBuffer()
  const again = await fetch(`${r.url}/v1/models/gemini-2.5-flash`, { headers: { authorization: `Bearer ${KEY}` } })
  t.equal(again.status, 429)
  await again.arrayBuffer()
})

t.test('every call on a model, any spelling, is admitted and charged from the usage the upstream reports, JSON or SSE', async t => {
  const r = await rig(t, limits({ rpm: 100, tpm: 100000 }))
  for (const path of ['/v1beta/Models/gemini-2.5-flash:GenerateContent', '/v1beta/models/gemini-2.5-flash:generateContent?x=1'.replace('generateContent?x=1', 'GENERATECONTENT')]) {
    const res = await r.send('POST', path, GENERATE)
    t.equal(res.status, 200, path)
    t.match(await res.json(), { usageMetadata: USAGE }, 'the answer passes unchanged')
  }
  const stream = await r.send('POST', '/v1beta/models/gemini-2.5-flash:StreamGenerateContent?alt=sse', GENERATE)
  t.equal(stream.status, 200)
  t.match(await stream.text(), /"text":"b"/)
  await r.settledCount(3)
  t.same(r.settled, [CHARGED, CHARGED, CHARGED], 'each charged its usageMetadata; the stream its last running total')
  await r.recorded(3)
  t.same(r.entries.map(e => [e.model, e.surface, e.status]), [['gemini-2.5-flash', 'native', 200], ['gemini-2.5-flash', 'native', 200], ['gemini-2.5-flash', 'native', 200]])
})

t.test('a tuned model is no key\'s to call (nobody records whose it is); a case variant of a model call meets the policy', async t => {
  const open = await rig(t, limits({ tpm: 100000 }))
  const res = await open.send('POST', '/v1beta/tunedModels/my-model-1:generateContent', GENERATE)
  t.equal(res.status, 403)
  t.match(await res.json(), { error: { status: 'PERMISSION_DENIED' } })
  await open.recorded(1)
  t.same(open.entries.map(e => [e.model, e.status]), [['(refused)', 403]], 'recorded as a refusal, charged nothing')

  const narrow = await rig(t, limits({ tpm: 100000 }), { member: ['gemini-2.5-flash*'] })
  const refused = await narrow.send('POST', '/v1beta/Models/gemini-2.5-pro:GenerateContent', GENERATE)
  t.equal(refused.status, 403, 'Models/…:GenerateContent meets the model policy')
  await refused.arrayBuffer()
  t.same(narrow.seen, [], 'nothing reached the upstream')
})

t.test('an action whose cost is unknown up front (batchEmbedContents reports no usage) is admitted on its estimate and charged it', async t => {
  const r = await rig(t, limits({ tpm: 2000 }))
  // 8,000 bytes: an estimate of 2,000 tokens, all the minute allows.
  const body = JSON.stringify({ requests: [{ model: 'models/gemini-embedding-2', content: { parts: [{ text: 'x'.repeat(7914) }] } }] })
  t.equal(Buffer.byteLength(body), 8000)
  const first = await r.send('POST', '/v1beta/models/gemini-embedding-2:batchEmbedContents', body)
  t.equal(first.status, 200)
  await first.arrayBuffer()
  await r.settledCount(1)
  t.same(r.settled, [{ inputTokens: 2000, outputTokens: 0, thinkingTokens: 0, cachedTokens: 0 }], 'charged the estimate: the upstream reported none')
  const second = await r.send('POST', '/v1beta/models/gemini-embedding-2:batchEmbedContents', body)
  t.equal(second.status, 429, 'the minute is spent')
  await second.arrayBuffer()
  t.equal(r.seen.length, 1)
})

t.test('an action the gateway has no rule of its own for (generateAnswer) is still a model call: admitted, charged its estimate, refused once the minute is spent', async t => {
  const r = await rig(t, limits({ tpm: 2000 }))
  const body = JSON.stringify({ contents: [{ parts: [{ text: 'x'.repeat(7934) }] }], answerStyle: 'ABSTRACTIVE' })
  t.equal(Buffer.byteLength(body), 8000)
  const first = await r.send('POST', '/v1beta/models/gemini-2.5-flash:generateAnswer', body)
  t.equal(first.status, 200)
  await first.arrayBuffer()
  await r.settledCount(1)
  t.same(r.settled, [{ inputTokens: 2000, outputTokens: 0, thinkingTokens: 0, cachedTokens: 0 }], 'charged the estimate: GenerateAnswerResponse reports no usage')
  const second = await r.send('POST', '/v1beta/models/gemini-2.5-flash:generateAnswer', body)
  t.equal(second.status, 429, 'the minute is spent')
  await second.arrayBuffer()
  t.equal(r.seen.length, 1, 'the refused call never reached the upstream')
  await r.recorded(2)
  t.same(r.entries.map(e => [e.model, e.surface, e.status]), [['gemini-2.5-flash', 'native', 200], ['gemini-2.5-flash', 'native', 429]])
})

t.test('cache creation is a model call on its model: refused at the limit, charged the usage it reports', async t => {
  const r = await rig(t, limits({ rpm: 2, tpm: 100000 }))
  const body = JSON.stringify({ model: 'models/gemini-2.5-flash', contents: [{ role: 'user', parts: [{ text: 'doc' }] }], ttl: '300s' })
  const created = await r.send('POST', '/v1beta/cachedContents', body)
  t.equal(created.status, 200)
  await created.arrayBuffer()
  await r.settledCount(1)
  t.same(r.settled, [{ inputTokens: 500, outputTokens: 0, thinkingTokens: 0, cachedTokens: 0 }], 'a CachedContent reports totalTokenCount only')
  t.equal(r.seen[0].body, body, 'the body goes on unchanged')
  await (await r.send('GET', '/v1beta/files')).arrayBuffer()
  const refused = await r.send('POST', '/v1beta/CachedContents', body)
  t.equal(refused.status, 429, 'a member at their limit creates no cache')
  await refused.arrayBuffer()
  t.equal(r.seen.length, 2)
  await r.recorded(3)
  t.same(r.entries.map(e => [e.model, e.status]), [['gemini-2.5-flash', 200], ['none', 200], ['gemini-2.5-flash', 429]])
})

t.test('the cache-create model check refuses a body it cannot parse with 400 before anything is sent', async t => {
  const r = await rig(t, {})
  const json = JSON.stringify({ model: 'models/gemini-2.5-flash' })
  const bodies: Array<[string, string | Uint8Array]> = [
    ['a byte order mark', '\uFEFF' + json],
    ['protobuf', Uint8Array.from([0x0a, 0x16, ...Buffer.from('models/gemini-2.5-flash')])],
    ['not JSON', 'model=gemini-2.5-flash'],
    ['no model', '{"contents":[]}'],
    ['an empty body', ''],
  ]
  for (const [what, body] of bodies) {
    const res = await r.send('POST', '/v1beta/cachedContents', body)
    t.equal(res.status, 400, what)
    t.match(await res.json(), { error: { code: 400, status: 'INVALID_ARGUMENT' } }, what)
  }
  t.same(r.seen, [], 'nothing was forwarded')
})

t.test('usage rows are keyed by catalogue models: invented names share one `other` row', async t => {
  const r = await rig(t, {})
  for (const suffix of ['zz1a', 'zz2b', 'zz3c']) {
    const res = await r.send('POST', `/v1beta/models/gemini-2.5-flash-${suffix}:countTokens`, GENERATE)
    await res.arrayBuffer()
  }
  const known = await r.send('POST', '/v1beta/models/gemini-2.5-flash:countTokens', GENERATE)
  await known.arrayBuffer()
  await r.recorded(4)
  t.same([...new Set(r.entries.map(e => e.model))], ['other', 'gemini-2.5-flash'])
})

t.test('a model call the upstream refuses ends with its status and is charged nothing', async t => {
  const r = await rig(t, limits({ tpm: 100000 }))
  const res = await r.send('POST', '/v1beta/models/gemini-2.5-flash:predict', '{"instances":[]}')
  t.equal(res.status, 429)
  t.match(await res.json(), { error: { status: 'RESOURCE_EXHAUSTED' } }, 'the upstream\'s answer, as it is')
  await r.settledCount(1)
  t.same(r.settled, [undefined])
  await r.recorded(1)
  t.same(r.entries.map(e => [e.model, e.status]), [['gemini-2.5-flash', 429]])
})

t.test('every answer to a key carries all six rate headers, refusals before the call included (policy, unknown model, unreadable body), which spend none of the minute', async t => {
  const r = await rig(t, limits({ rpm: 10, tpm: 100000 }), { member: ['gemini-2.5-flash*'] })
  const refusals: Array<[string, string, string | undefined, number]> = [
    ['POST', '/v1beta/models/gemini-2.5-pro:generateContent', GENERATE, 403],
    ['POST', '/v1beta/models/no-such-model:generateContent', GENERATE, 404],
    ['POST', '/v1beta/cachedContents', '\uFEFF{"model":"models/gemini-2.5-flash"}', 400],
    ['POST', '/v1beta/models/gemini-2.5-flash:generateContent', '{"contents":', 400],
  ]
  for (const [method, path, body, status] of refusals) {
    const res = await r.send(method, path, body)
    t.equal(res.status, status, path)
    for (const name of RATE_HEADERS) t.ok(res.headers.get(name) !== null, `${path}: ${name}`)
    await res.arrayBuffer()
  }
  const chat = await fetch(`${r.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: '{"model":"gemini-2.5-flash"}' })
  t.equal(chat.status, 400)
  for (const name of RATE_HEADERS) t.ok(chat.headers.get(name) !== null, `invalid chat body: ${name}`)
  t.equal(chat.headers.get('x-ratelimit-remaining-requests'), '10', 'no refusal spent a request of the minute')
  await chat.arrayBuffer()
  t.same(r.seen, [])
})

t.test('refused calls count apart: they spend no request per minute and are recorded under (refused), not a model; past rpm refusals in a minute the next is a 429', async t => {
  const r = await rig(t, limits({ rpm: 2, tpm: 100000 }), { member: ['gemini-2.5-flash*'] })
  for (let i = 0; i < 2; i++) {
    const res = await r.send('POST', '/v1beta/models/gemini-2.5-pro:generateContent', GENERATE)
    t.equal(res.status, 403, 'a model the policy refuses')
    t.equal(res.headers.get('x-ratelimit-remaining-requests'), '2', 'the minute untouched')
    await res.arrayBuffer()
  }
  const unknown = await r.send('POST', '/v1beta/models/no-such-model:generateContent', GENERATE)
  t.equal(unknown.status, 429, 'the third refusal of the minute is past the refusals\' own allowance')
  await unknown.arrayBuffer()
  const ok = await r.send('POST', '/v1beta/models/gemini-2.5-flash:generateContent', GENERATE)
  t.equal(ok.status, 200, 'the refusals spent none of the requests per minute')
  t.equal(ok.headers.get('x-ratelimit-remaining-requests'), '1')
  await ok.arrayBuffer()
  await r.recorded(4)
  t.same(r.entries.map(e => [e.model, e.status]), [['(refused)', 403], ['(refused)', 403], ['(refused)', 429], ['gemini-2.5-flash', 200]])
})

t.test('a key\'s request refused before its call began is recorded under the surface of the route it asked (messages, responses, chat)', async t => {
  const r = await rig(t, limits({ rpm: 10, tpm: 100000 }))
  for (const path of ['/v1/messages', '/v1/responses', '/v1/chat/completions']) {
    const res = await fetch(`${r.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: '{"model":' })
    t.equal(res.status, 400, path)
    await res.arrayBuffer()
  }
  await r.recorded(3)
  t.same(r.entries.map(e => [e.surface, e.status]), [['messages', 400], ['responses', 400], ['chat', 400]])
  t.same(r.seen, [])
})
