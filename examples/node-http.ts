// Mount the accounts service in a plain node:http server.
// Run: node examples/node-http.ts   (PORT, default 3000; listens on 127.0.0.1)
import { createServer } from 'node:http'
import { createAuthService, createEmbeddedStore, createNodeListener } from 'gatehouse'

const store = await createEmbeddedStore({})
const auth = createAuthService({ store, adminPassword: process.env.ADMIN_PASSWORD })
await auth.ensureSystemUser()

const server = createServer(createNodeListener(auth.routes))
server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  const address = server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0
  console.log(`listening on http://127.0.0.1:${port}/v1/api`)
})

process.once('SIGTERM', () => {
  server.close()
  void store.close()
})
