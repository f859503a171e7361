import t from 'tap'
import { startGateway } from '../support/gateway.ts'
import { listedModel, startFakeUpstream } from '../support/fake-upstream.ts'

const PASSWORD = 'proxy-password-for-tests'

t.test('the gateway discovers the upstream\'s models in the background at start (GEMINI_MODEL_DISCOVERY_HOURS) and reports them in /metrics', async t => {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  fake.listedModels.push(listedModel('gemini-9-test', { input: 500_000, output: 10_000 }))
  const gw = await startGateway({ AUTH_ADMIN_PASSWORD: 'admin-password', GEMINI_BACKEND: 'gemini-api', GEMINI_API_KEY: 'k1', GEMINI_API_ENDPOINT: fake.url, GEMINI_AUTH_PASSWORD: PASSWORD, GEMINI_MODEL_DISCOVERY_HOURS: '6' })
  t.teardown(gw.close)
  await (await fake.waitFor('listModels')).closed
  // The round ends once its answer is read and merged, in the background; the metrics say when.
  let metrics = ''
  for (let i = 0; i < 1000 && !metrics.includes('gatehouse_model_discovery_rounds_total{outcome="ok"} 1'); i++) {
    if (i > 0) await new Promise(resolve => setTimeout(resolve, 10))
    metrics = (await gw.gateway.metrics.render()).body
  }
  t.match(metrics, /gatehouse_model_discovery_models\{kind="added"\} [1-9]/)
  const res = await fetch(gw.url + '/v1beta/models/gemini-9-test', { headers: { authorization: `Bearer ${PASSWORD}` } })
  t.match(await res.json(), { name: 'models/gemini-9-test', inputTokenLimit: 500_000 })
  t.ok(gw.logs.some(l => /lists models the model file lacks/.test(String(l.msg)) && Array.isArray(l.models) && l.models.includes('gemini-9-test')), 'named in the log')
})

t.test('the test helpers keep discovery off: no list call is made', async t => {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const gw = await startGateway({ AUTH_ADMIN_PASSWORD: 'admin-password', GEMINI_BACKEND: 'gemini-api', GEMINI_API_KEY: 'k1', GEMINI_API_ENDPOINT: fake.url, GEMINI_AUTH_PASSWORD: PASSWORD })
  t.teardown(gw.close)
  t.equal((await fetch(gw.url + '/readyz')).status, 200)
  t.equal(fake.calls('listModels').length, 0)
})
