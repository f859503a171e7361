// The real-agent suite's own parts, without the agents (node scripts/agents.ts runs those, after npm test in CI):
// the README's agent sections give each agent its configuration, the scripted model plays the task in whatever tools
// an agent declares and holds signatures to Google's rule, and a run becomes the docs table.
import t from 'tap'
import { readmeConfig } from './readme-config.ts'
import { scriptedModel } from './scripted-model.ts'
import { agentsTable } from './table.ts'
import { AGENTS } from './agents.ts'
import type { CaseResult } from './suite.ts'
import { overSocket } from './suite.ts'
import { startFakeUpstream } from '../support/fake-upstream.ts'

const RUN = { url: 'http://127.0.0.1:4321', key: 'ghk_test', model: 'gemini-4-argon' }

t.test('each agent is configured as its README section says, with the run\'s gateway, key and model', async t => {
  const gemini = readmeConfig('gemini-cli', RUN)
  t.same(gemini.env, { GOOGLE_GEMINI_BASE_URL: RUN.url, GEMINI_API_KEY: RUN.key })
  t.same(JSON.parse(gemini.files['.gemini/settings.json']), { security: { auth: { selectedType: 'gemini-api-key' } } }, 'the API-key sign-in Gemini CLI needs with a base URL')

  const opencode = readmeConfig('opencode', RUN)
  t.same(opencode.env, { GATEHOUSE_API_KEY: RUN.key })
  t.match(JSON.parse(opencode.files['.config/opencode/opencode.json']), { provider: { gatehouse: { npm: '@ai-sdk/openai-compatible', options: { baseURL: `${RUN.url}/v1`, apiKey: '{env:GATEHOUSE_API_KEY}' }, models: { 'gemini-4-argon': {} } } } })
  t.throws(() => readmeConfig('opencode', { ...RUN, model: 'gemini-3.5-flash' }), /does not declare gemini-3.5-flash/, 'a model the README does not declare is the README\'s fault')

  const codex = readmeConfig('codex', RUN)
  t.same(codex.env, { GATEHOUSE_API_KEY: RUN.key })
  const toml = codex.files['.codex/config.toml']
  t.match(toml, /^model = "gemini-4-argon"$/m)
  t.match(toml, `base_url = "${RUN.url}/v1"`)
  t.match(toml, `model_catalog_url = "${RUN.url}/v1/models"`, 'the catalog, without which Codex offers no apply_patch')

  const claude = readmeConfig('claude-code', RUN)
  t.match(claude.env, { ANTHROPIC_BASE_URL: RUN.url, ANTHROPIC_AUTH_TOKEN: RUN.key, ANTHROPIC_MODEL: 'gemini-4-argon' })
  t.same(claude.files, {})

  t.throws(() => readmeConfig('codex', RUN, '# no agents here\n'), /README.md has no section/)
})

