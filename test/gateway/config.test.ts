import t from 'tap'
import { loadConfig, ConfigError, configurationErrorLine } from '../../gateway/config.ts'
import { ConfigurationError, createPriceList, environmentOptions } from '../../lib/index.ts'
import { spawnGateway, NODE, ROOT } from '../support/gateway.ts'
import { spawn } from 'node:child_process'
import path from 'node:path'

t.test('with no environment the gateway\'s own defaults apply and the library\'s options stay unset, so its defaults apply', async t => {
  const c = loadConfig({})
  t.match(c, {
    host: '0.0.0.0',
    port: 8888,
    mongodbDb: 'gateway',
    debug: false,
    logLevel: 'info',
    shutdownTimeoutSeconds: 25,
    otelServiceName: 'gatehouse',
    tracingEnabled: false,
  })
  // The library's defaults (README table: system, 3600, 600, true, the two Google endpoints, false) are its own.
  for (const unset of ['authAdminUsername', 'authSessionTtlSeconds', 'authReauthSeconds', 'authQueryTokens', 'codeAssistEndpoint', 'geminiApiEndpoint', 'imageFetchAllowPrivateNetworks', 'mongodbUrl', 'authDataFile', 'authAdminPassword', 'proxyPassword', 'geminiCredentials', 'credentialsFile', 'projectId', 'geminiApiKey', 'geminiBackend', 'metricsPort', 'geminiModels', 'authSignupsPerAddress', 'authSignupWindowSeconds', 'trustedProxies', 'geminiModelAccess', 'proxyMinAccessLevel']) {
    t.notOk(unset in c, `${unset} unset`)
  }
  t.ok(Object.isFrozen(c), 'frozen')
})

t.test('every variable is read into its field', async t => {
  const c = loadConfig({
    HOST: '127.0.0.1',
    PORT: '7860',
    MONGODB_URL: 'mongodb://db:27017',
    MONGODB_DB: 'gh',
    AUTH_DATA_FILE: '/data/auth.json',
    DEBUG: 'true',
    AUTH_ADMIN_USERNAME: 'root_admin',
    AUTH_ADMIN_PASSWORD: 'admin-password',
    AUTH_SESSION_TTL_SECONDS: '60',
    AUTH_REAUTH_SECONDS: '0',
    AUTH_QUERY_TOKENS: 'false',
    AUTH_SIGNUPS_PER_ADDRESS: '25',
    AUTH_SIGNUP_WINDOW_SECONDS: '600',
    PROXY_MIN_ACCESS_LEVEL: 'Member',
    PROXY_KEY_DEFAULT_DAYS: '0',
    TRUSTED_PROXIES: '10.0.0.0/8, 2001:db8::/32,192.168.1.7',
    GEMINI_AUTH_PASSWORD: 'proxy-password-16chars',
    GEMINI_CREDENTIALS: '{"refresh_token":"r"}',
    GOOGLE_APPLICATION_CREDENTIALS: '/creds.json',
    GOOGLE_CLOUD_PROJECT: 'proj',
    GEMINI_OAUTH_CLIENT_ID: 'cid',
    GEMINI_OAUTH_CLIENT_SECRET: 'csecret',
    CODE_ASSIST_ENDPOINT: 'http://127.0.0.1:1234/',
    GEMINI_API_KEY: 'key',
    GEMINI_API_ENDPOINT: 'http://127.0.0.1:5678',
    GEMINI_BACKEND: 'gemini-api',
    GEMINI_MODELS: 'gemini-2.5-pro, gemini-2.5-flash',
    GEMINI_MODEL_ACCESS: '{"dev": ["gemini-2.5-flash*"], "hush": ["*"]}',
    METRICS_PORT: '9464',
    LOG_LEVEL: 'warn',
    SHUTDOWN_TIMEOUT_SECONDS: '5',
    OTEL_SERVICE_NAME: 'gh-test',
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
  })
  t.match(c, {
    host: '127.0.0.1',
    port: 7860,
    mongodbUrl: 'mongodb://db:27017',
    mongodbDb: 'gh',
    authDataFile: '/data/auth.json',
    debug: true,
    authAdminUsername: 'root_admin',
    authAdminPassword: 'admin-password',
    authSessionTtlSeconds: 60,
    authReauthSeconds: 0,
    authQueryTokens: false,
    authSignupsPerAddress: 25,
    authSignupWindowSeconds: 600,
    proxyKeyDefaultDays: 0,
    proxyMinAccessLevel: 'member',
    trustedProxies: ['10.0.0.0/8', '2001:db8::/32', '192.168.1.7'],
    proxyPassword: 'proxy-password-16chars',
    geminiModelAccess: { dev: ['gemini-2.5-flash*'], hush: ['*'] },
    geminiCredentials: { refresh_token: 'r' },
    credentialsFile: '/creds.json',
    projectId: 'proj',
    oauthClientId: 'cid',
    oauthClientSecret: 'csecret',
    codeAssistEndpoint: 'http://127.0.0.1:1234',
    geminiApiKey: 'key',
    geminiApiEndpoint: 'http://127.0.0.1:5678',
    geminiBackend: 'gemini-api',
    metricsPort: 9464,
    logLevel: 'warn',
    shutdownTimeoutSeconds: 5,
    otelServiceName: 'gh-test',
    tracingEnabled: true,
  })
  t.same(c.geminiModels, ['gemini-2.5-pro', 'gemini-2.5-flash'])
})

