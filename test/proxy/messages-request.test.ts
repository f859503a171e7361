// The Messages surface's own rules, tested on its modules: which bodies are refused and with which field named,
// what is skipped rather than refused, and the stream's keep-alive (docs/messages.md).
import t from 'tap'
import { checkMessagesRequest } from '../../lib/proxy/messages/request-schema.ts'
import { effortOf, toGeminiRequest } from '../../lib/proxy/messages/request-to-gemini.ts'
import { messagesStreamTranslator, PING } from '../../lib/proxy/messages/stream.ts'
import { parseModelName } from '../../lib/proxy/models/name.ts'
import { isGatehouseError } from '../../lib/index.ts'
import { startProxy, PASSWORD } from './harness.ts'
import { geminiResponse, streamReply } from '../support/fake-upstream.ts'

const ok = { model: 'gemini-3.5-flash', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }

function refusal (body: unknown, needsMaxTokens = true, maxBlocks = 100): { code: string, param: unknown, message: string } {
  try {
    checkMessagesRequest(body, needsMaxTokens, maxBlocks)
  } catch (err) {
    if (isGatehouseError(err)) return { code: err.code, param: err.param, message: err.message }
    throw err
  }
  throw new Error('accepted')
}

t.test('a body with a field of the wrong type is a 400 naming that field', async t => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['model missing', { ...ok, model: undefined }, 'model'],
    ['max_tokens missing', { ...ok, max_tokens: undefined }, 'max_tokens'],
    ['max_tokens not an integer', { ...ok, max_tokens: 1.5 }, 'max_tokens'],
    ['no messages', { ...ok, messages: [] }, 'messages'],
    ['a role Anthropic does not have', { ...ok, messages: [{ role: 'tool', content: 'x' }] }, 'messages[0]'],
    ['a system entry whose text block has no text', { ...ok, messages: [{ role: 'system', content: [{ type: 'text' }] }] }, 'messages[0].content[0]'],
    ['content neither text nor blocks', { ...ok, messages: [{ role: 'user', content: 5 }] }, 'messages[0]'],
    ['a text block without text', { ...ok, messages: [{ role: 'user', content: [{ type: 'text' }] }] }, 'messages[0].content[0]'],
    ['an image of an unknown source', { ...ok, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'f' } }] }] }, 'messages[0].content[0].source'],
    ['a tool_result without its id', { ...ok, messages: [{ role: 'user', content: [{ type: 'tool_result', content: 'x' }] }] }, 'messages[0].content[0]'],
    ['temperature out of range', { ...ok, temperature: 3 }, 'temperature'],
    ['stop_sequences not strings', { ...ok, stop_sequences: [1] }, 'stop_sequences'],
    ['a tool without a name', { ...ok, tools: [{ input_schema: {} }] }, 'tools[0]'],
    ['tool_choice of an unknown type', { ...ok, tool_choice: { type: 'some' } }, 'tool_choice'],
    ['thinking enabled without a budget', { ...ok, thinking: { type: 'enabled' } }, 'thinking.budget_tokens'],
    ['an unknown effort', { ...ok, output_config: { effort: 'huge' } }, 'output_config.effort'],
  ]
  for (const [name, body, param] of cases) {
    const r = refusal(body)
    t.equal(r.code, 'INVALID_INPUT', name)
    t.equal(r.param, param, name)
  }
  t.equal(refusal({ ...ok, max_tokens: 0 }, false).param, 'max_tokens', 'count_tokens checks max_tokens when it is sent')
  t.doesNotThrow(() => checkMessagesRequest({ model: 'm', messages: ok.messages }, false, 100), 'count_tokens needs no max_tokens')
})

t.test('the blocks of all messages together are bounded', async t => {
  const many = { ...ok, messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }, { type: 'text', text: 'c' }] }] }
  t.equal(refusal(many, true, 2).code, 'TOO_MANY_PARTS')
  t.doesNotThrow(() => checkMessagesRequest(many, true, 3))
})

t.test('blocks of types the gateway does not translate are skipped, never a 400', async t => {
  const body = checkMessagesRequest({
    ...ok,
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'search' }] },
      { role: 'assistant', content: [{ type: 'server_tool_use', id: 's', name: 'web_search', input: {} }, { type: 'web_search_tool_result', tool_use_id: 's', content: [] }, { type: 'redacted_thinking', data: 'xyz' }, { type: 'text', text: 'found' }] },
      { role: 'user', content: 'thanks' },
    ],
  }, true, 100)
  const request = await toGeminiRequest(body, parseModelName('gemini-3.5-flash'), { safetySettings: [] })
  t.same(request.contents, [
    { role: 'user', parts: [{ text: 'search' }] },
    { role: 'model', parts: [{ text: 'found' }] },
    { role: 'user', parts: [{ text: 'thanks' }] },
  ])
})

const model = parseModelName('gemini-3.5-flash')

