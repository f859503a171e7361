// The official openai SDK's Responses API against the gateway with a user's key, the fake Code Assist upstream
// behind it: create, stream (the SDK's accumulator checks the event order), a two-turn function-tool loop on a
// Gemini 3 model whose second turn the fake refuses without the thought signature, structured output, and
// previous_response_id on a stored response.
import t from 'tap'
import OpenAI from 'openai'
import { startGateway } from '../support/gateway.ts'
import { geminiResponse, startFakeUpstream, streamReply } from '../support/fake-upstream.ts'
import type { FakeUpstream } from '../support/fake-upstream.ts'
import { staleCredentials } from './harness.ts'
import { ADMIN, keyUser, usageReport } from '../support/gateway-keys.ts'
import type { KeyUser } from '../support/gateway-keys.ts'

interface Setup { openai: OpenAI, fake: FakeUpstream, url: string, user: KeyUser }

async function setup (t: { teardown (fn: () => unknown): void }, username: string, env: Record<string, string> = {}): Promise<Setup> {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const gateway = await startGateway({
    ...ADMIN,
    GEMINI_CREDENTIALS: JSON.stringify(staleCredentials(fake.tokenUri)),
    CODE_ASSIST_ENDPOINT: fake.url,
    LOG_LEVEL: 'silent',
    ...env,
  })
  t.teardown(() => gateway.close())
  const user = await keyUser(gateway.url, username)
  return { openai: new OpenAI({ apiKey: user.key, baseURL: `${gateway.url}/v1`, maxRetries: 0, timeout: 10000 }), fake, url: gateway.url, user }
}

const WEATHER = { type: 'function' as const, name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: false }

