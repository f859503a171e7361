import t from 'tap'
import { startProxy, PASSWORD } from './harness.ts'
import { geminiResponse, streamReply, errorReply } from '../support/fake-upstream.ts'
import { createFetchHandler, createProxy, GatehouseError } from '../../lib/index.ts'
import type { Backend } from '../../lib/index.ts'

const AUTH = { authorization: `Bearer ${PASSWORD}` }
const GOOG = { 'x-goog-api-key': PASSWORD }

t.test('native routing: unknown actions 404, wrong methods 405, paths without a model 404, all in Google\'s shape', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  const table: Array<[string, string, number, string]> = [
    ['POST', '/v1beta/models/gemini-2.5-pro:embedContent', 404, 'NOT_FOUND'],
    ['POST', '/v1beta/models/gemini-2.5-pro/generateContent', 404, 'NOT_FOUND'],
    ['POST', '/v1beta/chat/completions', 404, 'NOT_FOUND'],
    ['POST', '/v1beta/cachedContents', 404, 'NOT_FOUND'],
    ['GET', '/v1beta/models/gemini-2.5-pro:generateContent', 405, 'UNIMPLEMENTED'],
    ['PUT', '/v1beta/models/gemini-2.5-pro:generateContent', 405, 'UNIMPLEMENTED'],
    ['DELETE', '/v1beta/models', 405, 'UNIMPLEMENTED'],
    ['POST', '/v1beta/models/gemini-2.5-pro', 405, 'UNIMPLEMENTED'],
    ['GET', '/v1beta/models/gemini-9-ultra', 404, 'NOT_FOUND'],
    ['POST', '/v1beta/models/gpt-4o:generateContent', 404, 'NOT_FOUND'],
    ['POST', '/v1/models/gemini-2.5-pro:embedContent', 404, 'NOT_FOUND'],
  ]
  for (const [method, path, status, name] of table) {
    const res = await fetch(`${h.url}${path}`, { method, headers: GOOG, body: method === 'GET' ? undefined : '{}' })
    t.equal(res.status, status, `${method} ${path}`)
    t.match(await res.json(), { error: { code: status, status: name, message: String } }, `${method} ${path}`)
  }
  t.equal(h.fake.calls('generateContent').length, 0)
})

t.test('native model names are URL-decoded and accept a models/ prefix', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  for (const path of ['/v1beta/models/gemini-2.5-flash%3AgenerateContent', '/v1beta/models/models%2Fgemini-2.5-flash:generateContent']) {
    const res = await fetch(`${h.url}${path}`, { method: 'POST', headers: GOOG, body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'x' }] }] }) })
    t.equal(res.status, 200, path)
    await res.arrayBuffer()
    t.equal(h.fake.last('generateContent')!.body.model, 'gemini-2.5-flash')
  }
})

t.test('a top-level thinkingConfig (as the reference README shows) is moved where the upstream accepts it', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  const res = await fetch(`${h.url}/v1beta/models/gemini-2.5-flash:generateContent`, {
    method: 'POST', headers: GOOG, body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'x' }] }], thinkingConfig: { thinkingBudget: 100, includeThoughts: true } }),
  })
  t.equal(res.status, 200)
  await res.arrayBuffer()
  const request = h.fake.last('generateContent')!.body.request
  t.notOk('thinkingConfig' in request)
  t.same(request.generationConfig.thinkingConfig, { thinkingBudget: 100, includeThoughts: true })
})

t.test('GET /v1/models answers in the style of the client asking', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  const openai = await (await fetch(`${h.url}/v1/models`, { headers: AUTH })).json() as any
  t.equal(openai.object, 'list')
  t.ok(Array.isArray(openai.data))
  const google = await (await fetch(`${h.url}/v1/models`, { headers: GOOG })).json() as any
  t.ok(Array.isArray(google.models))
  const one = await fetch(`${h.url}/v1/models/nope`, { headers: GOOG })
  t.equal(one.status, 404)
  t.match(await one.json(), { error: { status: 'NOT_FOUND' } })
  const oneChat = await fetch(`${h.url}/v1/models/nope`, { headers: AUTH })
  t.match(await oneChat.json(), { error: { code: 'model_not_found', type: 'invalid_request_error' } })
})

