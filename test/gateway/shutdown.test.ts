import t from 'tap'
import http from 'node:http'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { startGateway, spawnGateway, testStore, ROOT } from '../support/gateway.ts'
import { startFakeUpstream, streamReply, geminiResponse } from '../support/fake-upstream.ts'
import { authClient } from '../support/auth-client.ts'
import type { Route, HandlerResponse } from '../../lib/index.ts'

const ADMIN = { AUTH_ADMIN_PASSWORD: 'admin-password' }
const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))

/** A test-only route streaming `count` chunks, `gapMs` apart (count Infinity: until the client leaves). */
function slowStream (count: number, gapMs: number): Route {
  return {
    method: 'GET',
    path: '/test/slow-stream',
    maxBytes: 1024,
    errorResponse: (): HandlerResponse => ({ status: 500, body: { error: 'internal' } }),
    handler: async () => ({
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      body: (async function * () {
        for (let i = 0; i < count; i++) {
          yield `data: ${i}\n\n`
          await sleep(gapMs)
        }
        yield 'data: end\n\n'
      })(),
    }),
  }
}

/** Reads a streamed response; resolves with what arrived and whether it ended cleanly. */
function readStream (url: string, onFirstChunk: () => void): Promise<{ text: string, complete: boolean }> {
  return new Promise(resolve => {
    let text = ''
    let first = true
    const req = http.get(url, res => {
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        text += chunk
        if (first) { first = false; onFirstChunk() }
      })
      res.on('end', () => resolve({ text, complete: res.complete }))
      res.on('error', () => resolve({ text, complete: false }))
      res.on('aborted', () => resolve({ text, complete: false }))
    })
    req.on('error', () => resolve({ text, complete: false }))
  })
}

async function refusesConnections (url: string): Promise<boolean> {
  try {
    await fetch(url + '/health', { signal: AbortSignal.timeout(1000) })
    return false
  } catch (err) {
    return /ECONNREFUSED/.test(String((err as Error & { cause?: unknown }).cause ?? err))
  }
}

t.test('stop lets a stream in flight finish, refuses new connections meanwhile, then flushes and closes the store', async t => {
  const store = await testStore()
  const gw = await startGateway(ADMIN, { store, extraRoutes: [{ scope: '', routes: [slowStream(5, 150)], errorResponse: () => ({ status: 500 }) }] })
  let stopped: Promise<void> | undefined
  let streamEndedAt = 0
  const streamed = readStream(gw.url + '/test/slow-stream', () => { stopped = gw.close() }).then(r => { streamEndedAt = Date.now(); return r })
  while (stopped === undefined) await sleep(5)
  // The listener closes a moment after stop begins: try until it refuses, for as long as the stream is in flight.
  let refused = await refusesConnections(gw.url)
  while (!refused && streamEndedAt === 0) {
    await sleep(5)
    refused = await refusesConnections(gw.url)
  }
  t.ok(refused && streamEndedAt === 0, 'new connections are refused once stopping, while the stream is still in flight')
  const { text, complete } = await streamed
  t.ok(complete, 'the stream ended cleanly')
  t.equal(text, 'data: 0\n\ndata: 1\n\ndata: 2\n\ndata: 3\n\ndata: 4\n\ndata: end\n\n', 'every chunk arrived')
  await stopped
  t.ok(Date.now() >= streamEndedAt, 'stop resolved after the stream ended')
  t.same(store.calls, ['flush', 'close'], 'the store was flushed, then closed')
})

t.test('a stream still open at the shutdown deadline is cut, and the store is still closed', async t => {
  const store = await testStore()
  const gw = await startGateway({ ...ADMIN, SHUTDOWN_TIMEOUT_SECONDS: '0.5' }, { store, extraRoutes: [{ scope: '', routes: [slowStream(Infinity, 50)], errorResponse: () => ({ status: 500 }) }] })
  let stopped: Promise<void> | undefined
  const streamed = readStream(gw.url + '/test/slow-stream', () => { stopped = gw.close() })
  while (stopped === undefined) await sleep(5)
  const began = Date.now()
  const { complete } = await streamed
  await stopped
  const took = Date.now() - began
  t.notOk(complete, 'the endless stream was cut')
  // The upper bound only catches a stop that never comes: a loaded machine takes seconds to tear down.
  t.ok(took >= 400 && took < 10_000, `stop took about the deadline (${took} ms)`)
  t.same(store.calls, ['flush', 'close'])
})

