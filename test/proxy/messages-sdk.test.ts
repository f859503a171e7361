// The official @anthropic-ai/sdk pointed at the proxy's Anthropic Messages surface, with the fake Gemini API
// behind it: what the SDK gets back, and what the upstream was sent (docs/messages.md).
import t from 'tap'
import Anthropic from '@anthropic-ai/sdk'
import { startProxy, PASSWORD, PNG_1X1 } from './harness.ts'
import { errorReply, geminiResponse, streamReply } from '../support/fake-upstream.ts'

const MODEL = 'gemini-3.5-flash'

function client (url: string, apiKey = PASSWORD): Anthropic {
  return new Anthropic({ apiKey, baseURL: url, maxRetries: 0, timeout: 10000 })
}

t.test('messages.create: system, sampling and stop sequences reach Gemini; the answer is an Anthropic Message', async t => {
  const h = await startProxy(t, { backendName: 'gemini-api' })
  h.fake.reply('generateContent', { body: geminiResponse({ text: 'Hi there.', finishReason: 'STOP', usage: { promptTokenCount: 9, candidatesTokenCount: 3, totalTokenCount: 12 } }) })
  const message = await client(h.url).messages.create({
    model: MODEL,
    max_tokens: 256,
    system: [{ type: 'text', text: 'Be brief.' }, { type: 'text', text: 'Be kind.' }],
    messages: [{ role: 'user', content: 'Hello?' }],
    stop_sequences: ['END'],
  })
  t.match(message.id, /^msg_[0-9a-f]{24}$/)
  t.equal(message.type, 'message')
  t.equal(message.role, 'assistant')
  t.equal(message.model, MODEL)
  t.same(message.content, [{ type: 'text', text: 'Hi there.' }])
  t.equal(message.stop_reason, 'end_turn')
  t.equal(message.stop_sequence, null)
  t.same(message.usage, { input_tokens: 9, output_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 })

  const sent = h.fake.last('generateContent')!
  t.equal(sent.model, MODEL)
  t.same(sent.body.systemInstruction, { parts: [{ text: 'Be brief.\n\nBe kind.' }] })
  t.same(sent.body.contents, [{ role: 'user', parts: [{ text: 'Hello?' }] }])
  t.equal(sent.body.generationConfig.maxOutputTokens, 256)
  t.same(sent.body.generationConfig.stopSequences, ['END'])
  t.notOk(sent.body.generationConfig.thinkingConfig?.includeThoughts, 'no thoughts shown when the request did not ask for thinking')
})

t.test('x-api-key, ?beta=true, anthropic-beta and the fields Claude Code adds are accepted, never a 400', async t => {
  const h = await startProxy(t, { backendName: 'gemini-api' })
  const res = await fetch(`${h.url}/v1/messages?beta=true`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': PASSWORD, 'anthropic-version': '2023-06-01', 'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14' },
    body: JSON.stringify({
      model: MODEL,
      max_tokens: 100,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] }],
      tools: [{ name: 'Read', description: 'read a file', input_schema: { type: 'object', properties: { path: { type: 'string' } } }, strict: true, defer_loading: false }],
      context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
      metadata: { user_id: 'someone' },
      temperature: 0.3,
      top_k: 40,
    }),
  })
  t.equal(res.status, 200)
  const body = await res.json() as { content: unknown[] }
  t.same(body.content, [{ type: 'text', text: 'Hello from the fake upstream.' }])
  t.match(h.fake.last('generateContent')!.body.generationConfig, { temperature: 0.3, topK: 40, maxOutputTokens: 100 }, 'sampling fields the SDK no longer types still pass when sent')
  t.same(h.fake.last('generateContent')!.body.tools, [{ functionDeclarations: [{ name: 'Read', description: 'read a file', parametersJsonSchema: { type: 'object', properties: { path: { type: 'string' } } } }] }])
})

