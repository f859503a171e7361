import t from 'tap'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import Hapi from '@hapi/hapi'
import { createFetchHandler, createNodeListener, fail, hapiPlugin, isGatehouseError, readJsonBody } from '../../lib/index.ts'
import type { HandlerRequest, HandlerResponse, RouteTable } from '../../lib/index.ts'

// One table, served by every host: whatever the host, the client must see the same answer.
const shape = (err: unknown): HandlerResponse => isGatehouseError(err)
  ? { status: err.status, headers: { 'x-shape': 'table' }, body: { problem: err.message } }
  : { status: 500, body: { problem: 'Internal error' } }
const table: RouteTable = {
  scope: '/s',
  errorResponse: shape,
  routes: [
    {
      method: 'POST',
      path: '/s/echo',
      maxBytes: 64,
      errorResponse: shape,
      authenticate: req => { if (req.headers['x-key'] !== 'open') throw fail('INVALID_CREDENTIALS') },
      handler: async req => ({ status: 201, headers: { 'x-seen': req.query.q ?? '' }, body: { got: readJsonBody(req, true) } }),
    },
    ...['/s/items/{id}', '/s/items/special', '/s/files/{rest*}'].map(path => ({
      method: 'GET',
      path,
      maxBytes: 0,
      errorResponse: shape,
      handler: async (req: HandlerRequest) => ({ status: 200, body: { route: path, params: req.params } }),
    })),
    {
      method: 'GET',
      path: '/s/stream',
      maxBytes: 0,
      errorResponse: shape,
      handler: async () => ({
        status: 200,
        headers: { 'content-type': 'text/event-stream' },
        body: (async function * () { for (let i = 0; i < 3; i++) yield i === 1 ? new TextEncoder().encode(`data: ${i}\n\n`) : `data: ${i}\n\n` })(),
      }),
    },
  ],
}

const json = { 'content-type': 'application/json', 'x-key': 'open' }
const requests: Array<[string, string, RequestInit?]> = [
  ['good request', '/s/echo?q=1&q=2', { method: 'POST', headers: json, body: '{"a":1}' }],
  ['unknown path', '/s/nothing'],
  ['wrong method', '/s/echo'],
  ['bad credentials', '/s/echo', { method: 'POST', headers: { ...json, 'x-key': 'wrong' }, body: '{"a":1}' }],
  ['oversized body', '/s/echo', { method: 'POST', headers: json, body: JSON.stringify({ a: 'x'.repeat(100) }) }],
  ['malformed JSON', '/s/echo', { method: 'POST', headers: json, body: '{"a":' }],
  ['wrong content type', '/s/echo', { method: 'POST', headers: { ...json, 'content-type': 'text/plain' }, body: '{}' }],
  ['a stream', '/s/stream'],
  // Routing: every host picks the route with the library's router (lib/http/router.ts), Hapi's template rules.
  ['a percent-encoded parameter', '/s/items/h%C3%A9llo'],
  ['a literal segment beats a parameter', '/s/items/special'],
  ['a wildcard', '/s/files/a/b%20c'],
  ['a wildcard at its bare root', '/s/files'],
  ['an empty last segment', '/s/items/'],
  ['HEAD of a GET route', '/s/items/x', { method: 'HEAD' }],
]

// The headers the table and the serving path decide; each server adds its own (date, connection, Hapi's cache-control).
const COMPARED = ['content-type', 'x-shape', 'x-seen', 'retry-after', 'x-accel-buffering']

interface Answer { status: number, headers: Record<string, string | null>, body: string }

async function answer (res: Response): Promise<Answer> {
  const headers: Record<string, string | null> = {}
  for (const name of COMPARED) headers[name] = res.headers.get(name)
  return { status: res.status, headers, body: await res.text() }
}

async function listening (server: http.Server): Promise<string> {
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

t.test('every host answers the same status, headers and body for the same request', async t => {
  const nodeServer = http.createServer(createNodeListener(table))
  const nodeUrl = await listening(nodeServer)
  t.teardown(() => { nodeServer.closeAllConnections(); nodeServer.close() })
  const hapi = Hapi.server({ host: '127.0.0.1', port: 0, compression: false })
  await hapi.register({ plugin: hapiPlugin, options: { tables: [table] } })
  await hapi.start()
  t.teardown(() => hapi.stop({ timeout: 100 }))
  const fetchHandler = createFetchHandler(table)

  for (const [name, path, init] of requests) {
    const viaNode = await answer(await fetch(nodeUrl + path, init))
    const viaFetch = await answer(await fetchHandler(new Request('http://host' + path, init)))
    const viaHapi = await answer(await fetch(hapi.info.uri + path, init))
    t.same(viaFetch, viaNode, `${name}: fetch answers like node:http`)
    t.same(viaHapi, viaNode, `${name}: Hapi answers like node:http`)
    t.not(viaNode.status, 0, name)
  }
  const good = await answer(await fetchHandler(new Request('http://host/s/echo?q=1&q=2', requests[0][2])))
  t.same([good.status, JSON.parse(good.body), good.headers['x-seen']], [201, { got: { a: 1 } }, '1'], 'the table is really served')
  const stream = await answer(await fetchHandler(new Request('http://host/s/stream')))
  t.equal(stream.body, 'data: 0\n\ndata: 1\n\ndata: 2\n\n')
})
