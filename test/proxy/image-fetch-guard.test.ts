// Image URLs cannot make the gateway reach its own network (SSRF): loopback, private, link-local and
// other internal addresses are refused before any connection, on every redirect hop, unless the
// operator turns on imageFetch.allowPrivateNetworks.
import http from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import t from 'tap'
import { blockedRange } from '../../lib/proxy/image-fetch-guard.ts'
import { createImageFetcher } from '../../lib/proxy/image-fetch.ts'
import { startProxy, closedPort, PASSWORD, PNG_1X1 } from './harness.ts'

interface Teardown { teardown (fn: () => unknown): void }

/** A 127.0.0.1 server counting connections; `handler` answers (default: the 1×1 PNG). */
async function startCountingServer (t: Teardown, handler?: http.RequestListener): Promise<{ port: number, connections: () => number }> {
  let connections = 0
  const sockets = new Set<Socket>()
  const server = http.createServer(handler ?? ((_req, res) => {
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(PNG_1X1.length) })
    res.end(PNG_1X1)
  }))
  server.on('connection', s => { connections++; sockets.add(s); s.on('close', () => sockets.delete(s)) })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    for (const s of sockets) s.destroy()
    await new Promise<void>(resolve => server.close(() => resolve()))
  })
  return { port: (server.address() as AddressInfo).port, connections: () => connections }
}

async function chatWithImage (proxyUrl: string, imageUrl: string): Promise<{ status: number, json: any, ms: number }> {
  const started = Date.now()
  const res = await fetch(`${proxyUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${PASSWORD}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: imageUrl } }] }] }),
  })
  return { status: res.status, json: await res.json(), ms: Date.now() - started }
}

t.test('the address classifier names internal ranges (and IPv6 forms carrying them) and lets public addresses pass', async t => {
  const table: Array<[string, string | undefined]> = [
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'shared (CGNAT)'],
    ['100.127.255.255', 'shared (CGNAT)'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['::127.0.0.1', 'IPv4-compatible'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::ffff:a00:1', 'private'],
    ['::ffff:0.0.0.0', 'unspecified'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b:1::1', 'local NAT64'],
    ['2002:7f00:1::1', 'loopback'],
    ['fc00::1', 'private'],
    ['fd12:3456:789a::1', 'private'],
    ['fe80::1', 'link-local'],
    ['FE80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fec0::1', 'site-local'],
    ['ff02::1', 'multicast'],
    ['not an address', 'unparsable'],
    ['8.8.8.8', undefined],
    ['1.1.1.1', undefined],
    ['100.63.255.255', undefined],
    ['100.128.0.1', undefined],
    ['172.15.255.255', undefined],
    ['172.32.0.1', undefined],
    ['169.255.0.1', undefined],
    ['223.255.255.255', undefined],
    ['::ffff:8.8.8.8', undefined],
    ['64:ff9b::8.8.8.8', undefined],
    ['2002:808:808::1', undefined],
    ['2001:4860:4860::8888', undefined],
    ['2606:4700:4700::1111', undefined],
  ]
  for (const [address, range] of table) t.equal(blockedRange(address), range, address)
})

t.test('image URLs on internal addresses are a 400 naming the rule, answered before any connection', async t => {
  const h = await startProxy(t)
  const server = await startCountingServer(t)
  const p = server.port
  const table: Array<[string, string, RegExp]> = [
    ['IPv4 loopback', `http://127.0.0.1:${p}/image`, /loopback/],
    ['a name resolving to loopback', `http://localhost:${p}/image`, /loopback/],
    ['IPv6 loopback', `http://[::1]:${p}/image`, /loopback/],
    ['IPv4-mapped IPv6 loopback', `http://[::ffff:127.0.0.1]:${p}/image`, /loopback/],
    ['loopback written as a number', `http://2130706433:${p}/image`, /loopback/],
    ['unspecified address', `http://0.0.0.0:${p}/image`, /unspecified/],
    ['https to loopback', `https://127.0.0.1:${p}/image`, /loopback/],
    ['cloud metadata', 'http://169.254.169.254/latest/meta-data/', /link-local/],
    ['cloud metadata, IPv4-mapped', 'http://[::ffff:169.254.169.254]/latest/meta-data/', /link-local/],
    ['RFC 1918 10/8', 'http://10.0.0.1/a.png', /private/],
    ['RFC 1918 192.168/16', 'http://192.168.0.1/a.png', /private/],
    ['CGNAT', 'http://100.64.0.1/a.png', /CGNAT/],
    ['IPv6 unique local', 'http://[fd00::1]/a.png', /private/],
    ['IPv6 link-local', 'http://[fe80::1]/a.png', /link-local/],
  ]
  for (const [name, url, range] of table) {
    const res = await chatWithImage(h.url, url)
    t.equal(res.status, 400, name)
    t.match(res.json, {
      error: { type: 'invalid_request_error', code: 400, param: 'messages[0].content[1].image_url', message: /the address is not allowed/ },
    }, name)
    t.match(res.json.error.message, range, name)
    t.ok(res.ms < 900, `${name}: answered in ${res.ms} ms, before the 1000 ms fetch limit`)
  }
  t.equal(server.connections(), 0, 'the image server was never connected to')
  t.equal(h.fake.calls('generateContent').length, 0, 'nothing reached the upstream')
})