t.test('the neutral aliases are accepted, the real names win over them', async t => {
  const aliases = loadConfig({
    LLM_AUTH_PASSWORD: 'alias-proxy-password-1',
    LLM_CREDENTIALS: '{"a":1}',
    PLATFORM_APPLICATION_CREDENTIALS: '/f',
    PLATFORM_CLOUD_PROJECT: 'proj-a',
  })
  t.match(aliases, { proxyPassword: 'alias-proxy-password-1', geminiCredentials: { a: 1 }, credentialsFile: '/f', projectId: 'proj-a' })
  for (const name of ['PLATFORM_CLOUD_PROJECT', 'GOOGLE_CLOUD_PROJECT_ID', 'GEMINI_PROJECT_ID', 'LLM_PROJECT_ID']) {
    t.equal(loadConfig({ [name]: 'p' }).projectId, 'p', name)
  }
  const both = loadConfig({ GEMINI_AUTH_PASSWORD: 'real-proxy-password', LLM_AUTH_PASSWORD: 'alias-proxy-password', GOOGLE_CLOUD_PROJECT: 'g', LLM_PROJECT_ID: 'l' })
  t.equal(both.proxyPassword, 'real-proxy-password')
  t.equal(both.projectId, 'g')
})

t.test('derived defaults: backend from the credentials given, debug mode saves to ./data and logs at debug', async t => {
  t.equal(loadConfig({ GEMINI_CREDENTIALS: '{}' }).geminiBackend, 'code-assist')
  t.equal(loadConfig({ GOOGLE_APPLICATION_CREDENTIALS: '/x' }).geminiBackend, 'code-assist')
  t.equal(loadConfig({ GEMINI_API_KEY: 'k' }).geminiBackend, 'gemini-api')
  t.equal(loadConfig({ GEMINI_API_KEY: 'k', GEMINI_CREDENTIALS: '{}' }).geminiBackend, 'code-assist')
  t.equal(loadConfig({ GEMINI_API_KEY: 'k', GOOGLE_CLOUD_PROJECT: 'p' }).geminiBackend, 'gemini-api', 'Vertex only when GEMINI_BACKEND says so')
  t.match(loadConfig({ GEMINI_BACKEND: 'vertex', GOOGLE_CLOUD_PROJECT: 'p', GOOGLE_CLOUD_LOCATION: 'us-central1', VERTEX_ENDPOINT: 'https://v.example/' }),
    { geminiBackend: 'vertex', projectId: 'p', vertexLocation: 'us-central1', vertexEndpoint: 'https://v.example' })
  t.equal(loadConfig({ GEMINI_BACKEND: 'vertex', GEMINI_API_KEY: 'k' }).geminiBackend, 'vertex', 'express mode: a key and no project')
  t.equal(loadConfig({ GEMINI_BACKEND: 'vertex', GOOGLE_CLOUD_PROJECT: 'p', GOOGLE_CLOUD_LOCATION: 'us-central1, europe-west4' }).vertexLocation, 'us-central1, europe-west4', 'a pool of Vertex locations')
  t.match(loadConfig({ DEBUG: 'true' }), { authDataFile: './data/auth-db.json', logLevel: 'debug' })
  t.match(loadConfig({ DEBUG: '1', LOG_LEVEL: 'info' }), { logLevel: 'info' })
  t.equal(loadConfig({ OTEL_TRACES_EXPORTER: 'console' }).tracingEnabled, true)
  t.equal(loadConfig({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }).tracingEnabled, false)
})

