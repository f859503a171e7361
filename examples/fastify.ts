// Mount the accounts service in a Fastify app.
// Run: node examples/fastify.ts   (PORT, default 3000; listens on 127.0.0.1)
import Fastify from 'fastify'
import { createAuthService, createEmbeddedStore, createNodeListener } from 'gatehouse'

const store = await createEmbeddedStore({})
const auth = createAuthService({ store, adminPassword: process.env.ADMIN_PASSWORD })
await auth.ensureSystemUser()
const listener = createNodeListener(auth.routes)

const app = Fastify()
// Hand the raw bytes to Gatehouse, which validates and answers its own error shapes.
app.removeAllContentTypeParsers()
app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => { done(null, body) })
app.get('/', async () => ({ hello: 'from fastify' }))
app.all('/v1/api/*', (request, reply) => {
  reply.hijack()
  Object.assign(request.raw, { body: request.body })
  listener(request.raw, reply.raw)
})

const url = await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' })
console.log(`listening on ${url}/v1/api`)

process.once('SIGTERM', () => {
  void app.close().then(async () => await store.close())
})
