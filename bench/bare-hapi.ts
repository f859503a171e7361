// The baseline server: a bare Hapi route answering constant JSON, same Hapi version as the gateway.
import Hapi from '@hapi/hapi'

const server = Hapi.server({ host: '127.0.0.1', port: 0 })
server.route({ method: 'GET', path: '/bare', handler: () => ({ access_token: 'x'.repeat(43), token_type: 'bearer' }) })
await server.start()
console.log(`listening on ${server.info.uri}`)
process.once('SIGTERM', () => { void server.stop().then(() => process.exit(0)) })
