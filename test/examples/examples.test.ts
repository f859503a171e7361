import t from 'tap'
import { spawn, execFile } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { readFile } from 'node:fs/promises'
import { promisify } from 'node:util'
import { parse } from 'yaml'
import { ROOT, NODE, startGateway } from '../support/gateway.ts'
import { startFakeUpstream } from '../support/fake-upstream.ts'

// Every example runs as a smoke test, the way its header comment says to run it. The examples import
// 'gatehouse' as a user would; the `gatehouse-source` condition resolves that to lib/ without a build.
const run = promisify(execFile)
const nodeArgs = ['--conditions=gatehouse-source']

interface TestT { teardown (fn: () => unknown): void }

async function startExample (t: TestT, file: string): Promise<string> {
  const child = spawn(NODE, [...nodeArgs, join(ROOT, 'examples', file)], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', PORT: '0', ADMIN_PASSWORD: 'example-admin-password', GEMINI_AUTH_PASSWORD: 'example-proxy-password' }, stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => { child.kill('SIGKILL') })
  let out = ''
  child.stderr.on('data', (d: Buffer) => { out += d.toString() })
  child.stdout.setEncoding('utf8')
  while (!/listening on \S+/.test(out)) {
    const [chunk] = await Promise.race([once(child.stdout, 'data'), once(child, 'exit').then(() => { throw new Error(`${file} exited:\n${out}`) })]) as [string]
    out += chunk
  }
  return (/listening on (\S+)/.exec(out) as RegExpExecArray)[1]
}

for (const file of ['node-http.ts', 'express.ts', 'fastify.ts', 'hapi.ts']) {
  t.test(`examples/${file} mounts the accounts service and the proxy: sign-up, login, validate and the model list work`, async t => {
    const api = await startExample(t, file)
    const body = JSON.stringify({ username: 'example_user', password: 'example password' })
    const signup = await fetch(`${api}/auth/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    t.equal(signup.status, 201, 'sign-up answers 201')
    const login = await fetch(`${api}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': 'example-test' }, body })
    t.equal(login.status, 200, 'login answers 200')
    const session = await login.json() as { user_id: string, access_token: string }
    const validate = await fetch(`${api}/auth/validate?user_id=${session.user_id}&token=${session.access_token}`, { headers: { 'user-agent': 'example-test' } })
    t.equal(validate.status, 200, 'validate answers 200')
    const bad = await fetch(`${api}/auth/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{oops' })
    t.same([bad.status, await bad.json()], [400, { detail: 'Invalid JSON in request body' }], 'malformed JSON gets the library\'s error body, not the framework\'s')
    const models = await fetch(new URL('/v1/models', api), { headers: { authorization: 'Bearer example-proxy-password' } })
    t.equal(models.status, 200, 'the proxy answers its model list')
    t.match(await models.json(), { object: 'list' })
    const chat = await fetch(new URL('/v1/chat/completions', api), { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer example-proxy-password' }, body: '{oops' })
    t.match([chat.status, await chat.json()], [400, { error: { type: 'invalid_request_error' } }], 'a proxy body is read and refused in the chat shape')
    const unknown = await fetch(new URL('/v1/nothing', api))
    t.match([unknown.status, await unknown.json()], [404, { error: { message: 'Not found' } }], 'an unknown /v1 path answers in the chat shape')
  })
}

t.test('examples/openai-sdk.ts and examples/google-genai-sdk.ts talk to the gateway', async t => {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const gateway = await startGateway({
    GEMINI_AUTH_PASSWORD: 'example-proxy-password',
    GEMINI_CREDENTIALS: JSON.stringify({ client_id: 'c', client_secret: 's', refresh_token: 'r', token_uri: fake.tokenUri }),
    GOOGLE_CLOUD_PROJECT: 'example-project',
    CODE_ASSIST_ENDPOINT: fake.url
  })
  t.teardown(() => gateway.close())
  const env = { PATH: process.env.PATH ?? '', GATEHOUSE_URL: gateway.url.replace(/\/$/, ''), GEMINI_AUTH_PASSWORD: 'example-proxy-password' }
  const openai = await run(NODE, [join(ROOT, 'examples/openai-sdk.ts')], { cwd: ROOT, env })
  t.match(openai.stdout, /models: gemini-/, 'lists models')
  t.match(openai.stdout, /answer: \S+/, 'prints a completion')
  t.match(openai.stdout, /streamed: \S+/, 'prints a streamed completion')
  const genai = await run(NODE, [join(ROOT, 'examples/google-genai-sdk.ts')], { cwd: ROOT, env })
  t.match(genai.stdout, /answer: \S+/, 'prints a generateContent answer')
  t.match(genai.stdout, /streamed: \S+/, 'prints a streamed answer')
  t.match(genai.stdout, /tokens: \d+/, 'prints a token count')
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
