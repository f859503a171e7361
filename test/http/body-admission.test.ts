// What every host does before a request body costs memory: the route's header-only authentication first, then
// the body budget, then a read with a deadline. Driven over real sockets on every host the library ships an
// adapter for (node:http, fetch, Hapi); test/gateway/body-admission.test.ts has the gateway itself.
import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import Hapi from '@hapi/hapi'
import { createNodeListener, createFetchHandler, createProxy } from '../../lib/index.ts'
import type { ProxyOptions, Backend } from '../../lib/index.ts'
import { mountRoutes } from '../../lib/index.ts'
import { geminiResponse } from '../support/fake-upstream.ts'
import { chatBody, socketHost } from '../support/raw-http.ts'
import type { Host } from '../support/raw-http.ts'

const PASSWORD = 'body-admission-password'
const MiB = 1024 * 1024

const backend: Backend = {
  generate: async () => geminiResponse({ text: 'ok', finishReason: 'STOP' }),
  stream: async () => { throw new Error('not used') },
  countTokens: async () => ({ totalTokens: 1 }),
  ready: async () => ({ ok: true }),
  close: async () => {},
}

async function listening (server: ReturnType<typeof createServer>): Promise<number> {
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as AddressInfo).port
}

const proxyOptions = (extra: ProxyOptions = {}): ProxyOptions => ({ password: PASSWORD, backend, maxBodyBytes: 3 * MiB, maxBodyBytesInFlight: 3 * MiB, ...extra })

const hosts: Array<{ name: string, start: (options: ProxyOptions) => Promise<Host> }> = [
  {
    name: 'node:http listener',
    start: async options => {
      const proxy = createProxy(options)
      const server = createServer(createNodeListener(proxy.routes))
      const port = await listening(server)
      return socketHost(port, async () => proxy.bodyBudget!.reserved, async () => {
        server.closeAllConnections()
        await new Promise(resolve => server.close(resolve))
        await proxy.close()
      })
    },
  },
  {
    name: 'Hapi mount',
    start: async options => {
      const proxy = createProxy(options)
      const server = Hapi.server({ host: '127.0.0.1', port: 0 })
      mountRoutes(server, proxy.routes)
      await server.start()
      return socketHost(server.info.port as number, async () => proxy.bodyBudget!.reserved, async () => {
        await server.stop({ timeout: 100 })
        await proxy.close()
      })
    },
  },
  {
    name: 'fetch handler',
    start: async options => {
      const proxy = createProxy(options)
      const handler = createFetchHandler(proxy.routes, { remoteAddress: () => '127.0.0.1' })
      const pending: Array<ReadableStreamDefaultController<Uint8Array>> = []
      return {
        post: async (path, body, headers) => {
          const res = await handler(new Request(`http://x${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...headers } }))
          return { status: res.status, text: await res.text() }
        },
        partial: async (path, headers, declared, sent) => {
          // A body that gives `sent`, then nothing more until the test ends.
          let given = false
          const body = new ReadableStream<Uint8Array>({
            pull (controller) {
              if (given) { pending.push(controller); return new Promise(() => {}) }
              given = true
              controller.enqueue(Buffer.from(sent))
            },
          }, { highWaterMark: 0 })
          const res = await handler(new Request(`http://x${path}`, { method: 'POST', body, duplex: 'half', headers: { 'content-type': 'application/json', 'content-length': String(declared), ...headers } } as RequestInit))
          return { status: res.status, headers: [...res.headers].map(([k, v]) => `${k}: ${v}`).join('\r\n'), body: await res.text() }
        },
        reserved: async () => proxy.bodyBudget!.reserved,
        close: async () => {
          for (const c of pending) { try { c.close() } catch {} }
          await proxy.close()
        },
      }
    },
  },
]

for (const host of hosts) {
  t.test(`${host.name}: the proxy password is checked from the headers before any body budget is reserved or a body byte read`, async t => {
    const h = await host.start(proxyOptions())
    t.teardown(h.close)
    // The attack of the issue: sockets without the password that declare a large body and send 10 bytes.
    const strangers = await Promise.all([
      h.partial('/v1/chat/completions', {}, 3 * MiB, '{"model":"'),
      h.partial('/v1beta/models/gemini-2.5-pro:generateContent', { 'x-goog-api-key': 'not-the-password' }, 3 * MiB, '{"contents'),
    ])
    t.same(strangers.map(a => a.status), [401, 401], 'refused at once, without waiting for the body')
    t.match(JSON.parse(strangers[0].body), { error: { type: 'authentication_error' } }, 'in the chat surface\'s shape')
    t.match(JSON.parse(strangers[1].body), { error: { status: 'UNAUTHENTICATED' } }, 'in the native shape')
    t.equal(await h.reserved(), 0, 'they hold no part of the budget')
    const started = Date.now()
    const large = await h.post('/v1/chat/completions', chatBody(2 * MiB), { authorization: `Bearer ${PASSWORD}` })
    t.equal(large.status, 200, `an authenticated large body is served at once (${Date.now() - started} ms), not starved into a 503`)
    t.equal(await h.reserved(), 0)
  })

  t.test(`${host.name}: a body that arrives too slowly is a 408 in the surface's shape, and its share of the budget is given back`, async t => {
    const h = await host.start(proxyOptions({ bodyRead: { timeoutMs: 5000, minBytesPerSecond: 1024, graceMs: 150 } }))
    t.teardown(h.close)
    const started = Date.now()
    const slow = h.partial('/v1/chat/completions', { authorization: `Bearer ${PASSWORD}` }, 2 * MiB, '{"model":"gemini-2.5-pro"')
    const deadline = Date.now() + 2000
    while (await h.reserved() === 0 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 5))
    t.equal(await h.reserved(), 2 * MiB, 'the authenticated body holds its share while it arrives')
    const answer = await slow
    t.equal(answer.status, 408)
    t.match(JSON.parse(answer.body), { error: { message: 'Request body not received in time', code: 408 } })
    t.ok(Date.now() - started < 4000, `answered after the grace period at too low a rate (${Date.now() - started} ms), not at the deadline`)
    if (host.name !== 'fetch handler') t.match(answer.headers, /connection: close/i, 'and the connection, its body unread, is closed')
    t.equal(await h.reserved(), 0, 'the budget is whole again')
    const native = await h.partial('/v1beta/models/gemini-2.5-pro:generateContent', { 'x-goog-api-key': PASSWORD }, 2 * MiB, '{')
    t.match(JSON.parse(native.body), { error: { code: 408, status: 'DEADLINE_EXCEEDED' } }, 'native shape')
  })
}
