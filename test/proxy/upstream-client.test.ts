import t from 'tap'
import type { Test } from 'tap'
import { createServer } from 'node:net'
import type { Backend, GeminiResponse } from '../../lib/index.ts'
import { createCodeAssistBackend } from '../../lib/proxy/upstream/code-assist-backend.ts'
import { eventBatches } from '../../lib/proxy/upstream/backend.ts'
import type { CodeAssistBackendOptions } from '../../lib/proxy/upstream/code-assist-backend.ts'
import { errorReply, geminiResponse, googleError, startFakeUpstream, streamReply } from '../support/fake-upstream.ts'
import type { FakeReply, FakeUpstream } from '../support/fake-upstream.ts'
import { credentialsObject } from '../support/credentials-files.ts'

const CALL = { model: 'gemini-2.5-flash', request: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] } }
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

interface LogLine { level: string, obj: unknown, msg?: string }

async function setup (t: Test, options: Partial<CodeAssistBackendOptions> = {}): Promise<{ fake: FakeUpstream, backend: Backend, logs: LogLine[], observed: Array<[string, number, number]> }> {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const logs: LogLine[] = []
  const log = (level: string) => (obj: unknown, msg?: string) => { logs.push({ level, obj, msg }) }
  const observed: Array<[string, number, number]> = []
  const backend = createCodeAssistBackend({
    codeAssistEndpoint: fake.url,
    credentials: credentialsObject('authorized-user', { tokenUri: fake.tokenUri, projectId: 'p' }),
    retryBaseDelayMs: 1,
    logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
    observer: { upstreamCall: (model, status, seconds) => { observed.push([model, status, seconds]) } },
    ...options,
  })
  t.teardown(() => backend.close())
  return { fake, backend, logs, observed }
}

async function collect (events: AsyncIterable<GeminiResponse>): Promise<GeminiResponse[]> {
  const out: GeminiResponse[] = []
  for await (const e of events) out.push(e)
  return out
}

const texts = (events: GeminiResponse[]): string[] => events.map(e => e.candidates?.[0]?.content?.parts?.map((p: { text?: string }) => p.text ?? '').join('') ?? '')

