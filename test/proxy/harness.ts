// The proxy mounted on node:http (the lead's node adapter) in front of the fake upstream, for tests
// that drive it with real clients. Not a test file itself (only *.test.ts run).
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Socket } from 'node:net'
import { startFakeUpstream } from '../support/fake-upstream.ts'
import type { FakeUpstream } from '../support/fake-upstream.ts'
import type { Proxy, ProxyOptions, BackendOptions, NodeListenerOptions } from '../../lib/index.ts'
import { createNodeListener, createProxy } from '../../lib/index.ts'

export const PASSWORD = 'proxy-test-password'

export interface ProxyHarness {
  url: string
  fake: FakeUpstream
  proxy: Proxy
  /** Events the observer saw. */
  events: string[]
  close (): Promise<void>
}

interface Teardown { teardown (fn: () => unknown): void }

export interface HarnessOptions extends Omit<ProxyOptions, 'upstream'> {
  /** The backend the proxy calls on the fake upstream: each test names it (test/proxy/backends.ts has all three). */
  backendName: 'code-assist' | 'gemini-api' | 'vertex'
  upstream?: Partial<BackendOptions>
  /** The node listener's own options (createNodeListener's). */
  listener?: NodeListenerOptions
}

/** Credentials whose access token is expired, so the first call refreshes through the fake's /token. */
export function staleCredentials (tokenUri: string): Record<string, unknown> {
  return {
    client_id: 'test-client.apps.googleusercontent.com',
    client_secret: 'test-secret',
    refresh_token: 'test-refresh-token',
    token: 'stale-access-token',
    expiry: '2000-01-01T00:00:00Z',
    token_uri: tokenUri,
  }
}

export async function startProxy (t: Teardown, options: HarnessOptions): Promise<ProxyHarness> {
  const fake = await startFakeUpstream()
  const events: string[] = []
  const { upstream, backendName, imageFetch, listener: listenerOptions, ...rest } = options
  const upstreamOptions: BackendOptions = backendName === 'gemini-api'
    ? { backend: 'gemini-api', apiKey: 'test-api-key', geminiApiEndpoint: fake.url, maxRetries: 0, ...upstream }
    : backendName === 'vertex'
      ? { backend: 'vertex', apiKey: 'express-key', vertexEndpoint: fake.url, maxRetries: 0, ...upstream }
      : { credentials: staleCredentials(fake.tokenUri), codeAssistEndpoint: fake.url, maxRetries: 0, ...upstream }
  const proxy = createProxy({
    password: PASSWORD,
    upstream: upstreamOptions,
    // Test image servers listen on random ports: the port rule (80 and 443 by default) is tested where it is named.
    imageFetch: imageFetch === false ? false : { timeoutMs: 1000, allowedPorts: 'any', ...imageFetch },
    observer: {
      streamOpened: () => events.push('opened'),
      streamClosed: () => events.push('closed'),
      streamChunk: (n: number) => { for (let i = 0; i < n; i++) events.push('chunk') },
    },
    ...rest,
  })
  const sockets = new Set<Socket>()
  const listener = createNodeListener(proxy.routeTable, listenerOptions)
  const server = http.createServer(listener)
  server.on('upgrade', listener.upgrade)
  server.on('connection', s => { sockets.add(s); s.on('close', () => sockets.delete(s)) })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  let closed = false
  const close = async (): Promise<void> => {
    if (closed) return
    closed = true
    for (const s of sockets) s.destroy()
    await new Promise<void>(resolve => server.close(() => resolve()))
    await proxy.close()
    await fake.close()
  }
  t.teardown(close)
  return { url, fake, proxy, events, close }
}

/** A server that accepts connections and never answers (slow image hosts). */
export async function startSilentServer (t: Teardown): Promise<string> {
  const sockets = new Set<Socket>()
  const server = http.createServer(() => { /* never answers */ })
  server.on('connection', s => { sockets.add(s); s.on('close', () => sockets.delete(s)) })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    for (const s of sockets) s.destroy()
    await new Promise<void>(resolve => server.close(() => resolve()))
  })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** A port nothing listens on. */
export async function closedPort (): Promise<number> {
  const server = http.createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>(resolve => server.close(() => resolve()))
  return port
}

/** Serves fixed bytes with a content type at /image. */
export async function startImageServer (t: Teardown, bytes: Buffer, contentType: string): Promise<string> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': contentType, 'content-length': String(bytes.length) })
    res.end(bytes)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>(resolve => { server.closeAllConnections(); server.close(() => resolve()) }))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/image`
}

/** A 1×1 PNG. */
export const PNG_1X1 = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64')
/** The first bytes of a JPEG. */
export const JPEG_HEAD = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01])
