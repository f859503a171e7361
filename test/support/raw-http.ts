// Raw HTTP against a listening host: a request that sends only part of its declared body, and a host's body
// budget read beside it (test/http/body-admission.test.ts, test/gateway/body-admission.test.ts).
import { connect } from 'node:net'
import type { Socket } from 'node:net'

export function chatBody (bytes: number): string {
  const head = '{"model":"gemini-2.5-pro","messages":[{"role":"user","content":"'
  const tail = '"}]}'
  return head + 'x'.repeat(bytes - head.length - tail.length) + tail
}

export interface RawAnswer { status: number, headers: string, body: string }

/**
 * Sends a request head declaring `declared` body bytes and then only `sent` of them, keeping the socket open.
 * Resolves with the answer once its head and body (content-length) are in.
 */
export function partialRequest (port: number, path: string, headers: Record<string, string>, declared: number, sent: string, sockets: Set<Socket>): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    sockets.add(socket)
    let received = ''
    socket.on('error', () => {})
    socket.on('data', chunk => {
      received += chunk.toString('utf8')
      const end = received.indexOf('\r\n\r\n')
      if (end === -1) return
      const head = received.slice(0, end)
      const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0)
      const body = received.slice(end + 4)
      if (body.length >= length) resolve({ status: Number(head.split(' ')[1]), headers: head, body })
    })
    socket.on('close', () => reject(new Error(`closed before an answer: ${received}`)))
    const lines = Object.entries({ host: '127.0.0.1', 'content-type': 'application/json', 'content-length': String(declared), ...headers }).map(([k, v]) => `${k}: ${v}`)
    socket.write(`POST ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n${sent}`)
  })
}

export interface Host {
  post: (path: string, body: string, headers: Record<string, string>) => Promise<{ status: number, text: string }>
  /** A request declaring `declared` bytes that sends only `sent`: the answer, if one comes. */
  partial: (path: string, headers: Record<string, string>, declared: number, sent: string) => Promise<RawAnswer>
  /** Bytes reserved in the proxy's body budget. */
  reserved: () => Promise<number>
  close: () => Promise<void>
}

export function socketHost (port: number, reserved: () => Promise<number>, close: () => Promise<void>): Host {
  const sockets = new Set<Socket>()
  return {
    post: async (path, body, headers) => {
      const res = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } })
      return { status: res.status, text: await res.text() }
    },
    partial: (path, headers, declared, sent) => partialRequest(port, path, headers, declared, sent, sockets),
    reserved,
    close: async () => {
      for (const s of sockets) s.destroy()
      await close()
    },
  }
}