t.test('system entries: those opening messages join systemInstruction after system; later ones reach the model in their place', async t => {
  const body = checkMessagesRequest({
    ...ok,
    system: [{ type: 'text', text: 'You are Claude Code.' }],
    messages: [
      { role: 'system', content: 'Opening rules.' },
      { role: 'user', content: 'hi' },
      { role: 'system', content: [{ type: 'text', text: '<env>cwd: /tmp</env>', cache_control: { type: 'ephemeral' } }, { type: 'image', source: { type: 'url', url: 'https://x' } }] },
      { role: 'assistant', content: 'hello' },
      { role: 'system', content: 'Plan mode is on.' },
      { role: 'user', content: 'go' },
    ],
  }, true, 100)
  const request = await toGeminiRequest(body, model, { safetySettings: [] })
  t.same(request.systemInstruction, { parts: [{ text: 'You are Claude Code.\n\nOpening rules.' }] })
  t.same(request.contents, [
    { role: 'user', parts: [{ text: 'hi' }, { text: '<system>\n<env>cwd: /tmp</env>\n</system>' }] },
    { role: 'model', parts: [{ text: 'hello' }] },
    { role: 'user', parts: [{ text: '<system>\nPlan mode is on.\n</system>' }, { text: 'go' }] },
  ], 'a later entry is a user-turn text part, merged with the user turn beside it; its other blocks are skipped')
})

t.test('a system entry between a tool call and its result never separates them: the function response comes first', async t => {
  const body = checkMessagesRequest({
    ...ok,
    messages: [
      { role: 'user', content: 'read it' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: { path: 'a' } }] },
      { role: 'system', content: 'The file changed.' },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'A' }, { type: 'text', text: 'and?' }] },
    ],
  }, true, 100)
  const request = await toGeminiRequest(body, model, { safetySettings: [] })
  t.same((request.contents as unknown[])[2], { role: 'user', parts: [{ functionResponse: { name: 'Read', response: { content: 'A' } } }, { text: '<system>\nThe file changed.\n</system>' }, { text: 'and?' }] })
})

t.test('per-turn effort: the last message\'s output_config.effort decides; an unknown one is left out, never a 400', async t => {
  const body = checkMessagesRequest({
    ...ok,
    thinking: { type: 'adaptive' },
    output_config: { effort: 'low' },
    messages: [{ role: 'user', content: 'a', output_config: { effort: 'max' } }, { role: 'assistant', content: 'b' }, { role: 'user', content: 'c', output_config: { effort: 'high' } }],
  }, true, 100)
  t.equal(effortOf(body), 'high')
  const odd = checkMessagesRequest({ ...ok, output_config: { effort: 'low' }, messages: [{ role: 'user', content: 'a', output_config: { effort: 'turbo' } }] }, true, 100)
  t.equal(effortOf(odd), 'low', 'the request\'s effort applies')
})

t.test('a tool_result naming no earlier tool_use is a 400 naming the block', async t => {
  const body = checkMessagesRequest({ ...ok, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'nope', content: 'x' }] }] }, true, 100)
  const err = await toGeminiRequest(body, parseModelName('gemini-3.5-flash'), { safetySettings: [] }).catch(e => e)
  t.equal(err.code, 'INVALID_INPUT')
  t.equal(err.param, 'messages[0].content[0]')
})

t.test('thinking settings become one reasoning effort: disabled none, budgets bucketed, an explicit effort wins', async t => {
  t.equal(effortOf({ thinking: { type: 'disabled' } }), 'none')
  t.equal(effortOf({ thinking: { type: 'enabled', budget_tokens: 1024 } }), 'low')
  t.equal(effortOf({ thinking: { type: 'enabled', budget_tokens: 8000 } }), 'medium')
  t.equal(effortOf({ thinking: { type: 'enabled', budget_tokens: 31999 } }), 'high')
  t.equal(effortOf({ thinking: { type: 'enabled', budget_tokens: 31999 }, output_config: { effort: 'low' } }), 'low')
  t.equal(effortOf({ thinking: { type: 'adaptive' }, output_config: { effort: 'xhigh' } }), 'xhigh')
  t.equal(effortOf({ thinking: { type: 'adaptive' } }), undefined, 'adaptive alone: the model\'s default')
  t.equal(effortOf({}), undefined)
})

t.test('a blocked prompt ends the stream with stop_reason refusal; a stream that never started still opens with message_start', async t => {
  const translator = messagesStreamTranslator({ id: 'msg_1', model: 'm', errorBody: () => ({}) })
  t.equal(translator.head, '')
  const text = translator.events([{ promptFeedback: { blockReason: 'SAFETY' } }]) + translator.end()
  const events = text.split('\n\n').filter(Boolean).map(f => f.split('\n')[0])
  t.same(events, ['event: message_start', 'event: message_delta', 'event: message_stop'])
  t.match(text, /"stop_reason":"refusal"/)
  const empty = messagesStreamTranslator({ id: 'msg_2', model: 'm', errorBody: () => ({}) })
  t.match(empty.end(), /^event: message_start\n/)
})

t.test('while the upstream is silent, the stream sends Anthropic ping events rather than comments', async t => {
  const h = await startProxy(t, { backendName: 'gemini-api', keepAliveMs: 30 })
  h.fake.reply('streamGenerateContent', streamReply([geminiResponse({ text: 'a' }), geminiResponse({ text: 'b', finishReason: 'STOP' })], { chunkDelayMs: 150 }))
  const res = await fetch(`${h.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': PASSWORD },
    body: JSON.stringify({ ...ok, stream: true }),
  })
  t.equal(res.status, 200)
  t.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8')
  const text = await res.text()
  t.ok(text.includes(PING), 'a ping while waiting')
  t.notOk(text.includes(': keepalive'), 'no comment keep-alives')
  t.match(text, /event: message_stop\n/)
})
