// A reference for the proxy rows: the least any proxy does. Each request is sent on to the fake upstream
// (argv[2]) at the same path with undici, and the answer's bytes piped back untouched: no parsing, no
// translation, no logging, no metrics. What it reaches against calling the fake directly bounds what the gateway,
// which does all of those, can reach on the same machine.
import { createServer } from 'node:http'
import { pipeline } from 'node:stream/promises'
import { Agent, request } from 'undici'

const upstream = process.argv[2]
const agent = new Agent()
const server = createServer((req, res) => {
  void (async () => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const answer = await request(new URL(req.url ?? '/', upstream), {
      dispatcher: agent,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: String(req.headers.authorization ?? '') },
      body: Buffer.concat(chunks),
    })
    res.writeHead(answer.statusCode, { 'content-type': String(answer.headers['content-type'] ?? 'application/json') })
    await pipeline(answer.body, res)
  })().catch(() => res.destroy())
})
// PORT: a fixed port, so bench/footprint.ts can time its start-up by polling it; default any free one.
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const { port } = server.address() as { port: number }
  console.log(`listening on http://127.0.0.1:${port}`)
})
process.once('SIGTERM', () => server.close(() => process.exit(0)))
