// A Gemini API fake for pass-through tests that sees bodies as they arrive (test/support/fake-upstream.ts reads
// them whole): every request's method, URL, headers, size and sha256, and `firstBytes` resolving once the first
// bytes of the latest request body arrived. Answers: `:embedContent` and `:batchEmbedContents` in Google's shape
// (values [text length, index, 0.5]); an upload with its size and digest, and a resumable upload URL on this host;
// anything else echoes what it got; Google's system parameters (`fields`, `alt=proto`, `callback`) shape every
// answer as Google's front end does (fake-system-parameters.ts). Listens on 127.0.0.1.
import http from 'node:http'
import { createHash } from 'node:crypto'
import type { AddressInfo, Socket } from 'node:net'
import { shapeAnswer } from './fake-system-parameters.ts'

export interface SeenRequest { method: string, url: string, headers: http.IncomingHttpHeaders, size: number, sha256: string, text: string }

export interface FakePassThrough {
  url: string
  seen: SeenRequest[]
  /** Resolves when the next request's first body bytes arrive. */
  firstBytes: () => Promise<void>
  close (): Promise<void>
}

export async function startFakePassThrough (): Promise<FakePassThrough> {
  const seen: SeenRequest[] = []
  let onFirst: (() => void) | undefined
  let first = new Promise<void>(resolve => { onFirst = resolve })
  const sockets = new Set<Socket>()
  let base = ''
  const server = http.createServer((req, res) => {
    const hash = createHash('sha256')
    const kept: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      if (size === 0) onFirst?.()
      size += chunk.length
      hash.update(chunk)
      if (size < 1024 * 1024) kept.push(chunk)
    })
    req.on('end', () => {
      const text = Buffer.concat(kept).toString()
      const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, size, sha256: hash.digest('hex'), text }
      seen.push(request)
      const path = request.url.split('?')[0]
      let body: unknown
      const headers: Record<string, string> = { 'content-type': 'application/json; charset=UTF-8', 'set-cookie': 'upstream=1', 'x-secret-upstream': 'no' }
      if (path.endsWith(':embedContent')) {
        body = { embedding: { values: [0.1, 0.2, 0.3] } }
      } else if (path.endsWith(':batchEmbedContents')) {
        const requests = (JSON.parse(text) as { requests: Array<{ content: { parts: Array<{ text: string }> } }> }).requests
        body = { embeddings: requests.map((r, i) => ({ values: [r.content.parts[0].text.length, i, 0.5] })) }
      } else if (path.startsWith('/upload/')) {
        headers['x-goog-upload-url'] = `${base}/upload/v1beta/files?upload_id=abc&upload_protocol=resumable`
        headers['x-goog-upload-status'] = 'final'
        body = { file: { name: 'files/abc', sizeBytes: String(size), sha256Hash: request.sha256 } }
      } else {
        body = { method: request.method, url: request.url }
      }
      // Google's system parameters reshape the answer (fake-system-parameters.ts).
      const shaped = shapeAnswer(Object.fromEntries(new URL(request.url, 'http://fake').searchParams), body, true)
      if (shaped !== undefined) res.writeHead(200, { ...headers, 'content-type': shaped.contentType }).end(shaped.body)
      else res.writeHead(200, headers).end(JSON.stringify(body))
    })
  })
  server.on('connection', s => { sockets.add(s); s.on('close', () => sockets.delete(s)) })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url: base,
    seen,
    firstBytes: () => {
      first = new Promise<void>(resolve => { onFirst = resolve })
      return first
    },
    async close () {
      for (const s of sockets) s.destroy()
      await new Promise<void>(resolve => server.close(() => resolve()))
    },
  }
}
