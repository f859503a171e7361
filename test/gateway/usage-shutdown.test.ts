// The gateway's usage ledger (gateway/services.ts): built on the store, flushed when the services close.
import t from 'tap'
import { Writable } from 'node:stream'
import { loadConfig } from '../../gateway/config.ts'
import { createServices } from '../../gateway/services.ts'
import { createMetrics } from '../../gateway/metrics.ts'
import { createLogger } from '../../gateway/logger.ts'
import { createEmbeddedStore } from '../../lib/index.ts'

t.test('usage recorded before shutdown reaches the store when the services close', async t => {
  const store = await createEmbeddedStore()
  t.teardown(() => store.close())
  const logger = createLogger({ level: 'warn', destination: new Writable({ write (_chunk, _enc, done) { done() } }) })
  const services = await createServices(loadConfig({ AUTH_ADMIN_PASSWORD: 'admin-password-for-tests' }), {
    store, logger, metrics: createMetrics({ models: [], defaultMetrics: false }),
  })
  services.usage.record({ at: new Date('2026-05-01T10:00:00Z'), userId: 'operator', keyId: null, model: 'gemini-2.5-pro', surface: 'native', status: 200 })
  t.same(await store.usage.query({ from: '2026-05-01', to: '2026-05-01' }), [], 'not written before the interval ends')
  await services.close()
  t.match(await store.usage.query({ from: '2026-05-01', to: '2026-05-01' }), [{ userId: 'operator', keyId: null, surface: 'native', requests: 1 }])
})