t.test('Claude Code\'s 2026 requests are served: a system entry mid-conversation, per-turn effort, diagnostics, fast mode, tools that changed, a 40,000-character tool description', async t => {
  const h = await startProxy(t, { backendName: 'gemini-api' })
  const longDescription = 'Runs a shell command. '.repeat(1820)
  const res = await fetch(`${h.url}/v1/messages?beta=true`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': PASSWORD, 'anthropic-version': '2023-06-01', 'anthropic-beta': 'claude-code-20250219,per-turn-control-2026-07-01,mid-conversation-tool-changes-2026-07-01,cache-diagnosis-2026-04-07,fast-mode-2026-02-01' },
    body: JSON.stringify({
      model: MODEL,
      max_tokens: 32000,
      stream: true,
      system: [{ type: 'text', text: 'You are Claude Code.', cache_control: { type: 'ephemeral' } }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Write hello.txt' }] },
        { role: 'system', content: [{ type: 'text', text: '<env>Working directory: /tmp/w</env>' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01', name: 'Write', input: { file_path: 'hello.txt', content: 'hi' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'written' }], output_config: { effort: 'high' } },
      ],
      tools: [{ name: 'Bash', description: longDescription, input_schema: { type: 'object', properties: { command: { type: 'string' } } } }],
      thinking: { type: 'adaptive' },
      output_config: { effort: 'medium' },
      diagnostics: { cache: true },
      speed: 'fast',
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      metadata: { user_id: 'u' },
    }),
  })
  t.equal(res.status, 200)
  t.match(await res.text(), /event: message_stop/)
  const sent = h.fake.last('streamGenerateContent')!.body
  t.same(sent.contents[0], { role: 'user', parts: [{ text: 'Write hello.txt' }, { text: '<system>\n<env>Working directory: /tmp/w</env>\n</system>' }] }, 'the system entry in its place')
  t.equal(sent.contents[1].parts[0].functionCall.name, 'Write', 'a call to a tool no longer declared is kept')
  t.equal(sent.tools[0].functionDeclarations[0].description.length, longDescription.length, 'the long description whole')
  t.ok(sent.generationConfig.thinkingConfig !== undefined, 'the last turn\'s effort set the thinking')
})

t.test('thinking.display "omitted" (Claude Code\'s default): thinking blocks keep their signatures and carry no text', async t => {
  const h = await startProxy(t, { backendName: 'gemini-api' })
  h.fake.reply('streamGenerateContent', streamReply([
    geminiResponse({ thought: 'Secret plan.' }),
    { candidates: [{ content: { role: 'model', parts: [{ text: 'Done', thoughtSignature: 'c2lnLTE=' }] }, index: 0 }] },
    geminiResponse({ text: '.', finishReason: 'STOP' }),
  ]))
  const final = await client(h.url).messages.stream({
    model: MODEL, max_tokens: 1024, thinking: { type: 'adaptive', display: 'omitted' } as any, messages: [{ role: 'user', content: 'Hi' }],
  }).finalMessage()
  t.match(final.content[0], { type: 'thinking', thinking: '', signature: 'c2lnLTE=' })
  t.notOk(JSON.stringify(final).includes('Secret plan'), 'no thought text reaches the client')
  t.equal(h.fake.last('streamGenerateContent')!.body.generationConfig.thinkingConfig.includeThoughts, true, 'the model still thinks, and its signatures come back')
})

t.test('messages.stream: events in Anthropic order, thinking with its signature, the final message accumulated by the SDK', async t => {
  const h = await startProxy(t, { backendName: 'gemini-api' })
  h.fake.reply('streamGenerateContent', streamReply([
    geminiResponse({ thought: 'Let me see.', usage: { promptTokenCount: 4, totalTokenCount: 4 } }),
    { candidates: [{ content: { role: 'model', parts: [{ text: 'Hel', thoughtSignature: 'c2lnLTE=' }] }, index: 0 }] },
    geminiResponse({ text: 'lo!', finishReason: 'STOP', usage: { promptTokenCount: 4, candidatesTokenCount: 2, thoughtsTokenCount: 5, totalTokenCount: 11 } }),
  ]))
  const stream = client(h.url).messages.stream({
    model: MODEL, max_tokens: 1024, thinking: { type: 'enabled', budget_tokens: 2000 }, messages: [{ role: 'user', content: 'Hi' }],
  })
  const types: string[] = []
  stream.on('streamEvent', event => { types.push(event.type === 'content_block_delta' ? `delta:${event.delta.type}` : event.type) })
  const final = await stream.finalMessage()
  t.same(types, [
    'message_start',
    'content_block_start', 'delta:thinking_delta', 'delta:signature_delta', 'content_block_stop',
    'content_block_start', 'delta:text_delta', 'delta:text_delta', 'content_block_stop',
    'message_delta', 'message_stop',
  ])
  t.same(final.content, [{ type: 'thinking', thinking: 'Let me see.', signature: 'c2lnLTE=' }, { type: 'text', text: 'Hello!' }])
  t.equal(final.stop_reason, 'end_turn')
  t.equal(final.usage.input_tokens, 4)
  t.equal(final.usage.output_tokens, 7, 'thinking counts as output, as Anthropic counts it')
  const sent = h.fake.last('streamGenerateContent')!
  t.equal(sent.query.alt, 'sse')
  t.equal(sent.body.generationConfig.thinkingConfig.includeThoughts, true, 'thinking asked for: thoughts shown')
  t.equal(sent.body.generationConfig.thinkingConfig.thinkingLevel, 'low', 'a 2,000-token budget is a low level on a model that takes levels')
})

t.test('a tool loop with thinking over two turns: tool_use comes back with its thought signature, which returns to Gemini', async t => {
  const h = await startProxy(t, { backendName: 'gemini-api' })
  const anthropic = client(h.url)
  const tools: Anthropic.Tool[] = [{ name: 'get_weather', description: 'Weather by city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }]
  h.fake.reply('streamGenerateContent', streamReply([
    geminiResponse({ thought: 'Need the weather.' }),
    geminiResponse({ functionCalls: [{ name: 'get_weather', args: { city: 'Paris' }, thoughtSignature: 'U0lHTkFUVVJF' }], finishReason: 'STOP', usage: true }),
  ]))
  const first = await anthropic.messages.stream({
    model: MODEL, max_tokens: 1024, thinking: { type: 'adaptive' }, tools, messages: [{ role: 'user', content: 'Weather in Paris?' }],
  }).finalMessage()
  t.equal(first.stop_reason, 'tool_use')
  const use = first.content.find(b => b.type === 'tool_use')!
  t.equal(use.name, 'get_weather')
  t.same(use.input, { city: 'Paris' })
  const thinking = first.content.find(b => b.type === 'thinking')!
  t.equal(thinking.signature, 'U0lHTkFUVVJF', 'the call\'s signature closes the thinking block')

  h.fake.reply('generateContent', { body: geminiResponse({ text: 'Sunny, 21°C.', finishReason: 'STOP', usage: true }) })
  const second = await anthropic.messages.create({
    model: MODEL,
    max_tokens: 1024,
    thinking: { type: 'adaptive' },
    tools,
    messages: [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: [{ type: 'text', text: '{"sky":"sunny","c":21}' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_1X1.toString('base64') } }] }] },
    ],
  })
  t.same(second.content, [{ type: 'text', text: 'Sunny, 21°C.' }])
  const sent = h.fake.last('generateContent')!.body
  t.same(sent.contents[1], { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'U0lHTkFUVVJF' }] }, 'thinking text is not sent back; the signature is')
  t.same(sent.contents[2].parts[0], { functionResponse: { name: 'get_weather', response: { content: '{"sky":"sunny","c":21}' } } })
  t.same(sent.contents[2].parts[1], { inlineData: { mimeType: 'image/png', data: PNG_1X1.toString('base64') } }, 'a tool result\'s image goes beside its response')
})

