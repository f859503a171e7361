// The stage a real agent runs on: the Google fake playing a scripted model, the gateway over it (in this process, on
// 127.0.0.1, gemini-api backend, GEMINI_LIMITS as the README sets them), and a recorder in front of the gateway that
// keeps every request an agent sends (headers and body, secrets redacted) with the status it got.
import http from 'node:http'
import net from 'node:net'
import type { AddressInfo, Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { startFakeUpstream } from '../support/fake-upstream.ts'
import type { FakeUpstream } from '../support/fake-upstream.ts'
import { startGateway } from '../support/gateway.ts'
import type { StartedGateway } from '../support/gateway.ts'
import { ADMIN, keyUser } from '../support/gateway-keys.ts'

/** The README's example limits (README.md, "Giving your team access"): every agent runs under them. */
export const README_LIMITS = { member: { rpm: 60, tpm: 200000, tokens_per_day: 2000000, concurrent: 4 } }

export interface Exchange {
  method: string
  path: string
  headers: Record<string, string | string[]>
  body: unknown
  status: number
  /** The answer's body when it was an error (4xx/5xx), for the record of what the gateway refused. */
  error?: unknown
}

export interface Stage {
  /** Where agents are pointed: the recorder in front of the gateway. */
  url: string
  fake: FakeUpstream
  gateway: StartedGateway
  /** A new member with a ghk_ key (one per run, so one run's tokens do not count against the next). */
  memberKey (username: string): Promise<string>
  /** The exchanges recorded since the last take. */
  take (): Exchange[]
  close (): Promise<void>
}

const SECRET_HEADERS = /^(authorization|x-api-key|x-goog-api-key|api-key|cookie)$/i

function redact (headers: http.IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue
    out[name] = SECRET_HEADERS.test(name) ? '<redacted>' : value
  }
  return out
}

function parse (raw: string): unknown {
  if (raw === '') return undefined
  try { return JSON.parse(raw) } catch { return raw }
}

async function startRecorder (target: string): Promise<{ url: string, exchanges: Exchange[], close (): Promise<void> }> {
  const exchanges: Exchange[] = []
  const sockets = new Set<Socket>()
  const upstream = new URL(target)
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const raw = Buffer.concat(chunks)
      const url = new URL(req.url ?? '/', 'http://agent')
      // Query keys (?key=) are secrets too.
      if (url.searchParams.has('key')) url.searchParams.set('key', '<redacted>')
      const exchange: Exchange = { method: req.method ?? 'GET', path: url.pathname + url.search, headers: redact(req.headers), body: parse(raw.toString('utf8')), status: 0 }
      exchanges.push(exchange)
      const forward = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } }, answer => {
        exchange.status = answer.statusCode ?? 0
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        if (exchange.status < 400) { answer.pipe(res); return }
        const body: Buffer[] = []
        answer.on('data', (c: Buffer) => { body.push(c); res.write(c) })
        answer.on('end', () => { exchange.error = parse(Buffer.concat(body).toString('utf8')); res.end() })
      })
      forward.on('error', () => res.destroy())
      res.on('close', () => { if (!res.writableFinished) forward.destroy() })
      forward.end(raw)
    })
  })
  server.on('connection', s => { sockets.add(s); s.on('close', () => sockets.delete(s)) })
  server.on('upgrade', (req: http.IncomingMessage, client: Duplex, head: Buffer) => {
    exchanges.push(tunnel(req, client, head, upstream))
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exchanges,
    close: async () => {
      for (const s of sockets) s.destroy()
      await new Promise<void>(resolve => server.close(() => resolve()))
    },
  }
}

/**
 * A WebSocket upgrade passed through as bytes (the handshake as received, then both directions piped), recorded as
 * one exchange whose status is the gateway's answer to the handshake (101 when upgraded).
 */
function tunnel (req: http.IncomingMessage, client: Duplex, head: Buffer, upstream: URL): Exchange {
  const url = new URL(req.url ?? '/', 'http://agent')
  const exchange: Exchange = { method: req.method ?? 'GET', path: url.pathname + url.search, headers: redact(req.headers), body: undefined, status: 0 }
  const gateway = net.connect(Number(upstream.port), upstream.hostname, () => {
    const lines = [`${req.method ?? 'GET'} ${req.url ?? '/'} HTTP/1.1`]
    for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`)
    gateway.write(lines.join('\r\n') + '\r\n\r\n')
    if (head.length > 0) gateway.write(head)
    gateway.once('data', (first: Buffer) => { exchange.status = Number(/^HTTP\/1\.1 (\d{3})/.exec(first.toString('latin1'))?.[1] ?? 0) })
    gateway.pipe(client)
    client.pipe(gateway)
  })
  gateway.on('error', () => client.destroy())
  client.on('error', () => gateway.destroy())
  gateway.on('close', () => client.destroy())
  client.on('close', () => gateway.destroy())
  return exchange
}

export async function startStage (options: { printLogs?: boolean } = {}): Promise<Stage> {
  const fake = await startFakeUpstream()
  const gateway = await startGateway({
    ...ADMIN,
    GEMINI_BACKEND: 'gemini-api',
    GEMINI_API_KEY: 'agents-upstream-key',
    GEMINI_API_ENDPOINT: fake.url,
    GEMINI_LIMITS: JSON.stringify(README_LIMITS),
    LOG_LEVEL: 'info',
  }, { printLogs: options.printLogs })
  const recorder = await startRecorder(gateway.url)
  return {
    url: recorder.url,
    fake,
    gateway,
    memberKey: async username => (await keyUser(gateway.url, username, { name: 'agent' })).key,
    take: () => recorder.exchanges.splice(0),
    close: async () => {
      await recorder.close()
      await gateway.close()
      await fake.close()
    },
  }
}
