// The baseline server: a bare Hapi route answering constant JSON, same Hapi version as the gateway.
// BARE_SPIN_US=n makes each request also spin the CPU for n µs (bench/bare-overhead.ts: what a route that adds
// n µs of work gets, against the bare one).
import Hapi from '@hapi/hapi'

const spinMs = Number(process.env.BARE_SPIN_US ?? 0) / 1000
const server = Hapi.server({ host: '127.0.0.1', port: 0 })
server.route({
  method: 'GET',
  path: '/bare',
  handler: () => {
    if (spinMs > 0) {
      const end = performance.now() + spinMs
      while (performance.now() < end);
    }
    return { access_token: 'x'.repeat(43), token_type: 'bearer' }
  },
})
await server.start()
console.log(`listening on ${server.info.uri}`)
process.once('SIGTERM', () => { void server.stop().then(() => process.exit(0)) })