t.test('an empty variable counts as unset', async t => {
  t.equal(loadConfig({ PORT: '', GEMINI_AUTH_PASSWORD: '' }).port, 8888)
  t.notOk('proxyPassword' in loadConfig({ GEMINI_AUTH_PASSWORD: '' }))
})

const BAD: Array<[Record<string, string>, string]> = [
  [{ PORT: 'eighty' }, 'PORT'],
  [{ PORT: '70000' }, 'PORT'],
  [{ METRICS_PORT: '-1' }, 'METRICS_PORT'],
  [{ PORT: '9000', METRICS_PORT: '9000' }, 'METRICS_PORT'],
  [{ HOST: 'not a host!' }, 'HOST'],
  [{ DEBUG: 'maybe' }, 'DEBUG'],
  [{ GEMINI_CREDENTIALS_WRITE_BACK: 'sometimes' }, 'GEMINI_CREDENTIALS_WRITE_BACK'],
  [{ MONGODB_URL: 'http://db' }, 'MONGODB_URL'],
  [{ MONGODB_DB: 'a/b' }, 'MONGODB_DB'],
  [{ AUTH_SESSION_TTL_SECONDS: '0' }, 'AUTH_SESSION_TTL_SECONDS'],
  [{ AUTH_SESSION_TTL_SECONDS: '1.5' }, 'AUTH_SESSION_TTL_SECONDS'],
  [{ AUTH_REAUTH_SECONDS: '-1' }, 'AUTH_REAUTH_SECONDS'],
  [{ AUTH_REAUTH_SECONDS: 'ten minutes' }, 'AUTH_REAUTH_SECONDS'],
  [{ AUTH_QUERY_TOKENS: 'sometimes' }, 'AUTH_QUERY_TOKENS'],
  [{ AUTH_ADMIN_USERNAME: 'x' }, 'AUTH_ADMIN_USERNAME'],
  [{ AUTH_ADMIN_PASSWORD: 'short' }, 'AUTH_ADMIN_PASSWORD'],
  [{ AUTH_SIGNUPS_PER_ADDRESS: '0' }, 'AUTH_SIGNUPS_PER_ADDRESS'],
  [{ AUTH_SIGNUP_WINDOW_SECONDS: 'hourly' }, 'AUTH_SIGNUP_WINDOW_SECONDS'],
  [{ PROXY_MIN_ACCESS_LEVEL: 'root' }, 'PROXY_MIN_ACCESS_LEVEL'],
  [{ PROXY_KEY_DEFAULT_DAYS: '-1' }, 'PROXY_KEY_DEFAULT_DAYS'],
  [{ PROXY_KEY_DEFAULT_DAYS: '3651' }, 'PROXY_KEY_DEFAULT_DAYS'],
  [{ TRUSTED_PROXIES: '10.0.0.0/8, ingress' }, 'TRUSTED_PROXIES'],
  [{ TRUSTED_PROXIES: '10.0.0.0/40' }, 'TRUSTED_PROXIES'],
  [{ GEMINI_CREDENTIALS: '{not json' }, 'GEMINI_CREDENTIALS'],
  [{ LLM_CREDENTIALS: '[1,2]' }, 'LLM_CREDENTIALS'],
  [{ CODE_ASSIST_ENDPOINT: 'ftp://x' }, 'CODE_ASSIST_ENDPOINT'],
  [{ GEMINI_API_ENDPOINT: 'nope' }, 'GEMINI_API_ENDPOINT'],
  [{ GEMINI_BACKEND: 'openai' }, 'GEMINI_BACKEND'],
  [{ GEMINI_BACKEND: 'gemini-api' }, 'GEMINI_BACKEND'],
  [{ GEMINI_BACKEND: 'code-assist', GEMINI_API_KEY: 'k' }, 'GEMINI_BACKEND'],
  [{ GEMINI_BACKEND: 'vertex', GOOGLE_APPLICATION_CREDENTIALS: '/key.json' }, 'GEMINI_BACKEND'],
  [{ GEMINI_BACKEND: 'vertex', GOOGLE_CLOUD_PROJECT: 'p', GOOGLE_CLOUD_LOCATION: 'evil.example/x' }, 'GOOGLE_CLOUD_LOCATION'],
  [{ GEMINI_BACKEND: 'vertex', GOOGLE_CLOUD_PROJECT: 'p', GOOGLE_CLOUD_LOCATION: 'us-central1,evil.example/x' }, 'GOOGLE_CLOUD_LOCATION'],
  [{ GEMINI_BACKEND: 'vertex', GOOGLE_CLOUD_PROJECT: 'p', GOOGLE_CLOUD_LOCATION: 'us-central1,us-central1' }, 'GOOGLE_CLOUD_LOCATION'],
  [{ GEMINI_BACKEND: 'vertex', GEMINI_API_KEY: 'k', GOOGLE_CLOUD_LOCATION: 'us-central1,europe-west4' }, 'GOOGLE_CLOUD_LOCATION'],
  [{ GEMINI_BACKEND: 'vertex', GOOGLE_CLOUD_PROJECT: 'p', GOOGLE_CLOUD_LOCATION: 'us-central1,europe-west4', VERTEX_ENDPOINT: 'https://v.example' }, 'GOOGLE_CLOUD_LOCATION'],
  [{ VERTEX_ENDPOINT: 'aiplatform.googleapis.com' }, 'VERTEX_ENDPOINT'],
  [{ GEMINI_MODELS: 'a b' }, 'GEMINI_MODELS'],
  [{ GEMINI_MODEL_ACCESS: '{member: ["*"]}' }, 'GEMINI_MODEL_ACCESS'],
  [{ GEMINI_MODEL_ALIASES: '{claude: gemini}' }, 'GEMINI_MODEL_ALIASES'],
  [{ GEMINI_MODEL_ACCESS: '["gemini-*"]' }, 'GEMINI_MODEL_ACCESS'],
  [{ GEMINI_MODEL_ACCESS: '{"member":"gemini-*"}' }, 'GEMINI_MODEL_ACCESS'],
  [{ GEMINI_MODEL_ACCESS: '{"member":["gemini-(.*)"]}' }, 'GEMINI_MODEL_ACCESS'],
  [{ GEMINI_MODEL_ACCESS: '{"root":["*"]}' }, 'GEMINI_MODEL_ACCESS'],
  [{ GEMINI_MODEL_ACCESS: '{"member":["*"]}', PROXY_MIN_ACCESS_LEVEL: 'admin' }, 'GEMINI_MODEL_ACCESS'],
  [{ PROXY_MIN_ACCESS_LEVEL: 'root' }, 'PROXY_MIN_ACCESS_LEVEL'],
  [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
  [{ SHUTDOWN_TIMEOUT_SECONDS: 'soon' }, 'SHUTDOWN_TIMEOUT_SECONDS'],
  [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT'],
  [{ IMAGE_FETCH_ALLOWED_PORTS: 'http' }, 'IMAGE_FETCH_ALLOWED_PORTS'],
  [{ IMAGE_FETCH_ALLOWED_PORTS: '80,0' }, 'IMAGE_FETCH_ALLOWED_PORTS'],
  [{ IMAGE_FETCH_ALLOWED_PORTS: '70000' }, 'IMAGE_FETCH_ALLOWED_PORTS'],
  [{ GEMINI_LIMITS: '{"member": {"rpm": 60' }, 'GEMINI_LIMITS'],
  [{ GEMINI_LIMITS: '{"owner": {"rpm": 60}}' }, 'GEMINI_LIMITS'],
  [{ GEMINI_LIMITS: '{"member": {"rpm": -1}}' }, 'GEMINI_LIMITS'],
  [{ GEMINI_LIMITS: '{"member": {"allow": ["everything"]}}' }, 'GEMINI_LIMITS'],
  [{ GEMINI_MAX_CACHE_TTL_SECONDS: '0' }, 'GEMINI_MAX_CACHE_TTL_SECONDS'],
  [{ GEMINI_MAX_CACHE_TTL_SECONDS: 'an hour' }, 'GEMINI_MAX_CACHE_TTL_SECONDS'],
]

t.test('a bad value is refused with one line naming the variable', async t => {
  for (const [env, variable] of BAD) {
    const err = (() => { try { loadConfig(env); return undefined } catch (e) { return e } })()
    t.ok(err instanceof ConfigError, `${JSON.stringify(env)} refused`)
    t.ok(err instanceof ConfigurationError, 'the library\'s configuration error, naming the variable as its option')
    t.equal((err as ConfigurationError).option, variable)
    const { message } = err as ConfigError
    t.equal((err as ConfigError).variable, variable)
    t.match(message, new RegExp(`^Invalid configuration: ${variable} `), message)
    t.notMatch(message, /\n/, 'one line')
  }
})

t.test('a refused secret is not echoed back', async t => {
  // MONGODB_URL carries its password, and fails a pattern: the pattern's refusal must not quote it either.
  for (const env of [{ GEMINI_CREDENTIALS: '{"refresh_token":"very-secret' }, { AUTH_ADMIN_PASSWORD: 'sh0rt' }, { MONGODB_URL: 'http://user:very-secret@db' }]) {
    const err = (() => { try { loadConfig(env); return undefined } catch (e) { return e as Error } })()
    t.ok(err, Object.keys(env)[0])
    t.notMatch(err?.message ?? '', /very-secret|sh0rt/)
  }
})

t.test('a proxy password shorter than 16 characters stops start-up with one clear line naming the variable', async t => {
  for (const variable of ['GEMINI_AUTH_PASSWORD', 'LLM_AUTH_PASSWORD']) {
    const err = (() => { try { loadConfig({ [variable]: 'fifteen-chars!!' }); return undefined } catch (e) { return e } })()
    t.ok(err instanceof ConfigError, variable)
    t.equal((err as ConfigError).variable, variable)
    t.equal((err as ConfigError).message, `Invalid configuration: ${variable} length must be at least 16 characters long`, 'says what is wrong, not the value')
    t.equal(loadConfig({ [variable]: 'sixteen-chars!!!' }).proxyPassword, 'sixteen-chars!!!', `${variable}: 16 characters are enough`)
  }
  const { code, stdout, stderr } = await runMain({ GEMINI_AUTH_PASSWORD: 'short-password' })
  t.equal(code, 1, 'npm start exits 1')
  t.equal(stdout, '', 'nothing started')
  t.same(stderr.trim().split('\n'), ['Invalid configuration: GEMINI_AUTH_PASSWORD length must be at least 16 characters long'])
})

t.test('IMAGE_FETCH_ALLOWED_PORTS is a comma-separated list of ports, unset by default (the library allows 80 and 443)', async t => {
  t.same(loadConfig({ IMAGE_FETCH_ALLOWED_PORTS: '80, 8443,443' }).imageFetchAllowedPorts, [80, 8443, 443])
  t.notOk('imageFetchAllowedPorts' in loadConfig({}))
})

async function runMain (env: Record<string, string>): Promise<{ code: number | null, stdout: string, stderr: string }> {
  const child = spawn(NODE, ['--import', path.join(ROOT, 'gateway/tracing.ts'), path.join(ROOT, 'gateway/main.ts')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', ...env },
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d: Buffer) => { stdout += d.toString() })
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
  const code = await new Promise<number | null>(resolve => child.on('exit', c => resolve(c)))
  return { code, stdout, stderr }
}

t.test('npm start with a bad value prints one line naming the variable and exits 1', async t => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ PORT: 'abc' }, 'PORT'],
    [{ LOG_LEVEL: 'chatty' }, 'LOG_LEVEL'],
    [{ GEMINI_CREDENTIALS: 'not-json' }, 'GEMINI_CREDENTIALS'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'nowhere', OTEL_SERVICE_NAME: 'x' }, 'OTEL_EXPORTER_OTLP_ENDPOINT'],
  ]
  await Promise.all(cases.map(async ([env, variable]) => {
    const { code, stdout, stderr } = await runMain(env)
    t.equal(code, 1, `${variable}: exit code 1`)
    t.equal(stdout, '', `${variable}: nothing started`)
    const lines = stderr.trim().split('\n')
    t.equal(lines.length, 1, `${variable}: one line`)
    t.match(lines[0], new RegExp(`^Invalid configuration: ${variable} `))
  }))
})

