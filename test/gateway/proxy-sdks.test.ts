// The proxy as the gateway serves it (Hapi, configured from the environment), driven by both
// official SDKs with the fake upstream behind it.
import t from 'tap'
import OpenAI from 'openai'
import { GoogleGenAI } from '@google/genai'
import { startGateway } from '../support/gateway.ts'
import { startFakeUpstream, geminiResponse, streamReply, errorReply } from '../support/fake-upstream.ts'
import { staleCredentials } from '../proxy/harness.ts'

const PASSWORD = 'gateway-proxy-password'

async function setup (t: { teardown (fn: () => unknown): void }, env: Record<string, string> = {}): Promise<{ url: string, fake: Awaited<ReturnType<typeof startFakeUpstream>> }> {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const gateway = await startGateway({
    GEMINI_AUTH_PASSWORD: PASSWORD,
    GEMINI_CREDENTIALS: JSON.stringify(staleCredentials(fake.tokenUri)),
    CODE_ASSIST_ENDPOINT: fake.url,
    LOG_LEVEL: 'silent',
    ...env,
  })
  t.teardown(() => gateway.close())
  return { url: gateway.url, fake }
}

t.test('openai SDK through the gateway: chat, stream with usage, tool calls, errors', async t => {
  const { url, fake } = await setup(t)
  const openai = new OpenAI({ apiKey: PASSWORD, baseURL: `${url}/v1`, maxRetries: 0, timeout: 10000 })

  const completion = await openai.chat.completions.create({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'hi' }] })
  t.equal(completion.choices[0].message.content, 'Hello from the fake upstream.')
  t.equal(fake.last('generateContent')!.headers.authorization, `Bearer ${fake.issuedTokens[0]}`)

  const stream = await openai.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } })
  let text = ''
  let total: number | undefined
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? ''
    total = chunk.usage?.total_tokens ?? total
  }
  t.equal(text, 'Hello from the fake upstream.')
  t.equal(total, 12)

  fake.reply('streamGenerateContent', streamReply([geminiResponse({ functionCalls: [{ name: 'lookup', args: { q: 'x' } }], finishReason: 'STOP' })]))
  const toolStream = await openai.chat.completions.create({
    model: 'gemini-2.5-pro', stream: true, messages: [{ role: 'user', content: 'look it up' }],
    tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }],
  })
  const names: string[] = []
  for await (const chunk of toolStream) for (const call of chunk.choices[0]?.delta.tool_calls ?? []) names.push(call.function?.name ?? '')
  t.same(names, ['lookup'])

  const denied = await new OpenAI({ apiKey: 'wrong', baseURL: `${url}/v1`, maxRetries: 0 }).chat.completions.create({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'x' }] }).catch(e => e)
  t.type(denied, OpenAI.AuthenticationError)
  // Longer than the upstream client waits out itself, so it reaches the client with Retry-After.
  fake.reply('generateContent', errorReply(429, { retryDelay: '30s' }))
  const limited = await openai.chat.completions.create({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'x' }] }).catch(e => e)
  t.type(limited, OpenAI.RateLimitError)
  t.equal(limited.headers.get('retry-after'), '30')
  const missing = await openai.chat.completions.create({ model: 'not-a-model', messages: [{ role: 'user', content: 'x' }] }).catch(e => e)
  t.type(missing, OpenAI.NotFoundError)
  const ids: string[] = []
  for await (const m of openai.models.list()) ids.push(m.id)
  t.ok(ids.includes('gemini-2.5-pro-search'))
})

t.test('@google/genai through the gateway, on its default /v1 paths and on /v1beta', async t => {
  const { url, fake } = await setup(t)
  for (const apiVersion of [undefined, 'v1beta']) {
    const ai = new GoogleGenAI({ apiKey: PASSWORD, httpOptions: { baseUrl: url, apiVersion, timeout: 10000 } })
    const response = await ai.models.generateContent({ model: 'gemini-2.5-pro-search', contents: 'hi' })
    t.equal(response.text, 'Hello from the fake upstream.', `generateContent ${apiVersion ?? 'v1'}`)
    t.same(fake.last('generateContent')!.body.request.tools, [{ googleSearch: {} }])
    let streamed = ''
    for await (const chunk of await ai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'hi' })) streamed += chunk.text ?? ''
    t.equal(streamed, 'Hello from the fake upstream.', `stream ${apiVersion ?? 'v1'}`)
    t.equal((await ai.models.countTokens({ model: 'gemini-2.5-flash', contents: 'one two' })).totalTokens, 2)
    t.equal((await ai.models.get({ model: 'gemini-2.5-pro' })).name, 'models/gemini-2.5-pro')
    const names: string[] = []
    for await (const m of await ai.models.list()) names.push(m.name ?? '')
    t.ok(names.includes('models/gemini-2.5-flash'))
    const err = await ai.models.generateContent({ model: 'gemini-2.5-pro', contents: 'x', config: { httpOptions: { headers: { 'x-goog-api-key': 'wrong' } } } }).catch(e => e)
    t.equal(err.status, 401)
  }
})

t.test('through the gateway: CORS preflight, unknown native paths, 401 for anything but a key without a password', async t => {
  const { url } = await setup(t)
  const pre = await fetch(`${url}/v1beta/models/gemini-2.5-pro:generateContent`, { method: 'OPTIONS', headers: { origin: 'https://x.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-goog-api-key' } })
  t.equal(pre.status, 204)
  t.equal(pre.headers.get('access-control-allow-origin'), '*')
  t.equal(pre.headers.get('access-control-allow-credentials'), null)
  const unknown = await fetch(`${url}/v1beta/models/gemini-2.5-pro:embedContent`, { method: 'POST', headers: { 'x-goog-api-key': PASSWORD }, body: '{}' })
  t.equal(unknown.status, 404)
  t.match(await unknown.json(), { error: { status: 'NOT_FOUND' } })

  const bare = await setup(t, { GEMINI_AUTH_PASSWORD: '' })
  // Without the operator password only user keys get in (issue 13): anything else is a 401.
  const res = await fetch(`${bare.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer x' }, body: '{}' })
  t.equal(res.status, 401, 'without the password only user keys work')
  t.match(await res.json(), { error: { type: 'authentication_error' } })
})

t.test('through the gateway: a client that leaves mid-stream cancels the upstream call', async t => {
  const { url, fake } = await setup(t)
  fake.reply('streamGenerateContent', streamReply([geminiResponse({ text: 'first' }), geminiResponse({ text: 'second' })], { chunkDelayMs: 2000 }))
  const controller = new AbortController()
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${PASSWORD}` },
    body: JSON.stringify({ model: 'gemini-2.5-pro', stream: true, messages: [{ role: 'user', content: 'x' }] }),
    signal: controller.signal,
  })
  const reader = res.body!.getReader()
  let seen = ''
  while (!seen.includes('first')) seen += new TextDecoder().decode((await reader.read()).value)
  controller.abort()
  t.equal(await fake.last('streamGenerateContent')!.closed, 'aborted')
})