t.test('allowPrivateNetworks: true fetches images from loopback addresses and names', async t => {
  const h = await startProxy(t, { imageFetch: { timeoutMs: 1000, allowPrivateNetworks: true } })
  const server = await startCountingServer(t)
  for (const url of [`http://127.0.0.1:${server.port}/image`, `http://localhost:${server.port}/image`]) {
    const res = await chatWithImage(h.url, url)
    t.equal(res.status, 200, url)
    t.same(h.fake.last('generateContent')!.body.request.contents[0].parts[1], { inlineData: { mimeType: 'image/png', data: PNG_1X1.toString('base64') } }, url)
  }
  t.ok(server.connections() >= 1)
})

t.test('every redirect hop is checked: a redirect to an internal address is refused before connecting to it', async t => {
  // The real rules, except 127.0.0.0/8, so the first hop can be served here (no public hosts in tests).
  const fetcher = createImageFetcher({ timeoutMs: 1000 }, address => address.startsWith('127.') ? undefined : blockedRange(address))
  t.teardown(() => fetcher.close())
  let target = ''
  const first = await startCountingServer(t, (_req, res) => { res.writeHead(302, { location: target }); res.end() })
  // Nothing listens on this port: were the guard skipped, the hop would fail as "connection refused" instead.
  const port = await closedPort()
  const table: Array<[string, RegExp]> = [
    [`http://[::1]:${port}/image`, /not allowed \(loopback network\)/],
    [`http://[::ffff:10.0.0.1]:${port}/image`, /not allowed \(private network\)/],
    ['http://169.254.169.254/latest/meta-data/', /not allowed \(link-local network\)/],
  ]
  for (const [location, message] of table) {
    target = location
    const started = Date.now()
    const err = await fetcher.fetch(`http://127.0.0.1:${first.port}/image`).then(() => undefined, (e: unknown) => e)
    t.match(err, { code: 'IMAGE_FETCH_FAILED', status: 400, message }, location)
    t.ok(Date.now() - started < 900, `${location}: refused without waiting for a connection`)
  }
  t.ok(first.connections() >= 1, 'the allowed first hop was fetched')

  const allowed = await startCountingServer(t)
  target = `http://localhost:${allowed.port}/image`
  const image = await fetcher.fetch(`http://127.0.0.1:${first.port}/image`)
  t.same(image, { mimeType: 'image/png', bytes: PNG_1X1 }, 'a redirect to an allowed name is still followed')
})