t.test('npm start with a value the library refuses as it builds the services prints one line naming the variable and exits 1', async t => {
  const { code, stderr } = await runMain({ GOOGLE_APPLICATION_CREDENTIALS: '/nonexistent/gatehouse-credentials.json', LOG_LEVEL: 'silent' })
  t.equal(code, 1, 'exit code 1')
  const lines = stderr.trim().split('\n')
  t.equal(lines.length, 1, 'one line')
  t.match(lines[0], /^Invalid configuration: GOOGLE_APPLICATION_CREDENTIALS \(option (upstream\.)?credentialsFile\): .*cannot be read/)
})

t.test('npm start with a good configuration prints its URL', async t => {
  const gw = await spawnGateway({ LOG_LEVEL: 'error', AUTH_ADMIN_PASSWORD: 'admin-password' })
  t.teardown(() => gw.stop('SIGKILL'))
  t.match(gw.url, /^http:\/\/127\.0\.0\.1:\d+$/)
  const res = await fetch(gw.url + '/health')
  t.same(await res.json(), { status: 'healthy', service: 'gatehouse' })
})

t.test('GEMINI_LIMITS is JSON from access level to limits (snake_case), unset by default (unlimited); a bad field is named', async t => {
  t.same(loadConfig({ GEMINI_LIMITS: '{"member": {"rpm": 60, "tokens_per_day": 1000000, "concurrent": null}}' }).geminiLimits,
    { member: { rpm: 60, tokensPerDay: 1000000, concurrent: null } })
  t.notOk('geminiLimits' in loadConfig({}))
  t.throws(() => loadConfig({ GEMINI_LIMITS: '{"member": {"tokensPerDay": 5}}' }), { variable: 'GEMINI_LIMITS', message: 'Invalid configuration: GEMINI_LIMITS is refused: "GEMINI_LIMITS.member.tokensPerDay" is not a limit (use rpm, tpm, tokens_per_day, concurrent, usd_per_day, usd_per_month)' })
  t.throws(() => loadConfig({ GEMINI_LIMITS: '{"member": {"tpm": 0.5}}' }), { message: /GEMINI_LIMITS\.member\.tpm must be a whole number, 0 or more, or null/ })
})