t.test('responses.create: instructions and a string input become one Gemini turn, the answer a response object', async t => {
  const { openai, fake, user } = await setup(t, 'resp_create')
  fake.reply('generateContent', { body: geminiResponse({ thought: 'Thinking it over.', text: 'Hello there.', finishReason: 'STOP', usage: { promptTokenCount: 10, candidatesTokenCount: 3, thoughtsTokenCount: 4, cachedContentTokenCount: 2, totalTokenCount: 17 } }) })
  const response = await openai.responses.create({ model: 'gemini-2.5-flash', instructions: 'Be brief.', input: 'Hi!', max_output_tokens: 200, reasoning: { effort: 'high', summary: 'auto' } })
  t.match(response.id, /^resp_/)
  t.equal(response.object, 'response')
  t.equal(response.status, 'completed')
  t.equal(response.model, 'gemini-2.5-flash')
  t.equal(response.output_text, 'Hello there.')
  t.match(response.output, [{ type: 'reasoning', summary: [{ type: 'summary_text', text: 'Thinking it over.' }] }, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hello there.' }] }])
  t.same(response.usage, { input_tokens: 10, input_tokens_details: { cached_tokens: 2 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 4 }, total_tokens: 17 })
  const sent = fake.last('generateContent')!.body.request
  t.same(sent.systemInstruction, { parts: [{ text: 'Be brief.' }] })
  t.same(sent.contents, [{ role: 'user', parts: [{ text: 'Hi!' }] }])
  t.same(sent.generationConfig, { maxOutputTokens: 200, thinkingConfig: { thinkingBudget: 24576, includeThoughts: true } })

  const report = await usageReport(user, 1)
  t.match(report.rows, [{ user_id: user.userId, key_id: user.keyId, model: 'gemini-2.5-flash', surface: 'responses', requests: 1, input_tokens: 10, output_tokens: 3, thinking_tokens: 4 }], 'usage under the surface responses')
})

t.test('responses.stream: the SDK accumulates every event into the final response', async t => {
  const { openai, fake } = await setup(t, 'resp_stream')
  fake.reply('streamGenerateContent', streamReply([
    geminiResponse({ thought: 'Hmm.' }),
    geminiResponse({ text: 'Hel' }),
    geminiResponse({ text: 'lo!', finishReason: 'STOP', usage: true }),
  ]))
  const stream = openai.responses.stream({ model: 'gemini-2.5-flash', input: [{ role: 'user', content: 'Say hello' }], reasoning: { summary: 'auto' } })
  const types: string[] = []
  let text = ''
  stream.on('response.output_text.delta', e => { text += e.delta })
  for await (const event of stream) types.push(event.type)
  const final = await stream.finalResponse()
  t.equal(text, 'Hello!')
  t.equal(final.output_text, 'Hello!')
  t.equal(final.status, 'completed')
  t.equal(final.usage?.total_tokens, 12)
  t.same(types, [
    'response.created', 'response.in_progress',
    'response.output_item.added', 'response.reasoning_summary_part.added', 'response.reasoning_summary_text.delta',
    'response.reasoning_summary_text.done', 'response.reasoning_summary_part.done', 'response.output_item.done',
    'response.output_item.added', 'response.content_part.added', 'response.output_text.delta', 'response.output_text.delta',
    'response.output_text.done', 'response.content_part.done', 'response.output_item.done',
    'response.completed',
  ])
})

t.test('a function-tool loop over two turns on Gemini 3: the thought signature comes back through encrypted_content', async t => {
  const { openai, fake } = await setup(t, 'resp_tools')
  fake.reply('streamGenerateContent', streamReply([
    geminiResponse({ thought: 'I need the weather.' }),
    geminiResponse({ functionCalls: [{ name: 'get_weather', args: { city: 'Paris' }, thoughtSignature: 'c2lnLW9uZQ==' }], finishReason: 'STOP', usage: true }),
  ]))
  const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: 'Weather in Paris?' }]
  const stream = openai.responses.stream({ model: 'gemini-3-pro-preview', input, tools: [WEATHER], store: false, include: ['reasoning.encrypted_content'] })
  const args: string[] = []
  stream.on('response.function_call_arguments.done', e => { args.push(e.arguments) })
  const first = await stream.finalResponse()
  t.same(args, ['{"city":"Paris"}'])
  const call = first.output.find(item => item.type === 'function_call')
  t.match(call, { type: 'function_call', name: 'get_weather', arguments: '{"city":"Paris"}', call_id: /^call_/ })
  const reasoning = first.output.find(item => item.type === 'reasoning')
  t.match(reasoning?.encrypted_content, /^gh1\./, 'the signature travels sealed')
  t.notOk(reasoning?.encrypted_content?.includes('c2lnLW9uZQ'), 'not readable by the client')

  // The second turn without the reasoning item: the fake refuses it, as Gemini 3 does, unless a placeholder goes up.
  fake.reply('generateContent', { body: geminiResponse({ text: 'It is sunny in Paris.', finishReason: 'STOP', usage: true }) })
  const output = { type: 'function_call_output' as const, call_id: call!.type === 'function_call' ? call!.call_id : '', output: '{"sky":"sunny"}' }
  const second = await openai.responses.create({ model: 'gemini-3-pro-preview', input: [...input, ...first.output as OpenAI.Responses.ResponseInputItem[], output], tools: [WEATHER], store: false })
  t.equal(second.output_text, 'It is sunny in Paris.')
  const sent = fake.last('generateContent')!.body.request
  t.same(sent.contents, [
    { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
    { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2lnLW9uZQ==' }] },
    { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: { sky: 'sunny' } } } }] },
  ], 'the original signature, not a placeholder')

  // The same turn with the signature dropped by the fake's rule shows the rule bites.
  fake.signatureChecks = true
  const refused = await fetch(`${fake.url}/v1internal:generateContent`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gemini-3-pro-preview', request: { contents: [sent.contents[0], { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: {} } }] }, sent.contents[2]] } }) })
  t.equal(refused.status, 400, 'the fake refuses an unsigned call of the current turn')
})