t.test('streams send keep-alive comments while the upstream is silent, and the usual SSE headers', async t => {
  const h = await startProxy(t, { backendName: 'code-assist', keepAliveMs: 40 })
  h.fake.reply('streamGenerateContent', streamReply([geminiResponse({ text: 'a' }), geminiResponse({ text: 'b', finishReason: 'STOP' })], { chunkDelayMs: 150 }))
  const res = await fetch(`${h.url}/v1/chat/completions`, {
    method: 'POST', headers: AUTH, body: JSON.stringify({ model: 'gemini-2.5-pro', stream: true, messages: [{ role: 'user', content: 'x' }] }),
  })
  t.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8')
  t.equal(res.headers.get('cache-control'), 'no-cache')
  t.equal(res.headers.get('x-accel-buffering'), 'no')
  const text = await res.text()
  t.match(text, /: keepalive\n\n/)
  t.ok(text.endsWith('data: [DONE]\n\n'))

  h.fake.reply('streamGenerateContent', streamReply([geminiResponse({ text: 'a' }), geminiResponse({ text: 'b', finishReason: 'STOP' })], { chunkDelayMs: 150 }))
  const native = await fetch(`${h.url}/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse`, { method: 'POST', headers: GOOG, body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'x' }] }] }) })
  const nativeText = await native.text()
  t.match(nativeText, /: keepalive\n\n/)
  t.notMatch(nativeText, /\[DONE\]/, 'the native stream has no [DONE]')
})

t.test('a native stream whose upstream fails before starting answers with the upstream status and a JSON body', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  h.fake.reply('streamGenerateContent', errorReply(403, { message: 'denied', array: true, helpUrl: 'https://example.test/help' }))
  const res = await fetch(`${h.url}/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse`, { method: 'POST', headers: GOOG, body: '{}' })
  t.equal(res.status, 403)
  t.match(res.headers.get('content-type'), /application\/json/)
  t.match(await res.json(), { error: { code: 403, message: 'denied', status: 'PERMISSION_DENIED', details: [{ links: [{ url: 'https://example.test/help' }] }] } })
})

t.test('an upstream 401 that survives a refresh is a 503 UNAVAILABLE on the native surface, not the client\'s 401', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  h.fake.reply('generateContent', errorReply(401), errorReply(401))
  const res = await fetch(`${h.url}/v1beta/models/gemini-2.5-pro:generateContent`, { method: 'POST', headers: GOOG, body: '{}' })
  t.equal(res.status, 503)
  t.match(await res.json(), { error: { code: 503, status: 'UNAVAILABLE' } })
})

t.test('without any upstream configured the routes answer 503, naming createProxy\'s upstream option, and a warning says so at start', async t => {
  const warnings: unknown[] = []
  const proxy = createProxy({ password: 'route-table-password', logger: { debug () {}, info () {}, warn: (m: unknown) => { warnings.push(m) }, error () {} } })
  t.teardown(() => proxy.close())
  t.match(warnings, [/^No upstream is configured: give createProxy an `upstream`/], 'warned once, at construction')
  const ready = await proxy.ready()
  t.equal(ready.ok, false)
  t.match(ready.reason, /createProxy an `upstream` with credentials, credentialsFile or credentialsDir \(Code Assist\) or apiKey \(Gemini API\).*GEMINI_CREDENTIALS.*GEMINI_API_KEY/)
  const chat = proxy.routes.find(r => r.path === '/v1/chat/completions' && r.method === 'POST')!
  const err = await chat.handler({ method: 'POST', path: '/v1/chat/completions', params: {}, query: {}, headers: { authorization: 'Bearer route-table-password' }, body: Buffer.from(JSON.stringify({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'x' }] })) }).catch(e => e)
  const response = chat.errorResponse(err)
  t.equal(response.status, 503)
  t.match(response.body, { error: { type: 'api_error', message: /`upstream`.*GEMINI_CREDENTIALS/ } })
})

