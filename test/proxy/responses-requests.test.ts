// Each Responses request and stream shape, checked against the Gemini request the fake upstream received
// (docs/responses.md): items and roles, content parts, namespace and custom tools, web search, tool_choice,
// reasoning effort, forged encrypted_content, errors in OpenAI's codes, stored responses, Codex's model list.
import t from 'tap'
import OpenAI from 'openai'
import { createEmbeddedStore } from '../../lib/index.ts'
import { startImageServer, startProxy, PASSWORD, PNG_1X1 } from './harness.ts'
import type { ProxyHarness } from './harness.ts'
import { errorReply, geminiResponse, streamReply } from '../support/fake-upstream.ts'

const SECRET = 'responses-test-secret-0123456789'

async function proxy (t: Parameters<typeof startProxy>[0]): Promise<ProxyHarness & { openai: OpenAI }> {
  const store = await createEmbeddedStore()
  t.teardown(() => store.close())
  const h = await startProxy(t, { backendName: 'code-assist', responses: { secret: SECRET, store: store.responses } })
  return { ...h, openai: new OpenAI({ apiKey: PASSWORD, baseURL: `${h.url}/v1`, maxRetries: 0, timeout: 10000 }) }
}

async function post (h: ProxyHarness, body: unknown): Promise<{ status: number, headers: Headers, json: any, text: string }> {
  const res = await fetch(`${h.url}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${PASSWORD}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const text = await res.text()
  let json: any
  try { json = JSON.parse(text) } catch {}
  return { status: res.status, headers: res.headers, json, text }
}

/** The events of an SSE body, parsed. */
function events (text: string): any[] {
  return text.split('\n\n').filter(f => f.includes('data: ')).map(f => JSON.parse(f.slice(f.indexOf('data: ') + 6)))
}

t.test('input items: system and developer text joins instructions, roles become turns, unknown item types are skipped', async t => {
  const h = await proxy(t)
  const png = `data:image/png;base64,${PNG_1X1.toString('base64')}`
  const res = await post(h, {
    model: 'gemini-2.5-flash',
    instructions: 'Be brief.',
    store: false,
    input: [
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Answer in French.' }] },
      { role: 'system', content: 'No emojis.' },
      { role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, { type: 'input_image', image_url: png, detail: 'auto' }, { type: 'input_file', filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0xLg==' }] },
      { type: 'item_reference', id: 'msg_1' },
      { type: 'web_search_call', id: 'ws_1', status: 'completed' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Un pixel.', annotations: [] }] },
      { role: 'user', content: 'Merci' },
    ],
  })
  t.equal(res.status, 200)
  const sent = h.fake.last('generateContent')!.body.request
  t.same(sent.systemInstruction, { parts: [{ text: 'Be brief.\n\nAnswer in French.\n\nNo emojis.' }] })
  t.same(sent.contents, [
    { role: 'user', parts: [{ text: 'What is this?' }, { inlineData: { mimeType: 'image/png', data: PNG_1X1.toString('base64') } }, { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0xLg==' } }] },
    { role: 'model', parts: [{ text: 'Un pixel.' }] },
    { role: 'user', parts: [{ text: 'Merci' }] },
  ])
})

t.test('validation: a bad field is a 400 naming it in OpenAI\'s shape; an unknown model is model_not_found', async t => {
  const h = await proxy(t)
  const cases: Array<[unknown, string]> = [
    [{ input: 'x' }, 'model'],
    [{ model: 'gemini-2.5-flash', input: 5 }, 'input'],
    [{ model: 'gemini-2.5-flash', input: [{ role: 'robot', content: 'x' }] }, 'input[0].role'],
    [{ model: 'gemini-2.5-flash', input: [{ type: 'function_call_output', call_id: 'call_x', output: 'y' }] }, 'input[0].call_id'],
    [{ model: 'gemini-2.5-flash', input: 'x', reasoning: { effort: 'huge' } }, 'reasoning.effort'],
    [{ model: 'gemini-2.5-flash', input: 'x', text: { format: { type: 'json_schema', name: 'n' } } }, 'text.format.schema'],
    [{ model: 'gemini-2.5-flash', input: 'x', tools: [{ type: 'function' }] }, 'tools[0].name'],
    [{ model: 'gemini-2.5-flash', input: 'x', max_output_tokens: 0 }, 'max_output_tokens'],
    [{ model: 'gemini-2.5-flash', input: 'x', text: { format: { type: 'yaml' } } }, 'text.format.type'],
    [{ model: 'gemini-2.5-flash', input: 'x', tool_choice: 'always' }, 'tool_choice'],
    [{ model: 'gemini-2.5-flash', input: 'x', tool_choice: 3 }, 'tool_choice'],
    [{ model: 'gemini-2.5-flash', input: 'x', temperature: '0.5' }, 'temperature'],
  ]
  for (const [body, param] of cases) {
    const res = await post(h, body)
    t.equal(res.status, 400, param)
    t.match(res.json.error, { type: 'invalid_request_error', param }, param)
  }
  const unknown = await post(h, { model: 'gpt-9', input: 'x' })
  t.equal(unknown.status, 404)
  t.match(unknown.json.error, { code: 'model_not_found', param: 'model', type: 'not_found_error' })
  t.equal(h.fake.calls('generateContent').length, 0, 'nothing reached the upstream')
})

t.test('namespace tools are flattened for Gemini and answered with namespace and name apart', async t => {
  const h = await proxy(t)
  h.fake.reply('generateContent', { body: geminiResponse({ functionCalls: [{ name: 'crm__lookup', args: { id: 7 } }], finishReason: 'STOP', usage: true }) })
  const tools = [
    { type: 'namespace', name: 'crm', description: 'The CRM', tools: [{ type: 'function', name: 'lookup', description: 'Find a customer', parameters: { type: 'object', properties: { id: { type: 'integer' } } } }] },
    { type: 'function', name: 'ping', parameters: { type: 'object', properties: {} } },
  ]
  const res = await post(h, { model: 'gemini-2.5-flash', input: 'Who is 7?', tools, tool_choice: 'required', store: false })
  const sent = h.fake.last('generateContent')!.body.request
  t.same(sent.tools, [{ functionDeclarations: [
    { name: 'crm__lookup', description: 'Find a customer', parametersJsonSchema: { type: 'object', properties: { id: { type: 'integer' } } } },
    { name: 'ping', parametersJsonSchema: { type: 'object', properties: {} } },
  ] }])
  t.same(sent.toolConfig, { functionCallingConfig: { mode: 'ANY' } })
  t.match(res.json.output, [{ type: 'function_call', namespace: 'crm', name: 'lookup', arguments: '{"id":7}', call_id: /^call_/, id: /^fc_/, status: 'completed' }])

  // The call sent back: the flattened name again, and the output answered under it.
  const call = res.json.output[0]
  await post(h, { model: 'gemini-2.5-flash', input: [{ role: 'user', content: 'Who is 7?' }, call, { type: 'function_call_output', call_id: call.call_id, output: 'Ada' }], tools, tool_choice: { type: 'function', name: 'ping' }, store: false })
  const next = h.fake.last('generateContent')!.body.request
  t.same(next.contents.slice(1), [
    { role: 'model', parts: [{ functionCall: { name: 'crm__lookup', args: { id: 7 } } }] },
    { role: 'user', parts: [{ functionResponse: { name: 'crm__lookup', response: { output: 'Ada' } } }] },
  ])
  t.same(next.toolConfig, { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['ping'] } })
})

t.test('a custom freeform tool (apply_patch) is one string argument for Gemini and a custom_tool_call with the raw input, streamed', async t => {
  const h = await proxy(t)
  const patch = '*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch'
  h.fake.reply('streamGenerateContent', streamReply([geminiResponse({ functionCalls: [{ name: 'apply_patch', args: { input: patch } }], finishReason: 'STOP', usage: true })]))
  const tools = [{ type: 'custom', name: 'apply_patch', description: 'Edit files', format: { type: 'grammar', syntax: 'lark', definition: 'start: "*** Begin Patch"' } }]
  const res = await post(h, { model: 'gemini-2.5-flash', input: 'Add a file', tools, stream: true, store: false })
  const sent = h.fake.last('streamGenerateContent')!.body.request
  t.same(sent.tools[0].functionDeclarations[0].parametersJsonSchema, { type: 'object', properties: { input: { type: 'string', description: 'The raw input for this tool, exactly as the tool expects it (plain text, not JSON).' } }, required: ['input'] })
  t.match(sent.tools[0].functionDeclarations[0].description, /^Edit files\n\nThe input must follow this lark grammar:\nstart: "\*\*\* Begin Patch"$/)
  const list = events(res.text)
  t.same(list.map(e => e.type), ['response.created', 'response.in_progress', 'response.output_item.added', 'response.custom_tool_call_input.delta', 'response.custom_tool_call_input.done', 'response.output_item.done', 'response.completed'])
  t.same(list.map(e => e.sequence_number), [0, 1, 2, 3, 4, 5, 6])
  t.match(list[2].item, { type: 'custom_tool_call', name: 'apply_patch', input: '' })
  t.equal(list[4].input, patch)
  t.match(list[5].item, { type: 'custom_tool_call', name: 'apply_patch', input: patch, id: list[2].item.id, call_id: list[2].item.call_id })
  t.match(list[6].response.output, [{ type: 'custom_tool_call', input: patch }])

  await post(h, { model: 'gemini-2.5-flash', input: [{ role: 'user', content: 'Add a file' }, list[5].item, { type: 'custom_tool_call_output', call_id: list[5].item.call_id, output: 'Done!' }], tools, store: false })
  t.same(h.fake.last('generateContent')!.body.request.contents.slice(1), [
    { role: 'model', parts: [{ functionCall: { name: 'apply_patch', args: { input: patch } } }] },
    { role: 'user', parts: [{ functionResponse: { name: 'apply_patch', response: { output: 'Done!' } } }] },
  ])
})

t.test('web_search becomes googleSearch; beside function tools it is left out', async t => {
  const h = await proxy(t)
  await post(h, { model: 'gemini-2.5-flash', input: 'News?', tools: [{ type: 'web_search' }], store: false })
  t.same(h.fake.last('generateContent')!.body.request.tools, [{ googleSearch: {} }])
  await post(h, { model: 'gemini-2.5-flash', input: 'News?', tools: [{ type: 'web_search_preview' }, { type: 'function', name: 'f' }, { type: 'file_search', vector_store_ids: ['v'] }], store: false })
  t.same(h.fake.last('generateContent')!.body.request.tools, [{ functionDeclarations: [{ name: 'f' }] }])
})

t.test('reasoning.effort sets the Gemini 3 thinking level; summaries only when asked; structured output as JSON', async t => {
  const h = await proxy(t)
  await post(h, { model: 'gemini-3-pro-preview', input: 'x', reasoning: { effort: 'low' }, temperature: 0.2, top_p: 0.9, text: { format: { type: 'json_object' } }, store: false })
  t.same(h.fake.last('generateContent')!.body.request.generationConfig, { temperature: 0.2, topP: 0.9, responseMimeType: 'application/json', thinkingConfig: { thinkingLevel: 'low', includeThoughts: false } })
  await post(h, { model: 'gemini-2.5-flash', input: 'x', reasoning: { effort: 'minimal' }, store: false })
  t.same(h.fake.last('generateContent')!.body.request.generationConfig, { thinkingConfig: { thinkingBudget: 0, includeThoughts: false } })
})

t.test('an encrypted_content that does not open is ignored: the call gets the placeholder, never the forged signature', async t => {
  const h = await proxy(t)
  h.fake.reply('generateContent', { body: geminiResponse({ functionCalls: [{ name: 'f', args: {}, thoughtSignature: 'cmVhbA==' }], finishReason: 'STOP', usage: true }) })
  const first = await post(h, { model: 'gemini-3-pro-preview', input: 'go', tools: [{ type: 'function', name: 'f' }], store: false })
  const [reasoning, call] = first.json.output
  t.match(reasoning, { type: 'reasoning', summary: [], encrypted_content: /^gh1\./ })
  const sealed: string = reasoning.encrypted_content
  const tampered = sealed.slice(0, -4) + (sealed.endsWith('AAAA') ? 'BBBB' : 'AAAA')
  const forged = 'gh1.' + Buffer.from(JSON.stringify({ c: { [call.call_id]: 'Zm9yZ2Vk' } })).toString('base64url')
  for (const content of [tampered, forged]) {
    await post(h, { model: 'gemini-3-pro-preview', input: ['go', { ...reasoning, encrypted_content: content }, call, { type: 'function_call_output', call_id: call.call_id, output: 'ok' }].map(i => typeof i === 'string' ? { role: 'user', content: i } : i), tools: [{ type: 'function', name: 'f' }], store: false })
    t.equal(h.fake.last('generateContent')!.body.request.contents[1].parts[0].thoughtSignature, 'skip_thought_signature_validator')
  }
})

t.test('errors carry OpenAI\'s codes: rate_limit_exceeded with its wait, insufficient_quota, context_length_exceeded', async t => {
  const h = await proxy(t)
  h.fake.reply('generateContent', errorReply(429, { reason: 'RATE_LIMIT_EXCEEDED', retryDelay: '7s' }))
  const limited = await post(h, { model: 'gemini-2.5-flash', input: 'x', store: false })
  t.equal(limited.status, 429)
  t.equal(limited.headers.get('retry-after'), '7')
  t.match(limited.json.error, { code: 'rate_limit_exceeded', type: 'rate_limit_error', message: /Please try again in 7s\.$/ })

  h.fake.reply('generateContent', errorReply(429, { reason: 'QUOTA_EXHAUSTED', message: 'You have exhausted your daily quota.' }))
  const quota = await post(h, { model: 'gemini-2.5-flash', input: 'x', store: false })
  t.match(quota.json.error, { code: 'insufficient_quota', type: 'insufficient_quota' })

  h.fake.reply('generateContent', errorReply(400, { message: 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).' }))
  const long = await post(h, { model: 'gemini-2.5-flash', input: 'x', store: false })
  t.equal(long.status, 400)
  t.match(long.json.error, { code: 'context_length_exceeded', type: 'invalid_request_error' })
})

t.test('a stream that fails after it began ends with response.failed carrying the error code', async t => {
  const h = await proxy(t)
  h.fake.reply('streamGenerateContent', streamReply([geminiResponse({ text: 'Hel' }), geminiResponse({ text: 'lo' })], { dropAfter: 1 }))
  const res = await post(h, { model: 'gemini-2.5-flash', input: 'x', stream: true })
  const list = events(res.text)
  t.same(list.map(e => e.type).slice(0, 5), ['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added', 'response.output_text.delta'])
  const failed = list.at(-1)
  t.equal(failed.type, 'response.failed')
  t.match(failed.response, { status: 'failed', error: { code: /^upstream_/, message: String } })
})

t.test('a streamed stored response is found as soon as response.completed arrives; store: false keeps nothing', async t => {
  const h = await proxy(t)
  const stream = await h.openai.responses.create({ model: 'gemini-2.5-flash', input: 'hi', stream: true })
  let id = ''
  let found: unknown
  for await (const event of stream) {
    if (event.type === 'response.completed') {
      id = event.response.id
      found = await h.openai.responses.retrieve(id)
    }
  }
  t.match(found, { id, status: 'completed', output_text: 'Hello from the fake upstream.' })
  const unstored = await h.openai.responses.create({ model: 'gemini-2.5-flash', input: 'hi', store: false })
  t.ok(await h.openai.responses.retrieve(unstored.id).catch(e => e) instanceof OpenAI.NotFoundError)
})

t.test('GET /v1/models with client_version answers Codex\'s {"models": [...]} shape, the OpenAI list otherwise', async t => {
  const h = await proxy(t)
  const get = async (query: string): Promise<any> => await (await fetch(`${h.url}/v1/models${query}`, { headers: { authorization: `Bearer ${PASSWORD}` } })).json()
  const codex = await get('?client_version=0.169.0')
  t.ok(Array.isArray(codex.models) && codex.models.length > 0)
  const pro = codex.models.find((m: any) => m.slug === 'gemini-3-pro-preview')
  t.match(pro, { display_name: String, shell_type: 'shell_command', visibility: 'list', supported_in_api: true, priority: Number, base_instructions: '', apply_patch_tool_type: 'freeform', truncation_policy: { mode: 'tokens', limit: Number }, supports_parallel_tool_calls: true, experimental_supported_tools: [] })
  t.same(pro.supported_reasoning_levels.map((l: any) => l.effort), ['low', 'high'], 'the levels the model takes, no others')
  t.same(codex.models.find((m: any) => m.slug === 'gemini-2.5-flash-nothinking').supported_reasoning_levels, [])
  const gemini = await startProxy(t, { backendName: 'gemini-api' })
  const list = await (await fetch(`${gemini.url}/v1/models?client_version=0.171.0`, { headers: { authorization: `Bearer ${PASSWORD}` } })).json() as any
  const argon = list.models.find((m: any) => m.slug === 'gemini-4-argon')
  t.match(argon, { context_window: 1048576, use_responses_lite: false, default_reasoning_level: 'medium', apply_patch_tool_type: 'freeform' }, 'Gemini 4: its whole window, the standard Responses contract')
  t.same(argon.supported_reasoning_levels.map((l: any) => l.effort), ['low', 'medium', 'high'], 'the levels the model takes')
  const openai = await get('')
  t.equal(openai.object, 'list')
})

t.test('a streamed Gemini 3 turn of thoughts and parallel calls: the reasoning item closes with the signatures before the calls', async t => {
  const h = await proxy(t)
  h.fake.reply('streamGenerateContent', streamReply([
    geminiResponse({ thought: 'Two lookups.' }),
    geminiResponse({ functionCalls: [{ name: 'f', args: { n: 1 }, thoughtSignature: 'Zmlyc3Q=' }, { name: 'f', args: { n: 2 } }], finishReason: 'STOP', usage: { promptTokenCount: 20, cachedContentTokenCount: 8, candidatesTokenCount: 6, thoughtsTokenCount: 9, totalTokenCount: 35 } }),
  ]))
  const res = await post(h, { model: 'gemini-3-pro-preview', input: 'go', tools: [{ type: 'function', name: 'f' }], reasoning: { effort: 'high', summary: 'auto' }, stream: true, store: false })
  const list = events(res.text)
  t.same(list.map(e => e.type), [
    'response.created', 'response.in_progress',
    'response.output_item.added', 'response.reasoning_summary_part.added', 'response.reasoning_summary_text.delta',
    'response.reasoning_summary_text.done', 'response.reasoning_summary_part.done', 'response.output_item.done',
    'response.output_item.added', 'response.function_call_arguments.delta', 'response.function_call_arguments.done', 'response.output_item.done',
    'response.output_item.added', 'response.function_call_arguments.delta', 'response.function_call_arguments.done', 'response.output_item.done',
    'response.completed',
  ])
  t.same(list.filter(e => e.output_index !== undefined).map(e => e.output_index), [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2])
  const reasoning = list[7].item
  t.match(reasoning, { type: 'reasoning', id: list[2].item.id, summary: [{ type: 'summary_text', text: 'Two lookups.' }], encrypted_content: /^gh1\./ })
  const completed = list.at(-1).response
  t.same(completed.output.map((i: any) => i.type), ['reasoning', 'function_call', 'function_call'])
  t.same(completed.usage, { input_tokens: 20, input_tokens_details: { cached_tokens: 8 }, output_tokens: 15, output_tokens_details: { reasoning_tokens: 9 }, total_tokens: 35 })
  t.same(h.fake.last('streamGenerateContent')!.body.request.generationConfig.thinkingConfig, { thinkingLevel: 'high', includeThoughts: true })

  // Both calls answered: the first call gets its signature back, the second none (as Gemini sent it).
  const [, first, second] = completed.output
  await post(h, { model: 'gemini-3-pro-preview', input: [{ role: 'user', content: 'go' }, ...completed.output, { type: 'function_call_output', call_id: second.call_id, output: '2' }, { type: 'function_call_output', call_id: first.call_id, output: '1' }], tools: [{ type: 'function', name: 'f' }], store: false })
  t.same(h.fake.last('generateContent')!.body.request.contents.slice(1), [
    { role: 'model', parts: [{ functionCall: { name: 'f', args: { n: 1 } }, thoughtSignature: 'Zmlyc3Q=' }, { functionCall: { name: 'f', args: { n: 2 } } }] },
    { role: 'user', parts: [{ functionResponse: { name: 'f', response: { output: 2 } } }, { functionResponse: { name: 'f', response: { output: 1 } } }] },
  ])
})

t.test('a MAX_TOKENS finish is an incomplete response, streamed as response.incomplete', async t => {
  const h = await proxy(t)
  h.fake.reply('generateContent', { body: geminiResponse({ text: 'Cut', finishReason: 'MAX_TOKENS', usage: true }) })
  const whole = await h.openai.responses.create({ model: 'gemini-2.5-flash', input: 'x', max_output_tokens: 1, store: false })
  t.match(whole, { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output_text: 'Cut' })
  h.fake.reply('streamGenerateContent', streamReply([geminiResponse({ text: 'Cut', finishReason: 'MAX_TOKENS', usage: true })]))
  const stream = h.openai.responses.stream({ model: 'gemini-2.5-flash', input: 'x', store: false })
  const types: string[] = []
  for await (const event of stream) types.push(event.type)
  t.equal(types.at(-1), 'response.incomplete')
})

t.test('edge shapes: input_items pages, allowed_tools, text file and image answers, safety blocks, too many tools', async t => {
  const h = await proxy(t)
  h.fake.reply('generateContent', { body: { candidates: [{ content: { role: 'model', parts: [{ text: 'See: ' }, { inlineData: { mimeType: 'image/png', data: 'iVBO' } }] }, finishReason: 'SAFETY', index: 0 }] } })
  const input = [{ role: 'user', content: 'one' }, { role: 'assistant', content: 'two' }, { role: 'user', content: [{ type: 'input_text', text: 'three' }, { type: 'input_file', filename: 'notes.txt', file_data: 'aGk=' }, { type: 'input_audio' }] }]
  const first = await post(h, { model: 'gemini-2.5-flash', input, tools: [{ type: 'function', name: 'a' }, { type: 'custom', name: 'b' }], tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'a' }] } })
  t.match(first.json, { status: 'incomplete', incomplete_details: { reason: 'content_filter' }, output: [{ type: 'message', content: [{ text: 'See: ![image](data:image/png;base64,iVBO)' }] }] })
  const sent = h.fake.last('generateContent')!.body.request
  t.same(sent.toolConfig, { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['a'] } })
  t.same(sent.contents[2].parts, [{ text: 'three' }, { inlineData: { mimeType: 'text/plain', data: 'aGk=' } }])

  const page = async (query: string): Promise<any> => await (await fetch(`${h.url}/v1/responses/${first.json.id}/input_items${query}`, { headers: { authorization: `Bearer ${PASSWORD}` } })).json()
  const all = await page('?order=asc')
  t.equal(all.data.length, 3)
  t.match(await page(`?order=asc&limit=1&after=${all.data[0].id}`), { data: [{ id: all.data[1].id }], first_id: all.data[1].id, last_id: all.data[1].id, has_more: true })
  t.match(await page('?limit=2'), { data: [{ id: all.data[2].id }, { id: all.data[1].id }], has_more: true }, 'newest first by default')
  t.match(await page('?limit=0'), { error: { param: 'limit', type: 'invalid_request_error' } })
  t.match(await page('?order=up'), { error: { param: 'order' } })

  h.fake.reply('generateContent', { body: { promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 3, totalTokenCount: 3 } } })
  const blocked = await post(h, { model: 'gemini-2.5-flash', input: 'x', store: false })
  t.match(blocked.json, { status: 'incomplete', incomplete_details: { reason: 'content_filter' }, output: [], usage: { input_tokens: 3, output_tokens: 0 } })

  const tooMany = await post(h, { model: 'gemini-2.5-flash', input: 'x', tools: Array.from({ length: 513 }, (_, i) => ({ type: 'function', name: `f${i}` })) })
  t.match(tooMany.json.error, { param: 'tools' })
  const badFile = await post(h, { model: 'gemini-2.5-flash', input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file-1' }] }] })
  t.match(badFile.json.error, { param: 'input[0].content[0].file_id' })
  const badImage = await post(h, { model: 'gemini-2.5-flash', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'ftp://x/y.png' }] }] })
  t.match(badImage.json.error, { param: 'input[0].content[0].image_url' })
  const empty = await post(h, { model: 'gemini-2.5-flash', input: [] })
  t.match(empty.json.error, { param: 'input' })
})

t.test('a store that fails or a record too large leaves the answer alone: it is logged and then not found', async t => {
  const warnings: string[] = []
  const logger = { debug () {}, info () {}, error () {}, warn: (_obj: unknown, msg?: string) => { warnings.push(String(msg)) } }
  const failing = { put: async () => { throw new Error('disk full') }, get: async () => null, delete: async () => false }
  const h = await startProxy(t, { backendName: 'code-assist', logger, responses: { store: failing } })
  const res = await post(h, { model: 'gemini-2.5-flash', input: 'x' })
  t.equal(res.status, 200)
  t.same(warnings, ['response not stored'])

  const store = await createEmbeddedStore()
  t.teardown(() => store.close())
  const big = await startProxy(t, { backendName: 'code-assist', logger, responses: { store: store.responses } })
  const large = await post(big, { model: 'gemini-2.5-flash', input: 'x'.repeat(4 * 1024 * 1024 + 1) })
  t.equal(large.status, 200)
  t.equal(warnings.at(-1), 'response too large to store: previous_response_id will not find it')
  const later = await fetch(`${big.url}/v1/responses/${large.json.id}`, { headers: { authorization: `Bearer ${PASSWORD}` } })
  t.equal(later.status, 404)
  t.match(await later.json(), { error: { code: 'not_found', message: `Response with id '${large.json.id}' not found.` } })
})

t.test('image URLs are fetched under the image rules, at most maxPerRequest of them; a body too large is a 413 in OpenAI\'s shape', async t => {
  const image = await startImageServer(t, PNG_1X1, 'image/png')
  const h = await startProxy(t, { backendName: 'code-assist', imageFetch: { maxPerRequest: 1, allowPrivateNetworks: true }, maxBodyBytes: 2048 })
  const part = { type: 'input_image', image_url: `${image}/a.png` }
  const res = await post(h, { model: 'gemini-2.5-flash', input: [{ role: 'user', content: [part] }], store: false })
  t.equal(res.status, 200)
  t.same(h.fake.last('generateContent')!.body.request.contents[0].parts, [{ inlineData: { mimeType: 'image/png', data: PNG_1X1.toString('base64') } }])
  const two = await post(h, { model: 'gemini-2.5-flash', input: [{ role: 'user', content: [part, part] }], store: false })
  t.match(two.json.error, { param: 'input', message: /At most 1 image URLs/ })
  const large = await post(h, { model: 'gemini-2.5-flash', input: 'x'.repeat(4096) })
  t.equal(large.status, 413)
  t.match(large.json.error, { type: 'invalid_request_error', message: /too large/ })
})

t.test('additional_tools input items (Responses Lite) declare tools like `tools` does, after them, and are checked the same', async t => {
  const h = await proxy(t)
  const res = await fetch(`${h.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${PASSWORD}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'gemini-2.5-flash',
      tools: [{ type: 'function', name: 'top', parameters: { type: 'object', properties: {} } }],
      input: [
        { type: 'additional_tools', role: 'developer', tools: [{ type: 'custom', name: 'apply_patch', description: 'Edit files' }, { type: 'namespace', name: 'mcp', tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} } }] }] },
        { role: 'user', content: 'hi' },
      ],
    }),
  })
  t.equal(res.status, 200)
  await res.text()
  const names = h.fake.last('generateContent')!.body.request.tools[0].functionDeclarations.map((d: any) => d.name)
  t.equal(names.length, 3)
  t.equal(names[0], 'top')
  t.equal(names[1], 'apply_patch')
  const bad = await fetch(`${h.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${PASSWORD}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gemini-2.5-flash', input: [{ type: 'additional_tools', tools: [{ type: 'function' }] }, { role: 'user', content: 'hi' }] }),
  })
  t.equal(bad.status, 400)
  t.match(await bad.json(), { error: { param: /^input\[0\]\.tools\[0\]/ } })
})
