import t from 'tap'
import http from 'node:http'
import Hapi from '@hapi/hapi'
import { startGateway } from '../support/gateway.ts'
import { fail, hapiPlugin, hapiRouteTemplate, isGatehouseError, mountRoutes, readJsonBody } from '../../lib/index.ts'
import type { HandlerRequest, HandlerResponse, Route } from '../../lib/index.ts'

// A route table in the auth error shape, mounted under /t like a service's table.
const detail = (err: unknown): HandlerResponse => isGatehouseError(err)
  ? { status: err.status, body: { detail: err.message } }
  : { status: 500, body: { detail: 'Internal error' } }
const base = { maxBytes: 256, errorResponse: detail }

let lastRequest: HandlerRequest | undefined
let abortedSignals = 0
let streamFinished = false

const routes: Route[] = [
  {
    ...base,
    method: 'POST',
    path: '/t/echo/{name}',
    handler: async req => {
      lastRequest = req
      return { status: 201, headers: { 'x-extra': 'yes' }, body: { body: readJsonBody(req, true), params: req.params, query: req.query } }
    },
  },
  { ...base, method: 'GET', path: '/t/string', handler: async () => ({ status: 200, body: 'a bare string' }) },
  { ...base, method: 'DELETE', path: '/t/empty', handler: async () => ({ status: 200 }) },
  { ...base, method: 'GET', path: '/t/throws', handler: async () => { throw new Error('unexpected bug') } },
  { ...base, method: 'GET', path: '/t/refuses', handler: async () => { throw fail('USER_NOT_FOUND') } },
  {
    ...base,
    method: 'GET',
    path: '/t/stream',
    handler: async () => ({
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      body: (async function * () {
        for (let i = 0; i < 3; i++) {
          yield `data: ${i}\n\n`
          await new Promise(resolve => setTimeout(resolve, 150))
        }
      })(),
    }),
  },
  {
    ...base,
    method: 'GET',
    path: '/t/breaks',
    handler: async () => ({
      status: 200,
      body: (async function * () {
        yield 'data: first\n\n'
        await new Promise(resolve => setTimeout(resolve, 20))
        throw new Error('upstream vanished')
      })(),
    }),
  },
  {
    ...base,
    method: 'GET',
    path: '/t/endless',
    handler: async req => {
      req.signal?.addEventListener('abort', () => { abortedSignals++ })
      return {
        status: 200,
        body: (async function * () {
          try {
            while (true) {
              yield new TextEncoder().encode('tick\n')
              await new Promise(resolve => setTimeout(resolve, 20))
            }
          } finally {
            streamFinished = true
          }
        })(),
      }
    },
  },
]

const gw = await startGateway({}, { extraRoutes: [{ routes, scope: '/t', errorResponse: detail }] })
t.teardown(() => gw.close())

async function call (path: string, init?: RequestInit): Promise<{ status: number, headers: Headers, text: string, json: any }> {
  const res = await fetch(gw.url + path, init)
  const text = await res.text()
  let json: any
  try { json = JSON.parse(text) } catch { json = undefined }
  return { status: res.status, headers: res.headers, text, json }
}

const postJson = (body: string, headers: Record<string, string> = {}): RequestInit =>
  ({ method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } })

t.test('a handler gets decoded params, first query values, lower-cased headers, the raw body and the client address', async t => {
  const res = await call('/t/echo/h%C3%A9llo?a=1&a=2&b=x', postJson('{"x":1}', { 'X-Custom': 'Value' }))
  t.equal(res.status, 201)
  t.same(res.json, { body: { x: 1 }, params: { name: 'héllo' }, query: { a: '1', b: 'x' } })
  t.equal(res.headers.get('x-extra'), 'yes')
  t.match(res.headers.get('content-type'), /^application\/json/)
  t.equal(lastRequest?.headers['x-custom'], 'Value')
  t.equal(lastRequest?.path, '/t/echo/h%C3%A9llo')
  t.ok(Buffer.isBuffer(lastRequest?.body), 'body reaches lib unparsed')
  t.equal(lastRequest?.remoteAddress, '127.0.0.1')
  t.equal(lastRequest?.signal?.aborted, false)
})

t.test('a bare string body is sent as JSON', async t => {
  const res = await call('/t/string')
  t.equal(res.text, '"a bare string"')
  t.match(res.headers.get('content-type'), /^application\/json/)
})

t.test('a response without a body keeps the handler status', async t => {
  const res = await call('/t/empty', { method: 'DELETE' })
  t.equal(res.status, 200)
  t.equal(res.text, '')
})

t.test('malformed JSON is a 400 in the route error shape', async t => {
  const res = await call('/t/echo/a', postJson('{"x":'))
  t.equal(res.status, 400)
  t.same(res.json, { detail: 'Invalid JSON in request body' })
})

