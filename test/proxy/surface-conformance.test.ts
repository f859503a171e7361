// The one set of shared rules every model surface must keep (docs/model-proxy.md, "Adding a surface"), run against
// each surface of test/proxy/surfaces.ts the way test/store/conformance.ts runs every store: a rule one surface keeps
// and another misses fails here, naming the surface.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import type { Test } from 'tap'
import { PASSWORD, startProxy } from './harness.ts'
import type { HarnessOptions, ProxyHarness } from './harness.ts'
import { PNG_1X1 } from './harness.ts'
import { errorReply } from '../support/fake-upstream.ts'
import { createEmbeddedStore, createRateLimiter } from '../../lib/index.ts'
import type { KeyCaller, UsageEntry } from '../../lib/index.ts'
import { EVERY_KIND, PARTIAL, SURFACES } from './surfaces.ts'
import { registeredSurfaces } from '../../lib/proxy/surfaces.ts'
import type { Ask, SurfaceUnderTest } from './surfaces.ts'

const KEY = 'ghk_' + 'C'.repeat(43)
const member: KeyCaller = { kind: 'key', userId: 'c'.repeat(24), keyId: 'd'.repeat(24), accessLevel: 'member', models: null }
const RATE_HEADERS = ['x-ratelimit-limit-requests', 'x-ratelimit-remaining-requests', 'x-ratelimit-reset-requests', 'x-ratelimit-limit-tokens', 'x-ratelimit-remaining-tokens', 'x-ratelimit-reset-tokens']
const MiB = 1024 * 1024
const START = Date.UTC(2026, 0, 5, 10, 0, 15)

interface Rig {
  h: ProxyHarness
  entries: UsageEntry[]
  logs: Array<{ level: string, fields: Record<string, unknown>, message: string }>
  /** Resolves once `n` calls were recorded. */
  recorded: (n: number) => Promise<void>
  /** A model call on `surface`, made with the member's key (or `key`: the operator password). */
  ask: (surface: SurfaceUnderTest, ask: Ask, key?: string) => Promise<{ status: number, headers: Headers, json: any, text: string }>
}

