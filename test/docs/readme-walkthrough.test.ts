// The README's "Giving your team access" walk-through, run as written against a test gateway so it cannot drift:
// the environment of its `npm start` block configures the gateway, its shell block runs in bash (curl and jq, as
// the README asks of the reader) and its `openai` snippet runs in node. Only the address is swapped for the test's.
import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { startGateway, NODE } from '../support/gateway.ts'
import { geminiResponse, startFakeUpstream } from '../support/fake-upstream.ts'
import { readRepoFile, ROOT } from './markdown.ts'

const run = promisify(execFile)
const SECTION = '## Giving your team access'
const README_URL = 'http://127.0.0.1:8888'

/** The section's fenced code blocks, in order: { lang, code }. */
function sectionBlocks (heading = SECTION): Array<{ lang: string, code: string }> {
  const readme = readRepoFile('README.md')
  const start = readme.indexOf(`\n${heading}\n`)
  if (start < 0) throw new Error(`README.md has no section "${heading}"`)
  const end = readme.indexOf('\n## ', start + heading.length + 2)
  const section = readme.slice(start, end < 0 ? undefined : end)
  return [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map(m => ({ lang: m[1], code: m[2] }))
}

/** The single-quoted VAR='value' assignments of the `npm start` block (the ones naming the reader's secrets are left to the test). */
function startEnvironment (code: string): Record<string, string> {
  const env: Record<string, string> = {}
  for (const m of code.matchAll(/\b([A-Z][A-Z0-9_]*)='([^']*)'/g)) env[m[1]] = m[2]
  return env
}

t.test(`README "${SECTION.slice(3)}": every step works against the gateway as documented`, async t => {
  const blocks = sectionBlocks()
  t.same(blocks.map(b => b.lang), ['sh', 'sh', 'js'], 'the section holds the start command, the shell walk-through and the openai snippet')
  const [startBlock, shellBlock, sdkBlock] = blocks
  t.match(startBlock.code, /npm start\s*$/, 'the gateway is started with npm start')
  const documentedEnv = startEnvironment(startBlock.code)
  t.ok(documentedEnv.GEMINI_LIMITS !== undefined && documentedEnv.GEMINI_MODEL_ACCESS !== undefined && documentedEnv.AUTH_ADMIN_PASSWORD !== undefined,
    'the start command sets the admin password, limits and model policy')

  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  // GEMINI_AUTH_PASSWORD stays unset, as in the README: only keys reach the proxy.
  // The gateway's clock runs ahead on demand: a limits change reaches the limiter within 4 s (its override cache).
  let ahead = 0
  const now = (): Date => new Date(Date.now() + ahead)
  const gw = await startGateway({ ...documentedEnv, GEMINI_BACKEND: 'gemini-api', GEMINI_API_KEY: 'upstream-key', GEMINI_API_ENDPOINT: fake.url, LOG_LEVEL: 'silent' }, { now })
  t.teardown(() => gw.close())
  const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-walkthrough-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))

  // Each curl call also reports its method, URL and status on stderr; the variables the steps set are printed at the end.
  const script = [
    'set -eo pipefail',
    'curl () { command curl -w \'%{stderr}@@status %{http_code} %{method} %{url_effective}\\n\' "$@"; }',
    shellBlock.code.replaceAll(README_URL, gw.url),
    'printf \'@@vars {"id":"%s","admin_id":"%s","admin_token":"%s","token":"%s","key":"%s","key_id":"%s"}\\n\' "$ID" "$ADMIN_ID" "$ADMIN_TOKEN" "$TOKEN" "$KEY" "$KEY_ID" >&2',
  ].join('\n')
  const { stdout, stderr } = await run('bash', ['-c', script], { cwd: dir, timeout: 30_000 })
  const statuses = [...stderr.matchAll(/^@@status (\d+) (\S+) (\S+)$/gm)].map(m => ({ status: Number(m[1]), call: `${m[2]} ${new URL(m[3]).pathname}` }))
  t.same(statuses.filter(s => s.status >= 300), [], 'every call of the walk-through succeeds')
  t.same(statuses.map(s => s.call.replace(/[0-9a-f]{24}/g, '{id}')), [
    'POST /v1/api/auth/signup',
    'POST /v1/api/auth/login',
    'GET /v1/api/auth/get-user-id',
    'PUT /v1/api/admin/user/{id}/access-level',
    'POST /v1/api/auth/login',
    'POST /v1/api/auth/keys',
    'POST /v1/chat/completions',
    'PUT /v1/api/admin/user/{id}/limits',
    'GET /v1/api/admin/usage',
    'DELETE /v1/api/auth/keys/{id}',
  ], 'the steps the README walks through')
  const vars = JSON.parse(/^@@vars (.*)$/m.exec(stderr)![1]) as Record<string, string>
  t.match(vars.key, /^ghk_/, 'the key comes out of the creation answer')
  t.match(stdout, /HTTP\/1\.1 200 OK[\s\S]*Hello from the fake upstream\./, 'the key reaches the model through the proxy')
  t.match(stdout, /x-ratelimit-limit-requests: 60\r?\n/i, 'the proxy answer carries the x-ratelimit-* headers (the member level\'s rpm)')

  const admin = { token: vars.admin_token, 'user-agent': 'ops' }
  const limits: any = await (await fetch(`${gw.url}/v1/api/admin/user/${vars.id}/limits?admin_id=${vars.admin_id}`, { headers: admin })).json()
  t.same(limits.effective, { rpm: 10, tpm: 200000, tokens_per_day: 500000, concurrent: 4, usd_per_day: null, usd_per_month: null }, 'the override replaces what it names and keeps the level\'s other limits')

  const revoked = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${vars.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gemini-3.5-flash', messages: [{ role: 'user', content: 'Hi' }] }),
  })
  t.equal(revoked.status, 401, 'the revoked key is refused')

  // The usage the walk-through's call left, once the ledger's batch (at most a second) is written.
  let rows: Array<Record<string, unknown>> = []
  for (const deadline = Date.now() + 5000; rows.length === 0 && Date.now() < deadline; await new Promise(resolve => setTimeout(resolve, 100))) {
    rows = ((await (await fetch(`${gw.url}/v1/api/admin/usage?admin_id=${vars.admin_id}&user_id=${vars.id}`, { headers: admin })).json()) as { rows: typeof rows }).rows
  }
  t.match(rows, [{ user_id: vars.id, key_id: vars.key_id, model: 'gemini-3.5-flash', surface: 'chat', requests: 1 }], 'the admin sees the call in usage')
  const metrics = await (await fetch(`${gw.url}/metrics`)).text()
  t.match(metrics, /^gatehouse_model_requests_total\{[^}]*model="gemini-3\.5-flash"[^}]*access_level="member"[^}]*\} [1-9]/m,
    'the call counts in gatehouse_model_requests_total (README, "Operations")')

  // The openai snippet, with a fresh key of Ada's (the walk-through revoked its own).
  const created = await fetch(`${gw.url}/v1/api/auth/keys?user_id=${vars.id}`, {
    method: 'POST',
    headers: { token: vars.token, 'user-agent': 'my-laptop', 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'sdk' }),
  })
  t.equal(created.status, 201)
  const key = ((await created.json()) as { key: string }).key
  const snippet = sdkBlock.code.replaceAll(README_URL, gw.url)
  const sdk = await run(NODE, ['--input-type=module', '-e', snippet], { cwd: ROOT, env: { PATH: process.env.PATH, GATEHOUSE_KEY: key }, timeout: 30_000 })
  t.equal(sdk.stdout.trim(), 'Hello from the fake upstream.', 'the openai snippet answers with the model\'s reply')

  // What the README's comments promise beside the calls: a model outside the level's policy is 403, a limit is a 429.
  const call = async (model: string): Promise<Response> => await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hi' }] }),
  })
  const denied = await call('gemini-3.8-flash')
  t.equal(denied.status, 403, 'gemini-3.8-flash is outside the member level\'s GEMINI_MODEL_ACCESS')
  t.match(await denied.json(), { error: { type: 'permission_error' } })
  const tight = await fetch(`${gw.url}/v1/api/admin/user/${vars.id}/limits?admin_id=${vars.admin_id}`, {
    method: 'PUT', headers: { ...admin, 'content-type': 'application/json' }, body: JSON.stringify({ rpm: 1 }),
  })
  t.equal(tight.status, 200)
  ahead += 5000
  await call('gemini-3.5-flash')
  const over = await call('gemini-3.5-flash')
  t.equal(over.status, 429, 'over the admin\'s rpm override the proxy answers 429')
  t.ok(over.headers.has('retry-after'), 'with Retry-After')

  // README "Budgets in dollars", continuing the walk-through: the rpm override above cleared, a minute on, and the
  // model's long answer of 30,000 tokens ($0.27 at gemini-3.5-flash's $9 per 1M output).
  t.equal((await fetch(`${gw.url}/v1/api/admin/user/${vars.id}/limits?admin_id=${vars.admin_id}`, { method: 'PUT', headers: { ...admin, 'content-type': 'application/json' }, body: '{}' })).status, 200)
  ahead += 65_000
  fake.setDefault('generateContent', { body: geminiResponse({ text: 'Release notes.', finishReason: 'STOP', usage: { promptTokenCount: 20, candidatesTokenCount: 30_000, totalTokenCount: 30_020 } }) })
  const budgetBlocks = sectionBlocks('## Budgets in dollars')
  t.same(budgetBlocks.map(b => b.lang), ['sh'], 'the budget section holds one shell block')
  const budgetScript = [
    'set -eo pipefail',
    'curl () { command curl -w \'%{stderr}@@status %{http_code} %{method} %{url_effective}\\n\' "$@"; }',
    `G=${gw.url}; B=$G/v1/api; ID=${vars.id}; TOKEN=${vars.token}`,
    budgetBlocks[0].code,
  ].join('\n')
  const budget = await run('bash', ['-c', budgetScript], { cwd: dir, timeout: 30_000 })
  t.same([...budget.stderr.matchAll(/^@@status (\d+) (\S+) (\S+)$/gm)].map(m => `${m[1]} ${m[2]} ${new URL(m[3]).pathname}`), [
    '201 POST /v1/api/auth/keys',
    '200 POST /v1/chat/completions',
    '429 POST /v1/chat/completions',
  ], 'the capped key is made, its first call answered, the next refused')
  t.match(budget.stdout, /x-gatehouse-budget: key_usd_per_month\r?\n/i, 'the answer names the budget')
  t.match(budget.stdout, /x-gatehouse-budget-remaining-usd: 0\.000000\r?\n/i, 'and what is left of it, this call\'s reservation (the model\'s whole output limit) held')
  t.match(budget.stdout, /"message":"Budget reached: this key's usd_per_month of \$0\.250000, \$0\.000000 left; it resets at \d{4}-\d{2}-01T00:00:00\.000Z","type":"rate_limit_error"/, 'the refusal as the README shows it')
})
