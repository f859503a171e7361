// Mount the accounts service, the model proxy and the web console in a plain node:http server.
// Run: npm run example examples/node-http.ts
// It reads the gateway's variables with the gateway's rules (README, "Configuration"): PORT (default 8888),
// AUTH_ADMIN_PASSWORD, GEMINI_AUTH_PASSWORD, an upstream (GEMINI_CREDENTIALS or GEMINI_API_KEY, ...). Listens on 127.0.0.1.
import { createServer } from 'node:http'
import { createAuthService, createConsole, createEmbeddedStore, createNodeListener, createProxy, createRateLimiter, createUsageLedger, environmentOptions, readEnvironment } from 'gatehouse'

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

const tables = webConsole === undefined ? [auth.routeTable, proxy.routeTable] : [auth.routeTable, proxy.routeTable, webConsole.routeTable]
const server = createServer(createNodeListener(tables))
server.listen(env.port, '127.0.0.1', () => {
  const address = server.address()
  const base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : env.port}`
  console.log(`listening on ${base}/v1/api`)
  if (webConsole !== undefined) console.log(`console on ${base}${webConsole.routeTable.scope}/`)
})

process.once('SIGTERM', () => {
  server.close()
  void Promise.all([proxy.close(), usage.close()]).then(async () => await store.close())
})
