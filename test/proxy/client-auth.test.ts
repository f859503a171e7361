import t from 'tap'
import { startProxy, PASSWORD } from './harness.ts'
import { presentedPasswords } from '../../lib/proxy/client-auth.ts'
import type { HandlerRequest } from '../../lib/http/contract.ts'

const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`

function request (headers: Record<string, string>, query: Record<string, string> = {}): HandlerRequest {
  return { method: 'GET', path: '/v1/models', params: {}, query, headers }
}

t.test('every accepted form of the password is read', async t => {
  const table: Array<[string, HandlerRequest, string[]]> = [
    ['Bearer', request({ authorization: 'Bearer pw' }), ['pw']],
    ['bearer in any case', request({ authorization: 'bEaReR   pw ' }), ['pw']],
    ['Basic, any username', request({ authorization: basic('anyone', 'pw') }), ['pw']],
    ['Basic, split at the first colon', request({ authorization: basic('u', 'p:w') }), ['p:w']],
    ['Basic, empty username', request({ authorization: basic('', 'pw') }), ['pw']],
    ['Basic without a colon', request({ authorization: `Basic ${Buffer.from('nocolon').toString('base64')}` }), []],
    ['?key=', request({}, { key: 'pw' }), ['pw']],
    ['x-goog-api-key', request({ 'x-goog-api-key': 'pw' }), ['pw']],
    ['x-vendor-api-key', request({ 'x-vendor-api-key': 'pw' }), ['pw']],
    ['other schemes are ignored', request({ authorization: 'Digest pw' }), []],
    ['several forms', request({ 'x-goog-api-key': 'a', authorization: 'Bearer b' }, { key: 'c' }), ['c', 'a', 'b']],
  ]
  for (const [name, req, expected] of table) t.same(presentedPasswords(req), expected, name)
})

t.test('over HTTP: each form is accepted and a wrong password is a 401 in the surface\'s shape', async t => {
  const h = await startProxy(t)
  const ok: Array<[string, RequestInit, string?]> = [
    ['Bearer', { headers: { authorization: `Bearer ${PASSWORD}` } }],
    ['lower-case bearer', { headers: { authorization: `bearer ${PASSWORD}` } }],
    ['Basic', { headers: { authorization: basic('whoever', PASSWORD) } }],
    ['x-goog-api-key', { headers: { 'x-goog-api-key': PASSWORD } }],
    ['x-vendor-api-key', { headers: { 'x-vendor-api-key': PASSWORD } }],
    ['?key=', {}, `?key=${encodeURIComponent(PASSWORD)}`],
  ]
  for (const [name, init, query] of ok) {
    const res = await fetch(`${h.url}/v1beta/models${query ?? ''}`, init)
    t.equal(res.status, 200, name)
    await res.arrayBuffer()
  }

  const chat = await fetch(`${h.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer wrong', 'content-type': 'application/json' }, body: '{}' })
  t.equal(chat.status, 401)
  t.match(chat.headers.get('www-authenticate'), /Bearer/)
  t.match(await chat.json(), { error: { type: 'authentication_error', code: 401, param: null, message: /Invalid authentication credentials/ } })

  const native = await fetch(`${h.url}/v1beta/models/gemini-2.5-pro:generateContent`, { method: 'POST', headers: { 'x-goog-api-key': 'wrong' }, body: '{}' })
  t.equal(native.status, 401)
  t.match(native.headers.get('www-authenticate'), /Bearer/)
  t.match(await native.json(), { error: { code: 401, status: 'UNAUTHENTICATED' } })

  const garbage = await fetch(`${h.url}/v1beta/no/such/thing`)
  t.equal(garbage.status, 401, 'unauthenticated garbage is 401, not 404')
  await garbage.arrayBuffer()
  t.equal(h.fake.requests.filter(r => r.call === 'generateContent').length, 0, 'nothing reached the upstream')
})

t.test('without a configured password every proxy route answers 503 with a clear message', async t => {
  const h = await startProxy(t, { password: undefined })
  const chat = await fetch(`${h.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer anything' }, body: '{}' })
  t.equal(chat.status, 503)
  t.match(await chat.json(), { error: { type: 'api_error', message: /GEMINI_AUTH_PASSWORD/ } })
  const models = await fetch(`${h.url}/v1/models`)
  t.equal(models.status, 503)
  await models.arrayBuffer()
  const native = await fetch(`${h.url}/v1beta/models/gemini-2.5-pro:generateContent`, { method: 'POST', body: '{}' })
  t.equal(native.status, 503)
  t.match(await native.json(), { error: { code: 503, status: 'UNAVAILABLE', message: /GEMINI_AUTH_PASSWORD/ } })
  const list = await fetch(`${h.url}/v1beta/models`, { headers: { 'x-goog-api-key': '123456' } })
  t.equal(list.status, 503, 'there is no default password')
  await list.arrayBuffer()
})

t.test('CORS: preflights are answered without a password, and responses allow any origin without credentials', async t => {
  const h = await startProxy(t)
  for (const path of ['/v1/chat/completions', '/v1/models', '/v1beta/models', '/v1beta/models/gemini-2.5-pro:streamGenerateContent', '/v1/models/gemini-2.5-pro:generateContent']) {
    const res = await fetch(`${h.url}${path}`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    })
    t.equal(res.status, 204, path)
    t.equal(res.headers.get('access-control-allow-origin'), '*')
    t.equal(res.headers.get('access-control-allow-credentials'), null, 'never credentials together with *')
    t.equal(res.headers.get('access-control-allow-headers'), 'authorization, content-type')
    t.match(res.headers.get('access-control-allow-methods'), /POST/)
  }
  const res = await fetch(`${h.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${PASSWORD}`, origin: 'https://app.example' }, body: JSON.stringify({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'x' }] }),
  })
  t.equal(res.status, 200)
  t.equal(res.headers.get('access-control-allow-origin'), '*')
  await res.arrayBuffer()
  const denied = await fetch(`${h.url}/v1/models`, { headers: { origin: 'https://app.example' } })
  t.equal(denied.headers.get('access-control-allow-origin'), '*', 'errors are readable cross-origin too')
  await denied.arrayBuffer()
})
