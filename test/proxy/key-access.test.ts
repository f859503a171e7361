import t from 'tap'
import { startProxy, PASSWORD } from './harness.ts'
import type { KeyCaller, KeyResolver } from '../../lib/index.ts'
import { createProxy } from '../../lib/index.ts'

// A stub of the accounts service's resolveKey: a table of live keys, and the secrets it was asked about.
function stubKeys (live: Record<string, KeyCaller>): KeyResolver & { asked: string[] } {
  const asked: string[] = []
  return {
    asked,
    async resolveKey (secret) {
      asked.push(secret)
      return live[secret]
    },
  }
}

const KEY = 'ghk_' + 'A'.repeat(43)
const member: KeyCaller = { kind: 'key', userId: 'a'.repeat(24), keyId: 'b'.repeat(24), accessLevel: 'member', models: null }
const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`
const chatBody = JSON.stringify({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'x' }] })

t.test('every password form carries a user key, on both surfaces', async t => {
  const keys = stubKeys({ [KEY]: member })
  const h = await startProxy(t, { backendName: 'code-assist', keys })
  const forms: Array<[string, Record<string, string>, string?]> = [
    ['Bearer', { authorization: `Bearer ${KEY}` }],
    ['Basic', { authorization: basic('anyone', KEY) }],
    ['x-goog-api-key', { 'x-goog-api-key': KEY }],
    ['x-vendor-api-key', { 'x-vendor-api-key': KEY }],
    ['?key=', {}, `?key=${KEY}`],
  ]
  for (const [name, headers, query] of forms) {
    const chat = await fetch(`${h.url}/v1/chat/completions${query ?? ''}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: chatBody })
    t.equal(chat.status, 200, `chat, ${name}`)
    await chat.arrayBuffer()
    const native = await fetch(`${h.url}/v1beta/models/gemini-2.5-pro:generateContent${query ?? ''}`, { method: 'POST', headers, body: '{"contents":[{"parts":[{"text":"x"}]}]}' })
    t.equal(native.status, 200, `native, ${name}`)
    await native.arrayBuffer()
  }
  t.equal(h.fake.calls('generateContent').length, 10)
  t.ok(keys.asked.every(s => s === KEY), 'only the key was asked about')
})

t.test('the operator password is compared, never sent to the key resolver; only ghk_ values are', async t => {
  const keys = stubKeys({ [KEY]: member })
  const h = await startProxy(t, { backendName: 'code-assist', keys })
  const ok = await fetch(`${h.url}/v1/models`, { headers: { authorization: `Bearer ${PASSWORD}` } })
  t.equal(ok.status, 200)
  await ok.arrayBuffer()
  const wrong = await fetch(`${h.url}/v1/models`, { headers: { authorization: 'Bearer not-a-key-at-all' } })
  t.equal(wrong.status, 401)
  await wrong.arrayBuffer()
  const huge = await fetch(`${h.url}/v1/models`, { headers: { authorization: `Bearer ghk_${'x'.repeat(5000)}` } })
  t.equal(huge.status, 401)
  await huge.arrayBuffer()
  t.same(keys.asked, [], 'neither the password, a non-key value nor an oversized one reached resolveKey')
})

t.test('with keys configured and no password, only keys work; a revoked or unknown key is a 401', async t => {
  const keys = stubKeys({ [KEY]: member })
  const h = await startProxy(t, { backendName: 'code-assist', keys, password: undefined })
  const ok = await fetch(`${h.url}/v1/models`, { headers: { authorization: `Bearer ${KEY}` } })
  t.equal(ok.status, 200)
  await ok.arrayBuffer()
  const unknown = await fetch(`${h.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ghk_${'Z'.repeat(43)}` }, body: chatBody })
  t.equal(unknown.status, 401)
  t.match(unknown.headers.get('www-authenticate'), /Bearer/)
  t.match(await unknown.json(), { error: { type: 'authentication_error', code: 401 } })
  const none = await fetch(`${h.url}/v1beta/models`)
  t.equal(none.status, 401, 'no credential at all: 401, not 503')
  t.match(await none.json(), { error: { status: 'UNAUTHENTICATED' } })
  t.equal(h.fake.calls('generateContent').length, 0)
})

t.test('wrong keys are throttled for the guessing address only: a valid key from the same address always passes', async t => {
  let now = new Date('2026-01-01T00:00:00Z')
  const keys = stubKeys({ [KEY]: member })
  const h = await startProxy(t, { backendName: 'code-assist', keys, now: () => now, passwordAttempts: { attempts: 3, windowSeconds: 60 } })
  const call = async (authorization: string): Promise<[number, string | null]> => {
    const res = await fetch(`${h.url}/v1/models`, { headers: { authorization } })
    await res.arrayBuffer()
    return [res.status, res.headers.get('retry-after')]
  }
  for (let i = 0; i < 3; i++) t.same(await call(`Bearer ghk_wrong-key-${i}`), [401, null], `wrong key ${i + 1}`)
  t.same(await call('Bearer ghk_revoked-key-retried'), [429, '60'], 'past the attempts a wrong key is a 429 until the window ends')
  t.same(await call(`Bearer ${KEY}`), [200, null], 'a live key from the same address (one NAT, another client) passes')
  t.same(await call(`Bearer ${PASSWORD}`), [200, null], 'so does the operator password')
  now = new Date(now.getTime() + 60_000)
  t.same(await call('Bearer ghk_wrong-key-again'), [401, null], 'after the window a wrong key is a 401 again')
})

t.test('createProxy refuses a keys option that is no KeyResolver, naming the option', async t => {
  t.throws(() => createProxy({ keys: {} as unknown as KeyResolver }), { message: /^createProxy: keys must be an object with resolveKey/ })
  t.throws(() => createProxy({ keys: 'x' as unknown as KeyResolver }), { message: /keys/ })
})

t.test('with no keys configured and the operator password set, everything behaves as before', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  const key = await fetch(`${h.url}/v1/models`, { headers: { authorization: `Bearer ${KEY}` } })
  t.equal(key.status, 401, 'a key-shaped value is just a wrong password')
  await key.arrayBuffer()
  const list = await fetch(`${h.url}/v1/models`, { headers: { authorization: `Bearer ${PASSWORD}` } })
  const body = await list.json() as { data: Array<{ id: string }> }
  t.equal(list.status, 200)
  t.ok(body.data.some(m => m.id === 'gemini-2.5-pro-search-maxthinking'), 'the operator sees every model and variant')
  const chat = await fetch(`${h.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${PASSWORD}` }, body: JSON.stringify({ model: 'gemini-1.0-pro', messages: [{ role: 'user', content: 'x' }] }) })
  t.equal(chat.status, 200, 'and may use every model')
  await chat.arrayBuffer()
  const unset = await startProxy(t, { backendName: 'code-assist', password: undefined })
  const res = await fetch(`${unset.url}/v1/models`, { headers: { authorization: `Bearer ${KEY}` } })
  t.equal(res.status, 503, 'neither password nor keys: 503 PROXY_PASSWORD_UNSET as before')
  await res.arrayBuffer()
})
