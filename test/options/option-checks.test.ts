// Every service checks its options once, at construction, and a bad one is a ConfigurationError naming it.
import t from 'tap'
import type { Test } from 'tap'
import { readFileSync } from 'node:fs'
import { ConfigurationError, createAuthService, createBackend, createEmbeddedStore, createMongoStore, createProxy } from '../../lib/index.ts'
import type { BackendOptions, ProxyOptions } from '../../lib/index.ts'
import {
  DEFAULT_ADMIN_USERNAME, DEFAULT_CODE_ASSIST_ENDPOINT, DEFAULT_GEMINI_API_ENDPOINT, DEFAULT_QUERY_TOKENS, DEFAULT_REAUTH_SECONDS, DEFAULT_SESSION_TTL_SECONDS
} from '../../lib/option-rules.ts'
import { loadConfig } from '../../gateway/config.ts'

function refusedNaming (t: Test, fn: () => unknown, option: string, name = option): void {
  try {
    fn()
  } catch (err) {
    t.ok(err instanceof ConfigurationError, `${name}: a ConfigurationError`)
    t.ok(err instanceof TypeError, `${name}: still a TypeError`)
    t.equal((err as ConfigurationError).option, option, `${name}: names the option`)
    t.match((err as Error).message, option.replace(/^upstream\./, ''), `${name}: the message names it`)
    return
  }
  t.fail(`${name}: accepted`)
}

const PASSWORD = 'sixteen-chars-ok!'

function thrown (fn: () => unknown): unknown {
  try { fn() } catch (err) { return err }
  return undefined
}

