import t from 'tap'
import { createAuthService, createEmbeddedStore, createFetchHandler, GatehouseError } from '../../lib/index.ts'
import { CHEAP_ARGON2 } from '../support/auth-harness.ts'

// The accounts table: handlers throw, the serving path maps; the table's scope is its basePath.
const store = await createEmbeddedStore({})
t.teardown(() => store.close())
const auth = createAuthService({ store, argon2: CHEAP_ARGON2, basePath: '/accounts' })

t.test('an accounts handler refuses by throwing a catalogue error, which every host maps to the detail shape', async t => {
  const route = auth.routeTable.routes.find(r => r.method === 'GET' && r.path === '/accounts/auth/get-user-id')!
  const err = await route.handler({ method: 'GET', path: route.path, params: {}, query: { username: 'nobody_here' }, headers: {} }).catch((e: unknown) => e)
  t.ok(err instanceof GatehouseError, 'the handler throws')
  t.same(route.errorResponse(err), { status: 404, headers: undefined, body: { detail: 'Username not found' } })
  const res = await createFetchHandler(auth.routeTable)(new Request('http://host/accounts/auth/get-user-id?username=nobody_here'))
  t.same([res.status, await res.json()], [404, { detail: 'Username not found' }], 'served, the same error is an answer')
})

t.test('the accounts table is scoped to its basePath: unknown paths under it answer in the accounts shape', async t => {
  t.equal(auth.routeTable.scope, '/accounts')
  t.equal(auth.routes, auth.routeTable.routes)
  const handler = createFetchHandler(auth.routeTable)
  const unknown = await handler(new Request('http://host/accounts/nothing'))
  t.same([unknown.status, await unknown.json()], [404, { detail: 'Not found' }])
  const wrongMethod = await handler(new Request('http://host/accounts/auth/login'))
  t.same([wrongMethod.status, await wrongMethod.json()], [405, { detail: 'Method not allowed' }])
})