t.test('a body over the route limit is a 413 in the route error shape', async t => {
  const res = await call('/t/echo/a', postJson(JSON.stringify({ x: 'y'.repeat(1000) })))
  t.equal(res.status, 413)
  t.same(res.json, { detail: 'Request body too large' })
})

t.test('a body over the limit without content-length (chunked) is a 413 too', async t => {
  const status = await new Promise<number>((resolve, reject) => {
    const req = http.request(gw.url + '/t/echo/a', { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, res => {
      res.resume()
      resolve(res.statusCode ?? 0)
    })
    req.on('error', reject)
    req.end('x'.repeat(1000))
  })
  t.equal(status, 413)
})

t.test('a wrong or malformed content type is a 415 in the route error shape', async t => {
  for (const type of ['text/plain', 'a/b/c;;']) {
    const res = await call('/t/echo/a', { method: 'POST', body: '{}', headers: { 'content-type': type } })
    t.equal(res.status, 415, type)
    t.same(res.json, { detail: 'Content-Type must be application/json' })
  }
})

t.test('an unknown path under a table scope is a 404 in its error shape', async t => {
  const res = await call('/t/nothing/here')
  t.equal(res.status, 404)
  t.same(res.json, { detail: 'Not found' })
})

t.test('a known path with the wrong method is a 405 in its error shape', async t => {
  const res = await call('/t/string', { method: 'POST', body: '{}' })
  t.equal(res.status, 405)
  t.same(res.json, { detail: 'Method not allowed' })
})

t.test('a handler error from the catalogue keeps its status and message', async t => {
  const res = await call('/t/refuses')
  t.equal(res.status, 404)
  t.same(res.json, { detail: 'User not found' })
})

t.test('an unexpected handler error becomes the route error response, details withheld and logged', async t => {
  const res = await call('/t/throws')
  t.equal(res.status, 500)
  t.same(res.json, { detail: 'Internal error' })
  t.notMatch(res.text, /unexpected bug/)
  t.ok(gw.logs.some(l => l.msg === 'handler failed' && /unexpected bug/.test(JSON.stringify(l))))
})

t.test('a streamed body reaches the client chunk by chunk, uncompressed', async t => {
  const started = Date.now()
  const res = await fetch(gw.url + '/t/stream', { headers: { 'accept-encoding': 'gzip' } })
  t.equal(res.headers.get('content-encoding'), null)
  t.match(res.headers.get('content-type'), /^text\/event-stream/)
  const arrivals: Array<{ at: number, text: string }> = []
  for await (const chunk of res.body!) arrivals.push({ at: Date.now() - started, text: Buffer.from(chunk).toString() })
  t.equal(arrivals.map(a => a.text).join(''), 'data: 0\n\ndata: 1\n\ndata: 2\n\n')
  t.ok(arrivals.length >= 3, 'three separate arrivals')
  t.ok(arrivals[0].at < 120, `first chunk arrives before the second is produced (${arrivals[0].at} ms)`)
  // Written to the raw response, the stream is still logged once, at its end, with its status.
  const logged = (): Array<{ status?: number, durationMs?: number }> => gw.logs.filter(l => l.msg === 'request' && l.route === '/t/stream')
  for (const deadline = Date.now() + 2000; logged().length === 0 && Date.now() < deadline;) await new Promise(resolve => setTimeout(resolve, 5))
  t.equal(logged().length, 1, 'one log line')
  t.equal(logged()[0].status, 200)
  t.ok((logged()[0].durationMs ?? 0) >= 290, 'logged when the stream ended')
})

t.test('a client that goes away aborts the request signal and ends the stream', async t => {
  await new Promise<void>((resolve, reject) => {
    const req = http.get(gw.url + '/t/endless', res => {
      res.once('data', () => { req.destroy(); resolve() })
    })
    req.on('error', err => { if ((err as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(err) })
  })
  const deadline = Date.now() + 2000
  while ((abortedSignals === 0 || !streamFinished) && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 10))
  t.equal(abortedSignals, 1, 'signal aborted')
  t.ok(streamFinished, 'the stream generator was closed')
})

t.test('a stream that fails after its first bytes is cut short (not ended cleanly) and the cause is logged', async t => {
  const outcome = await new Promise<{ text: string, complete: boolean }>(resolve => {
    let text = ''
    http.get(gw.url + '/t/breaks', res => {
      res.setEncoding('utf8')
      res.on('data', (c: string) => { text += c })
      res.on('end', () => resolve({ text, complete: res.complete }))
      res.on('error', () => resolve({ text, complete: false }))
    }).on('error', () => resolve({ text, complete: false }))
  })
  t.equal(outcome.text, 'data: first\n\n')
  t.notOk(outcome.complete, 'the client can tell the response was truncated')
  const logged = (): boolean => gw.logs.some(l => l.msg === 'stream failed after its first bytes' && l.err?.message === 'upstream vanished')
  for (const deadline = Date.now() + 2000; !logged() && Date.now() < deadline;) await new Promise(resolve => setTimeout(resolve, 5))
  t.ok(logged())
  t.equal((await fetch(gw.url + '/t/string')).status, 200, 'the server carries on')
})

t.test('Hapi gets one wildcard route per path root, however many table routes; the library routes within it (lib/http/router.ts)', async t => {
  // Hapi validates and copies every route it registers: 77 of them cost the gateway a tenth of its start and 8 MB of
  // idle memory (bench/README.md, "Footprint (issue 24)").
  const server = Hapi.server()
  const ok = (method: string, path: string): Route => ({ ...base, method, path, handler: async req => ({ status: 200, body: { path, params: req.params } }) })
  mountRoutes(server, { scope: '/a', routes: [ok('GET', '/a/x'), ok('POST', '/a/x'), ok('GET', '/a/{id}'), ok('GET', '/b/{rest*}')], errorResponse: detail })
  // A second mount sharing a root adds its routes to the same wildcard instead of a conflicting one.
  mountRoutes(server, [ok('DELETE', '/a/y/z'), ok('GET', '/c/d')])
  t.same(server.table().map(r => `${r.method} ${r.path}`).sort(), ['* /a/{gatehouse*}', '* /b/{gatehouse*}', '* /c/{gatehouse*}'], 'three Hapi routes for six table routes')
  const get = async (method: string, url: string): Promise<{ status: number, json: any }> => {
    const res = await server.inject({ method, url })
    return { status: res.statusCode, json: JSON.parse(res.payload) }
  }
  t.same((await get('GET', '/a/x')).json, { path: '/a/x', params: {} }, 'a literal path beats a parameter, as in Hapi')
  t.same((await get('GET', '/a/7')).json, { path: '/a/{id}', params: { id: '7' } })
  t.same((await get('GET', '/b/c/d')).json, { path: '/b/{rest*}', params: { rest: 'c/d' } })
  t.same((await get('DELETE', '/a/y/z')).json, { path: '/a/y/z', params: {} }, 'the second mount\'s route')
  t.same(await get('PUT', '/a/x'), { status: 405, json: { detail: 'Method not allowed' } }, 'another method: 405 in the scope\'s shape')
  t.same(await get('GET', '/a/1/2'), { status: 404, json: { detail: 'Not found' } }, 'no route under the scope: its 404')
  t.same((await get('GET', '/b')).json, { path: '/b/{rest*}', params: { rest: '' } }, 'a wildcard takes its bare root, as in Hapi')
  t.same(await get('GET', '/c/e'), { status: 404, json: { statusCode: 404, error: 'Not Found', message: 'Not Found' } }, 'outside every scope: Hapi\'s own 404')
})

t.test('a route of your own at a more specific path under a mounted root still answers, registered before or after the tables', async t => {
  const server = Hapi.server()
  server.route({ method: 'GET', path: '/a/mine', handler: () => 'mine, first' })
  mountRoutes(server, { scope: '/a', routes: [{ ...base, method: 'GET', path: '/a/{id}', handler: async req => ({ status: 200, body: { table: req.params.id } }) }], errorResponse: detail })
  server.route({ method: 'GET', path: '/a/also/mine', handler: () => 'mine, after' })
  t.equal((await server.inject('/a/mine')).payload, 'mine, first')
  t.equal((await server.inject('/a/also/mine')).payload, 'mine, after')
  t.same(JSON.parse((await server.inject('/a/7')).payload), { table: '7' }, 'the table still takes the rest of its root')
})

t.test('hapiRouteTemplate names the table route that took a request, prefixes included, and no route for unknown paths', async t => {
  const server = Hapi.server()
  const seen: Array<string | undefined> = []
  server.events.on('response', request => { seen.push(hapiRouteTemplate(request)) })
  server.route({ method: 'GET', path: '/own/{id}', handler: () => 'own' })
  await server.register({ plugin: hapiPlugin, options: { tables: [{ scope: '/t', routes: [{ ...base, method: 'GET', path: '/t/{id}', handler: async () => ({ status: 200 }) }], errorResponse: detail }], prefix: '/api' } })
  for (const url of ['/api/t/1', '/own/2', '/api/t/1/2', '/nowhere']) await server.inject(url)
  t.same(seen, ['/api/t/{id}', '/own/{id}', undefined, undefined])
})