t.test('npm start on SIGTERM: a proxied stream in flight completes, the data is saved, the process exits 0', async t => {
  const dir = await mkdtemp(path.join(tmpdir(), 'gatehouse-shutdown-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'auth-db.json')
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const gw = await spawnGateway({
    ...ADMIN,
    LOG_LEVEL: 'info',
    AUTH_DATA_FILE: file,
    SHUTDOWN_TIMEOUT_SECONDS: '10',
    GEMINI_AUTH_PASSWORD: 'gateway-proxy-password',
    GEMINI_API_KEY: 'upstream-key',
    GEMINI_API_ENDPOINT: fake.url,
  })
  t.teardown(() => gw.stop('SIGKILL'))
  t.equal((await authClient(gw.url + '/v1/api').signup('saved_at_shutdown', 'velvet-harbor-93')).status, 201)

  const words = ['one', 'two', 'three', 'four', 'five']
  fake.reply('streamGenerateContent', streamReply(words.map((w, i) => geminiResponse({ text: w, finishReason: i === words.length - 1 ? 'STOP' : undefined })), { chunkDelayMs: 250 }))
  const res = await fetch(gw.url + '/v1/chat/completions', {
    method: 'POST',
    headers: { authorization: 'Bearer gateway-proxy-password', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gemini-2.5-pro', stream: true, messages: [{ role: 'user', content: 'count' }] }),
  })
  t.equal(res.status, 200)
  const reader = res.body!.getReader()
  let text = new TextDecoder().decode((await reader.read()).value)
  const exited = gw.stop('SIGTERM')

  const deadline = Date.now() + 10_000
  let readyAfterSignal: number | 'refused' | undefined
  while (Date.now() < deadline) {
    try {
      readyAfterSignal = (await fetch(gw.url + '/readyz', { signal: AbortSignal.timeout(500) })).status
      if (readyAfterSignal === 503) break
    } catch {
      readyAfterSignal = 'refused'
      break
    }
    await sleep(20)
  }
  t.ok(readyAfterSignal === 503 || readyAfterSignal === 'refused', `after SIGTERM the gateway is not ready (${readyAfterSignal})`)

  for (let r = await reader.read(); !r.done; r = await reader.read()) text += new TextDecoder().decode(r.value)
  for (const w of words) t.match(text, `"content":"${w}"`, `chunk ${w} arrived`)
  t.match(text, /data: \[DONE\]\s*$/, 'the stream ended with [DONE]')

  const { code, signal } = await exited
  t.equal(code, 0, 'exit code 0')
  t.equal(signal, null)
  t.match(gw.output(), /shutting down/)
  t.match(gw.output(), /"msg":"stopped"/)
  t.match(await readFile(file, 'utf8') + await readFile(`${file}.journal`, 'utf8'), /saved_at_shutdown/, 'the store file (or its journal) holds the sign-up')
})

t.test('npm start on SIGINT stops cleanly too', async t => {
  const gw = await spawnGateway({ ...ADMIN, LOG_LEVEL: 'warn' })
  t.teardown(() => gw.stop('SIGKILL'))
  await (await fetch(gw.url + '/health')).text()
  t.same(await gw.stop('SIGINT'), { code: 0, signal: null })
})

t.test('npm start on an uncaught exception: it is logged as JSON after every line batched before it, and the process exits 1', async t => {
  const gw = await spawnGateway({ LOG_LEVEL: 'info', AUTH_ADMIN_PASSWORD: 'admin-password' }, { nodeArgs: ['--import', path.join(ROOT, 'test/support/crash-on-sigusr2.ts')] })
  t.teardown(async () => { await gw.stop('SIGKILL') })
  const res = await fetch(`${gw.url}/health`)
  t.equal(res.status, 200)
  await res.arrayBuffer()
  gw.child.kill('SIGUSR2')
  const { code } = await gw.exited
  t.equal(code, 1, 'exit code 1')
  const logs = gw.logs()
  const request = logs.findIndex(l => l.msg === 'request' && l.route === '/health')
  const crash = logs.findIndex(l => l.msg === 'uncaught exception: exiting')
  t.ok(request >= 0, 'the request line, still batched when the exception came, was written')
  t.ok(crash > request, 'the crash line comes after it')
  t.match(logs[crash], { level: 'fatal', err: { type: 'Error', message: 'boom: a bug nobody caught' } })
})

t.test('stop closes Responses WebSockets between turns: an idle one at once with 1001, one with a turn running once the turn has completed', async t => {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  fake.apiKey = 'upstream-key'
  const gw = await startGateway({ ...ADMIN, GEMINI_AUTH_PASSWORD: 'gateway-proxy-password', GEMINI_API_KEY: 'upstream-key', GEMINI_API_ENDPOINT: fake.url })
  const open = async (): Promise<{ ws: WebSocket, frames: string[], closed: Promise<number> }> => {
    const ws = new WebSocket(`${gw.url.replace('http', 'ws')}/v1/responses`, { headers: { authorization: 'Bearer gateway-proxy-password' } } as unknown as string[])
    const frames: string[] = []
    ws.addEventListener('message', e => frames.push(JSON.parse(e.data as string).type))
    const closed = new Promise<number>(resolve => ws.addEventListener('close', e => resolve(e.code)))
    await new Promise<void>(resolve => ws.addEventListener('open', () => resolve()))
    return { ws, frames, closed }
  }
  const idle = await open()
  const busy = await open()
  fake.reply('streamGenerateContent', streamReply([geminiResponse({ text: 'a' }), geminiResponse({ text: 'b' }), geminiResponse({ text: 'c', finishReason: 'STOP' })], { chunkDelayMs: 200 }))
  busy.ws.send(JSON.stringify({ type: 'response.create', model: 'gemini-3.8-flash', input: 'hi', store: false }))
  while (!busy.frames.includes('response.output_text.delta')) await sleep(5)
  const stopped = gw.close()
  t.equal(await idle.closed, 1001, 'the idle socket: going away')
  t.equal(await busy.closed, 1001)
  t.equal(busy.frames.at(-1), 'response.completed', 'the running turn completed before its socket closed')
  await stopped
})