/** The proxy on the fake Gemini API (the one backend serving every surface), with a member's key under limits. */
async function rig (t: Test, options: Partial<HarnessOptions> = {}): Promise<Rig> {
  const clock = { at: START }
  const store = await createEmbeddedStore({ now: () => new Date(clock.at) })
  t.teardown(() => store.close())
  const limiter = createRateLimiter({ store, byLevel: { member: { rpm: 1000, tpm: 100_000_000 } }, now: () => new Date(clock.at), repeat: () => () => {} })
  const entries: UsageEntry[] = []
  const waiting: Array<{ n: number, resolve: () => void }> = []
  const logs: Rig['logs'] = []
  const log = (level: string) => (fields: unknown, message?: string): void => {
    logs.push({ level, fields: typeof fields === 'object' && fields !== null ? fields as Record<string, unknown> : {}, message: message ?? (typeof fields === 'string' ? fields : '') })
  }
  const logger = { trace: log('trace'), debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error'), fatal: log('fatal'), child: () => logger }
  const h = await startProxy(t, {
    backendName: 'gemini-api',
    keys: { resolveKey: async secret => secret === KEY ? member : undefined },
    limiter,
    usage: {
      record: e => {
        entries.push(e)
        for (const w of waiting.filter(w => entries.length >= w.n)) { waiting.splice(waiting.indexOf(w), 1); w.resolve() }
      },
      flush: async () => {},
      close: async () => {},
    },
    now: () => new Date(clock.at),
    logger: logger as never,
    ...options,
  })
  return {
    h,
    entries,
    logs,
    recorded: async n => { if (entries.length < n) await new Promise<void>(resolve => waiting.push({ n, resolve })) },
    async ask (surface, ask, key = KEY) {
      const res = await fetch(h.url + surface.path(ask), {
        method: 'POST',
        headers: { ...surface.auth(key), 'content-type': 'application/json', origin: 'https://app.example' },
        body: JSON.stringify(surface.body(ask)),
      })
      const text = await res.text()
      let json: any
      try { json = JSON.parse(text) } catch {}
      return { status: res.status, headers: res.headers, json, text }
    },
  }
}

/** An image server that tells when a fetch arrived and answers only when told to. */
async function heldImage (t: Test): Promise<{ url: string, arrived: Promise<void>, answer: () => void }> {
  let arrived!: () => void
  const arrivedP = new Promise<void>(resolve => { arrived = resolve })
  let answer!: () => void
  const answered = new Promise<void>(resolve => { answer = resolve })
  const server = http.createServer((_req, res) => {
    arrived()
    void answered.then(() => {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(PNG_1X1.length) })
      res.end(PNG_1X1)
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>(resolve => { answer(); server.closeAllConnections(); server.close(() => resolve()) }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/image.png`, arrived: arrivedP, answer }
}

t.test('every registered surface is held to these rules: the registry names no surface this suite does not run', async t => {
  // Settings are only read when a surface's routes are built.
  const registered = new Set(registeredSurfaces({} as never).map(s => s.name))
  t.same([...registered].filter(name => !SURFACES.some(s => s.name === name)), [], 'every registry entry has its entry in test/proxy/surfaces.ts')
})

t.test('every surface charges an abandoned stream the usage reported so far and records it as 499 (client closed)', async t => {
  const r = await rig(t)
  let n = 0
  for (const surface of SURFACES) {
    const ask = { model: 'gemini-2.5-flash', stream: true }
    r.h.fake.reply(surface.call(ask), surface.abandonedStream.reply)
    const controller = new AbortController()
    const res = await fetch(r.h.url + surface.path(ask), {
      method: 'POST',
      headers: { ...surface.auth(KEY), 'content-type': 'application/json' },
      body: JSON.stringify(surface.body(ask)),
      signal: controller.signal,
    })
    t.equal(res.status, 200, surface.name)
    const reader = res.body!.getReader()
    let text = ''
    while (!surface.abandonedStream.seen(text)) text += new TextDecoder().decode((await reader.read()).value)
    controller.abort()
    await r.h.fake.last(surface.call(ask))!.closed
    await r.recorded(++n)
    const entry = r.entries[n - 1]
    t.equal(entry.status, 499, `${surface.name}: recorded as the client closing`)
    t.match(entry.usage, { inputTokens: PARTIAL.prompt, outputTokens: PARTIAL.candidates }, `${surface.name}: charged what the stream reported`)
  }
})

t.test('every surface holds the image budget while it fetches an image URL, and gives it back once answered', async t => {
  for (const surface of SURFACES.filter(s => s.fetchesImages)) {
    await t.test(surface.name, async t => {
      const r = await rig(t, { maxBodyBytes: 3 * MiB, maxBodyBytesInFlight: 3 * MiB, imageFetch: { timeoutMs: 2000, maxBytes: 2 * MiB, allowPrivateNetworks: true } })
      const budget = r.h.proxy.bodyBudget!
      const image = await heldImage(t)
      const pending = r.ask(surface, { model: 'gemini-2.5-flash', imageUrl: image.url })
      await image.arrived
      t.equal(budget.reserved, 2 * MiB, `${surface.name}: one image's worth held while it is fetched`)
      image.answer()
      const res = await pending
      t.equal(res.status, 200, res.text.slice(0, 300))
      t.equal(budget.reserved, 0, `${surface.name}: given back once answered`)
    })
  }
})

t.test('every surface sends at most the model\'s window as its output, however much more the client asks', async t => {
  // gemini-4-argon's input and output share a 1,048,576-token window (lib/proxy/models/models.json).
  for (const surface of SURFACES) {
    for (const stream of [false, true]) {
      await t.test(`${surface.name}${stream ? ', streamed' : ''}`, async t => {
        const r = await rig(t)
        const ask = { model: 'gemini-4-argon', maxOutput: 2_000_000, stream }
        const res = await r.ask(surface, ask)
        t.equal(res.status, 200, res.text.slice(0, 300))
        const sent = r.h.fake.last(surface.call(ask))
        t.ok(sent !== undefined, 'the call reached the upstream')
        t.equal(surface.sentMaxOutput(sent!), 1_048_576, `${surface.name}: 2,000,000 asked, the window sent`)
      })
    }
  }
})

t.test('every surface leaves out the fields the model refuses or ignores', async t => {
  // gemini-4-argon ignores temperature and refuses presencePenalty (lib/proxy/models/models.json).
  for (const surface of SURFACES) {
    await t.test(surface.name, async t => {
      const r = await rig(t)
      const ask = { model: 'gemini-4-argon', temperature: 0.3, presencePenalty: surface.hasPenalty ? 0.5 : undefined }
      const res = await r.ask(surface, ask)
      t.equal(res.status, 200, res.text.slice(0, 300))
      t.same(surface.sentSampling(r.h.fake.last(surface.call(ask))!), {}, `${surface.name}: neither sent`)
      const kept = await r.ask(surface, { model: 'gemini-2.5-flash', temperature: 0.3 })
      t.equal(kept.status, 200)
      t.same(surface.sentSampling(r.h.fake.last(surface.call(ask))!), { temperature: 0.3 }, `${surface.name}: a model that takes it gets it`)
    })
  }
})