t.test('a tool_use whose id lost its signature gets Google\'s placeholder on a model that checks signatures', async t => {
  const h = await startProxy(t, { backendName: 'gemini-api' })
  await client(h.url).messages.create({
    model: 'gemini-3-flash-preview',
    max_tokens: 100,
    messages: [
      { role: 'user', content: 'Go' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01abc', name: 'run', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01abc', content: 'done', is_error: true }] },
    ],
    tools: [{ name: 'run', input_schema: { type: 'object' } }],
  })
  const sent = h.fake.last('generateContent')!.body
  t.equal(sent.contents[1].parts[0].thoughtSignature, 'skip_thought_signature_validator')
  t.same(sent.contents[2].parts[0].functionResponse.response, { error: 'done' }, 'is_error becomes an error response')
})

t.test('tools, tool_choice, web search and structured output map to Gemini\'s', async t => {
  const h = await startProxy(t, { backendName: 'gemini-api' })
  const anthropic = client(h.url)
  await anthropic.messages.create({
    model: MODEL, max_tokens: 50, messages: [{ role: 'user', content: 'x' }],
    tools: [{ name: 'a', input_schema: { type: 'object' } }, { name: 'b', input_schema: { type: 'object' } }],
    tool_choice: { type: 'tool', name: 'b' },
  })
  t.same(h.fake.last('generateContent')!.body.toolConfig, { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['b'] } })
  await anthropic.messages.create({ model: MODEL, max_tokens: 50, messages: [{ role: 'user', content: 'x' }], tools: [{ name: 'a', input_schema: { type: 'object' } }], tool_choice: { type: 'any' } })
  t.same(h.fake.last('generateContent')!.body.toolConfig, { functionCallingConfig: { mode: 'ANY' } })
  await anthropic.messages.create({ model: MODEL, max_tokens: 50, messages: [{ role: 'user', content: 'news?' }], tools: [{ type: 'web_search_20250305', name: 'web_search' }] })
  t.same(h.fake.last('generateContent')!.body.tools, [{ googleSearch: {} }], 'web_search_* is Google Search grounding')
  await anthropic.messages.create({
    model: MODEL, max_tokens: 50, messages: [{ role: 'user', content: 'x' }],
    output_config: { format: { type: 'json_schema', schema: { type: 'object', properties: { n: { type: 'number' } } } } },
  })
  const config = h.fake.last('generateContent')!.body.generationConfig
  t.equal(config.responseMimeType, 'application/json')
  t.same(config.responseJsonSchema, { type: 'object', properties: { n: { type: 'number' } } })
})

