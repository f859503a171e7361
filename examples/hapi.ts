// Mount the accounts service, the model proxy and the web console in a Hapi server, as a plugin.
// Run: npm run example examples/hapi.ts
// It reads the gateway's variables with the gateway's rules (README, "Configuration"): PORT (default 8888),
// AUTH_ADMIN_PASSWORD, GEMINI_AUTH_PASSWORD, an upstream (GEMINI_CREDENTIALS or GEMINI_API_KEY, ...). Listens on 127.0.0.1.
import Hapi from '@hapi/hapi'
import { createAuthService, createConsole, createEmbeddedStore, createProxy, createRateLimiter, createUsageLedger, environmentOptions, hapiPlugin, readEnvironment } from 'gatehouse'

const env = readEnvironment(process.env)
const options = environmentOptions(env)
const store = await createEmbeddedStore(options.embeddedStore)
const auth = createAuthService({ ...options.auth, store })
const system = await auth.ensureSystemUser()
if (system.generatedPassword !== undefined) console.log(`AUTH_ADMIN_PASSWORD is not set: set it to sign in as ${system.username}`)
const limiter = createRateLimiter({ store, byLevel: options.limits })
const usage = createUsageLedger({ store })
const proxy = createProxy({ ...options.proxy, keys: auth, limiter, usage })
const webConsole = options.console === undefined ? undefined : createConsole({ ...options.console, auth, proxy, limiter })

// Streams must reach the client chunk by chunk: no compression here.
const server = Hapi.server({ port: env.port, host: '127.0.0.1', compression: false })
server.route({ method: 'GET', path: '/', handler: () => ({ hello: 'from hapi' }) })
const tables = webConsole === undefined ? [auth.routeTable, proxy.routeTable] : [auth.routeTable, proxy.routeTable, webConsole.routeTable]
await server.register({ plugin: hapiPlugin, options: { tables } })
await server.start()
console.log(`listening on ${server.info.uri}/v1/api`)
if (webConsole !== undefined) console.log(`console on ${server.info.uri}${webConsole.routeTable.scope}/`)

process.once('SIGTERM', () => {
  void server.stop().then(async () => await Promise.all([proxy.close(), usage.close()])).then(async () => await store.close())
})
