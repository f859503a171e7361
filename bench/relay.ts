// A reference for streaming: the least any proxy does. Each request's body is sent on to the fake's
// stream endpoint (argv[2]) with undici, and the answer's bytes piped back untouched: no parsing, no
// translation, no logging. What it reaches against calling the fake directly bounds what the gateway,
// which does all of those, can reach on the same machine.
import { createServer } from 'node:http'
import { pipeline } from 'node:stream/promises'
import { Agent, request } from 'undici'

const target = new URL('/v1internal:streamGenerateContent?alt=sse', process.argv[2])
const agent = new Agent()
const server = createServer((req, res) => {
  void (async () => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const upstream = await request(target, {
      dispatcher: agent,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: String(req.headers.authorization ?? '') },
      body: Buffer.concat(chunks),
    })
    res.writeHead(upstream.statusCode, { 'content-type': 'text/event-stream' })
    await pipeline(upstream.body, res)
  })().catch(() => res.destroy())
})
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number }
  console.log(`listening on http://127.0.0.1:${port}`)
})
process.once('SIGTERM', () => server.close(() => process.exit(0)))