async function generate (url: string, model: string, body: unknown): Promise<{ status: number, json: any }> {
  const res = await fetch(`${url}/v1beta/models/${model}:generateContent`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': 'k' }, body: JSON.stringify(body) })
  return { status: res.status, json: await res.json() }
}

const TOOLS = [{ functionDeclarations: [
  { name: 'write_file', parametersJsonSchema: { type: 'object', properties: { file_path: { type: 'string' }, content: { type: 'string' } } } },
  { name: 'run_shell_command', parametersJsonSchema: { type: 'object', properties: { command: { type: 'string' }, dir_path: { type: 'string' } } } },
] }]

t.test('the scripted model writes, reads back and quotes what the tool result said, signing each call', async t => {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const model = scriptedModel({ file: '/w/notes.txt', content: 'hello-42' })
  fake.script = model.script
  const user = { role: 'user', parts: [{ text: 'go' }] }

  const first = await generate(fake.url, 'gemini-3.8-flash', { contents: [user], tools: TOOLS })
  const write = first.json.candidates[0].content.parts[0]
  t.same(write.functionCall, { name: 'write_file', args: { file_path: '/w/notes.txt', content: 'hello-42\n' } }, 'the agent\'s file tool, its own argument names')
  t.type(write.thoughtSignature, 'string')

  const wrote = { role: 'user', parts: [{ functionResponse: { name: 'write_file', response: { output: 'ok' } } }] }
  const second = await generate(fake.url, 'gemini-3.8-flash', { contents: [user, { role: 'model', parts: [write] }, wrote], tools: TOOLS })
  const read = second.json.candidates[0].content.parts[0]
  t.same(read.functionCall, { name: 'run_shell_command', args: { command: 'cat /w/notes.txt' } }, 'the shell tool, its directory left to its default')

  const output = { role: 'user', parts: [{ functionResponse: { name: 'run_shell_command', response: { output: 'Output: hello-42' } } }] }
  const history = [user, { role: 'model', parts: [write] }, wrote, { role: 'model', parts: [read] }, output]
  const third = await generate(fake.url, 'gemini-3.8-flash', { contents: history, tools: TOOLS })
  t.equal(third.json.candidates[0].content.parts[0].text, 'I wrote /w/notes.txt and read it back. It says: "hello-42"')
  t.same(model.steps, ['write write_file', 'read run_shell_command', 'answer'])
  t.equal(model.returned.size, 2, 'both signatures came back on their calls')
  t.equal(model.foreign.size, 0)

  const missing = await generate(fake.url, 'gemini-3.8-flash', { contents: [user, { role: 'model', parts: [{ functionCall: write.functionCall }] }, wrote], tools: TOOLS })
  t.equal(missing.status, 400, 'Gemini 3: a call without its signature (the fake\'s own rule)')
  const moved = await generate(fake.url, 'gemini-3.8-flash', { contents: [user, { role: 'model', parts: [{ functionCall: read.functionCall, thoughtSignature: write.thoughtSignature }] }, output], tools: TOOLS })
  t.match(moved, { status: 400, json: { error: { message: 'Corrupted thought signature.', status: 'INVALID_ARGUMENT' } } }, 'a signature on another call than its own')
  const placeholder = await generate(fake.url, 'gemini-3.8-flash', { contents: [user, { role: 'model', parts: [{ functionCall: write.functionCall, thoughtSignature: 'skip_thought_signature_validator' }] }, wrote], tools: TOOLS })
  t.equal(placeholder.status, 200, 'Google\'s documented placeholder passes Google')
  t.ok(model.foreign.has('skip_thought_signature_validator'), 'but the suite counts it')
})

t.test('calls outside the task get the shortest answer their schema allows; a failed read is reported, not invented', async t => {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const model = scriptedModel({ file: '/w/notes.txt', content: 'hello-42' })
  fake.script = model.script
  const schema = { type: 'object', properties: { reasoning: { type: 'string' }, next_speaker: { type: 'string', enum: ['user', 'model'] }, confidence: { type: 'number' }, ok: { type: 'boolean' }, list: { type: 'array' } } }
  const check = await generate(fake.url, 'gemini-3.8-flash', { contents: [{ role: 'user', parts: [{ text: 'who speaks next?' }] }], generationConfig: { responseMimeType: 'application/json', responseJsonSchema: schema } })
  t.same(JSON.parse(check.json.candidates[0].content.parts[0].text), { reasoning: 'ok', next_speaker: 'user', confidence: 0, ok: false, list: [] })

  const tools = [{ functionDeclarations: [{ name: 'Write', parameters: { type: 'object', properties: { file_path: {}, content: {} } } }, { name: 'Read', parameters: { type: 'object', properties: { file_path: {} } } }] }]
  const user = { role: 'user', parts: [{ text: 'go' }] }
  const history: any[] = [user]
  for (let i = 0; i < 5; i++) {
    const step = await generate(fake.url, 'gemini-4-argon', { contents: history, tools })
    const part = step.json.candidates[0].content.parts[0]
    if (part.functionCall === undefined) break
    history.push({ role: 'model', parts: [part] }, { role: 'user', parts: [{ functionResponse: { name: part.functionCall.name, response: { error: 'permission denied' } } }] })
  }
  t.same(model.steps, ['utility', 'write Write', 'read Read', 'read Read', 'answer'], 'the read tool when there is no shell, tried twice')
  t.match(model.answer, /^I could not read the file back; the last tool result was: \{"error":"permission denied"\}/)
})

t.test('a run becomes docs/agents.md: one row per agent and model, the day of the run', async t => {
  const base = { version: '1.0.0', websocket: false, run: { code: 0, signal: null, stdout: '', stderr: '', timedOut: false, ms: 1 }, exchanges: [], upstream: [], refused: [], signatures: { issued: 2, returned: 2, foreign: 0 } }
  const results = [
    { ...base, agent: AGENTS[0], model: 'gemini-3.8-flash', ok: true, problems: [], steps: ['utility', 'write write_file', 'read run_shell_command', 'answer'] },
    { ...base, agent: AGENTS[3], model: 'gemini-4-argon', ok: false, problems: ['exited with code 1', 'a | b'], steps: [] },
    { ...base, agent: AGENTS[2], model: 'gemini-4-argon', websocket: true, ok: true, problems: [], steps: ['write apply_patch', 'read exec_command', 'answer'] },
  ] as CaseResult[]
  const table = agentsTable(results, new Date('2026-12-01T10:00:00Z'), 'node scripts/agents.ts --table')
  t.match(table, '| Gemini CLI | 1.0.0 | native | gemini-3.8-flash | passes: write write_file, read run_shell_command, answer; 2 of 2 signatures back | 2026-12-01 |')
  t.match(table, '| Claude Code | 1.0.0 | messages | gemini-4-argon | **fails**: exited with code 1; a \\| b | 2026-12-01 |')
  t.match(table, '| Codex CLI | 1.0.0 | responses over WebSocket | gemini-4-argon | passes: write apply_patch, read exec_command, answer; 2 of 2 signatures back | 2026-12-01 |')
})

t.test('Codex over the WebSocket passes only when its turns came over an upgraded socket, none as a POST, each logged as one', async t => {
  const upgrade = { method: 'GET', path: '/v1/responses', headers: {}, body: undefined, status: 101 }
  const turn = { msg: 'request', transport: 'websocket', method: 'POST', route: '/v1/responses', status: 200 }
  t.same(overSocket([upgrade], [turn, turn, turn]), [])
  t.same(overSocket([], [turn, turn, turn]), ['Codex opened no WebSocket (is supports_websockets in its provider block?)'])
  t.match(overSocket([upgrade, { ...upgrade, method: 'POST' }], [turn, turn, turn]), ['1 turn(s) came as POST /v1/responses, not over the socket'])
  t.match(overSocket([upgrade], [turn]), [/logged 1 turn\(s\) over the socket/])
})

t.test('the WebSocket variant of Codex\'s config is the README\'s provider block with supports_websockets = true, the line its Codex section names', async t => {
  const toml = readmeConfig('codex', { ...RUN, websocket: true }).files['.codex/config.toml']
  t.match(toml, /^wire_api = "responses"\nsupports_websockets = true$/m)
  t.notMatch(readmeConfig('codex', RUN).files['.codex/config.toml'], /supports_websockets/)
  t.throws(() => readmeConfig('gemini-cli', { ...RUN, websocket: true }), /only Codex/)
})
