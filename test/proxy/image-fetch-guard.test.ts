// Image URLs cannot make the gateway reach its own network (SSRF): loopback, private, link-local and
// other internal addresses are refused before any connection, on every redirect hop, unless the
// operator turns on imageFetch.allowPrivateNetworks; ports other than 80 and 443 likewise, unless
// imageFetch.allowedPorts lists them. Every refused URL gets the same answer; the reason is logged.
import http from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import t from 'tap'
import { blockedRange } from '../../lib/proxy/images/fetch-guard.ts'
import { createImageFetcher } from '../../lib/proxy/images/fetch.ts'
import type { Logger } from '../../lib/index.ts'
import { startProxy, startSilentServer, closedPort, PASSWORD, PNG_1X1 } from './harness.ts'

/** A logger keeping every line, for what is logged but never answered. */
function capturingLogger (): Logger & { lines: Array<{ level: string, obj: any, msg?: string }> } {
  const lines: Array<{ level: string, obj: any, msg?: string }> = []
  const at = (level: string) => (obj: unknown, msg?: string) => { lines.push({ level, obj, msg }) }
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }
}

/** The URL as the answer names it: without its query. */
const named = (url: string): string => { const u = new URL(url); return `${u.protocol}//${u.host}${u.pathname}` }

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

t.test('the address classifier names internal ranges (and IPv6 forms carrying them, SIIT ::ffff:0:0:0/96 and Teredo 2001::/32 included) and lets public addresses pass', async t => {
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
    ['::ffff:0:127.0.0.1', 'SIIT'],
    ['::ffff:0:808:808', 'SIIT'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['2001::1', 'Teredo'],
    ['2001:0:ffff:ffff:ffff:ffff:ffff:ffff', 'Teredo'],
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
    ['2001:1::1', undefined],
    ['2001:db8::1', undefined],
    ['2606:4700:4700::1111', undefined],
  ]
  for (const [address, range] of table) t.equal(blockedRange(address), range, address)
})

t.test('image URLs on internal addresses are a 400 answered before any connection, the rule named only in the log', async t => {
  const logger = capturingLogger()
  const h = await startProxy(t, { backendName: 'code-assist', logger })
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
  // The first request loads joi and undici (lib/load-package.ts): the time checked below is the guard's, not that.
  await chatWithImage(h.url, 'http://10.0.0.1/warm-up.png')
  for (const [name, url, range] of table) {
    logger.lines.length = 0
    const res = await chatWithImage(h.url, url)
    t.equal(res.status, 400, name)
    t.same(res.json, {
      error: { type: 'invalid_request_error', code: 400, param: 'messages[0].content[1].image_url', message: `Could not fetch the image URL ${named(url)}` },
    }, name)
    t.match(logger.lines, [{ level: 'warn', msg: 'Image URL refused', obj: { url: named(url), reason: range } }], `${name}: the log says why`)
    t.ok(res.ms < 900, `${name}: answered in ${res.ms} ms, before the 1000 ms fetch limit`)
  }
  t.equal(server.connections(), 0, 'the image server was never connected to')
  t.equal(h.fake.calls('generateContent').length, 0, 'nothing reached the upstream')
})

t.test('allowPrivateNetworks: true fetches images from loopback addresses and names', async t => {
  const h = await startProxy(t, { backendName: 'code-assist', imageFetch: { timeoutMs: 1000, allowPrivateNetworks: true } })
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
  const logger = capturingLogger()
  const fetcher = createImageFetcher({ timeoutMs: 1000, allowedPorts: 'any' }, address => address.startsWith('127.') ? undefined : blockedRange(address), logger)
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
  for (const [location, reason] of table) {
    target = location
    logger.lines.length = 0
    const started = Date.now()
    const err = await fetcher.fetch(`http://127.0.0.1:${first.port}/image`).then(() => undefined, (e: unknown) => e)
    t.match(err, { code: 'IMAGE_FETCH_FAILED', status: 400, message: `Could not fetch the image URL http://127.0.0.1:${first.port}/image` }, `${location}: the redirect target is not named`)
    t.match(logger.lines[0]?.obj.reason, reason, `${location}: the log says why`)
    t.ok(Date.now() - started < 900, `${location}: refused without waiting for a connection`)
  }
  t.ok(first.connections() >= 1, 'the allowed first hop was fetched')

  const allowed = await startCountingServer(t)
  target = `http://localhost:${allowed.port}/image`
  const image = await fetcher.fetch(`http://127.0.0.1:${first.port}/image`)
  t.same(image, { mimeType: 'image/png', bytes: PNG_1X1 }, 'a redirect to an allowed name is still followed')
})

