// The Responses WebSocket transport (docs/responses.md, "WebSocket transport", which cites Codex's source for each
// shape): GET /v1/responses upgraded, `response.create` frames,
// each answered with the SSE stream's events as JSON text frames and governed like a POST (key, limits, usage).
import t from 'tap'
import type { Test } from 'tap'
import net from 'node:net'
import { randomBytes } from 'node:crypto'
import { startProxy } from './harness.ts'
import { geminiResponse, streamReply } from '../support/fake-upstream.ts'
import Hapi from '@hapi/hapi'
import { RateLimitedError, createFetchHandler, createProxy, hapiPlugin } from '../../lib/index.ts'
import type { KeyCaller, RateLimiter, UsageEntry, UsageLedger } from '../../lib/index.ts'
import { acceptKey } from '../../lib/http/websocket.ts'
import { mock } from 'node:test'
import type { ResponsesOptions, SocketRequest } from '../../lib/index.ts'
import { DEFAULT_SOCKET_LIMITS } from '../../lib/index.ts'

const KEY = 'ghk_' + 'W'.repeat(43)
const member: KeyCaller = { kind: 'key', userId: 'a'.repeat(24), keyId: 'b'.repeat(24), accessLevel: 'member', models: null }
const BETA = { 'OpenAI-Beta': 'responses_websockets=2026-02-06' }
const USAGE = { promptTokenCount: 12, candidatesTokenCount: 3, totalTokenCount: 15 }

interface Rig {
  url: string
  fake: Awaited<ReturnType<typeof startProxy>>['fake']
  entries: UsageEntry[]
  keys: Set<string>
  limits: { closed: boolean }
  /** Requests the limiter admitted. */
  admitted: number
  /** What the host was told (the node listener's SocketObserver). */
  told: string[]
  served: SocketRequest[]
}

async function rig (t: Test, maxBodyBytes?: number, responses?: ResponsesOptions): Promise<Rig> {
  const keys = new Set([KEY])
  const limits = { closed: false }
  const entries: UsageEntry[] = []
  const usage: UsageLedger = { record: e => entries.push(e), flush: async () => {}, close: async () => {} }
  const told: string[] = []
  const served: SocketRequest[] = []
  const r = { url: '', fake: undefined as unknown as Rig['fake'], entries, keys, limits, admitted: 0, told, served }
  const limiter: RateLimiter = {
    async admit () {
      if (limits.closed) throw new RateLimitedError('requests', 'Rate limit reached for requests per minute', 30, {})
      r.admitted++
      return { headers: {}, settle: async () => {} }
    },
  }
  const sockets = {
    handshake: ({ route, status }: { route: string, status: number }) => told.push(`handshake ${route} ${status}`),
    opened: ({ route }: { route: string }) => told.push(`opened ${route}`),
    closed: ({ route, code }: { route: string, code: number }) => told.push(`closed ${route} ${code}`),
    served: (request: SocketRequest) => { served.push(request); told.push(`served ${request.method} ${request.route} ${request.status}`) },
  }
  const h = await startProxy(t, { backendName: 'code-assist', keys: { resolveKey: async secret => keys.has(secret) ? member : undefined }, usage, limiter, maxBodyBytes, responses, listener: { sockets } })
  r.url = h.url
  r.fake = h.fake
  return r
}

/** A socket on the rig, with its frames as they come (JSON parsed) and its close code. */
interface Client { frames: any[], next: (n: number) => Promise<any[]>, send: (frame: unknown) => void, closed: Promise<number>, ws: WebSocket }