t.test('every surface answers preflights and exposes its rate-limit headers to browsers', async t => {
  const r = await rig(t)
  for (const surface of SURFACES) {
    const path = surface.path({ model: 'gemini-2.5-flash' })
    const preflight = await fetch(r.h.url + path, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } })
    t.equal(preflight.status, 204, `${surface.name}: preflight answered without a key`)
    t.ok(preflight.headers.get('access-control-allow-origin') !== null, `${surface.name}: preflight allows the origin`)
    t.match(preflight.headers.get('access-control-allow-methods') ?? '', /POST/, `${surface.name}: preflight allows POST`)
    const res = await r.ask(surface, { model: 'gemini-2.5-flash' })
    t.equal(res.status, 200, `${surface.name}: ${res.text.slice(0, 200)}`)
    t.ok(res.headers.get('access-control-allow-origin') !== null, `${surface.name}: answer allows the origin`)
    const exposed = (res.headers.get('access-control-expose-headers') ?? '').split(/\s*,\s*/)
    for (const name of RATE_HEADERS) t.ok(exposed.includes(name), `${surface.name}: ${name} exposed`)
  }
})

t.test('every surface answers a key\'s model call with the six rate-limit headers, unary and streamed', async t => {
  const r = await rig(t)
  for (const surface of SURFACES) {
    for (const stream of [false, true]) {
      const res = await r.ask(surface, { model: 'gemini-2.5-flash', stream })
      t.equal(res.status, 200, `${surface.name}: ${res.text.slice(0, 200)}`)
      for (const name of RATE_HEADERS) t.ok(res.headers.get(name) !== null, `${surface.name}${stream ? ' streamed' : ''}: ${name}`)
    }
  }
})

t.test('every surface records a usage row under its own name with every token kind the upstream reported', async t => {
  const r = await rig(t)
  let n = 0
  for (const surface of SURFACES) {
    const ask = { model: 'gemini-2.5-flash' }
    r.h.fake.reply(surface.call(ask), surface.usageReply)
    const res = await r.ask(surface, ask)
    t.equal(res.status, 200, `${surface.name}: ${res.text.slice(0, 200)}`)
    await r.recorded(++n)
    const entry = r.entries[n - 1]
    t.equal(entry.surface, surface.name, `${surface.name}: the row's surface`)
    t.equal(entry.model, 'gemini-2.5-flash')
    // Tool-use prompt tokens are input Google counts apart from the prompt's (totalTokenCount holds both).
    t.same(entry.usage, {
      inputTokens: EVERY_KIND.prompt + EVERY_KIND.toolUsePrompt,
      outputTokens: EVERY_KIND.candidates,
      thinkingTokens: EVERY_KIND.thoughts,
      cachedTokens: EVERY_KIND.cached,
      toolUseTokens: EVERY_KIND.toolUsePrompt,
    }, `${surface.name}: prompt and tool-use (also apart), answer, thought and cached tokens`)
    const shown = surface.shownInput(res.json)
    if (shown !== undefined) t.equal(shown, EVERY_KIND.prompt + EVERY_KIND.toolUsePrompt, `${surface.name}: the answer's usage counts the same input`)
  }
})

t.test('every surface that names upstream files refuses a key another tenant\'s file with a 404 in its shape, nothing sent', async t => {
  const r = await rig(t)
  const others = 'https://generativelanguage.googleapis.com/v1beta/files/someone-elses'
  for (const surface of SURFACES.filter(s => s.fileRef !== undefined)) {
    const ask = { model: 'gemini-2.5-flash' }
    const before = r.h.fake.calls(surface.call(ask)).length
    const res = await fetch(r.h.url + surface.path(ask), {
      method: 'POST',
      headers: { ...surface.auth(KEY), 'content-type': 'application/json' },
      body: JSON.stringify(surface.fileRef!(ask, others)),
    })
    const json = await res.json()
    t.equal(res.status, 404, `${surface.name}: not found, as a file of no one's would be`)
    t.ok(surface.isError(json), `${surface.name}: in the surface's shape`)
    t.equal(r.h.fake.calls(surface.call(ask)).length, before, `${surface.name}: nothing reached the upstream`)
  }
  t.ok(SURFACES.some(s => s.fileRef !== undefined), 'some surface names files')
})

t.test('every surface fails in its own error shape, an upstream refusal and a refusal of its own alike', async t => {
  const r = await rig(t)
  for (const surface of SURFACES) {
    const ask = { model: 'gemini-2.5-flash' }
    r.h.fake.reply(surface.call(ask), errorReply(400, { message: 'Request contains an invalid argument.' }))
    const upstream = await r.ask(surface, ask)
    t.equal(upstream.status, 400, `${surface.name}: the upstream's status`)
    t.ok(surface.isError(upstream.json), `${surface.name}: upstream refusal in the surface's shape: ${upstream.text.slice(0, 200)}`)
    for (const name of RATE_HEADERS.slice(0, 3)) t.ok(upstream.headers.get(name) !== null, `${surface.name}: refusal carries ${name}`)
    const own = await r.ask(surface, { model: 'no-such-model-anywhere' })
    t.ok(own.status >= 400 && own.status < 500, `${surface.name}: an unknown model is a 4xx (${own.status})`)
    t.ok(surface.isError(own.json), `${surface.name}: own refusal in the surface's shape: ${own.text.slice(0, 200)}`)
  }
})

