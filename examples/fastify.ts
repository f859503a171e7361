// Mount the accounts service and the model proxy in a Fastify app.
// Run: node examples/fastify.ts   (PORT, default 3000; listens on 127.0.0.1; GEMINI_AUTH_PASSWORD for the proxy)
import Fastify from 'fastify'
import { createAuthService, createEmbeddedStore, createNodeListener, createProxy } from 'gatehouse'

const store = await createEmbeddedStore({})
const auth = createAuthService({ store, adminPassword: process.env.ADMIN_PASSWORD })
await auth.ensureSystemUser()
const proxy = createProxy({ password: process.env.GEMINI_AUTH_PASSWORD })
const listener = createNodeListener([auth.routeTable, proxy.routeTable])

const app = Fastify()
app.get('/', async () => ({ hello: 'from fastify' }))
// Gatehouse reads, limits and validates the raw body itself (and answers in its own error shapes): Fastify
// leaves the body unread and hands the request over.
app.removeAllContentTypeParsers()
app.addContentTypeParser('*', (_request, _payload, done) => { done(null) })
for (const path of ['/v1/*', '/v1beta/*']) {
  app.all(path, (request, reply) => {
    reply.hijack()
    listener(request.raw, reply.raw)
  })
}

const url = await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' })
console.log(`listening on ${url}/v1/api`)

process.once('SIGTERM', () => {
  void app.close().then(async () => await Promise.all([proxy.close(), store.close()]))
})
