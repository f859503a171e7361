import t from 'tap'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { spawnGateway, ROOT } from '../support/gateway.ts'
import { authClient } from '../support/auth-client.ts'

// Idle memory (issue 12, item 5): what a configuration does not use is not loaded. test/support/record-packages.ts
// records every package the gateway process resolves, statically or dynamically, ESM or CommonJS.
t.test('a configuration without MongoDB, Code Assist or tracing loads none of their packages', async t => {
  const dir = await mkdtemp(path.join(tmpdir(), 'gatehouse-packages-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'packages')
  const gw = await spawnGateway(
    { LOG_LEVEL: 'error', AUTH_ADMIN_PASSWORD: 'admin-password-for-tests', GEMINI_AUTH_PASSWORD: 'proxy-password-16chars', GATEHOUSE_TEST_PACKAGES_FILE: file },
    { nodeArgs: ['--import', path.join(ROOT, 'test/support/record-packages.ts')] }
  )
  t.teardown(() => gw.stop('SIGKILL'))
  // Use both services, so whatever they load on first use is loaded too.
  const api = authClient(gw.url + '/v1/api')
  t.equal((await api.signup('lazy_user', 'velvet-harbor-93')).status, 201, 'a sign-up works')
  t.equal((await api.login('lazy_user', 'velvet-harbor-93')).status, 200, 'a login works')
  const chat = await fetch(gw.url + '/v1/chat/completions', {
    method: 'POST',
    headers: { authorization: 'Bearer proxy-password-16chars', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] }),
  })
  t.equal(chat.status, 503, 'the proxy answers: no upstream is configured')
  t.equal((await fetch(gw.url + '/metrics')).status, 200, 'metrics are served')
  t.equal((await gw.stop()).code, 0, 'a clean exit writes the list')
  const loaded = (await readFile(file, 'utf8')).split('\n').filter(name => name !== '')
  t.ok(loaded.includes('@hapi/hapi') && loaded.includes('@node-rs/argon2'), 'the recorder sees what the gateway does use')
  // @opentelemetry/api alone is allowed: prom-client's default process metrics require it (a no-op facade of a
  // few hundred kB); the SDK, the exporters and the instrumentations are what tracing.ts loads only when tracing is on.
  const unused = loaded.filter(name => /^(mongodb|bson|google-auth-library|gaxios|gcp-metadata|gtoken|@opentelemetry\/(?!api$).*)$/.test(name))
  t.same(unused, [], `packages loaded for nothing: ${unused.join(', ') || 'none'}`)
})
