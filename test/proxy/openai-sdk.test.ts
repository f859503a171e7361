// The official openai SDK pointed at the proxy, with the fake Code Assist upstream behind it.
import t from 'tap'
import OpenAI from 'openai'
import { startProxy, PASSWORD, PNG_1X1 } from './harness.ts'
import { errorReply, geminiResponse, streamReply } from '../support/fake-upstream.ts'

function client (url: string, apiKey = PASSWORD): OpenAI {
  return new OpenAI({ apiKey, baseURL: `${url}/v1`, maxRetries: 0, timeout: 10000 })
}

t.test('a non-streamed chat completion reaches the upstream as a Code Assist envelope and comes back in OpenAI shape', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  const openai = client(h.url)
  const completion = await openai.chat.completions.create({
    model: 'gemini-2.5-pro-search',
    messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello?' }],
    temperature: 0.5,
    max_completion_tokens: 300,
  })
  t.match(completion.id, /^chatcmpl-/)
  t.equal(completion.object, 'chat.completion')
  t.equal(completion.model, 'gemini-2.5-pro-search', 'the model as requested')
  t.equal(completion.choices[0].message.role, 'assistant')
  t.equal(completion.choices[0].message.content, 'Hello from the fake upstream.')
  t.equal(completion.choices[0].finish_reason, 'stop')
  t.same(completion.usage, { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } })

  const sent = h.fake.last('generateContent')!
  t.equal(sent.api, 'code-assist')
  t.equal(sent.body.model, 'gemini-2.5-pro', 'base model name, suffix stripped')
  t.equal(sent.body.project, 'fake-project', 'project from discovery')
  t.match(sent.body.user_prompt_id, /^[0-9a-f-]{36}$/)
  t.equal(sent.headers.authorization, `Bearer ${h.fake.issuedTokens[0]}`, 'the refreshed access token')
  t.same(sent.body.request.systemInstruction, { parts: [{ text: 'Be brief.' }] })
  t.same(sent.body.request.contents, [{ role: 'user', parts: [{ text: 'Hello?' }] }])
  t.same(sent.body.request.tools, [{ googleSearch: {} }])
  t.same(sent.body.request.generationConfig, { temperature: 0.5, maxOutputTokens: 300, thinkingConfig: { thinkingBudget: -1, includeThoughts: true } })
  t.equal(sent.body.request.safetySettings.length, 11)
})

t.test('reasoning text comes back as reasoning_content, separate from the answer', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  h.fake.reply('generateContent', { body: geminiResponse({ thought: 'Let me think.', text: 'Forty-two.', finishReason: 'STOP', usage: { promptTokenCount: 3, candidatesTokenCount: 2, thoughtsTokenCount: 4, totalTokenCount: 9 } }) })
  const completion = await client(h.url).chat.completions.create({ model: 'gemini-2.5-flash-maxthinking', messages: [{ role: 'user', content: 'Answer?' }] })
  const message = completion.choices[0].message as typeof completion.choices[0]['message'] & { reasoning_content?: string }
  t.equal(message.content, 'Forty-two.')
  t.equal(message.reasoning_content, 'Let me think.')
  t.equal(completion.usage?.completion_tokens, 6)
  t.equal(completion.usage?.completion_tokens_details?.reasoning_tokens, 4)
  t.same(h.fake.last('generateContent')!.body.request.generationConfig.thinkingConfig, { thinkingBudget: 24576, includeThoughts: true })
})

t.test('a streamed chat completion: role first, content and reasoning deltas, usage chunk, [DONE]', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  h.fake.reply('streamGenerateContent', streamReply([
    geminiResponse({ thought: 'Considering.' }),
    geminiResponse({ text: 'Hel' }),
    geminiResponse({ text: 'lo!', finishReason: 'STOP', usage: true }),
  ], { multiLine: true }))
  const stream = await client(h.url).chat.completions.create({
    model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true },
  })
  const chunks = []
  for await (const chunk of stream) chunks.push(chunk)
  t.equal(chunks[0].choices[0].delta.role, 'assistant')
  const deltas = chunks.flatMap(c => c.choices.map(ch => ch.delta as { content?: string, reasoning_content?: string }))
  t.equal(deltas.map(d => d.content ?? '').join(''), 'Hello!')
  t.equal(deltas.map(d => d.reasoning_content ?? '').join(''), 'Considering.')
  t.equal(chunks.filter(c => c.choices[0]?.finish_reason === 'stop').length, 1)
  t.equal(new Set(chunks.map(c => c.id)).size, 1)
  t.equal(new Set(chunks.map(c => c.created)).size, 1)
  const last = chunks.at(-1)!
  t.same(last.choices, [])
  t.equal(last.usage?.total_tokens, 12)
  t.equal(h.fake.last('streamGenerateContent')!.query.alt, 'sse')
  t.same(h.events.filter(e => e !== 'chunk'), ['opened', 'closed'], 'observer saw the stream open and close')
  t.ok(h.events.includes('chunk'))
})