t.test('the route table: every route has a surface, a body limit and its surface\'s error mapper', async t => {
  const proxy = createProxy({ password: 'route-table-password', maxBodyBytes: 1234 })
  t.teardown(() => proxy.close())
  // A route's surface is the error mapper it carries (chatErrorResponse, nativeErrorResponse, messagesErrorResponse;
  // modelListErrorResponse answers in the asking client's style).
  const summary = proxy.routes.map(r => `${r.method} ${r.path} ${r.errorResponse.name.replace(/ErrorResponse$/, '')}`)
  t.same(summary, [
    'POST /v1/chat/completions chat',
    'OPTIONS /v1/chat/completions chat',
    'POST /v1/embeddings chat',
    'OPTIONS /v1/embeddings chat',
    'POST /v1/messages messages',
    'OPTIONS /v1/messages messages',
    'POST /v1/messages/count_tokens messages',
    'OPTIONS /v1/messages/count_tokens messages',
    'GET /v1/models modelList',
    'OPTIONS /v1/models modelList',
    'GET /v1/models/{id} modelList',
    '* /v1/models/{path*} native',
    'GET /v1beta/models native',
    'GET /v1beta/models/{id} native',
    '* /v1beta/{path*} native',
    '* /upload/v1beta/{path*} native',
    'POST /v1/responses responses',
    'OPTIONS /v1/responses responses',
    'POST /v1/responses/compact responses',
    'OPTIONS /v1/responses/compact responses',
    'GET /v1/responses responses',
    'GET /v1/responses/{id} responses',
    'OPTIONS /v1/responses/{id} responses',
    'DELETE /v1/responses/{id} responses',
    'GET /v1/responses/{id}/input_items responses',
    'OPTIONS /v1/responses/{id}/input_items responses',
    ...['/v1beta', '/v1'].flatMap(v => [
      `POST ${v}/interactions native`,
      `OPTIONS ${v}/interactions native`,
      `GET ${v}/interactions/{id} native`,
      `OPTIONS ${v}/interactions/{id} native`,
      `DELETE ${v}/interactions/{id} native`,
      `POST ${v}/interactions/{id}/cancel native`,
      `OPTIONS ${v}/interactions/{id}/cancel native`,
    ]),
  ])
  t.ok(proxy.routes.every(r => r.maxBytes === 1234))
  const chatErr = proxy.routes[0].errorResponse({ isBoom: true, output: { statusCode: 413 } })
  t.match(chatErr, { status: 413, body: { error: { type: 'invalid_request_error', message: /too large/ } } })
  const nativeErr = proxy.routes.find(r => r.path === '/v1beta/models')!.errorResponse({ isBoom: true, output: { statusCode: 413 } })
  t.match(nativeErr, { status: 413, body: { error: { code: 413, status: 'INVALID_ARGUMENT' } } })
  const messagesErr = proxy.routes.find(r => r.path === '/v1/messages')!.errorResponse({ isBoom: true, output: { statusCode: 413 } })
  t.match(messagesErr, { status: 413, body: { type: 'error', error: { type: 'request_too_large', message: /too large/ } } })
  const crash = proxy.routes[0].errorResponse(new TypeError('boom at line 3'))
  t.match(crash, { status: 500, body: { error: { message: 'Internal error', type: 'api_error' } } }, 'internals are not leaked')
})

