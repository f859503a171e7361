// A first start that explains itself (README, "The two commands"): the start line names the backend by its
// GEMINI_BACKEND name (or none), `GET /` leads a browser to the console and tells any other client where things are,
// and the console's upstream page claims no model when no upstream is configured.
import t from 'tap'
import { createProxy } from '../../lib/index.ts'
import { startConsoleHarness } from '../support/console-harness.ts'
import { startGateway } from '../support/gateway.ts'

const startLine = (logs: Array<Record<string, any>>): Record<string, any> | undefined => logs.find(l => /^Gatehouse listening on /.test(String(l.msg)))

t.test('with no upstream the log warns, then the start line says the backend is none', async t => {
  // Model discovery on, as `npm start` has it.
  const gw = await startGateway({ AUTH_ADMIN_PASSWORD: 'admin-password', GEMINI_MODEL_DISCOVERY_HOURS: '6' })
  t.teardown(gw.close)
  const line = startLine(gw.logs)
  t.match(line, { backend: 'none', msg: `Gatehouse listening on ${gw.url} (backend: none, console: ${gw.url}/console/)` })
  const warning = gw.logs.findIndex(l => /^No upstream is configured/.test(String(l.msg)))
  t.ok(warning >= 0 && warning < gw.logs.indexOf(line!), 'the warning that proxy calls answer 503 comes first')
  t.same(gw.logs.filter(l => l.backend !== undefined && l !== line), [], 'no other line names a backend (model discovery has none to ask)')
})

t.test('with an API key the start line names the backend as GEMINI_BACKEND does: gemini-api', async t => {
  const gw = await startGateway({ AUTH_ADMIN_PASSWORD: 'admin-password', GEMINI_API_KEY: 'test-key-aaaaaaaaaaaaaaaa', CONSOLE_ENABLED: 'false' })
  t.teardown(gw.close)
  t.match(startLine(gw.logs), { backend: 'gemini-api', msg: `Gatehouse listening on ${gw.url} (backend: gemini-api)` })
  const index = await fetch(`${gw.url}/`, { headers: { accept: 'text/html' }, redirect: 'manual' })
  t.equal(index.status, 200, 'with the console off a browser gets the index too, not a redirect')
  t.match(await index.json(), { backend: 'gemini-api', console: null })
})

t.test('GET / sends a browser to the console and gives other clients a JSON index of the API roots', async t => {
  const gw = await startGateway({ AUTH_ADMIN_PASSWORD: 'admin-password' })
  t.teardown(gw.close)
  const browser = await fetch(`${gw.url}/`, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' }, redirect: 'manual' })
  t.equal(browser.status, 302)
  t.equal(browser.headers.get('location'), 'console/', 'relative, so a prefix the ingress strips is kept')
  t.equal((await fetch(new URL(browser.headers.get('location')!, `${gw.url}/`), { redirect: 'manual' })).status, 200, 'and the console is there')

  const client = await fetch(`${gw.url}/`)
  t.equal(client.status, 200)
  const body = await client.json() as { api: Record<string, string> }
  t.match(body, {
    service: 'gatehouse',
    backend: null,
    console: '/console/',
    api: { chat_completions: '/v1/chat/completions', responses: '/v1/responses', messages: '/v1/messages', models: '/v1/models', gemini: '/v1beta/models', accounts: '/v1/api' },
    probes: { live: '/livez', ready: '/readyz' },
    metrics: '/metrics',
    docs: String,
  })
  const models = await fetch(`${gw.url}${body.api.models}`)
  t.equal(models.status, 401, 'a named root is served (it asks for a key rather than answering 404)')
})

t.test('the console\'s upstream page: no upstream configured means no backend and no models claimed', async t => {
  const proxy = createProxy({})
  t.teardown(() => proxy.close())
  const h = await startConsoleHarness({ proxy })
  t.teardown(h.close)
  await h.admin()
  t.same((await h.call('GET', '/api/admin/upstream')).body, { configured: false, backend: null, credentials: [], models: [], families: [] })
  const served = createProxy({ upstream: { apiKey: 'test-key-aaaaaaaaaaaaaaaa' } })
  t.teardown(() => served.close())
  const withKey = await startConsoleHarness({ proxy: served })
  t.teardown(withKey.close)
  await withKey.admin()
  const view = (await withKey.call('GET', '/api/admin/upstream')).body
  t.match(view, { configured: true, backend: 'gemini-api' })
  t.ok(view.models.length > 0, 'with a backend, the models it serves')
})