t.test('GEMINI_LIMITS carries each level\'s allow; GEMINI_MAX_CACHE_TTL_SECONDS is unset by default (the library\'s 3600)', async t => {
  t.same(loadConfig({ GEMINI_LIMITS: '{"dev": {"allow": ["batches", "caches", "files"]}}' }).geminiLimits, { dev: { allow: ['batches', 'caches', 'files'] } })
  t.equal(loadConfig({ GEMINI_MAX_CACHE_TTL_SECONDS: '900' }).geminiMaxCacheTtlSeconds, 900)
  t.notOk('geminiMaxCacheTtlSeconds' in loadConfig({}))
})

t.test('GOOGLE_CLOUD_LOCATION: several locations are refused in express mode and with VERTEX_ENDPOINT, naming what to change', async t => {
  const message = (env: Record<string, string>): string => { try { loadConfig(env); return '' } catch (e) { return (e as Error).message } }
  t.equal(message({ GEMINI_BACKEND: 'vertex', GEMINI_API_KEY: 'k', GOOGLE_CLOUD_LOCATION: 'us-central1,europe-west4' }),
    'Invalid configuration: GOOGLE_CLOUD_LOCATION lists several locations, but express mode (no GOOGLE_CLOUD_PROJECT) always calls the global endpoint: set one location or GOOGLE_CLOUD_PROJECT (got "us-central1,europe-west4")')
  t.equal(message({ GEMINI_BACKEND: 'vertex', GOOGLE_CLOUD_PROJECT: 'p', GOOGLE_CLOUD_LOCATION: 'us-central1,europe-west4', VERTEX_ENDPOINT: 'https://v.example' }),
    'Invalid configuration: GOOGLE_CLOUD_LOCATION lists several locations, but VERTEX_ENDPOINT would send them all to its one host: set one location with VERTEX_ENDPOINT (got "us-central1,europe-west4")')
  t.match(message({ GEMINI_BACKEND: 'vertex', GOOGLE_CLOUD_PROJECT: 'p', GOOGLE_CLOUD_LOCATION: 'us-central1,Evil.example' }), /^Invalid configuration: GOOGLE_CLOUD_LOCATION must be 'global' or a region name/)
  t.equal(message({ GEMINI_API_KEY: 'k', GOOGLE_CLOUD_LOCATION: 'us-central1,europe-west4' }), '', 'ignored by a backend other than Vertex')
})