async function connect (t: Test, r: Rig, key = KEY): Promise<Client> {
  const ws = new WebSocket(`${r.url.replace('http', 'ws')}/v1/responses`, { headers: { authorization: `Bearer ${key}`, ...BETA } } as unknown as string[])
  t.teardown(() => ws.close())
  const frames: any[] = []
  const waiting: Array<{ n: number, resolve: () => void }> = []
  ws.addEventListener('message', e => {
    frames.push(JSON.parse(e.data as string))
    for (const w of waiting.filter(w => frames.length >= w.n)) { waiting.splice(waiting.indexOf(w), 1); w.resolve() }
  })
  const closed = new Promise<number>(resolve => ws.addEventListener('close', e => resolve(e.code)))
  await new Promise<void>((resolve, reject) => { ws.addEventListener('open', () => resolve()); ws.addEventListener('error', () => reject(new Error('no upgrade'))) })
  return {
    frames,
    ws,
    closed,
    send: frame => ws.send(JSON.stringify(frame)),
    // Resolves once `n` frames in all have come.
    next: async n => { if (frames.length < n) await new Promise<void>(resolve => waiting.push({ n, resolve })); return frames.slice(0, n) },
  }
}

/** The frames from `from` up to and with the first whose type is one of `ends` (a turn's end by default). */
async function turnFrames (c: Client, from: number, ends = ['response.completed', 'response.failed', 'error']): Promise<any[]> {
  for (let n = from + 1; ; n++) {
    const frames = await c.next(n)
    if (ends.includes(frames[n - 1].type)) return frames.slice(from)
  }
}

// Codex's create frame (ResponseCreateWsRequest, docs/responses.md "WebSocket transport"): the Responses body and a type.
const create = (input: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  type: 'response.create', model: 'gemini-2.5-flash', instructions: 'Be brief.', input, tools: [], tool_choice: 'auto', parallel_tool_calls: false, reasoning: null, store: false, stream: true, include: [], ...extra,
})
const userText = (text: string): Record<string, unknown> => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] })

t.test('a turn streams over the socket: the SSE events as one JSON text frame each, response.created to response.completed', async t => {
  const r = await rig(t)
  r.fake.reply('streamGenerateContent', streamReply([geminiResponse({ text: 'Hel' }), geminiResponse({ text: 'lo', finishReason: 'STOP', usage: USAGE })]))
  const c = await connect(t, r)
  c.send(create([userText('Hi')]))
  const frames = await turnFrames(c, 0)
  t.equal(frames[0].type, 'response.created')
  t.equal(frames.at(-1).type, 'response.completed')
  t.same(frames.filter(f => f.type === 'response.output_text.delta').map(f => f.delta), ['Hel', 'lo'])
  t.match(frames.at(-1).response, { status: 'completed', usage: { input_tokens: 12, output_tokens: 3 } })
  t.same(r.fake.last('streamGenerateContent')!.body.request.contents, [{ role: 'user', parts: [{ text: 'Hi' }] }])
})

t.test('two turns in one socket: the second continues the first by previous_response_id with only the new items (Codex\'s incremental create), each its own usage row', async t => {
  const r = await rig(t)
  r.fake.reply('streamGenerateContent',
    streamReply([geminiResponse({ text: 'One.', finishReason: 'STOP', usage: USAGE })]),
    streamReply([geminiResponse({ text: 'Two.', finishReason: 'STOP', usage: { promptTokenCount: 20, candidatesTokenCount: 2, totalTokenCount: 22 } })]))
  const c = await connect(t, r)
  c.send(create([userText('First')]))
  const first = await turnFrames(c, 0)
  const id = first.at(-1).response.id
  c.send(create([userText('Second')], { previous_response_id: id }))
  const second = await turnFrames(c, first.length)
  t.equal(second.at(-1).type, 'response.completed')
  t.not(second.at(-1).response.id, id, 'a response of its own')
  t.same(r.fake.last('streamGenerateContent')!.body.request.contents, [
    { role: 'user', parts: [{ text: 'First' }] },
    { role: 'model', parts: [{ text: 'One.' }] },
    { role: 'user', parts: [{ text: 'Second' }] },
  ], 'the first turn\'s input and output before the new item, though store was false')
  t.same(r.entries.map(e => [e.surface, e.model, e.status, e.usage?.inputTokens, e.usage?.outputTokens]), [
    ['responses', 'gemini-2.5-flash', 200, 12, 3],
    ['responses', 'gemini-2.5-flash', 200, 20, 2],
  ], 'usage recorded per response')
})

