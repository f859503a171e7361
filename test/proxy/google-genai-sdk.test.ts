// The official @google/genai SDK pointed at the proxy's native routes, with the fake Code Assist
// upstream behind it.
import t from 'tap'
import { GoogleGenAI, ApiError } from '@google/genai'
import { startProxy, PASSWORD, PNG_1X1 } from './harness.ts'
import { errorReply, geminiResponse, streamReply } from '../support/fake-upstream.ts'

// @google/genai 3.x calls /v1/models/... by default; `apiVersion: 'v1beta'` gives /v1beta/models/...
function genai (url: string, apiKey = PASSWORD, apiVersion?: string): GoogleGenAI {
  return new GoogleGenAI({ apiKey, httpOptions: { baseUrl: url, timeout: 10000, apiVersion } })
}

t.test('generateContent: the body goes upstream with the variant\'s thinking config and the answer comes back as is', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  const response = await genai(h.url).models.generateContent({
    model: 'gemini-2.5-flash-nothinking',
    contents: [{ role: 'user', parts: [{ text: 'Hello' }, { inlineData: { mimeType: 'image/png', data: PNG_1X1.toString('base64') } }] }],
    config: { systemInstruction: 'Be nice.', temperature: 0.2 },
  })
  t.equal(response.text, 'Hello from the fake upstream.')
  t.equal(response.usageMetadata?.totalTokenCount, 12)
  t.match(response.responseId, /^fake-trace-/, 'traceId becomes responseId')
  const sent = h.fake.last('generateContent')!
  t.equal(sent.body.model, 'gemini-2.5-flash')
  t.equal(sent.body.project, 'fake-project')
  t.equal(sent.headers.authorization, `Bearer ${h.fake.issuedTokens[0]}`)
  t.same(sent.body.request.systemInstruction, { parts: [{ text: 'Be nice.' }], role: 'user' })
  t.same(sent.body.request.contents[0].parts[1], { inlineData: { mimeType: 'image/png', data: PNG_1X1.toString('base64') } })
  t.same(sent.body.request.generationConfig, { temperature: 0.2, thinkingConfig: { thinkingBudget: 0, includeThoughts: false } })
  t.equal(sent.body.request.safetySettings.length, 11, 'default safety settings when the client gives none')
})

t.test('the client\'s own thinking config, safety settings and tools are respected; -search adds googleSearch once', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  await genai(h.url).models.generateContent({
    model: 'gemini-2.5-pro-search',
    contents: 'Find news',
    config: {
      thinkingConfig: { includeThoughts: false, thinkingBudget: 1024 },
      safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT' as never, threshold: 'BLOCK_ONLY_HIGH' as never }],
      tools: [{ googleSearch: {} }],
    },
  })
  const request = h.fake.last('generateContent')!.body.request
  t.same(request.generationConfig.thinkingConfig, { includeThoughts: false, thinkingBudget: 1024 })
  t.same(request.safetySettings, [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }])
  t.same(request.tools, [{ googleSearch: {} }])
})

