// A proxy's route table served by node:http on 127.0.0.1, closed with the test (open sockets first, then the
// server, then the proxy), for tests that need only the URL.
import http from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { createNodeListener } from '../../lib/index.ts'
import type { Proxy } from '../../lib/index.ts'

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