t.test('GEMINI_CREDENTIALS_WRITE_BACK turns off writing refreshed tokens back to the credentials files', async t => {
  t.equal(loadConfig({ GEMINI_CREDENTIALS_DIR: '/etc/gatehouse/credentials.d', GEMINI_CREDENTIALS_WRITE_BACK: 'false' }).credentialsWriteBack, false)
  t.equal(loadConfig({ GEMINI_CREDENTIALS_WRITE_BACK: 'true' }).credentialsWriteBack, true)
  t.notOk('credentialsWriteBack' in loadConfig({ GEMINI_CREDENTIALS_DIR: '/d' }), 'unset: the library default (write back)')
})

t.test('the Responses secret: PROXY_RESPONSES_SECRET, else derived from the proxy password, else the admin password, else unset', async t => {
  t.equal(loadConfig({ PROXY_RESPONSES_SECRET: 'an-explicit-secret-value', GEMINI_AUTH_PASSWORD: 'proxy-password-0123456' }).responsesSecret, 'an-explicit-secret-value')
  const fromProxy = loadConfig({ GEMINI_AUTH_PASSWORD: 'proxy-password-0123456' }).responsesSecret
  t.match(fromProxy, /^[0-9a-f]{64}$/, 'a digest, never the password itself')
  t.equal(loadConfig({ GEMINI_AUTH_PASSWORD: 'proxy-password-0123456' }).responsesSecret, fromProxy, 'the same on every replica')
  t.not(loadConfig({ AUTH_ADMIN_PASSWORD: 'admin-password-0123' }).responsesSecret, undefined)
  t.not(loadConfig({ AUTH_ADMIN_PASSWORD: 'admin-password-0123' }).responsesSecret, fromProxy)
  t.equal(loadConfig({}).responsesSecret, undefined)
  t.throws(() => loadConfig({ PROXY_RESPONSES_SECRET: 'short' }), ConfigError)
  t.equal(loadConfig({ PROXY_RESPONSES_TTL_DAYS: '7' }).responsesTtlDays, 7)
  t.throws(() => loadConfig({ PROXY_RESPONSES_TTL_DAYS: '0' }), ConfigError)
})