t.test('a wrong key is refused at the upgrade with a 401 in OpenAI\'s shape, before anything is upgraded', async t => {
  const r = await rig(t)
  const port = Number(new URL(r.url).port)
  const answer = await new Promise<string>((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => {
      s.write(`GET /v1/responses HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nAuthorization: Bearer ghk_wrong\r\nOpenAI-Beta: responses_websockets=2026-02-06\r\n\r\n`)
    })
    let text = ''
    s.on('data', d => { text += d.toString() })
    s.on('end', () => resolve(text))
    s.on('error', reject)
  })
  t.match(answer, /^HTTP\/1\.1 401 /)
  t.match(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)), { error: { type: 'authentication_error', code: 'invalid_api_key' } })
  t.same(r.fake.calls('streamGenerateContent'), [])
})

t.test('the handshake answers RFC 6455\'s Sec-WebSocket-Accept and declines extensions', async t => {
  t.equal(acceptKey('dGhlIHNhbXBsZSBub25jZQ=='), 's3pPLMBiTxaQ9kYGzzhZRbK+xOo=', 'RFC 6455 section 1.3\'s example')
  const r = await rig(t)
  const port = Number(new URL(r.url).port)
  const key = randomBytes(16).toString('base64')
  const head = await new Promise<string>((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => {
      s.write(`GET /v1/responses HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Extensions: permessage-deflate\r\nAuthorization: Bearer ${KEY}\r\n\r\n`)
    })
    s.once('data', d => { resolve(d.toString()); s.destroy() })
    s.on('error', reject)
  })
  t.match(head, /^HTTP\/1\.1 101 /)
  t.match(head, `Sec-WebSocket-Accept: ${acceptKey(key)}\r\n`)
  t.notMatch(head, /Sec-WebSocket-Extensions/i)
})

t.test('a frame past the route\'s body limit closes the socket with 1009, and nothing is sent upstream', async t => {
  const r = await rig(t, 4096)
  const c = await connect(t, r)
  c.send(create([userText('x'.repeat(8192))]))
  t.equal(await c.closed, 1009)
  t.same(r.fake.calls('streamGenerateContent'), [])
})

t.test('a closed limit ends that response with Codex\'s wrapped error event (status 429, rate_limit_exceeded) and the socket stays open', async t => {
  const r = await rig(t)
  const c = await connect(t, r)
  r.limits.closed = true
  c.send(create([userText('Hi')]))
  const [error] = await turnFrames(c, 0)
  t.match(error, { type: 'error', status: 429, error: { type: 'rate_limit_error', code: 'rate_limit_exceeded' } })
  t.match(error.headers, { 'retry-after': '30' })
  r.limits.closed = false
  r.fake.reply('streamGenerateContent', streamReply([geminiResponse({ text: 'ok', finishReason: 'STOP', usage: USAGE })]))
  c.send(create([userText('Again')]))
  const next = await turnFrames(c, 1)
  t.equal(next.at(-1).type, 'response.completed', 'the next create is served')
})

t.test('a key revoked mid-session: the next create gets the 401 error event, then the socket closes (1008)', async t => {
  const r = await rig(t)
  r.fake.reply('streamGenerateContent', streamReply([geminiResponse({ text: 'ok', finishReason: 'STOP', usage: USAGE })]))
  const c = await connect(t, r)
  c.send(create([userText('Hi')]))
  const first = await turnFrames(c, 0)
  r.keys.delete(KEY)
  c.send(create([userText('Again')]))
  const [error] = await turnFrames(c, first.length)
  t.match(error, { type: 'error', status: 401, error: { code: 'invalid_api_key' } })
  t.equal(await c.closed, 1008)
  t.equal(r.fake.calls('streamGenerateContent').length, 1)
})

