// Codex's remote compaction (docs/responses.md, "Compaction"): a turn ending in a compaction_trigger item answers
// exactly one compaction item, its summary sealed for the caller, then response.completed; sent back, it restores
// the summary in its place; POST /v1/responses/compact answers the compacted history whole.
import t from 'tap'
import { startProxy, PASSWORD } from './harness.ts'
import { geminiResponse, streamReply } from '../support/fake-upstream.ts'

const SECRET = 'compaction-test-secret-0123456789'
const HEADERS = { authorization: `Bearer ${PASSWORD}`, 'content-type': 'application/json' }
const history = [
  { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Write notes.txt' }] },
  { type: 'function_call', call_id: 'call_1', name: 'shell', arguments: '{"cmd":"echo hi > notes.txt"}' },
  { type: 'function_call_output', call_id: 'call_1', output: 'ok' },
]
const tools = [{ type: 'function', name: 'shell', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } }]

function events (text: string): Array<Record<string, any>> {
  return text.split('\n').filter(l => l.startsWith('data: ')).map(l => JSON.parse(l.slice(6)))
}

t.test('a streamed turn ending in compaction_trigger answers exactly one compaction item, then response.completed', async t => {
  const h = await startProxy(t, { backendName: 'gemini-api', responses: { secret: SECRET } })
  h.fake.reply('streamGenerateContent', streamReply([geminiResponse({ text: 'The user asked for notes.txt; ' }), geminiResponse({ text: 'it was written.', finishReason: 'STOP', usage: { promptTokenCount: 40, candidatesTokenCount: 9, totalTokenCount: 49 } })]))
  const res = await fetch(`${h.url}/v1/responses`, { method: 'POST', headers: { ...HEADERS, 'x-codex-beta-features': 'remote_compaction_v2' }, body: JSON.stringify({ model: 'gemini-3.8-flash', stream: true, tools, input: [...history, { type: 'compaction_trigger' }] }) })
  t.equal(res.status, 200)
  const all = events(await res.text())
  const done = all.filter(e => e.type === 'response.output_item.done')
  t.equal(done.length, 1, 'one output item')
  t.equal(done[0].item.type, 'compaction')
  t.match(done[0].item.encrypted_content, /^gh1\./, 'sealed')
  t.notOk(JSON.stringify(all).includes('notes.txt; it was'), 'the summary is not readable by the client')
  t.equal(all.at(-1)?.type, 'response.completed')
  t.match(all.at(-1)?.response.usage, { input_tokens: 40, output_tokens: 9 }, 'the summary is a metered model call')
  const sent = h.fake.last('streamGenerateContent')!.body
  t.match(sent.contents.at(-1).parts.at(-1).text, /^Summarise the conversation so far/)
  t.same(sent.toolConfig, { functionCallingConfig: { mode: 'NONE' } }, 'the tools stay declared, none may be called')

  h.fake.reply('generateContent', { body: geminiResponse({ text: 'Continuing.', finishReason: 'STOP' }) })
  const next = await fetch(`${h.url}/v1/responses`, { method: 'POST', headers: HEADERS, body: JSON.stringify({ model: 'gemini-3.8-flash', input: [done[0].item, { type: 'message', role: 'user', content: 'go on' }] }) })
  t.equal(next.status, 200)
  await next.text()
  t.same(h.fake.last('generateContent')!.body.contents, [{ role: 'user', parts: [{ text: 'Summary of the conversation before this point:\nThe user asked for notes.txt; it was written.' }, { text: 'go on' }] }], 'sent back, it restores the summary in its place')
})

t.test('a compaction item that is not this gateway\'s, or another caller\'s, restores nothing', async t => {
  const h = await startProxy(t, { backendName: 'gemini-api', responses: { secret: SECRET } })
  const res = await fetch(`${h.url}/v1/responses`, { method: 'POST', headers: HEADERS, body: JSON.stringify({ model: 'gemini-3.8-flash', input: [{ type: 'compaction', encrypted_content: 'gh1.forged' }, { type: 'message', role: 'user', content: 'hi' }] }) })
  t.equal(res.status, 200)
  await res.text()
  t.same(h.fake.last('generateContent')!.body.contents, [{ role: 'user', parts: [{ text: 'hi' }] }])
  const bad = await fetch(`${h.url}/v1/responses`, { method: 'POST', headers: HEADERS, body: JSON.stringify({ model: 'gemini-3.8-flash', input: [{ type: 'compaction' }, { role: 'user', content: 'hi' }] }) })
  t.equal(bad.status, 400, 'a compaction item needs its encrypted_content')
  await bad.text()
})

t.test('POST /v1/responses/compact answers {output}: the user messages, then the one compaction item', async t => {
  const h = await startProxy(t, { backendName: 'gemini-api', responses: { secret: SECRET } })
  h.fake.reply('generateContent', { body: geminiResponse({ text: 'Summary.', finishReason: 'STOP' }) })
  const res = await fetch(`${h.url}/v1/responses/compact`, { method: 'POST', headers: HEADERS, body: JSON.stringify({ model: 'gemini-3.8-flash', instructions: 'You are Codex.', input: history }) })
  t.equal(res.status, 200)
  const body = await res.json() as { output: Array<Record<string, any>> }
  t.same(body.output.map(i => i.type ?? 'message'), ['message', 'compaction'])
  t.equal(body.output[0].content[0].text, 'Write notes.txt')
  t.equal(h.fake.calls('streamGenerateContent').length, 0, 'unary, as Codex asks it')
})
