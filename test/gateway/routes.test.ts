import t from 'tap'
import { startGateway } from '../support/gateway.ts'

const gw = await startGateway({ AUTH_ADMIN_PASSWORD: 'admin-password', GEMINI_AUTH_PASSWORD: 'gateway-proxy-password' })
t.teardown(gw.close)

async function call (path: string, init?: RequestInit): Promise<{ status: number, body: any }> {
  const res = await fetch(gw.url + path, init)
  const text = await res.text()
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) }
}

t.test('the gateway mounts the accounts, proxy and probe routes', async t => {
  t.equal((await call('/v1/api/auth/get-user-id?username=system')).status, 200)
  t.equal((await call('/v1/models', { headers: { authorization: 'Bearer gateway-proxy-password' } })).status, 200)
  t.equal((await call('/v1beta/models', { headers: { 'x-goog-api-key': 'gateway-proxy-password' } })).status, 200)
  for (const probe of ['/health', '/livez', '/readyz']) t.equal((await call(probe)).status, 200, probe)
})

t.test('unknown paths answer 404 in the error shape of the surface they fall under', async t => {
  const auth = await call('/v1/api/auth/nothing')
  t.equal(auth.status, 404)
  t.same(auth.body, { detail: 'Not found' })
  const chat = await call('/v1/audio/speech', { method: 'POST', body: '{}' })
  t.equal(chat.status, 404)
  t.match(chat.body, { error: { message: String, type: String } })
  const native = await call('/v1beta/nothing/here', { headers: { 'x-goog-api-key': 'gateway-proxy-password' } })
  t.equal(native.status, 404)
  t.match(native.body, { error: { code: 404, message: String, status: String } })
})

t.test('a known accounts path with the wrong method is a 405 detail body', async t => {
  const res = await call('/v1/api/auth/signup', { method: 'GET' })
  t.equal(res.status, 405)
  t.same(res.body, { detail: 'Method not allowed' })
})

t.test('while GEMINI_AUTH_PASSWORD is unset only user keys reach the proxy: anything else is a 401', async t => {
  const bare = await startGateway({ AUTH_ADMIN_PASSWORD: 'admin-password' })
  t.teardown(bare.close)
  const res = await fetch(bare.url + '/v1/models', { headers: { authorization: 'Bearer anything' } })
  t.equal(res.status, 401)
  t.match(await res.json(), { error: { type: 'authentication_error' } })
  t.equal((await fetch(bare.url + '/v1/api/auth/get-user-id?username=system')).status, 200, 'the accounts routes still work')
})
