// The floor of a Hapi gateway, for the proxy rows: a bare Hapi server (the gateway's Hapi version) whose one route
// sends each request on to the fake upstream (argv[2]) at the same path with undici, as bench/relay.ts does, and
// hands the answer's body stream back to Hapi untouched, streamed or not: no validation, translation, client
// authentication, logging or metrics. What it costs over bench/relay.ts is what Hapi itself costs per request and
// per chunk, which any gateway built on Hapi and undici pays before doing any work of its own.
import Hapi from '@hapi/hapi'
import { Agent, request } from 'undici'

const upstream = process.argv[2]
const agent = new Agent()
const server = Hapi.server({ host: '127.0.0.1', port: 0 })
server.route({
  method: 'POST',
  path: '/{path*}',
  // The raw bytes, unparsed: the relay does not read the request either.
  options: { payload: { parse: false, output: 'data' } },
  handler: async (req, h) => {
    const answer = await request(new URL(req.url.pathname + req.url.search, upstream), {
      dispatcher: agent,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: (req.headers.authorization as string | undefined) ?? '' },
      body: req.payload as Buffer,
    })
    return h.response(answer.body).code(answer.statusCode).type(String(answer.headers['content-type'] ?? 'application/json'))
  },
})
await server.start()
console.log(`listening on ${server.info.uri}`)
process.once('SIGTERM', () => { void server.stop().then(() => process.exit(0)) })