t.test('createProxy refuses a bad option at construction, naming it', async t => {
  const cases: Array<[string, ProxyOptions]> = [
    ['password', { password: 42 as any }],
    ['password', { password: 'too-short' }],
    ['passwordAttempts', { passwordAttempts: 3 as any }],
    ['passwordAttempts.attempts', { passwordAttempts: { attempts: 0 } }],
    ['now', { now: 'today' as any }],
    ['backend', { backend: {} as any }],
    ['upstream', { upstream: 'x' as any }],
    ['models', { models: 'gemini-2.5-pro' as any }],
    ['models', { models: ['gemini x'] }],
    ['safetySettings', { safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT' }] as any }],
    ['keepAliveMs', { keepAliveMs: -1 }],
    ['imageFetch', { imageFetch: true as any }],
    ['imageFetch.maxBytes', { imageFetch: { maxBytes: 0 } }],
    ['imageFetch.maxRedirects', { imageFetch: { maxRedirects: 1.5 } }],
    ['imageFetch.allowPrivateNetworks', { imageFetch: { allowPrivateNetworks: 'yes' as any } }],
    ['imageFetch.allowedPorts', { imageFetch: { allowedPorts: [0] } }],
    ['maxBodyBytes', { maxBodyBytes: 1.5 }],
    ['maxBodyBytesInFlight', { maxBodyBytesInFlight: 0 }],
    ['bodyRead.timeoutMs', { bodyRead: { timeoutMs: 0 } }],
    ['bodyRead.minBytesPerSecond', { bodyRead: { minBytesPerSecond: -1 } }],
    ['chatLimits.maxMessages', { chatLimits: { maxMessages: 0 } }],
    ['logger', { logger: {} as any }],
    ['upstream.backend', { upstream: { backend: 'openai' as any } }],
    ['upstream.codeAssistEndpoint', { upstream: { codeAssistEndpoint: 'ftp://example.com' } }],
    ['upstream.geminiApiEndpoint', { upstream: { geminiApiEndpoint: 'not a url', apiKey: 'k' } }],
    ['upstream.idleTimeoutMs', { upstream: { apiKey: 'k', idleTimeoutMs: 0 } }],
  ]
  for (const [option, options] of cases) refusedNaming(t, () => createProxy({ password: PASSWORD, ...options }), option, `${option} ${JSON.stringify(options)}`)
})

t.test('createProxy without an upstream is no configuration error: its calls answer 503 at request time', async t => {
  const proxy = createProxy({ password: PASSWORD })
  t.match(await proxy.ready(), { ok: false })
  await proxy.close()
})

t.test('createBackend refuses a bad option at construction, naming it', async t => {
  const cases: Array<[string, BackendOptions]> = [
    ['backend', { backend: 'bedrock' as any }],
    ['codeAssistEndpoint', { codeAssistEndpoint: 'cloudcode-pa.googleapis.com' }],
    ['geminiApiEndpoint', { geminiApiEndpoint: 'javascript:alert(1)' }],
    ['apiKey', { apiKey: 42 as any }],
    ['credentials', { credentials: 42 as any }],
    ['credentialsFile', { credentialsFile: '' }],
    ['projectId', { projectId: 7 as any }],
    ['connectTimeoutMs', { connectTimeoutMs: 0 }],
    ['maxRetries', { maxRetries: -1 }],
    ['writeBack', { writeBack: 'no' as any }],
  ]
  for (const [option, options] of cases) refusedNaming(t, () => createBackend(options), option)
})

t.test('createBackend refuses a chosen backend that lacks what it needs: and unusable credentials: a ConfigurationError with code UPSTREAM_NOT_CONFIGURED', async t => {
  for (const options of [{ backend: 'gemini-api' as const }, { backend: 'code-assist' as const, apiKey: 'k' }]) {
    const err = thrown(() => createBackend(options))
    t.ok(err instanceof ConfigurationError)
    t.match(err, { option: 'backend', code: 'UPSTREAM_NOT_CONFIGURED' })
  }
  t.doesNotThrow(() => createBackend({ apiKey: 'k' }), 'a key alone picks the Gemini API')
  for (const [option, options] of [['credentials', { credentials: '{nope' }], ['credentialsFile', { credentialsFile: '/nonexistent/oauth_creds.json' }]] as const) {
    const err = thrown(() => createBackend(options))
    t.ok(err instanceof ConfigurationError, `unusable ${option}: a ConfigurationError`)
    t.match(err, { option, code: 'UPSTREAM_NOT_CONFIGURED' })
  }
})

t.test('createAuthService refuses a bad option at construction, naming it', async t => {
  const store = await createEmbeddedStore()
  t.teardown(() => store.close())
  refusedNaming(t, () => createAuthService({} as any), 'store')
  refusedNaming(t, () => createAuthService({ store, adminUsername: 'x' }), 'adminUsername')
  refusedNaming(t, () => createAuthService({ store, adminPassword: 'short' }), 'adminPassword')
  refusedNaming(t, () => createAuthService({ store, sessionTtlSeconds: 0 }), 'sessionTtlSeconds')
  refusedNaming(t, () => createAuthService({ store, reauthSeconds: -1 }), 'reauthSeconds')
  refusedNaming(t, () => createAuthService({ store, loginLimits: { maxDelaySeconds: 11 } }), 'loginLimits.maxDelaySeconds')
})

t.test('stores refuse a bad option at construction, naming it', async t => {
  const cases: Array<[string, () => Promise<unknown>]> = [
    ['file', () => createEmbeddedStore({ file: '' })],
    ['now', () => createEmbeddedStore({ now: 1 as any })],
    ['url', () => createMongoStore({ dbName: 'x' })],
    ['dbName', () => createMongoStore({ url: 'mongodb://127.0.0.1:1', dbName: '' })],
  ]
  for (const [option, start] of cases) {
    const err = await start().then(() => undefined, (e: unknown) => e)
    t.ok(err instanceof ConfigurationError, `${option}: a ConfigurationError`)
    t.equal((err as ConfigurationError).option, option)
  }
})

t.test('the gateway leaves the library\'s defaults to it and takes its rules from the package entry (OPTION_RULES)', async t => {
  const config = loadConfig({})
  for (const key of ['authAdminUsername', 'authSessionTtlSeconds', 'authReauthSeconds', 'authQueryTokens', 'codeAssistEndpoint', 'geminiApiEndpoint', 'imageFetchAllowPrivateNetworks'] as const) {
    t.equal(config[key], undefined, `${key} unset: the library's default applies`)
  }
  t.same([DEFAULT_ADMIN_USERNAME, DEFAULT_SESSION_TTL_SECONDS, DEFAULT_REAUTH_SECONDS, DEFAULT_QUERY_TOKENS, DEFAULT_CODE_ASSIST_ENDPOINT, DEFAULT_GEMINI_API_ENDPOINT],
    ['system', 3600, 600, true, 'https://cloudcode-pa.googleapis.com', 'https://generativelanguage.googleapis.com'], 'the defaults the README table states')
  const gateway = readFileSync(new URL('../../lib/env/read-environment.ts', import.meta.url), 'utf8') + readFileSync(new URL('../../lib/env/environment-options.ts', import.meta.url), 'utf8')
  for (const repeated of ["'system'", '?? 3600', '?? 600', "?? 'https:", "'code-assist', 'gemini-api'", '{3,32}']) {
    t.notOk(gateway.includes(repeated), `the environment reader does not repeat ${repeated}`)
  }
})