t.test('structured output: text.format json_schema goes up as responseJsonSchema, output_parsed comes back', async t => {
  const { openai, fake } = await setup(t, 'resp_schema')
  fake.reply('generateContent', { body: geminiResponse({ text: '{"name":"Ada","age":36}', finishReason: 'STOP', usage: true }) })
  const schema = { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer' } }, required: ['name', 'age'], additionalProperties: false }
  const response = await openai.responses.parse({ model: 'gemini-2.5-flash', input: 'Who?', text: { format: { type: 'json_schema', name: 'person', schema, strict: true } } })
  t.same(response.output_parsed, { name: 'Ada', age: 36 })
  const config = fake.last('generateContent')!.body.request.generationConfig
  t.equal(config.responseMimeType, 'application/json')
  t.same(config.responseJsonSchema, schema)
})

t.test('previous_response_id continues from the stored response; another user gets 404', async t => {
  const { openai, fake, url } = await setup(t, 'resp_prev')
  fake.reply('generateContent', { body: geminiResponse({ text: 'My name is Gem.', finishReason: 'STOP', usage: true }) }, { body: geminiResponse({ text: 'You asked my name.', finishReason: 'STOP', usage: true }) })
  const first = await openai.responses.create({ model: 'gemini-2.5-flash', input: 'Your name?' })
  const second = await openai.responses.create({ model: 'gemini-2.5-flash', input: 'What did I ask?', previous_response_id: first.id })
  t.equal(second.previous_response_id, first.id)
  t.same(fake.last('generateContent')!.body.request.contents, [
    { role: 'user', parts: [{ text: 'Your name?' }] },
    { role: 'model', parts: [{ text: 'My name is Gem.' }] },
    { role: 'user', parts: [{ text: 'What did I ask?' }] },
  ])
  const stored = await openai.responses.retrieve(second.id)
  t.equal(stored.output_text, 'You asked my name.')
  const items = await openai.responses.inputItems.list(second.id, { order: 'asc' })
  t.same(items.data.map(i => i.type === 'message' ? i.role : i.type), ['user', 'assistant', 'user'])

  const other = await keyUser(url, 'resp_other')
  const stranger = new OpenAI({ apiKey: other.key, baseURL: `${url}/v1`, maxRetries: 0, timeout: 10000 })
  const notFound = await stranger.responses.retrieve(second.id).catch(e => e)
  t.ok(notFound instanceof OpenAI.NotFoundError, 'another user\'s response is not found')
  const continued = await stranger.responses.create({ model: 'gemini-2.5-flash', input: 'x', previous_response_id: second.id }).catch(e => e)
  t.ok(continued instanceof OpenAI.NotFoundError)
  t.equal(continued.param, 'previous_response_id')

  const deleted = await openai.responses.delete(second.id)
  t.same(deleted, { id: second.id, object: 'response', deleted: true })
  t.ok(await openai.responses.retrieve(second.id).catch(e => e) instanceof OpenAI.NotFoundError, 'gone once deleted')
})

t.test('a tool loop on Gemini 3 through previous_response_id: the stored reasoning item gives the signature back', async t => {
  const { openai, fake } = await setup(t, 'resp_loop_prev')
  fake.reply('generateContent',
    { body: geminiResponse({ functionCalls: [{ name: 'get_weather', args: { city: 'Oslo' }, thoughtSignature: 'b3Nsby1zaWc=' }], finishReason: 'STOP', usage: true }) },
    { body: geminiResponse({ text: 'Snow in Oslo.', finishReason: 'STOP', usage: true }) })
  const first = await openai.responses.create({ model: 'gemini-3-pro-preview', input: 'Weather in Oslo?', tools: [WEATHER] })
  const call = first.output.find(item => item.type === 'function_call')
  const second = await openai.responses.create({
    model: 'gemini-3-pro-preview',
    previous_response_id: first.id,
    input: [{ type: 'function_call_output', call_id: call!.type === 'function_call' ? call!.call_id : '', output: 'snow' }],
    tools: [WEATHER],
  })
  t.equal(second.output_text, 'Snow in Oslo.')
  t.same(fake.last('generateContent')!.body.request.contents[1], { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Oslo' } }, thoughtSignature: 'b3Nsby1zaWc=' }] })
})

t.test('the gateway\'s own limits answer in OpenAI\'s codes: rate_limit_exceeded with its wait, insufficient_quota for the daily budget', async t => {
  const { openai } = await setup(t, 'resp_limits', { GEMINI_LIMITS: JSON.stringify({ member: { rpm: 1 } }) })
  await openai.responses.create({ model: 'gemini-2.5-flash', input: 'hi', store: false })
  const limited = await openai.responses.create({ model: 'gemini-2.5-flash', input: 'hi', store: false }).catch(e => e)
  t.ok(limited instanceof OpenAI.RateLimitError)
  t.equal(limited.code, 'rate_limit_exceeded')
  t.match(limited.message, /Please try again in \d+s\.$/)
  t.equal(limited.headers.get('x-ratelimit-limit-requests'), '1')

  // The first call is let in and charged its 12 tokens: the day's 10 are spent.
  const daily = await setup(t, 'resp_daily', { GEMINI_LIMITS: JSON.stringify({ member: { tokens_per_day: 10 } }) })
  await daily.openai.responses.create({ model: 'gemini-2.5-flash', input: 'hi', store: false })
  const spent = await daily.openai.responses.create({ model: 'gemini-2.5-flash', input: 'hi', store: false }).catch(e => e)
  t.ok(spent instanceof OpenAI.RateLimitError)
  t.equal(spent.code, 'insufficient_quota')
  t.equal(spent.type, 'insufficient_quota')

  const anonymous = new OpenAI({ apiKey: 'ghk_not-a-key', baseURL: openai.baseURL, maxRetries: 0, timeout: 10000 })
  const refused = await anonymous.responses.create({ model: 'gemini-2.5-flash', input: 'hi' }).catch(e => e)
  t.ok(refused instanceof OpenAI.AuthenticationError)
  t.equal(refused.code, 'invalid_api_key')
})
