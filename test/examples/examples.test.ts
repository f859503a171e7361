import t from 'tap'
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { readFile } from 'node:fs/promises'
import { parse } from 'yaml'
import { ROOT, startGateway } from '../support/gateway.ts'
import { startFakeUpstream } from '../support/fake-upstream.ts'
import type { FakeUpstream } from '../support/fake-upstream.ts'

// Every example runs the way its header's `Run:` line says: that line's command, with the variables it names set
// by the test. `npm run example` runs it on the repo's Node 24 with the console built (package.json).

interface TestT { teardown (fn: () => unknown): void }

/** The header's command: its leading NAME=value assignments apart, the rest must be `npm run example examples/<file>`. */
async function headerCommand (file: string): Promise<{ variables: string[], argv: string[] }> {
  const source = await readFile(join(ROOT, 'examples', file), 'utf8')
  const line = /^\/\/ Run: (.+)$/m.exec(source)?.[1]
  if (line === undefined) throw new Error(`examples/${file} has no "// Run:" line`)
  const words = line.trim().split(/\s+/)
  const variables: string[] = []
  while (/^[A-Z_]+=/.test(words[0])) variables.push((words.shift() as string).split('=')[0])
  return { variables, argv: words }
}

function kill (child: ChildProcess): void {
  // npm runs the example in a shell: the whole process group goes.
  try { process.kill(-(child.pid as number), 'SIGKILL') } catch { /* gone already */ }
}

/** Runs the header's command with `env` (plus PATH and HOME for npm); resolves with the child and its output so far. */
async function runHeader (t: TestT, file: string, env: Record<string, string>): Promise<{ child: ChildProcess, output: () => string, exited: Promise<number | null> }> {
  const { variables, argv } = await headerCommand(file)
  for (const name of variables) if (env[name] === undefined) throw new Error(`the test sets no ${name}, which examples/${file}'s header names`)
  const [command, ...args] = argv
  const child = spawn(command, args, { cwd: ROOT, detached: true, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? ROOT, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => { kill(child) })
  let out = ''
  child.stdout?.on('data', (d: Buffer) => { out += d.toString() })
  child.stderr?.on('data', (d: Buffer) => { out += d.toString() })
  const exited = once(child, 'exit').then(([code]) => code as number | null)
  return { child, output: () => out, exited }
}

async function startExample (t: TestT, file: string, env: Record<string, string>): Promise<{ api: string, output: () => string }> {
  const run = await runHeader(t, file, { PORT: '0', ...env })
  let done = false
  void run.exited.then(() => { done = true })
  while (!/listening on \S+/.test(run.output())) {
    if (done) throw new Error(`${file} exited:\n${run.output()}`)
    await Promise.race([once(run.child.stdout as NodeJS.ReadableStream, 'data'), run.exited])
  }
  return { api: (/listening on (\S+)/.exec(run.output()) as RegExpExecArray)[1], output: run.output }
}

const PROXY_PASSWORD = 'example-proxy-password'
const JSON_HEADERS = { 'content-type': 'application/json' }

function upstreamEnv (fake: FakeUpstream): Record<string, string> {
  return {
    AUTH_ADMIN_PASSWORD: 'example-admin-password',
    GEMINI_AUTH_PASSWORD: PROXY_PASSWORD,
    GEMINI_CREDENTIALS: JSON.stringify({ client_id: 'c', client_secret: 's', refresh_token: 'r', token_uri: fake.tokenUri }),
    GOOGLE_CLOUD_PROJECT: 'example-project',
    CODE_ASSIST_ENDPOINT: fake.url,
    // The fake's model list would otherwise decide the catalogue, as in test/support/gateway.ts.
    GEMINI_MODEL_DISCOVERY_HOURS: '0',
  }
}

for (const file of ['node-http.ts', 'express.ts', 'fastify.ts', 'hapi.ts']) {
  t.test(`examples/${file}, run as its header says with the gateway's variables: accounts, a model call through the upstream, and the console`, async t => {
    const fake = await startFakeUpstream()
    t.teardown(() => fake.close())
    const { api, output } = await startExample(t, file, upstreamEnv(fake))
    const body = JSON.stringify({ username: 'example_user', password: 'example password' })
    const signup = await fetch(`${api}/auth/signup`, { method: 'POST', headers: JSON_HEADERS, body })
    t.equal(signup.status, 201, 'sign-up answers 201')
    const login = await fetch(`${api}/auth/login`, { method: 'POST', headers: { ...JSON_HEADERS, 'user-agent': 'example-test' }, body })
    t.equal(login.status, 200, 'login answers 200')
    const session = await login.json() as { user_id: string, access_token: string }
    const validate = await fetch(`${api}/auth/validate?user_id=${session.user_id}&token=${session.access_token}`, { headers: { 'user-agent': 'example-test' } })
    t.equal(validate.status, 200, 'validate answers 200')
    const bad = await fetch(`${api}/auth/signup`, { method: 'POST', headers: JSON_HEADERS, body: '{oops' })
    t.same([bad.status, await bad.json()], [400, { detail: 'Invalid JSON in request body' }], 'malformed JSON gets the library\'s error body, not the framework\'s')
    const auth = { authorization: `Bearer ${PROXY_PASSWORD}` }
    const models = await fetch(new URL('/v1/models', api), { headers: auth })
    t.match([models.status, await models.json()], [200, { object: 'list' }], 'the proxy answers its model list')
    const chat = await fetch(new URL('/v1/chat/completions', api), { method: 'POST', headers: { ...JSON_HEADERS, ...auth }, body: JSON.stringify({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] }) })
    t.match([chat.status, await chat.json()], [200, { choices: [{ message: { role: 'assistant' } }] }], 'a model call reaches the upstream GEMINI_CREDENTIALS and CODE_ASSIST_ENDPOINT name')
    t.equal(fake.calls('generateContent').length, 1, 'the fake upstream answered it')
    const refused = await fetch(new URL('/v1/chat/completions', api), { method: 'POST', headers: { ...JSON_HEADERS, ...auth }, body: '{oops' })
    t.match([refused.status, await refused.json()], [400, { error: { type: 'invalid_request_error' } }], 'a proxy body is read and refused in the chat shape')
    const unknown = await fetch(new URL('/v1/nothing', api))
    t.match([unknown.status, await unknown.json()], [404, { error: { message: 'Not found' } }], 'an unknown /v1 path answers in the chat shape')
    const consoleUrl = /console on (\S+)/.exec(output())?.[1]
    t.equal(consoleUrl, new URL('/console/', api).href, 'the start output names the console\'s URL')
    const page = await fetch(consoleUrl ?? '')
    t.match([page.status, page.headers.get('content-type'), await page.text()], [200, /^text\/html/, /<script/], 'the console is mounted')
  })
}

