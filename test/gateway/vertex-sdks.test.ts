// The gateway configured for Vertex AI from the environment (GEMINI_BACKEND=vertex), driven by both official SDKs
// with the fake Vertex endpoint and token endpoint behind it.
import t from 'tap'
import type { Test } from 'tap'
import OpenAI from 'openai'
import { GoogleGenAI } from '@google/genai'
import { startGateway } from '../support/gateway.ts'
import { geminiResponse, streamReply } from '../support/fake-upstream.ts'
import { startFakeVertex } from '../support/fake-vertex.ts'
import type { FakeVertex } from '../support/fake-vertex.ts'

const PASSWORD = 'gateway-proxy-password'

/** The gateway on the Vertex fake with a project, one location and a service-account key file. */
async function gatewayOnProject (t: Test): Promise<{ vertex: FakeVertex, gateway: Awaited<ReturnType<typeof startGateway>> }> {
  const vertex = await startFakeVertex(t)
  const gateway = await startGateway({
    GEMINI_AUTH_PASSWORD: PASSWORD,
    GEMINI_BACKEND: 'vertex',
    GOOGLE_CLOUD_PROJECT: 'proj-1',
    GOOGLE_CLOUD_LOCATION: 'europe-west4',
    GOOGLE_APPLICATION_CREDENTIALS: vertex.keyFile,
    VERTEX_ENDPOINT: vertex.url,
    LOG_LEVEL: 'silent',
  })
  t.teardown(() => gateway.close())
  return { vertex, gateway }
}

t.test('openai SDK through the gateway on Vertex with a service-account key: chat, stream with usage, tool calls, embeddings', async t => {
  const { vertex, gateway } = await gatewayOnProject(t)
  const openai = new OpenAI({ apiKey: PASSWORD, baseURL: `${gateway.url}/v1`, maxRetries: 0, timeout: 10000 })

  const completion = await openai.chat.completions.create({ model: 'gemini-3.1-pro-preview', messages: [{ role: 'user', content: 'hi' }] })
  t.equal(completion.choices[0].message.content, 'Hello from the fake upstream.')
  const call = vertex.fake.last('generateContent')!
  t.equal(call.path, '/v1/projects/proj-1/locations/europe-west4/publishers/google/models/gemini-3.1-pro-preview:generateContent')
  t.equal(call.headers.authorization, `Bearer ${vertex.fake.issuedTokens[0]}`)

  const stream = await openai.chat.completions.create({ model: 'gemini-3.6-flash', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } })
  let text = ''
  let total: number | undefined
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? ''
    total = chunk.usage?.total_tokens ?? total
  }
  t.equal(text, 'Hello from the fake upstream.')
  t.equal(total, 12)
  t.equal(vertex.fake.last('streamGenerateContent')!.query.alt, 'sse')

  vertex.fake.reply('streamGenerateContent', streamReply([geminiResponse({ functionCalls: [{ name: 'lookup', args: { q: 'x' }, thoughtSignature: 'sig-1' }], finishReason: 'STOP' })]))
  const toolStream = await openai.chat.completions.create({
    model: 'gemini-3.1-pro-preview', stream: true, messages: [{ role: 'user', content: 'look it up' }],
    tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }],
  })
  const names: string[] = []
  for await (const chunk of toolStream) for (const c of chunk.choices[0]?.delta.tool_calls ?? []) names.push(c.function?.name ?? '')
  t.same(names, ['lookup'])

  const embedded = await openai.embeddings.create({ model: 'gemini-embedding-001', input: ['one', 'three'], dimensions: 2, encoding_format: 'float' })
  t.same(embedded.data.map(d => d.embedding), [[3, 0], [5, 0]])
  t.same(embedded.usage, { prompt_tokens: 2, total_tokens: 2 })
  t.equal(vertex.fake.last('predict')!.path, '/v1/projects/proj-1/locations/europe-west4/publishers/google/models/gemini-embedding-001:predict')
  t.equal(vertex.fake.calls('token').length, 1, 'one token serves every call')
})