t.test('every surface fetching images refuses an internal address with one answer, the reason in the log only', async t => {
  const r = await rig(t)
  for (const surface of SURFACES.filter(s => s.fetchesImages)) {
    const before = r.logs.length
    const res = await r.ask(surface, { model: 'gemini-2.5-flash', imageUrl: 'http://127.0.0.1:9/secret.png' })
    t.equal(res.status, 400, `${surface.name}: ${res.text.slice(0, 200)}`)
    t.ok(surface.isError(res.json), `${surface.name}: in the surface's shape`)
    t.notMatch(res.text, /loopback|private|internal/i, `${surface.name}: the reason is not told to the client`)
    const line = r.logs.slice(before).find(l => l.message === 'Image URL refused')
    t.ok(line !== undefined, `${surface.name}: the refusal is logged`)
    t.equal(line?.level, 'warn')
    t.match(line?.fields, { url: 'http://127.0.0.1:9/secret.png', reason: /loopback/ }, `${surface.name}: with the URL and its reason`)
  }
})

/** Whether a request that reached the fake asked for Google Search, in either wire format. */
const sentSearch = (body: any): boolean => /google_?search/i.test(JSON.stringify(body?.tools ?? []))

t.test('every surface refuses a built-in tool the key\'s level may not use, before any upstream call (TOOL_NOT_ALLOWED)', async t => {
  const r = await rig(t, { resources: { byLevel: { member: { tools: ['urlContext'] } } } })
  let n = 0
  for (const surface of SURFACES) {
    for (const stream of [false, true]) {
      const ask = { model: 'gemini-2.5-flash', search: true, stream }
      const before = r.h.fake.calls(surface.call(ask)).length
      const res = await r.ask(surface, ask)
      const name = `${surface.name}${stream ? ', streamed' : ''}`
      t.equal(res.status, 403, `${name}: ${res.text.slice(0, 200)}`)
      t.ok(surface.isError(res.json), `${name}: in the surface's shape`)
      t.match(res.text, /googleSearch/, `${name}: the answer names the tool`)
      t.match(res.text, /member/, `${name}: and the level`)
      t.equal(r.h.fake.calls(surface.call(ask)).length, before, `${name}: nothing reached the upstream`)
      await r.recorded(++n)
      t.match(r.entries[n - 1], { status: 403, surface: surface.name }, `${name}: recorded as a 403`)
      t.equal(r.entries[n - 1].usage, undefined, `${name}: charged no tokens`)
    }
    const plain = await r.ask(surface, { model: 'gemini-2.5-flash' })
    t.equal(plain.status, 200, `${surface.name}: a call without the tool goes on`)
    n++
    const operator = await r.ask(surface, { model: 'gemini-2.5-flash', search: true }, PASSWORD)
    t.equal(operator.status, 200, `${surface.name}: the operator password is never restricted`)
    t.ok(sentSearch(r.h.fake.last(surface.call({ model: 'gemini-2.5-flash' }))?.body), `${surface.name}: and its search went upstream`)
    n++
  }
})

t.test('every surface refuses the -search variant where it adds googleSearch and the level may not use it', async t => {
  const r = await rig(t, { resources: { byLevel: { member: { tools: [] } } } })
  for (const surface of SURFACES.filter(s => s.searchVariant)) {
    const ask = { model: 'gemini-2.5-flash-search' }
    const before = r.h.fake.calls(surface.call(ask)).length
    const res = await r.ask(surface, ask)
    t.equal(res.status, 403, `${surface.name}: ${res.text.slice(0, 200)}`)
    t.match(res.text, /googleSearch \(a -search model name adds it/, `${surface.name}: naming the tool the name adds`)
    t.equal(r.h.fake.calls(surface.call(ask)).length, before, `${surface.name}: nothing reached the upstream`)
  }
})

t.test('every surface sends the built-in tools a level without a tools list may use: all of them, as today\'s agents need', async t => {
  const r = await rig(t, { resources: { byLevel: { member: { rpm: 1000 } } } })
  for (const surface of SURFACES) {
    const ask = { model: 'gemini-2.5-flash', search: true }
    const res = await r.ask(surface, ask)
    t.equal(res.status, 200, `${surface.name}: ${res.text.slice(0, 200)}`)
    t.ok(sentSearch(r.h.fake.last(surface.call(ask))?.body), `${surface.name}: Google Search went upstream`)
  }
})
