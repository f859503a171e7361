// Mount the accounts service and the model proxy in a plain node:http server.
// Run: node examples/node-http.ts   (PORT, default 3000; listens on 127.0.0.1; GEMINI_AUTH_PASSWORD for the proxy)
import { createServer } from 'node:http'
import { createAuthService, createEmbeddedStore, createNodeListener, createProxy } from 'gatehouse'

const store = await createEmbeddedStore({})
const auth = createAuthService({ store, adminPassword: process.env.ADMIN_PASSWORD })
await auth.ensureSystemUser()
const proxy = createProxy({ password: process.env.GEMINI_AUTH_PASSWORD })

const server = createServer(createNodeListener([auth.routeTable, proxy.routeTable]))
server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  const address = server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0
  console.log(`listening on http://127.0.0.1:${port}/v1/api`)
})

process.once('SIGTERM', () => {
  server.close()
  void Promise.all([proxy.close(), store.close()])
})
