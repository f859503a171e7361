// The model list's own allowance (lib/metering/rate-limiter.ts, RateLimiter.listing): clients read /v1/models at
// start and often, so a read spends none of the key's requests per minute, up to MODEL_LIST_ALLOWANCE × rpm a minute.
import t from 'tap'
import { startProxy } from './harness.ts'
import { createEmbeddedStore, createRateLimiter } from '../../lib/index.ts'
import type { KeyCaller } from '../../lib/index.ts'
import { MODEL_LIST_ALLOWANCE } from '../../lib/metering/rate-limiter.ts'

const KEY = 'ghk_' + 'L'.repeat(43)
const member: KeyCaller = { kind: 'key', userId: 'e'.repeat(24), keyId: 'f'.repeat(24), accessLevel: 'member', models: null }
const START = Date.UTC(2026, 0, 5, 10, 0, 5)

t.test('reading the model list spends no request of the minute, and has an allowance of its own', async t => {
  const store = await createEmbeddedStore({ now: () => new Date(START) })
  t.teardown(() => store.close())
  const limiter = createRateLimiter({ store, byLevel: { member: { rpm: 2 } }, now: () => new Date(START), repeat: () => () => {} })
  const h = await startProxy(t, { backendName: 'gemini-api', keys: { resolveKey: async secret => secret === KEY ? member : undefined }, limiter, now: () => new Date(START) })
  const list = async (path: string, headers: Record<string, string>): Promise<Response> => await fetch(h.url + path, { headers })
  for (let i = 0; i < 2 * MODEL_LIST_ALLOWANCE; i++) {
    const res = await list(i % 2 === 0 ? '/v1/models' : '/v1beta/models', i % 2 === 0 ? { authorization: `Bearer ${KEY}` } : { 'x-goog-api-key': KEY })
    t.equal(res.status, 200, `read ${i + 1}`)
    await res.arrayBuffer()
    if (i === 0) t.equal(res.headers.get('x-ratelimit-remaining-requests'), '2', 'the minute\'s requests untouched')
  }
  const over = await list('/v1/models', { authorization: `Bearer ${KEY}` })
  t.equal(over.status, 429, `the read past ${2 * MODEL_LIST_ALLOWANCE} a minute is refused`)
  t.match(await over.json(), { error: { message: /model-list reads per minute/ } })
  const chat = await fetch(`${h.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] }) })
  t.equal(chat.status, 200, 'a model call still has its whole minute')
  t.equal(chat.headers.get('x-ratelimit-remaining-requests'), '1')
})