t.test('@google/genai through the gateway on Vertex express mode: generate, stream, countTokens, tools, embedContent', async t => {
  const vertex = await startFakeVertex(t)
  const gateway = await startGateway({
    GEMINI_AUTH_PASSWORD: PASSWORD,
    GEMINI_BACKEND: 'vertex',
    GEMINI_API_KEY: vertex.apiKey,
    VERTEX_ENDPOINT: vertex.url,
    LOG_LEVEL: 'silent',
  })
  t.teardown(() => gateway.close())
  const ai = new GoogleGenAI({ apiKey: PASSWORD, httpOptions: { baseUrl: gateway.url, apiVersion: 'v1beta', timeout: 10000 } })
  const response = await ai.models.generateContent({ model: 'gemini-3.1-pro-preview', contents: 'hi' })
  t.equal(response.text, 'Hello from the fake upstream.')
  const call = vertex.fake.last('generateContent')!
  t.equal(call.path, '/v1/publishers/google/models/gemini-3.1-pro-preview:generateContent')
  t.equal(call.headers['x-goog-api-key'], vertex.apiKey, 'the gateway\'s own key goes upstream, never the client\'s')
  let streamed = ''
  for await (const chunk of await ai.models.generateContentStream({ model: 'gemini-3.6-flash', contents: 'hi' })) streamed += chunk.text ?? ''
  t.equal(streamed, 'Hello from the fake upstream.')
  t.equal((await ai.models.countTokens({ model: 'gemini-3.6-flash', contents: 'one two' })).totalTokens, 2)
  // Tools: the function call reaches the SDK with its thought signature, and the history the SDK sends back with the
  // function's answer reaches Vertex with that signature and a role on every content.
  vertex.fake.reply('generateContent', { body: geminiResponse({ functionCalls: [{ name: 'lookup', args: { q: 'x' }, thoughtSignature: 'c2lnLTE=' }], finishReason: 'STOP' }) })
  const tools = [{ functionDeclarations: [{ name: 'lookup', parametersJsonSchema: { type: 'object', properties: { q: { type: 'string' } } } }] }]
  const asked = await ai.models.generateContent({ model: 'gemini-3.1-pro-preview', contents: 'look it up', config: { tools } })
  t.same(asked.functionCalls?.map(c => [c.name, c.args]), [['lookup', { q: 'x' }]])
  const modelTurn = asked.candidates![0].content!
  t.equal(modelTurn.parts?.[0].thoughtSignature, 'c2lnLTE=')
  const answered = await ai.models.generateContent({
    model: 'gemini-3.1-pro-preview',
    contents: [{ role: 'user', parts: [{ text: 'look it up' }] }, modelTurn, { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { found: 1 } } }] }],
    config: { tools },
  })
  t.equal(answered.text, 'Hello from the fake upstream.')
  const sent = vertex.fake.last('generateContent')!.body as { contents: Array<{ role: string, parts: Array<Record<string, unknown>> }>, tools: unknown }
  t.same(sent.contents.map(c => c.role), ['user', 'model', 'user'])
  t.equal(sent.contents[1].parts[0].thoughtSignature, 'c2lnLTE=', 'the signature goes back to Vertex as the model gave it')
  t.match(sent.tools, [{ functionDeclarations: [{ name: 'lookup' }] }])
  // The SDK calls batchEmbedContents in the Gemini API's shape; Vertex answers it through :predict (one instance per
  // call for gemini-embedding-001) or :embedContent (gemini-embedding-2, whose strings the SDK sends as one content).
  const embedded = await ai.models.embedContent({ model: 'gemini-embedding-001', contents: ['one', 'three'], config: { outputDimensionality: 2 } })
  t.same(embedded.embeddings?.map(e => e.values), [[3, 0], [5, 0]])
  t.same(vertex.fake.calls('predict').map(c => c.path), Array(2).fill('/v1/publishers/google/models/gemini-embedding-001:predict'))
  const multimodal = await ai.models.embedContent({ model: 'gemini-embedding-2', contents: ['one', 'three'], config: { outputDimensionality: 2 } })
  t.same(multimodal.embeddings?.map(e => e.values), [[8, 0]])
  t.same(vertex.fake.last('embedContent')!.body, { content: { role: 'user', parts: [{ text: 'one' }, { text: 'three' }] }, embedContentConfig: { outputDimensionality: 2 } })
})

t.test('@google/genai through the gateway on Vertex with a project: caches.create, then generateContent with config.cachedContent', async t => {
  const { vertex, gateway } = await gatewayOnProject(t)
  const ai = new GoogleGenAI({ apiKey: PASSWORD, httpOptions: { baseUrl: gateway.url, apiVersion: 'v1beta', timeout: 10000 } })
  const cache = await ai.caches.create({ model: 'gemini-3.6-flash', config: { contents: 'a long document to keep', systemInstruction: 'be brief', ttl: '300s', displayName: 'doc' } })
  t.equal(cache.name, 'cachedContents/1001')
  t.equal(cache.model, 'models/gemini-3.6-flash')
  t.equal(vertex.fake.last('cachedContents')!.body.model, 'projects/proj-1/locations/europe-west4/publishers/google/models/gemini-3.6-flash')
  const response = await ai.models.generateContent({ model: 'gemini-3.6-flash', contents: 'question', config: { cachedContent: cache.name } })
  t.equal(response.text, 'Hello from the fake upstream.')
  const call = vertex.fake.last('generateContent')!
  t.equal(call.path, '/v1/projects/proj-1/locations/europe-west4/publishers/google/models/gemini-3.6-flash:generateContent')
  t.equal(call.body.cachedContent, 'projects/proj-1/locations/europe-west4/cachedContents/1001')
  t.equal((await ai.caches.get({ name: cache.name! })).displayName, 'doc')
  const listed: string[] = []
  for await (const c of await ai.caches.list()) listed.push(c.name ?? '')
  t.same(listed, ['cachedContents/1001'])
  t.equal((await ai.caches.update({ name: cache.name!, config: { ttl: '7200s' } })).expireTime, '2026-11-24T02:00:00Z')
  await ai.caches.delete({ name: cache.name! })
  t.equal(vertex.fake.caches.size, 0)
  t.ok(vertex.fake.calls('cachedContents').every(c => c.headers['x-goog-api-key'] === undefined && c.query.key === undefined), 'the client\'s key never goes upstream')
})