t.test('every proxy route shares one budget of request-body bytes in flight (at least the largest body), unless turned off', async t => {
  const proxy = createProxy({ password: 'route-table-password', maxBodyBytes: 1234 })
  t.teardown(() => proxy.close())
  const budget = proxy.routes[0].bodyBudget
  t.ok(budget !== undefined && budget.capacity >= 1234)
  t.ok(proxy.routes.every(r => r.bodyBudget === budget), 'one budget for all')
  const sized = createProxy({ password: 'route-table-password', maxBodyBytesInFlight: 5000 })
  t.teardown(() => sized.close())
  t.equal(sized.routes[0].bodyBudget?.capacity, 5000)
  const unlimited = createProxy({ password: 'route-table-password', maxBodyBytesInFlight: false })
  t.teardown(() => unlimited.close())
  t.ok(unlimited.routes.every(r => r.bodyBudget === undefined))
  const busy = proxy.routes[0].errorResponse(new GatehouseError('SERVER_BUSY', undefined, { retryAfter: 1 }))
  t.match(busy, { status: 503, headers: { 'retry-after': '1' }, body: { error: { type: 'api_error' } } }, 'a request that waited too long gets a 503 the SDKs retry')
  const nativeBusy = proxy.routes.find(r => r.path === '/v1beta/models')!.errorResponse(new GatehouseError('SERVER_BUSY', undefined, { retryAfter: 1 }))
  t.match(nativeBusy, { status: 503, headers: { 'retry-after': '1' }, body: { error: { code: 503, status: 'UNAVAILABLE' } } })
})

t.test('a handler bug is logged once, by the serving path; a failure mid-stream once, where the stream ends', async t => {
  const logged: Array<{ level: string, obj: unknown, msg?: string }> = []
  const log = (level: string) => (obj: unknown, msg?: string) => { logged.push({ level, obj, msg }) }
  const logger = { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') }
  const broken: Backend = {
    generate: async () => { throw new TypeError('bug in the backend') },
    stream: async () => (async function * () {
      yield { candidates: [{ content: { role: 'model', parts: [{ text: 'a' }] } }] }
      throw new TypeError('bug mid-stream')
    })(),
    countTokens: async () => ({ totalTokens: 1 }),
    ready: async () => ({ ok: true }),
    close: async () => {},
  }
  const proxy = createProxy({ password: PASSWORD, backend: broken, logger })
  t.teardown(() => proxy.close())
  const serve = createFetchHandler(proxy.routeTable, { logger })
  const post = async (stream: boolean): Promise<Response> => await serve(new Request('http://localhost/v1/chat/completions', {
    method: 'POST',
    headers: { ...AUTH, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }], stream }),
  }))
  const unary = await post(false)
  t.equal(unary.status, 500)
  t.match(await unary.json(), { error: { message: 'Internal error' } })
  t.equal(logged.filter(l => l.level === 'error').length, 1, 'logged once')
  t.match(logged.filter(l => l.level === 'error'), [{ msg: 'handler failed', obj: { err: { message: 'bug in the backend' } } }])
  logged.length = 0
  const streamed = await post(true)
  t.match(await streamed.text(), /Internal error/)
  t.equal(logged.filter(l => l.level === 'error').length, 1, 'logged once')
  t.match(logged.filter(l => l.level === 'error'), [{ msg: 'stream failed', obj: { err: { message: 'bug mid-stream' } } }])
})

t.test('the models routes answer their errors in the shape of the client asking, through the serving path', async t => {
  const proxy = createProxy({ password: PASSWORD, backend: { generate: async () => ({}), stream: async () => (async function * () {})(), countTokens: async () => ({ totalTokens: 0 }), ready: async () => ({ ok: true }), close: async () => {} } })
  t.teardown(() => proxy.close())
  const serve = createFetchHandler(proxy.routeTable)
  const google = await serve(new Request('http://localhost/v1/models', { headers: { 'x-goog-api-key': 'wrong-password' } }))
  t.equal(google.status, 401)
  t.match(await google.json(), { error: { code: 401, status: 'UNAUTHENTICATED' } })
  const chat = await serve(new Request('http://localhost/v1/models', { headers: { authorization: 'Bearer wrong-password' } }))
  t.equal(chat.status, 401)
  t.match(await chat.json(), { error: { type: 'authentication_error' } })
})