t.test('one response at a time: a create while one runs is an error event, the running one completes', async t => {
  const r = await rig(t)
  r.fake.reply('streamGenerateContent', streamReply([geminiResponse({ text: 'a' }), geminiResponse({ text: 'b', finishReason: 'STOP', usage: USAGE })]))
  const c = await connect(t, r)
  c.send(create([userText('Hi')]))
  c.send(create([userText('Too soon')]))
  const frames = await turnFrames(c, 0, ['response.completed'])
  const errors = frames.filter(f => f.type === 'error')
  t.equal(errors.length, 1)
  t.match(errors[0], { status: 400, error: { type: 'invalid_request_error', message: /already in progress/ } })
  t.equal(frames.at(-1).type, 'response.completed')
  t.equal(r.fake.calls('streamGenerateContent').length, 1)
})

t.test('Codex\'s warm-up (generate: false) answers an empty completed response without a model call; the next create continues it', async t => {
  const r = await rig(t)
  r.fake.reply('streamGenerateContent', streamReply([geminiResponse({ text: 'Done.', finishReason: 'STOP', usage: USAGE })]))
  const c = await connect(t, r)
  c.send(create([userText('Warm')], { generate: false }))
  const warm = await turnFrames(c, 0)
  t.same(warm.map(f => f.type), ['response.created', 'response.completed'])
  t.same(warm[1].response.output, [])
  t.same(r.fake.calls('streamGenerateContent'), [], 'no model call')
  c.send(create([], { previous_response_id: warm[1].response.id }))
  const real = await turnFrames(c, 2)
  t.equal(real.at(-1).type, 'response.completed')
  t.same(r.fake.last('streamGenerateContent')!.body.request.contents, [{ role: 'user', parts: [{ text: 'Warm' }] }], 'the warm-up\'s input')
  t.same(r.entries.map(e => [e.surface, e.status, e.usage === undefined]), [['responses', 200, false]], 'only the turn has a usage row')
  t.equal(r.admitted, 1, 'only the turn counts against the requests per minute (docs/responses.md, "WebSocket transport")')
})

t.test('a warm-up with a body the POST would refuse is the POST\'s error event, and counts as a refused request', async t => {
  const r = await rig(t)
  const c = await connect(t, r)
  c.send(create([userText('Warm')], { generate: false, model: 42 }))
  const [error] = await turnFrames(c, 0)
  t.match(error, { type: 'error', status: 400, error: { type: 'invalid_request_error' } })
  t.same(r.fake.calls('streamGenerateContent'), [])
  t.same(r.entries.map(e => [e.surface, e.status]), [['responses', 400]])
})

/** A raw client: the handshake by hand, then masked frames as given (RFC 6455 5.2). */
async function rawSocket (t: Test, r: Rig): Promise<{ socket: net.Socket, received: () => Promise<Buffer> }> {
  const port = Number(new URL(r.url).port)
  const socket = net.connect(port, '127.0.0.1')
  t.teardown(() => socket.destroy())
  let data = Buffer.alloc(0)
  let ended = false
  const waiting: Array<() => void> = []
  socket.on('data', d => { data = Buffer.concat([data, d]); waiting.splice(0).forEach(w => w()) })
  socket.on('close', () => { ended = true; waiting.splice(0).forEach(w => w()) })
  await new Promise<void>(resolve => socket.once('connect', resolve))
  socket.write(`GET /v1/responses HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nAuthorization: Bearer ${KEY}\r\n\r\n`)
  while (!data.includes('\r\n\r\n')) await new Promise<void>(resolve => waiting.push(resolve))
  data = data.subarray(data.indexOf('\r\n\r\n') + 4)
  return {
    socket,
    // Everything the server sent after the handshake, once it closed the connection.
    received: async () => { while (!ended) await new Promise<void>(resolve => waiting.push(resolve)); return data },
  }
}

