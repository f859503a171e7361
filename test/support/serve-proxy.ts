// A proxy's route table served by node:http on 127.0.0.1, closed with the test (open sockets first, then the
// server, then the proxy), for tests that need only the URL.
import http from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { createNodeListener } from '../../lib/index.ts'
import type { Proxy, ProxyOptions } from '../../lib/index.ts'

/**
 * A Code Assist upstream that is never reached (an expired token, a token endpoint nobody listens on): for tests of
 * what the code-assist backend answers by itself.
 */
export const UNREACHED_CODE_ASSIST: ProxyOptions['upstream'] = {
  credentials: { client_id: 'c', client_secret: 's', refresh_token: 'r', token: 't', expiry: '2000-01-01T00:00:00Z', token_uri: 'http://127.0.0.1:9/token' },
}

interface Teardown { teardown (fn: () => unknown): void }

export async function serveProxy (t: Teardown, proxy: Pick<Proxy, 'routeTable' | 'close'>): Promise<string> {
  const sockets = new Set<Socket>()
  const server = http.createServer(createNodeListener(proxy.routeTable))
  server.on('connection', s => { sockets.add(s); s.on('close', () => sockets.delete(s)) })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    for (const s of sockets) s.destroy()
    await new Promise<void>(resolve => server.close(() => resolve()))
    await proxy.close()
  })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}