t.test('native requests keep Google\'s defaults: a body that does not ask for thoughts gets none', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  const ai = genai(h.url)
  const thinkingSent = (call: 'generateContent' | 'streamGenerateContent'): unknown => h.fake.last(call)!.body.request.generationConfig?.thinkingConfig
  await ai.models.generateContent({ model: 'gemini-2.5-pro', contents: 'Hi' })
  t.equal(thinkingSent('generateContent'), undefined, 'generateContent: no thinkingConfig, so no includeThoughts')
  for await (const chunk of await ai.models.generateContentStream({ model: 'gemini-3-pro-preview', contents: 'Hi' })) void chunk
  t.equal(thinkingSent('streamGenerateContent'), undefined, 'streamGenerateContent: the same')
  await ai.models.generateContent({ model: 'gemini-2.5-pro-maxthinking', contents: 'Hi' })
  t.same(thinkingSent('generateContent'), { thinkingBudget: 32768 }, 'a variant still sets its budget, and no thoughts')
  await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'Hi', config: { thinkingConfig: { includeThoughts: true } } })
  t.same(thinkingSent('generateContent'), { includeThoughts: true }, 'thoughts when the client asks for them')
  const chat = await fetch(`${h.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${PASSWORD}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'Hi' }] }),
  })
  await chat.arrayBuffer()
  t.same(thinkingSent('generateContent'), { thinkingBudget: -1, includeThoughts: true }, 'the chat surface, which shows reasoning_content, still asks for them')
})

t.test('generateContentStream: SSE events pass through in order with their responseId', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  h.fake.reply('streamGenerateContent', streamReply([
    geminiResponse({ thought: 'Hmm.' }),
    geminiResponse({ text: 'One, ' }),
    geminiResponse({ text: 'two.', finishReason: 'STOP', usage: true }),
  ], { multiLine: true, crlf: true }))
  const stream = await genai(h.url).models.generateContentStream({ model: 'gemini-2.5-pro', contents: 'Count' })
  const texts: string[] = []
  const ids: string[] = []
  for await (const chunk of stream) {
    texts.push(chunk.candidates?.[0]?.content?.parts?.map(p => p.text ?? '').join('') ?? '')
    ids.push(chunk.responseId ?? '')
  }
  t.same(texts, ['Hmm.', 'One, ', 'two.'])
  t.ok(ids.every(id => id.startsWith('fake-trace-')))
  t.equal(h.fake.last('streamGenerateContent')!.body.model, 'gemini-2.5-pro')
})

t.test('countTokens goes to the upstream countTokens call', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  const result = await genai(h.url).models.countTokens({ model: 'gemini-2.5-flash', contents: 'three little words' })
  t.equal(result.totalTokens, 3)
  const sent = h.fake.last('countTokens')!
  t.equal(sent.body.request.model, 'models/gemini-2.5-flash')
  t.same(sent.body.request.contents, [{ role: 'user', parts: [{ text: 'three little words' }] }])
})

t.test('models.list and models.get read the catalog; an unknown model is a 404', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  const ai = genai(h.url)
  const names: string[] = []
  for await (const model of await ai.models.list()) names.push(model.name ?? '')
  t.ok(names.includes('models/gemini-2.5-pro'))
  t.ok(names.includes('models/gemini-2.5-flash-search'))
  const model = await ai.models.get({ model: 'gemini-2.5-pro-search' })
  t.equal(model.name, 'models/gemini-2.5-pro-search')
  t.equal(model.displayName, 'Gemini 2.5 Pro with Google Search')
  t.equal(model.inputTokenLimit, 1048576)
  const err = await ai.models.get({ model: 'not-a-model' }).catch(e => e)
  t.type(err, ApiError)
  t.equal(err.status, 404)
  t.match(err.message, /NOT_FOUND/)
  t.equal(h.fake.requests.filter(r => r.call !== 'token' && r.call !== 'loadCodeAssist').length, 0, 'the catalog is served locally')
})

t.test('upstream errors reach the SDK unchanged, with Retry-After on 429', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  h.fake.reply('generateContent', errorReply(429, { reason: 'QUOTA_EXHAUSTED', retryDelay: '54s', message: 'Your quota will reset after 54s.' }))
  const res = await fetch(`${h.url}/v1beta/models/gemini-2.5-pro:generateContent`, {
    method: 'POST', headers: { 'x-goog-api-key': PASSWORD, 'content-type': 'application/json' }, body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'x' }] }] }),
  })
  t.equal(res.status, 429)
  t.equal(res.headers.get('retry-after'), '54')
  const body = await res.json() as any
  t.match(body, { error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: 'Your quota will reset after 54s.' } })
  t.match(body.error.details, [{ reason: 'QUOTA_EXHAUSTED' }, { retryDelay: '54s' }], 'details kept')

  h.fake.reply('streamGenerateContent', errorReply(400, { message: 'Bad field', array: true }))
  const err = await genai(h.url).models.generateContentStream({ model: 'gemini-2.5-pro', contents: 'x' }).catch(e => e)
  t.type(err, ApiError)
  t.equal(err.status, 400)
  t.match(err.message, /Bad field/)
})

t.test('a stream that fails midway ends with an error event the SDK raises', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  h.fake.reply('streamGenerateContent', streamReply([geminiResponse({ text: 'a' }), geminiResponse({ text: 'b' })], { dropAfter: 1 }))
  const stream = await genai(h.url).models.generateContentStream({ model: 'gemini-2.5-pro', contents: 'x' })
  const seen: string[] = []
  const err = await (async () => { for await (const chunk of stream) seen.push(chunk.text ?? '') })().catch(e => e)
  t.same(seen, ['a'])
  t.type(err, ApiError)
})

t.test('an upstream that answers 200 with garbage never looks like a successful answer: 502 unstreamed, an error event the SDK raises streamed', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  const html = { text: '<!DOCTYPE html>\n<html><body>Sorry, something went wrong</body></html>\n', headers: { 'content-type': 'text/html' } }
  h.fake.reply('generateContent', html)
  const unstreamed = await genai(h.url).models.generateContent({ model: 'gemini-2.5-pro', contents: 'x' }).catch(e => e)
  t.type(unstreamed, ApiError)
  t.equal(unstreamed.status, 502)

  const garbage: Array<[string, Record<string, unknown>]> = [
    ['an HTML page', html],
    ['events that are not JSON', { sse: 'data: <html>\n\ndata: oops\n\n' }],
    ['an empty stream', { sse: '' }],
  ]
  for (const [name, reply] of garbage) {
    h.fake.reply('streamGenerateContent', reply)
    const stream = await genai(h.url).models.generateContentStream({ model: 'gemini-2.5-pro', contents: 'x' })
    const seen: unknown[] = []
    const err = await (async () => { for await (const chunk of stream) seen.push(chunk) })().catch(e => e)
    t.type(err, ApiError, `${name}: the SDK raises`)
    t.match(err.message, /upstream/i, name)
    t.same(seen, [], `${name}: no chunk came before it`)
  }
})

t.test('a wrong key is a 401 in Google\'s shape', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  const err = await genai(h.url, 'wrong').models.generateContent({ model: 'gemini-2.5-pro', contents: 'x' }).catch(e => e)
  t.type(err, ApiError)
  t.equal(err.status, 401)
  t.match(err.message, /UNAUTHENTICATED/)
})

t.test('a client that goes away mid-stream cancels the upstream call', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  h.fake.reply('streamGenerateContent', streamReply([geminiResponse({ text: 'first' }), geminiResponse({ text: 'second' })], { chunkDelayMs: 2000 }))
  const controller = new AbortController()
  const stream = await genai(h.url).models.generateContentStream({ model: 'gemini-2.5-pro', contents: 'x', config: { abortSignal: controller.signal } })
  for await (const chunk of stream) {
    if (chunk.text === 'first') break
  }
  controller.abort()
  t.equal(await h.fake.last('streamGenerateContent')!.closed, 'aborted')
})

t.test('the /v1beta paths serve the same as the SDK\'s default /v1 ones', async t => {
  const h = await startProxy(t, { backendName: 'code-assist' })
  const ai = genai(h.url, PASSWORD, 'v1beta')
  const response = await ai.models.generateContent({ model: 'lm-2.5-pro', contents: 'hi' })
  t.equal(response.text, 'Hello from the fake upstream.')
  let streamed = ''
  for await (const chunk of await ai.models.generateContentStream({ model: 'gemini-2.5-pro', contents: 'hi' })) streamed += chunk.text ?? ''
  t.equal(streamed, 'Hello from the fake upstream.')
  t.equal((await ai.models.countTokens({ model: 'gemini-2.5-pro', contents: 'a b' })).totalTokens, 2)
  t.equal((await ai.models.get({ model: 'gemini-2.5-flash' })).name, 'models/gemini-2.5-flash')
  const names: string[] = []
  for await (const model of await ai.models.list()) names.push(model.name ?? '')
  t.ok(names.includes('models/gemini-3-pro-preview'))
  t.same(h.fake.calls('generateContent').map(r => r.body.model), ['gemini-2.5-pro'])
})