function clientFrame (opcode: number, payload: Buffer, { fin = true, masked = true } = {}): Buffer {
  const mask = randomBytes(4)
  const head = payload.length < 126 ? Buffer.from([(fin ? 0x80 : 0) | opcode, (masked ? 0x80 : 0) | payload.length]) : Buffer.from([(fin ? 0x80 : 0) | opcode, (masked ? 0x80 : 0) | 126, payload.length >> 8, payload.length & 255])
  const body = Buffer.from(payload)
  if (masked) for (let i = 0; i < body.length; i++) body[i] ^= mask[i & 3]
  return Buffer.concat([head, masked ? mask : Buffer.alloc(0), body])
}

/** The server's frames in `data`: opcode and payload (servers never mask). */
function serverFrames (data: Buffer): Array<{ opcode: number, payload: Buffer }> {
  const frames: Array<{ opcode: number, payload: Buffer }> = []
  let at = 0
  while (at < data.length) {
    let length = data[at + 1] & 0x7f
    let offset = at + 2
    if (length === 126) { length = data.readUInt16BE(at + 2); offset = at + 4 } else if (length === 127) { length = Number(data.readBigUInt64BE(at + 2)); offset = at + 10 }
    frames.push({ opcode: data[at] & 0x0f, payload: data.subarray(offset, offset + length) })
    at = offset + length
  }
  return frames
}

t.test('the codec: a ping is answered with its pong, a fragmented message is joined, a close is answered with 1000', async t => {
  const r = await rig(t)
  const { socket, received } = await rawSocket(t, r)
  const text = Buffer.from(JSON.stringify({ type: 'nonsense' }))
  socket.write(Buffer.concat([
    clientFrame(9, Buffer.from('hi')),
    clientFrame(1, text.subarray(0, 5), { fin: false }),
    // A control frame may come between fragments (RFC 6455 5.4).
    clientFrame(9, Buffer.from('mid')),
    clientFrame(0, text.subarray(5)),
  ]))
  await new Promise<void>(resolve => socket.once('data', () => resolve()))
  socket.write(clientFrame(8, Buffer.from([0x03, 0xe8])))
  const frames = serverFrames(await received())
  t.same(frames.filter(f => f.opcode === 10).map(f => f.payload.toString()), ['hi', 'mid'])
  const [error] = frames.filter(f => f.opcode === 1).map(f => JSON.parse(f.payload.toString()))
  t.match(error, { type: 'error', status: 400, error: { message: /response\.create/ } }, 'the joined message was read')
  t.equal(frames.at(-1)!.opcode, 8)
  t.equal(frames.at(-1)!.payload.readUInt16BE(0), 1000)
})

t.test('the codec: an unmasked client frame closes with 1002, a binary message with 1003, bad UTF-8 with 1007', async t => {
  const r = await rig(t)
  for (const [frame, code] of [
    [clientFrame(1, Buffer.from('{}'), { masked: false }), 1002],
    [clientFrame(2, Buffer.from([1, 2, 3])), 1003],
    [clientFrame(1, Buffer.from([0xc3, 0x28])), 1007],
  ] as const) {
    const { socket, received } = await rawSocket(t, r)
    socket.write(frame)
    const frames = serverFrames(await received())
    t.equal(frames.at(-1)!.opcode, 8)
    t.equal(frames.at(-1)!.payload.readUInt16BE(0), code)
  }
})