t.test('thinking: disabled, a budget, adaptive with output_config.effort each pick the model\'s own setting', async t => {
  // A day before gemini-2.5-flash's shutdown on the Gemini API: it still takes budgets.
  const h = await startProxy(t, { backendName: 'gemini-api', now: () => new Date('2026-11-27T12:00:00Z') })
  const anthropic = client(h.url)
  const base = { max_tokens: 50, messages: [{ role: 'user' as const, content: 'x' }] }
  await anthropic.messages.create({ ...base, model: 'gemini-2.5-flash', thinking: { type: 'disabled' } })
  t.same(h.fake.last('generateContent')!.body.generationConfig.thinkingConfig, { thinkingBudget: 0 }, 'disabled turns a budget model\'s thinking off')
  await anthropic.messages.create({ ...base, model: 'gemini-2.5-flash', thinking: { type: 'enabled', budget_tokens: 32000 } })
  t.same(h.fake.last('generateContent')!.body.generationConfig.thinkingConfig, { thinkingBudget: 24576, includeThoughts: true })
  await anthropic.messages.create({ ...base, model: MODEL, thinking: { type: 'adaptive' }, output_config: { effort: 'max' } })
  t.same(h.fake.last('generateContent')!.body.generationConfig.thinkingConfig, { thinkingLevel: 'high', includeThoughts: true })
})