t.test('examples/node-http.ts with no upstream variable: a model call answers 503 naming createProxy\'s upstream option and the variables', async t => {
  const { api } = await startExample(t, 'node-http.ts', { GEMINI_AUTH_PASSWORD: PROXY_PASSWORD })
  const chat = await fetch(new URL('/v1/chat/completions', api), { method: 'POST', headers: { ...JSON_HEADERS, authorization: `Bearer ${PROXY_PASSWORD}` }, body: JSON.stringify({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] }) })
  t.equal(chat.status, 503)
  t.match(await chat.json(), { error: { message: /createProxy an `upstream`.*GEMINI_CREDENTIALS.*GEMINI_API_KEY/ } })
})

t.test('an example refuses a bad gateway variable with the gateway\'s message, naming the variable', async t => {
  const run = await runHeader(t, 'express.ts', { PORT: '0', AUTH_SESSION_TTL_SECONDS: 'soon' })
  t.not(await run.exited, 0, 'it exits')
  t.match(run.output(), /Invalid configuration: AUTH_SESSION_TTL_SECONDS must be a number \(got "soon"\)/)
})

t.test('examples/openai-sdk.ts and examples/google-genai-sdk.ts talk to the gateway, run as their headers say', async t => {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const gateway = await startGateway({
    GEMINI_AUTH_PASSWORD: PROXY_PASSWORD,
    GEMINI_CREDENTIALS: JSON.stringify({ client_id: 'c', client_secret: 's', refresh_token: 'r', token_uri: fake.tokenUri }),
    GOOGLE_CLOUD_PROJECT: 'example-project',
    CODE_ASSIST_ENDPOINT: fake.url
  })
  t.teardown(() => gateway.close())
  const env = { GATEHOUSE_URL: gateway.url.replace(/\/$/, ''), GEMINI_AUTH_PASSWORD: PROXY_PASSWORD }
  const openai = await runHeader(t, 'openai-sdk.ts', env)
  t.equal(await openai.exited, 0, 'the openai example exits 0')
  t.match(openai.output(), /models: gemini-/, 'lists models')
  t.match(openai.output(), /answer: \S+/, 'prints a completion')
  t.match(openai.output(), /streamed: \S+/, 'prints a streamed completion')
  const genai = await runHeader(t, 'google-genai-sdk.ts', env)
  t.equal(await genai.exited, 0, 'the genai example exits 0')
  t.match(genai.output(), /answer: \S+/, 'prints a generateContent answer')
  t.match(genai.output(), /streamed: \S+/, 'prints a streamed answer')
  t.match(genai.output(), /tokens: \d+/, 'prints a token count')
  t.ok(fake.calls('generateContent').length >= 2 && fake.calls('streamGenerateContent').length >= 2, 'the calls reached the fake upstream')
})

t.test('examples/prometheus.yml is a scrape config for /metrics', async t => {
  const config = parse(await readFile(join(ROOT, 'examples/prometheus.yml'), 'utf8')) as { scrape_configs: Array<{ metrics_path: string, static_configs: Array<{ targets: string[] }> }> }
  const job = config.scrape_configs[0]
  t.equal(job.metrics_path, '/metrics')
  t.match(job.static_configs[0].targets[0], /:8888$/, 'points at the default port')
  const gateway = await startGateway({})
  t.teardown(() => gateway.close())
  const metrics = await fetch(new URL(job.metrics_path, gateway.url))
  t.equal(metrics.status, 200, 'the path it scrapes answers')
  t.match(await metrics.text(), /process_cpu_seconds_total/)
})
