// Mount the accounts service, the model proxy and the web console in a Fastify app.
// Run: npm run example examples/fastify.ts
// It reads the gateway's variables with the gateway's rules (README, "Configuration"): PORT (default 8888),
// AUTH_ADMIN_PASSWORD, GEMINI_AUTH_PASSWORD, an upstream (GEMINI_CREDENTIALS or GEMINI_API_KEY, ...). Listens on 127.0.0.1.
import Fastify from 'fastify'
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
const listener = createNodeListener(tables)

const app = Fastify()
app.get('/', async () => ({ hello: 'from fastify' }))
// Gatehouse reads, limits and validates the raw body itself (and answers in its own error shapes): Fastify
// leaves the body unread and hands the request over.
app.removeAllContentTypeParsers()
app.addContentTypeParser('*', (_request, _payload, done) => { done(null) })
const prefixes = webConsole === undefined ? ['/v1', '/v1beta'] : ['/v1', '/v1beta', webConsole.routeTable.scope]
for (const prefix of prefixes) {
  for (const path of [prefix, `${prefix}/*`]) {
    app.all(path, (request, reply) => {
      reply.hijack()
      listener(request.raw, reply.raw)
    })
  }
}

const url = await app.listen({ port: env.port, host: '127.0.0.1' })
console.log(`listening on ${url}/v1/api`)
if (webConsole !== undefined) console.log(`console on ${url}${webConsole.routeTable.scope}/`)

process.once('SIGTERM', () => {
  void app.close().then(async () => await Promise.all([proxy.close(), usage.close()])).then(async () => await store.close())
})