t.test('the Hapi host serves the same socket (server.listener\'s upgrade), a wrong key refused with 401 there too', async t => {
  const r = await rig(t)
  const proxy = createProxy({ password: 'hapi-ws-password', keys: { resolveKey: async secret => secret === KEY ? member : undefined }, upstream: { backend: 'gemini-api', apiKey: 'test-api-key', geminiApiEndpoint: r.fake.url, maxRetries: 0 } })
  const server = Hapi.server({ host: '127.0.0.1', port: 0 })
  await server.register({ plugin: hapiPlugin, options: { tables: [proxy.routeTable] } })
  await server.start()
  t.teardown(async () => { await server.stop({ timeout: 100 }); await proxy.close() })
  const hapiRig = { ...r, url: `http://127.0.0.1:${server.info.port}` }
  r.fake.reply('streamGenerateContent', streamReply([geminiResponse({ text: 'Hapi.', finishReason: 'STOP', usage: USAGE })]))
  const c = await connect(t, hapiRig)
  c.send(create([userText('Hi')]))
  const frames = await turnFrames(c, 0)
  t.equal(frames.at(-1).type, 'response.completed')
  t.same(frames.filter(f => f.type === 'response.output_text.delta').map(f => f.delta), ['Hapi.'])
  await t.rejects(connect(t, hapiRig, 'ghk_wrong'), /no upgrade/)
})

t.test('each response on a socket is told to the host as a POST /v1/responses request, with the socket opened and closed (the request log\'s and metrics\' source)', async t => {
  const r = await rig(t)
  r.fake.reply('streamGenerateContent', streamReply([geminiResponse({ text: 'ok', finishReason: 'STOP', usage: USAGE })]))
  const c = await connect(t, r)
  c.send(create([userText('Hi')]))
  await turnFrames(c, 0)
  r.limits.closed = true
  c.send(create([userText('Again')]))
  await c.next(c.frames.length + 1)
  await new Promise<void>(resolve => setImmediate(resolve))
  c.ws.close(1000)
  await c.closed
  while (!r.told.some(line => line.startsWith('closed'))) await new Promise<void>(resolve => setImmediate(resolve))
  t.same(r.told, ['handshake /v1/responses 101', 'opened /v1/responses', 'served POST /v1/responses 200', 'served POST /v1/responses 429', 'closed /v1/responses 1000'])
  t.match(r.served[0], { aborted: false, remoteAddress: '127.0.0.1' })
  t.ok(r.served[0].seconds >= 0 && r.served[0].startedAt > 0)
})

t.test('socket limits are checked at construction, each error naming its option; the defaults are documented ones', async t => {
  t.same(DEFAULT_SOCKET_LIMITS, { idleTimeoutSeconds: 900, maxLifetimeSeconds: 3600, maxSocketsPerKey: 32 }, 'docs/responses.md, "WebSocket transport"')
  const build = (websocket: unknown): unknown => createProxy({ password: 'socket-limit-password', upstream: { backend: 'gemini-api', apiKey: 'k' }, responses: { websocket } as ResponsesOptions })
  t.throws(() => build({ idleTimeoutSeconds: 0 }), { option: 'responses.websocket.idleTimeoutSeconds', message: /responses\.websocket\.idleTimeoutSeconds must be a positive integer \(got 0\)/ })
  t.throws(() => build({ maxLifetimeSeconds: 1.5 }), { option: 'responses.websocket.maxLifetimeSeconds', message: /got 1\.5/ })
  t.throws(() => build({ maxSocketsPerKey: '3' }), { option: 'responses.websocket.maxSocketsPerKey', message: /got 3/ })
  t.throws(() => build({ idleSeconds: 3 }), { option: 'responses.websocket.idleSeconds', message: /is not an option \(known: idleTimeoutSeconds, maxLifetimeSeconds, maxSocketsPerKey\)/ })
  t.throws(() => build([]), { option: 'responses.websocket', message: /must be an object/ })
})

/** Lets the socket's frames and the server's answers through while the fake clock stands still. */
async function settle (): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise<void>(resolve => setImmediate(resolve))
}

t.test('a socket idle past idleTimeoutSeconds with no response running is closed (1000); a response resets the wait (fake clock)', async t => {
  const r = await rig(t, undefined, { websocket: { idleTimeoutSeconds: 60 } })
  mock.timers.enable({ apis: ['setTimeout'] })
  t.teardown(() => mock.timers.reset())
  r.fake.reply('streamGenerateContent', streamReply([geminiResponse({ text: 'ok', finishReason: 'STOP', usage: USAGE })]))
  const c = await connect(t, r)
  let code: number | undefined
  void c.closed.then(c => { code = c })
  mock.timers.tick(59_000)
  c.send(create([userText('Hi')]))
  await turnFrames(c, 0)
  await settle()
  mock.timers.tick(59_000)
  await settle()
  t.equal(code, undefined, 'open 118 s after it opened: the response reset the wait')
  mock.timers.tick(1000)
  t.equal(await c.closed, 1000)
})