t.test('every call carries the gemini-cli User-Agent and a fresh user_prompt_id', async t => {
  const { fake, backend } = await setup(t, { userAgentVersion: '9.8.7' })
  await backend.generate(CALL)
  await collect(await backend.stream({ ...CALL, model: 'gemini-2.5-pro' }))
  const [gen, stream] = [fake.last('generateContent'), fake.last('streamGenerateContent')]
  t.match(gen?.headers['user-agent'], /^GeminiCLI\/9\.8\.7\/gemini-2\.5-flash \((linux|darwin|win32); [a-z0-9]+; gatehouse\)$/)
  t.match(stream?.headers['user-agent'], /^GeminiCLI\/9\.8\.7\/gemini-2\.5-pro \(/)
  t.match(gen?.body.user_prompt_id, UUID)
  t.match(stream?.body.user_prompt_id, UUID)
  t.not(gen?.body.user_prompt_id, stream?.body.user_prompt_id)
  t.equal(gen?.headers['content-type'], 'application/json')
  t.equal(stream?.query.alt, 'sse')
})

t.test('a 429 is never retried on the same credential: it fails at once with the upstream\'s Retry-After', async t => {
  const { fake, backend } = await setup(t)
  fake.reply('generateContent', errorReply(429, { retryDelay: '0.3s', reason: 'RATE_LIMIT_EXCEEDED' }))
  const err = await backend.generate(CALL).catch(e => e)
  t.equal(err.code, 'UPSTREAM_RATE_LIMITED')
  t.equal(err.retryAfter, 1)
  t.equal(fake.calls('generateContent').length, 1)
})

t.test('a 429 asking for a longer wait than the cap fails at once with Retry-After', async t => {
  const { fake, backend } = await setup(t, { maxRetryDelayMs: 1000 })
  fake.reply('generateContent', errorReply(429, { retryDelay: '34.07s', message: 'You have exhausted your capacity on this model. Your quota will reset after 34s.' }))
  const err = await backend.generate(CALL).catch(e => e)
  t.equal(err.code, 'UPSTREAM_RATE_LIMITED')
  t.equal(err.status, 429)
  t.equal(err.retryAfter, 35)
  t.match(err.message, /exhausted your capacity/)
  t.equal(fake.calls('generateContent').length, 1)
})

t.test('a spent daily quota (QUOTA_EXHAUSTED) is not retried', async t => {
  const { fake, backend } = await setup(t)
  fake.reply('generateContent', errorReply(429, { reason: 'QUOTA_EXHAUSTED', retryDelay: '1s' }))
  const err = await backend.generate(CALL).catch(e => e)
  t.equal(err.code, 'UPSTREAM_RATE_LIMITED')
  t.equal(fake.calls('generateContent').length, 1)
})

t.test('a 5xx answer to a unary call is retried once, with jitter', async t => {
  const { fake, backend } = await setup(t)
  fake.reply('generateContent', errorReply(500), errorReply(500), errorReply(500))
  const err = await backend.generate(CALL).catch(e => e)
  t.equal(err.code, 'UPSTREAM_ERROR')
  t.equal(err.status, 502)
  t.equal(err.upstreamStatus, 500)
  t.equal(fake.calls('generateContent').length, 2, 'one call and one retry')

  fake.reset()
  fake.reply('generateContent', { status: 499 })
  const ok = await backend.generate(CALL)
  t.equal(ok.candidates?.length, 1, 'succeeds when the retry does')
  t.equal(fake.calls('generateContent').length, 2)

  fake.reply('countTokens', errorReply(503), errorReply(503), errorReply(503))
  const unavailable = await backend.countTokens(CALL).catch(e => e)
  t.equal(unavailable.code, 'UPSTREAM_UNAVAILABLE')
  t.equal(unavailable.status, 503)
})

t.test('client errors are not retried and keep the upstream error body', async t => {
  const { fake, backend } = await setup(t)
  const body = googleError(400, 'Invalid JSON payload received. Unknown name "foo"')
  fake.reply('generateContent', { status: 400, body })
  const err = await backend.generate(CALL).catch(e => e)
  t.equal(err.code, 'UPSTREAM_BAD_REQUEST')
  t.equal(err.message, 'Invalid JSON payload received. Unknown name "foo"')
  t.same(err.upstreamBody, body)
  t.equal(fake.calls('generateContent').length, 1)
})

t.test('a 403 message includes the help or validation link', async t => {
  const { fake, backend } = await setup(t)
  fake.reply('generateContent', errorReply(403, { message: 'Verify your account to continue.', reason: 'VALIDATION_REQUIRED', helpUrl: 'https://accounts.example/verify', helpDescription: 'Verify your account' }))
  const err = await backend.generate(CALL).catch(e => e)
  t.equal(err.code, 'UPSTREAM_PERMISSION_DENIED')
  t.equal(err.status, 403)
  t.equal(err.message, 'Verify your account to continue. (Verify your account: https://accounts.example/verify)')
})

t.test('a 404 says the model may not be enabled', async t => {
  const { fake, backend } = await setup(t)
  fake.reply('generateContent', errorReply(404, { message: 'Requested entity was not found.' }))
  const err = await backend.generate(CALL).catch(e => e)
  t.equal(err.code, 'UPSTREAM_NOT_FOUND')
  t.match(err.message, /^Requested entity was not found\. .*preview access/)
})

t.test('a stream is never retried once the upstream answered', async t => {
  const { fake, backend } = await setup(t)
  fake.reply('streamGenerateContent', errorReply(503))
  const err = await backend.stream(CALL).catch(e => e)
  t.equal(err.code, 'UPSTREAM_UNAVAILABLE')
  t.equal(fake.calls('streamGenerateContent').length, 1)

  fake.reply('streamGenerateContent', streamReply([geminiResponse({ text: 'one' }), geminiResponse({ text: 'two' }), geminiResponse({ text: 'three' })], { dropAfter: 1 }))
  const seen: string[] = []
  const midway = await (async () => {
    for await (const e of await backend.stream(CALL)) seen.push(texts([e])[0])
  })().catch(e => e)
  t.same(seen, ['one'])
  t.equal(midway.code, 'UPSTREAM_ERROR', 'a dropped connection mid-stream is an upstream error')
  t.equal(midway.status, 502)
  t.equal(fake.calls('streamGenerateContent').length, 2, 'not retried')
})

t.test('array-shaped stream errors are unwrapped to their first element', async t => {
  const { fake, backend } = await setup(t)
  fake.reply('streamGenerateContent', errorReply(429, { array: true, message: 'Resource has been exhausted (e.g. check quota).', retryDelay: '7s' }))
  const err = await backend.stream(CALL).catch(e => e)
  t.equal(err.code, 'UPSTREAM_RATE_LIMITED')
  t.equal(err.message, 'Resource has been exhausted (e.g. check quota).')
  t.equal(err.retryAfter, 7)
  t.same(err.upstreamBody, googleError(429, 'Resource has been exhausted (e.g. check quota).', { retryDelay: '7s' }))
})

t.test('an error event inside a stream ends the iteration with that error', async t => {
  const { fake, backend } = await setup(t)
  fake.reply('streamGenerateContent', { sse: `data: ${JSON.stringify({ response: geminiResponse({ text: 'a' }) })}\n\ndata: ${JSON.stringify(googleError(500, 'Internal error encountered.'))}\n\n` })
  const seen: GeminiResponse[] = []
  const err = await (async () => { for await (const e of await backend.stream(CALL)) seen.push(e) })().catch(e => e)
  t.equal(seen.length, 1)
  t.equal(err.code, 'UPSTREAM_ERROR')
  t.equal(err.message, 'Internal error encountered.')
})

t.test('multi-line, CRLF and commented SSE events arrive intact', async t => {
  const { fake, backend } = await setup(t)
  const chunks = [geminiResponse({ thought: 'thinking…' }), geminiResponse({ text: 'line1\nline2' }), geminiResponse({ functionCalls: [{ name: 'f', args: { a: 1 } }], finishReason: 'STOP', usage: true })]
  fake.reply('streamGenerateContent', streamReply(chunks, { multiLine: true, crlf: true, comments: true }))
  const events = await collect(await backend.stream(CALL))
  t.same(events.map(({ responseId, ...rest }) => rest), chunks)
  t.ok(events.every(e => typeof e.responseId === 'string'), 'responseId from traceId')
})

t.test('an upstream stream answered 200 with garbage never ends like a whole answer: what is not SSE, not JSON, or no event at all is an upstream error', async t => {
  const { fake, backend, logs } = await setup(t)
  const good = `data: ${JSON.stringify({ response: geminiResponse({ text: 'a' }) })}\n\n`
  const cases: Array<[string, FakeReply, number, RegExp]> = [
    ['an HTML page', { text: '<!DOCTYPE html>\n<html><body><h1>502 Bad Gateway</h1></body></html>\n', headers: { 'content-type': 'text/html' } }, 0, /not server-sent events/],
    ['an HTML page without a line end', { text: '<html>oops</html>' }, 0, /not server-sent events/],
    ['a JSON document instead of SSE', { text: JSON.stringify([{ response: geminiResponse({ text: 'a' }) }]), headers: { 'content-type': 'application/json' } }, 0, /not server-sent events/],
    ['an event that is not JSON, after a good one', { sse: `${good}data: {"response":{"candidates":[]},\n\n${good}` }, 1, /not JSON/],
    ['HTML after a good event', { sse: `${good}<html>proxy error</html>\n\n` }, 1, /not server-sent events/],
    ['an empty stream', { sse: '' }, 0, /ended without any event/],
    ['only comments', { sse: ': keepalive\n\n: keepalive\n\n' }, 0, /ended without any event/],
  ]
  for (const [name, reply, before, message] of cases) {
    fake.reply('streamGenerateContent', reply)
    const seen: GeminiResponse[] = []
    const err = await (async () => { for await (const e of await backend.stream(CALL)) seen.push(e) })().catch(e => e)
    t.equal(seen.length, before, `${name}: the events before it arrive`)
    t.match(err, { code: 'UPSTREAM_ERROR', status: 502, message }, name)
  }
  t.ok(logs.some(l => l.level === 'warn' && /Malformed JSON chunk/.test(l.msg ?? '')), 'a malformed chunk is logged')
  t.ok(logs.some(l => l.level === 'warn' && /not server-sent events/.test(l.msg ?? '')), 'so is a stream that is not SSE')
})

t.test('aborting the call closes the upstream connection', async t => {
  const { fake, backend } = await setup(t)
  fake.reply('generateContent', { stall: 'headers' })
  const before = new AbortController()
  const pending = backend.generate({ ...CALL, signal: before.signal }).catch(e => e)
  const seen = await fake.waitFor('generateContent')
  before.abort()
  t.equal((await pending).code, 'CLIENT_CLOSED_REQUEST', 'abort before the answer')
  t.equal(await seen.closed, 'aborted', 'the fake saw the connection close')

  fake.reply('streamGenerateContent', streamReply([geminiResponse({ text: 'a' }), geminiResponse({ text: 'b' })], { chunkDelayMs: 5000 }))
  const during = new AbortController()
  const events = await backend.stream({ ...CALL, signal: during.signal })
  const iterator = events[Symbol.asyncIterator]()
  t.equal(texts([(await iterator.next()).value])[0], 'a')
  const next = iterator.next().catch(e => e)
  during.abort()
  t.equal((await next).code, 'CLIENT_CLOSED_REQUEST', 'abort mid-stream')
  t.equal(await fake.last('streamGenerateContent')?.closed, 'aborted')

  fake.reply('streamGenerateContent', streamReply([geminiResponse({ text: 'a' }), geminiResponse({ text: 'b' })], { chunkDelayMs: 5000 }))
  for await (const e of await backend.stream(CALL)) { void e; break }
  t.equal(await fake.last('streamGenerateContent')?.closed, 'aborted', 'a consumer that stops reading closes the upstream stream')
})

t.test('an already aborted signal sends nothing', async t => {
  const { fake, backend } = await setup(t)
  const err = await backend.generate({ ...CALL, signal: AbortSignal.abort() }).catch(e => e)
  t.equal(err.code, 'CLIENT_CLOSED_REQUEST')
  t.equal(fake.calls('generateContent').length, 0)
})

t.test('an upstream that goes quiet hits the idle timeout (504)', async t => {
  const { fake, backend } = await setup(t, { idleTimeoutMs: 150 })
  fake.reply('streamGenerateContent', { stall: 'body' })
  const events = await backend.stream(CALL)
  const err = await collect(events).catch(e => e)
  t.equal(err.code, 'UPSTREAM_TIMEOUT')
  t.equal(err.status, 504)
  t.match(err.message, /sent nothing for 0\.2 s/)

  fake.reply('generateContent', { stall: 'headers' })
  const noAnswer = await backend.generate(CALL).catch(e => e)
  t.equal(noAnswer.code, 'UPSTREAM_TIMEOUT')
  t.match(noAnswer.message, /did not answer within/)

  fake.reply('streamGenerateContent', streamReply([geminiResponse({ text: 'slow' }), geminiResponse({ text: 'but steady' })], { chunkDelayMs: 100 }))
  t.same(texts(await collect(await backend.stream(CALL))), ['slow', 'but steady'], 'chunks within the idle timeout are fine')
})

t.test('a transport failure is a 502 upstream error', async t => {
  const closed = createServer()
  await new Promise<void>(resolve => closed.listen(0, '127.0.0.1', resolve))
  const { port } = closed.address() as { port: number }
  await new Promise<void>(resolve => closed.close(() => resolve()))
  const { backend } = await setup(t, { codeAssistEndpoint: `http://127.0.0.1:${port}`, maxRetries: 0 })
  const err = await backend.generate(CALL).catch(e => e)
  t.equal(err.code, 'UPSTREAM_ERROR')
  t.equal(err.status, 502)
  t.match(err.message, /Upstream request failed before it answered/)
})

t.test('the events of one network read reach the route as one batch, though each came in an HTTP chunk of its own', async t => {
  const { fake } = await setup(t)
  // Google frames every event as a chunk of its own; here three of them arrive in one write, so in one read.
  const events = [1, 2, 3].map(i => `data: ${JSON.stringify({ response: geminiResponse({ text: `t${i}` }) })}\n\n`)
  const body = events.map(e => `${Buffer.byteLength(e).toString(16)}\r\n${e}\r\n`).join('') + '0\r\n\r\n'
  const upstream = createServer(socket => {
    socket.once('data', () => socket.end('HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n' + body))
  })
  await new Promise<void>(resolve => upstream.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>(resolve => upstream.close(() => resolve())))
  const { port } = upstream.address() as { port: number }
  const backend = createCodeAssistBackend({
    codeAssistEndpoint: `http://127.0.0.1:${port}`,
    credentials: credentialsObject('authorized-user', { tokenUri: fake.tokenUri, projectId: 'p' }),
  })
  t.teardown(() => backend.close())
  const batches: GeminiResponse[][] = []
  for await (const batch of eventBatches(await backend.stream(CALL))) batches.push(batch)
  t.same(batches.map(texts), [['t1', 't2', 't3']])
})

t.test('a 200 answer that is not JSON is a 502', async t => {
  const { fake, backend } = await setup(t)
  fake.reply('generateContent', { text: '<html>oops</html>' })
  const err = await backend.generate(CALL).catch(e => e)
  t.equal(err.code, 'UPSTREAM_ERROR')
  t.equal(err.status, 502)
  for (const text of ['', '   ', '"a string"', '[1, 2]', 'null']) {
    fake.reply('generateContent', { text })
    t.match(await backend.generate(CALL).catch(e => e), { code: 'UPSTREAM_ERROR', status: 502 }, `${JSON.stringify(text)} is no answer either`)
  }
})

t.test('the observer hears of every upstream HTTP call with model, status and duration', async t => {
  const { fake, backend, observed } = await setup(t)
  fake.reply('generateContent', errorReply(500))
  await backend.generate(CALL)
  await collect(await backend.stream(CALL))
  t.same(observed.map(([model, status]) => [model, status]), [['gemini-2.5-flash', 500], ['gemini-2.5-flash', 200], ['gemini-2.5-flash', 200]])
  t.ok(observed.every(([, , s]) => s >= 0 && s < 5))
})

t.test('a reader that stops reading stops the upstream too: its stream waits instead of being buffered whole', async t => {
  const { fake, backend } = await setup(t)
  // 400 events of 64 KiB: 25 MiB, far more than the sockets on the way can hold.
  const big = 'x'.repeat(64 * 1024)
  fake.reply('streamGenerateContent', streamReply(Array.from({ length: 400 }, (_, i) => geminiResponse({ text: `${i} ${big}`, finishReason: i === 399 ? 'STOP' : undefined }))))
  const events = await backend.stream(CALL)
  const it = events[Symbol.asyncIterator]()
  const first = await it.next()
  t.match(texts([first.value as GeminiResponse])[0], /^0 x/)
  const upstream = await fake.waitFor('streamGenerateContent')
  const state = await Promise.race([upstream.closed, new Promise(resolve => setTimeout(resolve, 500, 'still sending'))])
  t.equal(state, 'still sending', 'half a second without reads: the upstream has not been able to send everything')
  let count = 1
  for (let next = await it.next(); next.done !== true; next = await it.next()) count++
  t.equal(count, 400, 'once read again, every event arrives')
  t.equal(await upstream.closed, 'finished')
})