t.test('every refused image URL gets one uniform error: unknown names, internal addresses, refused ports, closed ports and silent servers look the same to the client', async t => {
  const logger = capturingLogger()
  const guarded = createImageFetcher({ timeoutMs: 400 }, blockedRange, logger)
  const open = createImageFetcher({ timeoutMs: 400, allowPrivateNetworks: true, allowedPorts: 'any' }, blockedRange, logger)
  t.teardown(async () => { await guarded.close(); await open.close() })
  const closed = await closedPort()
  const silent = await startSilentServer(t)
  const cases: Array<[string, typeof guarded, string, RegExp]> = [
    ['a name that does not resolve', guarded, 'http://no-such-host.invalid/a.png', /host not found|no complete answer/],
    ['an internal address', guarded, 'http://10.1.2.3/a.png', /private network/],
    ['an internal name', guarded, 'https://localhost/a.png', /loopback network/],
    ['a port other than 80 and 443', guarded, 'http://192.0.2.10:22/a.png', /port 22 is not allowed/],
    ['a closed port', open, `http://127.0.0.1:${closed}/a.png?sig=secret`, /connection refused/],
    ['a server that never answers', open, `${silent}/a.png`, /no complete answer/],
  ]
  const answers = new Set<string>()
  for (const [name, fetcher, url, reason] of cases) {
    logger.lines.length = 0
    const err = await fetcher.fetch(url).then(() => undefined, (e: unknown) => e) as { code: string, message: string }
    t.equal(err?.code, 'IMAGE_FETCH_FAILED', name)
    t.equal(err.message, `Could not fetch the image URL ${named(url)}`, `${name}: nothing but the URL as sent`)
    answers.add(err.message.replace(named(url), '<url>'))
    t.match(logger.lines.map(l => l.obj.reason).join(' '), reason, `${name}: the reason is in the log`)
  }
  t.same([...answers], ['Could not fetch the image URL <url>'], 'one message for all of them')
})

t.test('with private URLs allowed, every refused image URL gets one uniform error: a server\'s 404, an HTML page or an empty body read like a closed port', async t => {
  const logger = capturingLogger()
  const open = createImageFetcher({ timeoutMs: 1000, allowPrivateNetworks: true, allowedPorts: 'any' }, blockedRange, logger)
  t.teardown(() => open.close())
  const server = http.createServer((req, res) => {
    if (req.url === '/missing') res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not found</h1>')
    else if (req.url === '/page') res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Admin</h1>')
    else if (req.url === '/empty') res.writeHead(200, { 'content-type': 'image/png' }).end()
    else res.writeHead(200, { 'content-type': 'image/png' }).end('not a png')
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>(resolve => { server.closeAllConnections(); server.close(() => resolve()) }))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const closed = await closedPort()
  const cases: Array<[string, string, RegExp]> = [
    ['a closed port', `http://127.0.0.1:${closed}/a.png`, /connection refused/],
    ['a 404', `${base}/missing`, /answered 404/],
    ['a page that is not an image', `${base}/page`, /not an image/],
    ['an empty body', `${base}/empty`, /empty/],
    ['bytes that are no image', `${base}/junk`, /./],
  ]
  const answers = new Set<string>()
  for (const [name, url, reason] of cases) {
    logger.lines.length = 0
    const err = await open.fetch(url).then(() => undefined, (e: unknown) => e) as { code: string, message: string }
    t.equal(err?.code, 'IMAGE_FETCH_FAILED', name)
    answers.add(err.message.replace(named(url), '<url>'))
    t.match(logger.lines.map(l => l.obj.reason).join(' '), reason, `${name}: the reason is in the log`)
  }
  t.same([...answers], ['Could not fetch the image URL <url>'], 'one message for all of them')
})

t.test('image URLs may use ports 80 and 443 only unless allowedPorts lists others, on every redirect hop, refused before connecting', async t => {
  const server = await startCountingServer(t)
  const defaults = createImageFetcher({ timeoutMs: 1000, allowPrivateNetworks: true })
  t.teardown(() => defaults.close())
  const err = await defaults.fetch(`http://127.0.0.1:${server.port}/image`).then(() => undefined, (e: unknown) => e)
  t.match(err, { code: 'IMAGE_FETCH_FAILED', message: `Could not fetch the image URL http://127.0.0.1:${server.port}/image` })
  t.equal(server.connections(), 0, 'never connected to')

  const listed = createImageFetcher({ timeoutMs: 1000, allowPrivateNetworks: true, allowedPorts: [server.port] })
  t.teardown(() => listed.close())
  t.same(await listed.fetch(`http://127.0.0.1:${server.port}/image`), { mimeType: 'image/png', bytes: PNG_1X1 }, 'a listed port is fetched')

  const other = await startCountingServer(t)
  const redirecting = await startCountingServer(t, (_req, res) => { res.writeHead(302, { location: `http://127.0.0.1:${other.port}/image` }); res.end() })
  const hop = createImageFetcher({ timeoutMs: 1000, allowPrivateNetworks: true, allowedPorts: [redirecting.port] })
  t.teardown(() => hop.close())
  t.match(await hop.fetch(`http://127.0.0.1:${redirecting.port}/image`).then(() => undefined, (e: unknown) => e), { code: 'IMAGE_FETCH_FAILED' }, 'a redirect to another port is refused')
  t.equal(other.connections(), 0, 'its target never connected to')
})