t.test('PROXY_RESPONSES_WEBSOCKET_* set the Responses socket limits (createProxy\'s responses.websocket); unset, the library\'s defaults hold', async t => {
  t.same(environmentOptions(loadConfig({})).proxy.responses?.websocket, { idleTimeoutSeconds: undefined, maxLifetimeSeconds: undefined, maxSocketsPerKey: undefined })
  const config = loadConfig({ PROXY_RESPONSES_WEBSOCKET_IDLE_SECONDS: '60', PROXY_RESPONSES_WEBSOCKET_LIFETIME_SECONDS: '600', PROXY_RESPONSES_WEBSOCKET_SOCKETS_PER_KEY: '4' })
  t.same(environmentOptions(config).proxy.responses?.websocket, { idleTimeoutSeconds: 60, maxLifetimeSeconds: 600, maxSocketsPerKey: 4 })
  for (const name of ['PROXY_RESPONSES_WEBSOCKET_IDLE_SECONDS', 'PROXY_RESPONSES_WEBSOCKET_LIFETIME_SECONDS', 'PROXY_RESPONSES_WEBSOCKET_SOCKETS_PER_KEY']) {
    t.throws(() => loadConfig({ [name]: '0' }), { message: new RegExp(name) })
    t.throws(() => loadConfig({ [name]: '1.5' }), ConfigError)
  }
})

t.test('GEMINI_PRICES_FILE names an operator price file, unset by default; a bad one stops the start with one line naming the variable', async t => {
  t.equal(loadConfig({}).geminiPricesFile, undefined)
  t.equal(loadConfig({ GEMINI_PRICES_FILE: '/etc/gatehouse/prices.json' }).geminiPricesFile, '/etc/gatehouse/prices.json')
  const env = { GEMINI_PRICES_FILE: '/nonexistent/gatehouse-prices.json' }
  let err: unknown
  try { createPriceList({ pricesFile: env.GEMINI_PRICES_FILE }) } catch (e) { err = e }
  t.ok(err instanceof ConfigurationError)
  t.match(configurationErrorLine(err as ConfigurationError, env), /^Invalid configuration: GEMINI_PRICES_FILE \(option pricesFile\): createProxy: pricesFile \/nonexistent\/gatehouse-prices\.json cannot be read/)
})