t.test('documents and images in a user turn become inline data; a PDF keeps its type', async t => {
  const h = await startProxy(t, { backendName: 'gemini-api' })
  await client(h.url).messages.create({
    model: MODEL, max_tokens: 50,
    messages: [{
      role: 'user',
      content: [
        { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' } },
        { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain words' } },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_1X1.toString('base64') } },
        { type: 'text', text: 'Describe.' },
      ],
    }],
  })
  t.same(h.fake.last('generateContent')!.body.contents[0].parts, [
    { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0xLjQK' } },
    { text: 'plain words' },
    { inlineData: { mimeType: 'image/png', data: PNG_1X1.toString('base64') } },
    { text: 'Describe.' },
  ])
})

t.test('countTokens answers input_tokens from the upstream\'s countTokens', async t => {
  const h = await startProxy(t, { backendName: 'gemini-api' })
  h.fake.reply('countTokens', { body: { totalTokens: 42 } })
  const counted = await client(h.url).messages.countTokens({ model: MODEL, system: 'Be brief.', messages: [{ role: 'user', content: 'How many?' }] })
  t.same(counted, { input_tokens: 42 })
  t.same(h.fake.last('countTokens')!.body.contents, [{ role: 'user', parts: [{ text: 'Be brief.' }] }, { role: 'user', parts: [{ text: 'How many?' }] }])
})

t.test('errors arrive as the SDK\'s error classes: 401, 404 model, 400 field, 429 with retry-after, 529 overloaded', async t => {
  const h = await startProxy(t, { backendName: 'gemini-api' })
  const base = { max_tokens: 10, messages: [{ role: 'user' as const, content: 'x' }] }
  const unauthenticated = await client(h.url, 'wrong-password-wrong-password').messages.create({ ...base, model: MODEL }).catch(e => e)
  t.ok(unauthenticated instanceof Anthropic.AuthenticationError)
  t.equal(unauthenticated.error.error.type, 'authentication_error')

  const anthropic = client(h.url)
  const missing = await anthropic.messages.create({ ...base, model: 'claude-sonnet-4-5' }).catch(e => e)
  t.ok(missing instanceof Anthropic.NotFoundError, 'a model outside the catalogue')
  t.equal(missing.error.error.type, 'not_found_error')

  const bad = await anthropic.messages.create({ ...base, model: MODEL, max_tokens: 0 }).catch(e => e)
  t.ok(bad instanceof Anthropic.BadRequestError)
  t.match(bad.error.error.message, /max_tokens/)

  h.fake.reply('generateContent', errorReply(429, { retryDelay: '7s' }))
  const limited = await anthropic.messages.create({ ...base, model: MODEL }).catch(e => e)
  t.ok(limited instanceof Anthropic.RateLimitError)
  t.equal(limited.error.error.type, 'rate_limit_error')
  t.equal(limited.headers.get('retry-after'), '7')

  h.fake.reply('generateContent', errorReply(503))
  const overloaded = await anthropic.messages.create({ ...base, model: MODEL }).catch(e => e)
  t.equal(overloaded.status, 529)
  t.equal(overloaded.error.error.type, 'overloaded_error')
})

t.test('a failure after the stream started is an error event the SDK throws', async t => {
  const h = await startProxy(t, { backendName: 'gemini-api' })
  h.fake.reply('streamGenerateContent', streamReply([geminiResponse({ text: 'partial ' }), geminiResponse({ text: 'never' })], { dropAfter: 1 }))
  const stream = client(h.url).messages.stream({ model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })
  const err = await stream.finalMessage().catch(e => e)
  t.ok(err instanceof Anthropic.APIError, String(err))
  t.match(err.error, { type: 'error', error: { type: /^(api_error|overloaded_error|timeout_error)$/ } })
})