t.test('an image sent as a data URL reaches the upstream as inlineData', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  await client(h.url).chat.completions.create({
    model: 'gemini-2.5-flash',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_1X1.toString('base64')}` } }] }],
  })
  t.same(h.fake.last('generateContent')!.body.request.contents[0].parts, [
    { text: 'What is this?' },
    { inlineData: { mimeType: 'image/png', data: PNG_1X1.toString('base64') } },
  ])
})

const WEATHER_TOOL = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
}

t.test('tool calls, non-streamed: declarations out, tool_calls back, results return as functionResponse with the signature restored', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  const openai = client(h.url)
  h.fake.reply('generateContent', { body: geminiResponse({ functionCalls: [{ name: 'get_weather', args: { city: 'Paris' }, thoughtSignature: 'c2lnLTE=' }], finishReason: 'STOP' }) })
  const first = await openai.chat.completions.create({
    model: 'gemini-3-pro-preview', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [WEATHER_TOOL], tool_choice: 'auto',
  })
  const sentTools = h.fake.last('generateContent')!.body.request
  t.same(sentTools.tools, [{ functionDeclarations: [{ name: 'get_weather', description: 'Current weather', parametersJsonSchema: WEATHER_TOOL.function.parameters }] }])
  t.same(sentTools.toolConfig, { functionCallingConfig: { mode: 'AUTO' } })
  const message = first.choices[0].message
  t.equal(first.choices[0].finish_reason, 'tool_calls')
  t.equal(message.content, null)
  const call = message.tool_calls![0]
  t.equal(call.type, 'function')
  if (call.type !== 'function') return
  t.same(JSON.parse(call.function.arguments), { city: 'Paris' })

  await openai.chat.completions.create({
    model: 'gemini-3-pro-preview',
    tools: [WEATHER_TOOL],
    messages: [
      { role: 'user', content: 'Weather in Paris?' },
      message,
      { role: 'tool', tool_call_id: call.id, content: '{"temp":21}' },
    ],
  })
  const contents = h.fake.last('generateContent')!.body.request.contents
  t.same(contents[1], { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2lnLTE=' }] })
  t.same(contents[2], { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { result: { temp: 21 } } } }] })
})

t.test('tool calls, streamed: each call arrives whole in one delta', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  h.fake.reply('streamGenerateContent', streamReply([
    geminiResponse({ text: 'Checking.' }),
    geminiResponse({ functionCalls: [{ name: 'get_weather', args: { city: 'Rome' } }, { name: 'get_weather', args: { city: 'Oslo' } }], finishReason: 'STOP' }),
  ]))
  const stream = await client(h.url).chat.completions.create({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'Rome and Oslo?' }], tools: [WEATHER_TOOL], stream: true })
  const calls: Array<{ index: number, id?: string, name?: string, args?: string }> = []
  let finish: string | null = null
  for await (const chunk of stream) {
    for (const tc of chunk.choices[0]?.delta.tool_calls ?? []) calls.push({ index: tc.index, id: tc.id, name: tc.function?.name, args: tc.function?.arguments })
    finish = chunk.choices[0]?.finish_reason ?? finish
  }
  t.match(calls, [{ index: 0, id: /^call_/, name: 'get_weather', args: '{"city":"Rome"}' }, { index: 1, id: /^call_/, name: 'get_weather', args: '{"city":"Oslo"}' }])
  t.equal(finish, 'tool_calls')
})

t.test('the SDK helper accumulates a streamed answer into a final completion', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  const runner = client(h.url).chat.completions.stream({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] })
  const final = await runner.finalChatCompletion()
  t.equal(final.choices[0].message.content, 'Hello from the fake upstream.')
})

t.test('errors the SDK understands', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })

  t.test('a wrong password is an AuthenticationError', async t => {
    const err = await client(h.url, 'wrong').chat.completions.create({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'x' }] }).catch(e => e)
    t.type(err, OpenAI.AuthenticationError)
    t.equal(err.status, 401)
    t.equal(err.type, 'authentication_error')
    t.match(err.headers.get('www-authenticate'), /Bearer/)
  })

  t.test('an upstream 429 is a RateLimitError with Retry-After', async t => {
    h.fake.reply('generateContent', errorReply(429, { reason: 'RATE_LIMIT_EXCEEDED', retryDelay: '34.07s', message: 'You have exhausted your capacity on this model.' }))
    const err = await client(h.url).chat.completions.create({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'x' }] }).catch(e => e)
    t.type(err, OpenAI.RateLimitError)
    t.equal(err.type, 'rate_limit_error')
    t.equal(err.headers.get('retry-after'), '35')
    t.match(err.message, /exhausted your capacity/)
  })

  t.test('an upstream 429 on a stream is known before the stream starts', async t => {
    h.fake.reply('streamGenerateContent', errorReply(429, { retryDelay: '2s', array: true }))
    const err = await client(h.url).chat.completions.create({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'x' }], stream: true }).catch(e => e)
    t.type(err, OpenAI.RateLimitError)
    t.equal(err.headers.get('retry-after'), '2')
  })

  t.test('an unknown model is a NotFoundError with code model_not_found', async t => {
    const err = await client(h.url).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }).catch(e => e)
    t.type(err, OpenAI.NotFoundError)
    t.equal(err.code, 'model_not_found')
    t.equal(err.param, 'model')
  })

  t.test('an upstream 404 is a NotFoundError that hints at preview access', async t => {
    h.fake.reply('generateContent', errorReply(404, { message: 'Requested entity was not found.' }))
    const err = await client(h.url).chat.completions.create({ model: 'gemini-3-pro-preview', messages: [{ role: 'user', content: 'x' }] }).catch(e => e)
    t.type(err, OpenAI.NotFoundError)
    t.equal(err.type, 'invalid_request_error')
    t.match(err.message, /preview access/)
  })

  t.test('the upstream error message is enriched once: a bodiless 404 carries the preview hint once, on both surfaces', async t => {
    const hint = /preview access/g
    h.fake.reply('generateContent', { status: 404, text: '' })
    const err = await client(h.url).chat.completions.create({ model: 'gemini-3-pro-preview', messages: [{ role: 'user', content: 'x' }] }).catch(e => e)
    t.type(err, OpenAI.NotFoundError)
    t.equal(err.message.match(hint)?.length, 1, err.message)
    t.match(err.message, /^404 Upstream answered HTTP 404\. The model may not exist/)
    h.fake.reply('generateContent', { status: 404, text: '' })
    const native = await fetch(`${h.url}/v1beta/models/gemini-3-pro-preview:generateContent`, { method: 'POST', headers: { 'x-goog-api-key': PASSWORD }, body: '{"contents":[]}' })
    const body = await native.json() as any
    t.equal(native.status, 404)
    t.equal(body.error.message.match(hint)?.length, 1, body.error.message)
    h.fake.reply('generateContent', errorReply(404, { message: 'Requested entity was not found.' }))
    const withBody = await client(h.url).chat.completions.create({ model: 'gemini-3-pro-preview', messages: [{ role: 'user', content: 'x' }] }).catch(e => e)
    t.equal(withBody.message.match(hint)?.length, 1, withBody.message)
  })

  t.test('an upstream 403 is a PermissionDeniedError carrying the help link', async t => {
    h.fake.reply('generateContent', errorReply(403, { reason: 'VALIDATION_REQUIRED', helpUrl: 'https://accounts.google.com/verify?x=1', message: 'Verify your account.' }))
    const err = await client(h.url).chat.completions.create({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'x' }] }).catch(e => e)
    t.type(err, OpenAI.PermissionDeniedError)
    t.equal(err.type, 'permission_error')
    t.match(err.message, 'https://accounts.google.com/verify?x=1')
  })

  t.test('an upstream 400 is a BadRequestError with the upstream message', async t => {
    h.fake.reply('generateContent', errorReply(400, { message: 'Invalid JSON payload received. Unknown name "foo"' }))
    const err = await client(h.url).chat.completions.create({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'x' }] }).catch(e => e)
    t.type(err, OpenAI.BadRequestError)
    t.equal(err.type, 'invalid_request_error')
    t.match(err.message, /Unknown name "foo"/)
  })

  t.test('an upstream 500 is a 502 api_error; a 503 stays 503', async t => {
    h.fake.reply('generateContent', errorReply(500))
    const e500 = await client(h.url).chat.completions.create({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'x' }] }).catch(e => e)
    t.type(e500, OpenAI.InternalServerError)
    t.equal(e500.status, 502)
    t.equal(e500.type, 'api_error')
    h.fake.reply('generateContent', errorReply(503))
    const e503 = await client(h.url).chat.completions.create({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'x' }] }).catch(e => e)
    t.equal(e503.status, 503)
  })

  t.test('an upstream 401 that survives a token refresh is a 503, not the client\'s fault', async t => {
    h.fake.reply('generateContent', errorReply(401), errorReply(401))
    const err = await client(h.url).chat.completions.create({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'x' }] }).catch(e => e)
    t.equal(err.status, 503)
    t.equal(err.type, 'api_error')
    t.notOk(err instanceof OpenAI.AuthenticationError)
  })

  t.test('a validation failure is a BadRequestError naming the param', async t => {
    const err = await client(h.url).chat.completions.create({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'x' }], temperature: 7 }).catch(e => e)
    t.type(err, OpenAI.BadRequestError)
    t.equal(err.param, 'temperature')
  })
})

t.test('an upstream failure mid-stream surfaces as an SDK error, not a normal end', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  h.fake.reply('streamGenerateContent', streamReply([geminiResponse({ text: 'partial ' }), geminiResponse({ text: 'never' })], { dropAfter: 1 }))
  const stream = await client(h.url).chat.completions.create({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'x' }], stream: true })
  let text = ''
  const err = await (async () => {
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? ''
  })().catch(e => e)
  t.equal(text, 'partial ')
  t.type(err, OpenAI.APIError)
  t.match(err.message, /upstream|Upstream/)
})

t.test('an upstream that answers 200 with garbage never looks like a successful answer: 502 unstreamed, an error the SDK raises streamed', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  const html = { text: '<!DOCTYPE html>\n<html><body>Sorry, something went wrong</body></html>\n', headers: { 'content-type': 'text/html' } }
  h.fake.reply('generateContent', html)
  const unstreamed = await client(h.url).chat.completions.create({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'x' }] }).catch(e => e)
  t.type(unstreamed, OpenAI.InternalServerError)
  t.equal(unstreamed.status, 502)

  const garbage: Array<[string, Record<string, unknown>]> = [
    ['an HTML page', html],
    ['events that are not JSON', { sse: 'data: <html>\n\ndata: oops\n\n' }],
    ['an empty stream', { sse: '' }],
  ]
  for (const [name, reply] of garbage) {
    h.fake.reply('streamGenerateContent', reply)
    const stream = await client(h.url).chat.completions.create({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'x' }], stream: true })
    const finishes: unknown[] = []
    const err = await (async () => {
      for await (const chunk of stream) finishes.push(chunk.choices[0]?.finish_reason)
    })().catch(e => e)
    t.type(err, OpenAI.APIError, `${name}: the SDK raises`)
    t.match(err.message, /upstream/i, name)
    t.notOk(finishes.some(f => f != null), `${name}: no chunk carried a finish_reason`)
  }
})

t.test('a client that goes away mid-stream cancels the upstream call', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  h.fake.reply('streamGenerateContent', streamReply([geminiResponse({ text: 'first' }), geminiResponse({ text: 'second' })], { chunkDelayMs: 2000 }))
  const controller = new AbortController()
  const stream = await client(h.url).chat.completions.create({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'x' }], stream: true }, { signal: controller.signal })
  for await (const chunk of stream) {
    if (chunk.choices[0]?.delta.content === 'first') break
  }
  controller.abort()
  t.equal(await h.fake.last('streamGenerateContent')!.closed, 'aborted')
})

t.test('models.list and models.retrieve', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  const openai = client(h.url)
  const ids: string[] = []
  for await (const model of openai.models.list()) ids.push(model.id)
  t.ok(ids.includes('gemini-2.5-pro') && ids.includes('gemini-2.5-flash-search'))
  const model = await openai.models.retrieve('gemini-2.5-pro-maxthinking')
  t.match(model, { id: 'gemini-2.5-pro-maxthinking', object: 'model', owned_by: 'google' })
  const err = await openai.models.retrieve('nope').catch(e => e)
  t.type(err, OpenAI.NotFoundError)
})

t.test('the public Gemini API backend serves the same chat completions', async t => {
  // Before gemini-2.5-flash's shutdown on the Gemini API (test/proxy/model-shutdown.test.ts covers after).
  const h = await startProxy(t, { backendName: 'gemini-api', now: () => new Date('2026-11-27T12:00:00Z') })
  const completion = await client(h.url).chat.completions.create({ model: 'lm-2.5-flash-nothinking', messages: [{ role: 'user', content: 'hi' }] })
  t.equal(completion.choices[0].message.content, 'Hello from the fake upstream.')
  const sent = h.fake.last('generateContent')!
  t.equal(sent.api, 'gemini-api')
  t.equal(sent.model, 'gemini-2.5-flash')
  t.equal(sent.headers['x-goog-api-key'], 'test-api-key')
  t.same(sent.body.generationConfig.thinkingConfig, { thinkingBudget: 0, includeThoughts: false })
})