t.test('a socket past maxLifetimeSeconds closes (1000) once its running response has ended, not during it (fake clock)', async t => {
  const r = await rig(t, undefined, { websocket: { maxLifetimeSeconds: 100, idleTimeoutSeconds: 1000 } })
  mock.timers.enable({ apis: ['setTimeout'] })
  t.teardown(() => mock.timers.reset())
  // The fake's pause between chunks runs on the fake clock too: the second chunk comes 200 s after the first.
  r.fake.reply('streamGenerateContent', streamReply([geminiResponse({ text: 'a' }), geminiResponse({ text: 'b', finishReason: 'STOP', usage: USAGE })], { chunkDelayMs: 200_000 }))
  const c = await connect(t, r)
  let code: number | undefined
  void c.closed.then(c => { code = c })
  c.send(create([userText('Hi')]))
  await turnFrames(c, 0, ['response.output_text.delta'])
  mock.timers.tick(100_000)
  await settle()
  t.equal(code, undefined, 'the running response goes on past the lifetime')
  mock.timers.tick(100_000)
  const frames = await turnFrames(c, 0)
  t.equal(frames.at(-1).type, 'response.completed')
  t.equal(await c.closed, 1000)
})

t.test('a key holds at most maxSocketsPerKey open sockets: the next upgrade is a 426 (Codex then POSTs) before anything is upgraded, and a closed one frees its place', async t => {
  const r = await rig(t, undefined, { websocket: { maxSocketsPerKey: 2 } })
  const a = await connect(t, r)
  await connect(t, r)
  const port = Number(new URL(r.url).port)
  const answer = await new Promise<string>((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => {
      s.write(`GET /v1/responses HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nAuthorization: Bearer ${KEY}\r\n\r\n`)
    })
    let text = ''
    s.on('data', d => { text += d.toString() })
    s.on('end', () => resolve(text))
    s.on('error', reject)
  })
  t.match(answer, /^HTTP\/1\.1 426 /)
  t.equal(r.told.at(-1), 'handshake /v1/responses 426', 'the host is told of the refused handshake')
  t.match(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)), { error: { type: 'invalid_request_error', code: 'too_many_sockets', message: /holds 2 open WebSockets/ } })
  a.ws.close(1000)
  await a.closed
  while (!r.told.some(line => line.startsWith('closed'))) await new Promise<void>(resolve => setImmediate(resolve))
  const again = await connect(t, r)
  t.equal(again.ws.readyState, WebSocket.OPEN, 'the closed socket\'s place is free')
})

t.test('the fetch host takes no upgrade: a WebSocket handshake on GET /v1/responses is a 426 (Codex then POSTs) in OpenAI\'s shape naming the hosts that do', async t => {
  const proxy = createProxy({ password: 'fetch-ws-password', upstream: { backend: 'gemini-api', apiKey: 'k' } })
  t.teardown(() => proxy.close())
  const handle = createFetchHandler(proxy.routeTable)
  const res = await handle(new Request('http://127.0.0.1/v1/responses', { headers: { authorization: 'Bearer fetch-ws-password', upgrade: 'websocket', connection: 'Upgrade', 'sec-websocket-version': '13', 'sec-websocket-key': randomBytes(16).toString('base64') } }))
  t.equal(res.status, 426)
  t.match(await res.json(), { error: { type: 'invalid_request_error', code: 'websocket_unavailable', message: /createFetchHandler\) takes no WebSocket upgrade.*createNodeListener or hapiPlugin/ } })
})
