// Mount the accounts service and the model proxy in a Hapi server, as a plugin.
// Run: node examples/hapi.ts   (PORT, default 3000; listens on 127.0.0.1; GEMINI_AUTH_PASSWORD for the proxy)
import Hapi from '@hapi/hapi'
import { createAuthService, createEmbeddedStore, createProxy, hapiPlugin } from 'gatehouse'

const store = await createEmbeddedStore({})
const auth = createAuthService({ store, adminPassword: process.env.ADMIN_PASSWORD })
await auth.ensureSystemUser()
const proxy = createProxy({ password: process.env.GEMINI_AUTH_PASSWORD })

// Streams must reach the client chunk by chunk: no compression here.
const server = Hapi.server({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1', compression: false })
server.route({ method: 'GET', path: '/', handler: () => ({ hello: 'from hapi' }) })
await server.register({ plugin: hapiPlugin, options: { tables: [auth.routeTable, proxy.routeTable] } })
await server.start()
console.log(`listening on ${server.info.uri}/v1/api`)

process.once('SIGTERM', () => {
  void server.stop().then(async () => await Promise.all([proxy.close(), store.close()]))
})
