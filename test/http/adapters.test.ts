import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Route, HandlerResponse } from '../../lib/index.ts'
import { createNodeListener, createFetchHandler, readJsonBody, GatehouseError } from '../../lib/index.ts'

// A small route table exercising the contract: params, wildcards, JSON bodies, streams, errors.
function errorResponse (err: unknown): HandlerResponse {
  const status = err instanceof GatehouseError ? err.status : 500
  const message = err instanceof GatehouseError ? err.message : 'Internal error'
  return { status, body: { detail: message } }
}
let aborted = 0
const routes: Route[] = [
  { method: 'GET', path: '/things/{id}', maxBytes: 1024, errorResponse, handler: async req => ({ status: 200, body: { id: req.params.id, q: req.query.q ?? null } }) },
  { method: 'GET', path: '/things/special', maxBytes: 1024, errorResponse, handler: async () => ({ status: 200, body: 'literal wins' }) },
  { method: 'POST', path: '/echo', maxBytes: 64, errorResponse, handler: async req => ({ status: 201, body: { got: readJsonBody(req) } }) },
  { method: '*', path: '/files/{rest*}', maxBytes: 1024, errorResponse, handler: async req => ({ status: 200, body: { rest: req.params.rest, method: req.method } }) },
  {
    method: 'GET',
    path: '/stream',
   
    maxBytes: 1024,
    errorResponse,
    handler: async req => ({
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      body: (async function * () {
        for (let i = 0; i < 3; i++) yield `data: ${i}\n\n`
        if (req.query.slow === '1') {
          await new Promise<void>(resolve => { req.signal?.addEventListener('abort', () => { aborted++; resolve() }) })
        }
      })()
    })
  }
]

async function listen (): Promise<{ url: string, close: () => Promise<void> }> {
  const server = createServer(createNodeListener(routes))
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}`, close: async () => { server.closeAllConnections(); await new Promise(resolve => server.close(resolve)) } }
}

const fetchHandler = createFetchHandler(routes)
const hosts = [
  { name: 'node:http listener', call: async (path: string, init?: RequestInit) => { const s = await listen(); try { const r = await fetch(s.url + path, init); return { status: r.status, text: await r.text(), type: r.headers.get('content-type') } } finally { await s.close() } } },
  { name: 'fetch handler', call: async (path: string, init?: RequestInit) => { const r = await fetchHandler(new Request('http://x' + path, init)); return { status: r.status, text: await r.text(), type: r.headers.get('content-type') } } }
]

for (const host of hosts) {
  t.test(`${host.name}: routes like Hapi and maps errors to the route's surface`, async t => {
    const param = await host.call('/things/a%20b?q=1&q=2')
    t.same(JSON.parse(param.text), { id: 'a b', q: '1' }, 'path params are decoded; a repeated query key keeps its first value')
    t.equal(JSON.parse((await host.call('/things/special')).text), 'literal wins', 'a literal segment beats a parameter')
    t.same(JSON.parse((await host.call('/files/a/b%3Ac', { method: 'DELETE' })).text), { rest: 'a/b:c', method: 'DELETE' }, 'wildcards take the rest of the path, any method')
    const echo = await host.call('/echo', { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } })
    t.equal(echo.status, 201)
    t.same(JSON.parse(echo.text), { got: { a: 1 } }, 'JSON bodies are parsed by the library')
    t.match(echo.type, /application\/json/)
    const bad = await host.call('/echo', { method: 'POST', body: '{nope', headers: { 'content-type': 'application/json' } })
    t.same([bad.status, JSON.parse(bad.text)], [400, { detail: 'Invalid JSON in request body' }], 'malformed JSON is a 400 in the surface shape')
    const big = await host.call('/echo', { method: 'POST', body: JSON.stringify({ a: 'x'.repeat(100) }), headers: { 'content-type': 'application/json' } })
    t.same([big.status, JSON.parse(big.text)], [413, { detail: 'Request body too large' }], 'bodies over maxBytes are a 413')
    const wrongMethod = await host.call('/echo')
    t.equal(wrongMethod.status, 405, 'a known path under another method is a 405')
    const unknown = await host.call('/things')
    t.equal(unknown.status, 404, 'unknown paths are a 404')
    const stream = await host.call('/stream')
    t.equal(stream.text, 'data: 0\n\ndata: 1\n\ndata: 2\n\n', 'stream bodies are written chunk by chunk')
    t.equal(stream.type, 'text/event-stream')
  })
}

t.test('node:http listener: a client that goes away aborts the handler signal', async t => {
  const s = await listen()
  t.teardown(s.close)
  const controller = new AbortController()
  const response = await fetch(s.url + '/stream?slow=1', { signal: controller.signal })
  const reader = response.body!.getReader()
  await reader.read()
  controller.abort()
  const deadline = Date.now() + 2000
  while (aborted === 0 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 10))
  t.equal(aborted, 1, 'the request signal fired')
})

t.test('node:http listener works as Express-style middleware: unmatched paths go to next()', async t => {
  const listener = createNodeListener(routes)
  let nextCalled = false
  listener({ url: '/elsewhere', method: 'GET', headers: {} } as never, {} as never, () => { nextCalled = true })
  t.ok(nextCalled)
})

t.test('node:http listener: a chunked body (no content-length) over maxBytes is answered 413, not cut off', async t => {
  const s = await listen()
  t.teardown(s.close)
  async function * chunks (): AsyncGenerator<Uint8Array> {
    for (let i = 0; i < 20; i++) {
      yield new TextEncoder().encode('x'.repeat(20))
      await new Promise(resolve => setTimeout(resolve, 2))
    }
  }
  const res = await fetch(s.url + '/echo', { method: 'POST', body: ReadableStream.from(chunks()), duplex: 'half' } as RequestInit)
  t.same([res.status, await res.json()], [413, { detail: 'Request body too large' }])
})
