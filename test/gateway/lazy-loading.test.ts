import t from 'tap'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { spawnGateway, ROOT, NODE } from '../support/gateway.ts'
import { ConfigurationError } from '../../lib/index.ts'
import { optionalPackage } from '../../lib/load-package.ts'
import { authClient } from '../support/auth-client.ts'

const run = promisify(execFile)

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

/** What a library user's script (ESM, importing 'gatehouse' as a user would) has loaded at each step it reports. */
async function packagesAtSteps (script: string): Promise<Record<string, string[]>> {
  const prelude = [
    "const loaded = globalThis[Symbol.for('gatehouse.test.packages')]",
    'const steps = {}',
    'const step = name => { steps[name] = [...loaded].sort() }',
  ].join('\n')
  const { stdout } = await run(NODE, ['--conditions=gatehouse-source', '--import', path.join(ROOT, 'test/support/record-packages.ts'), '--input-type=module', '-e',
    `${prelude}\n${script}\nconsole.log(JSON.stringify(steps))`], { cwd: ROOT, env: { PATH: process.env.PATH ?? '' } })
  return JSON.parse(stdout) as Record<string, string[]>
}

// docs/configuration.md, "What each piece costs": what only some uses need is loaded by those uses.
const ONLY_SOME_USES = /^(mongodb|bson|google-auth-library|gaxios|gcp-metadata|gtoken|@opentelemetry\/.*|@hapi\/.*|pino|prom-client|joi|undici|@zxcvbn-ts\/.*|@node-rs\/.*)$/

t.test("importing 'gatehouse' loads none of MongoDB, Google auth, OpenTelemetry, Hapi, pino, prom-client, joi, undici, argon2 or the password list", async t => {
  const { imported } = await packagesAtSteps("await import('gatehouse')\nstep('imported')")
  t.same(imported.filter(name => ONLY_SOME_USES.test(name)), [], 'nothing that only some uses need')
})

t.test('a library process loads joi on the first request it checks, argon2 on the first password check, undici on the first upstream call, and never MongoDB or Hapi', async t => {
  const steps = await packagesAtSteps([
    "const { createAuthService, createEmbeddedStore, createFetchHandler, createProxy, createBackend } = await import('gatehouse')",
    'const store = await createEmbeddedStore({})',
    'const auth = createAuthService({ store })',
    "const proxy = createProxy({ password: 'proxy-password-16chars', backend: createBackend({ apiKey: 'a-key', geminiApiEndpoint: 'http://127.0.0.1:9' }) })",
    'const handle = createFetchHandler([...auth.routes, ...proxy.routes])',
    "step('built')",
    "const post = async (p, body, password = '') => await (await handle(new Request('http://localhost' + p, { method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': 'lazy', authorization: 'Bearer ' + password }, body: JSON.stringify(body) }))).text()",
    "await post('/v1/api/auth/login', { username: 'nobody', password: 'velvet-harbor-93' })",
    "step('login')",
    "await post('/v1/api/auth/signup', { username: 'lazy_user', password: 'velvet-harbor-93' })",
    "step('signup')",
    "await post('/v1/chat/completions', { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] }, 'proxy-password-16chars')",
    "step('chat')",
  ].join('\n'))
  const has = (step: string, pattern: RegExp): boolean => steps[step].some(name => pattern.test(name))
  t.same(steps.built.filter(name => ONLY_SOME_USES.test(name)), [], 'built: store, accounts and proxy load none of them')
  t.ok(has('login', /^joi$/) && has('login', /^@node-rs\/argon2$/) && !has('login', /^@zxcvbn-ts\//), 'a login is checked with joi and argon2, and sets no password')
  // The common-password list is the library's own text file (scripts/common-passwords.ts), read on the first password set.
  t.notOk(has('signup', /^@zxcvbn-ts\//), 'a sign-up checks its password against the list without the package it comes from')
  t.ok(!has('signup', /^undici$/) && has('chat', /^undici$/), 'undici loads for the first upstream call')
  t.notOk(has('chat', /^(mongodb|google-auth-library|@hapi\/hapi|pino|prom-client|@opentelemetry\/.*)$/), 'never the gateway\'s packages')
})

t.test('an optional peer dependency that is not installed is a ConfigurationError naming the package to install', async t => {
  const missing = 'gatehouse-test-not-installed'
  const err = await optionalPackage(missing, 'createMongoStore', async () => await import(missing)).catch((e: unknown) => e)
  t.type(err, ConfigurationError)
  t.match(err, { option: 'createMongoStore', message: `createMongoStore needs the ${missing} package, an optional peer dependency of gatehouse: npm install ${missing}` })
  const broken = new Error('boom')
  t.equal(await optionalPackage('mongodb', 'createMongoStore', async () => { throw broken }).catch((e: unknown) => e), broken, 'any other failure is passed on as it is')
})

t.test('the gateway on the embedded store with no exporter loads, before its first request, no MongoDB, Google auth, OpenTelemetry SDK, undici or joi', async t => {
  const dir = await mkdtemp(path.join(tmpdir(), 'gatehouse-packages-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'packages')
  const gw = await spawnGateway(
    { LOG_LEVEL: 'error', AUTH_ADMIN_PASSWORD: 'admin-password-for-tests', GEMINI_AUTH_PASSWORD: 'proxy-password-16chars', GEMINI_API_KEY: 'a-key', GATEHOUSE_TEST_PACKAGES_FILE: file },
    { nodeArgs: ['--import', path.join(ROOT, 'test/support/record-packages.ts')] }
  )
  t.teardown(() => gw.stop('SIGKILL'))
  t.equal((await gw.stop()).code, 0, 'a clean exit writes the list')
  const loaded = (await readFile(file, 'utf8')).split('\n').filter(name => name !== '')
  t.ok(loaded.includes('@hapi/hapi'), 'the recorder sees what the gateway does use')
  // joi too: the environment is checked without it (lib/env/env-rules.ts); the library's request
  // schemas load it on the first request they check.
  const unused = loaded.filter(name => /^(mongodb|bson|google-auth-library|gaxios|gcp-metadata|gtoken|@opentelemetry\/(?!api$).*|undici|joi)$/.test(name))
  t.same(unused, [], `packages loaded before they are needed: ${unused.join(', ') || 'none'}`)
})
