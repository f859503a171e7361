// Mount the accounts service and the model proxy in an Express app, next to your own routes.
// Run: node examples/express.ts   (PORT, default 3000; listens on 127.0.0.1; GEMINI_AUTH_PASSWORD for the proxy)
import express from 'express'
import { createAuthService, createEmbeddedStore, createNodeListener, createProxy } from 'gatehouse'

const store = await createEmbeddedStore({})
const auth = createAuthService({ store, adminPassword: process.env.ADMIN_PASSWORD })
await auth.ensureSystemUser()
const proxy = createProxy({ password: process.env.GEMINI_AUTH_PASSWORD })

const app = express()
app.get('/', (_req, res) => { res.json({ hello: 'from express' }) })
// Gatehouse parses and validates bodies itself; unmatched paths fall through to next().
app.use(createNodeListener([auth.routeTable, proxy.routeTable]))

const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  const address = server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0
  console.log(`listening on http://127.0.0.1:${port}/v1/api`)
})

process.once('SIGTERM', () => {
  server.close()
  void Promise.all([proxy.close(), store.close()])
})
