// createProxy().upstream(): the read-only view the console's upstream page shows (docs/console.md, "Pages and
// API"): the backend's name, each pooled credential's state, the models listed; the observer still hears of pools.
import t from 'tap'
import { createProxy } from '../../lib/index.ts'
import type { Backend, CredentialStatus } from '../../lib/index.ts'

t.test('upstream() names the backend, lists each pooled key as ready, and the catalog\'s models', async t => {
  const heard: Array<() => CredentialStatus[]> = []
  const proxy = createProxy({ upstream: { backend: 'gemini-api', apiKey: 'first-key-aaaaaaaaaaaa, second-key-bbbbbbbbbbbb' }, models: ['gemini-2.5-flash'], observer: { credentialPool: (s) => heard.push(s) } })
  t.teardown(() => proxy.close())
  const view = proxy.upstream()
  t.equal(view.configured, true, 'an upstream is configured')
  t.equal(view.backend, 'gemini-api')
  t.equal(view.credentials.length, 2)
  t.ok(view.credentials.every(c => c.state === 'ready'), 'both keys ready')
  t.notOk(JSON.stringify(view).includes('first-key-aaaaaaaaaaaa'), 'no secret in the view')
  t.ok(view.models.includes('gemini-2.5-flash') && view.models.includes('gemini-2.5-flash-search'), 'the listed ids, variants included')
  t.equal(heard.length, 1, 'the caller\'s observer still hears of the pool')
})

t.test('upstream() without an upstream, or with a backend passed in, reports no credentials', async t => {
  const proxy = createProxy({})
  t.teardown(() => proxy.close())
  t.same(proxy.upstream().credentials, [])
  t.equal(proxy.upstream().configured, false, 'no upstream: not configured, whatever the catalog lists')
  const own: Backend = {
    generate: async () => ({ candidates: [] }),
    stream: async () => (async function * () {})(),
    countTokens: async () => ({ totalTokens: 0 }),
    ready: async () => ({ ok: true }),
    close: async () => {},
  }
  const passed = createProxy({ backend: own })
  t.teardown(() => passed.close())
  t.equal(passed.upstream().configured, true, 'a backend passed in is configured')
})
