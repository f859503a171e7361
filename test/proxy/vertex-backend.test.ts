import t from 'tap'
import type { Test } from 'tap'
import type { Backend, BackendOptions, GeminiResponse } from '../../lib/index.ts'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { createBackend, createNodeListener, createProxy, OPTION_RULES } from '../../lib/index.ts'
import { createVertexBackend, vertexTarget } from '../../lib/proxy/upstream/vertex-backend.ts'
import { errorReply, geminiResponse, streamReply } from '../support/fake-upstream.ts'
import { SERVICE_ACCOUNT_EMAIL, startFakeVertex } from '../support/fake-vertex.ts'
import type { FakeVertex } from '../support/fake-vertex.ts'

const REQUEST = {
  contents: [{ role: 'user', parts: [{ text: 'two words' }] }],
  systemInstruction: { parts: [{ text: 'be brief' }] },
}

async function setup (t: Test, options: (vertex: FakeVertex) => BackendOptions): Promise<{ vertex: FakeVertex, backend: Backend }> {
  const vertex = await startFakeVertex(t)
  const backend = createBackend({ backend: 'vertex', vertexEndpoint: vertex.url, retryBaseDelayMs: 1, ...options(vertex) })
  t.teardown(() => backend.close())
  return { vertex, backend }
}

const serviceAccount = (vertex: FakeVertex): BackendOptions => ({ projectId: 'proj-1', vertexLocation: 'us-central1', credentialsFile: vertex.keyFile })
const express = (vertex: FakeVertex): BackendOptions => ({ apiKey: vertex.apiKey })

async function collect (events: AsyncIterable<GeminiResponse>): Promise<GeminiResponse[]> {
  const out: GeminiResponse[] = []
  for await (const e of events) out.push(e)
  return out
}

t.test('Vertex: a service-account key file gets a token through the JWT grant; project paths carry it as a bearer token', async t => {
  const { vertex, backend } = await setup(t, serviceAccount)
  const answer = await backend.generate({ model: 'gemini-2.5-pro', request: REQUEST })
  t.equal(answer.candidates?.[0]?.content?.parts?.[0]?.text, 'Hello from the fake upstream.')
  const call = vertex.fake.last('generateContent')!
  t.equal(call.api, 'vertex')
  t.equal(call.path, '/v1/projects/proj-1/locations/us-central1/publishers/google/models/gemini-2.5-pro:generateContent')
  t.equal(call.headers.authorization, `Bearer ${vertex.fake.issuedTokens[0]}`)
  t.equal(call.headers['x-goog-api-key'], undefined, 'no API key is sent with a bearer token')
  t.same(call.body, REQUEST, 'the Gemini API request shape, no envelope')
  t.equal(vertex.grants.length, 1)
  t.match(vertex.grants[0], { iss: SERVICE_ACCOUNT_EMAIL, scope: 'https://www.googleapis.com/auth/cloud-platform' })
  // The token is reused until it expires.
  await backend.generate({ model: 'gemini-2.5-flash', request: REQUEST })
  t.equal(vertex.fake.calls('token').length, 1)
  t.same(await backend.ready(), { ok: true })
})

t.test('Vertex: streaming uses :streamGenerateContent?alt=sse and yields the events as they are', async t => {
  const { vertex, backend } = await setup(t, serviceAccount)
  vertex.fake.reply('streamGenerateContent', streamReply([geminiResponse({ text: 'a' }), geminiResponse({ text: 'b', finishReason: 'STOP', usage: true })]))
  const events = await collect(await backend.stream({ model: 'gemini-2.5-flash', request: REQUEST }))
  t.same(events.map(e => e.candidates?.[0]?.content?.parts?.[0]?.text), ['a', 'b'])
  t.same(events[1].usageMetadata, { promptTokenCount: 5, candidatesTokenCount: 7, totalTokenCount: 12 })
  const call = vertex.fake.last('streamGenerateContent')!
  t.equal(call.path, '/v1/projects/proj-1/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent')
  t.same(call.query, { alt: 'sse' })
})

t.test('Vertex: countTokens sends contents (and the system instruction) at the top, never a generateContentRequest', async t => {
  const { vertex, backend } = await setup(t, serviceAccount)
  const counted = await backend.countTokens({ model: 'gemini-2.5-pro', request: { generateContentRequest: { model: 'models/gemini-2.5-pro', ...REQUEST } } })
  t.equal(counted.totalTokens, 2)
  const body = vertex.fake.last('countTokens')!.body
  t.same(body, { contents: REQUEST.contents, systemInstruction: REQUEST.systemInstruction })
  await backend.countTokens({ model: 'gemini-2.5-pro', request: { contents: [{ parts: [{ text: 'one two three' }] }] } })
  t.same(vertex.fake.last('countTokens')!.body, { contents: [{ parts: [{ text: 'one two three' }], role: 'user' }] })
})

t.test('Vertex requires a role on every content: one left out is sent as user, the client\'s request untouched', async t => {
  const { vertex, backend } = await setup(t, serviceAccount)
  const request = { contents: [{ parts: [{ text: 'hi' }] }] }
  await backend.generate({ model: 'gemini-2.5-pro', request })
  t.same(vertex.fake.last('generateContent')!.body.contents, [{ parts: [{ text: 'hi' }], role: 'user' }])
  t.same(request, { contents: [{ parts: [{ text: 'hi' }] }] })
})

t.test('Vertex: upstream errors map like the other backends', async t => {
  const { vertex, backend } = await setup(t, serviceAccount)
  vertex.fake.reply('generateContent', errorReply(400, { message: 'Please use a valid role: user, model.' }))
  const bad = await backend.generate({ model: 'gemini-2.5-pro', request: REQUEST }).catch(e => e)
  t.equal(bad.code, 'UPSTREAM_BAD_REQUEST')
  t.match(bad.message, /valid role/)
  vertex.fake.reply('streamGenerateContent', errorReply(429, { array: true, retryDelay: '3s' }))
  const limited = await backend.stream({ model: 'gemini-2.5-flash', request: REQUEST }).catch(e => e)
  t.equal(limited.code, 'UPSTREAM_RATE_LIMITED')
  t.equal(limited.retryAfter, 3)
  vertex.fake.reply('generateContent', errorReply(404, { message: 'Publisher Model `gemini-9` was not found' }))
  const missing = await backend.generate({ model: 'gemini-9', request: REQUEST }).catch(e => e)
  t.equal(missing.status, 404)
})

t.test('Vertex: a refused bearer token is fetched again once and the call retried', async t => {
  const { vertex, backend } = await setup(t, serviceAccount)
  await backend.generate({ model: 'gemini-2.5-pro', request: REQUEST })
  vertex.fake.acceptedTokens!.clear() // the upstream no longer accepts the issued token
  vertex.fake.acceptedTokens!.add('fake-access-2')
  await backend.generate({ model: 'gemini-2.5-pro', request: REQUEST })
  t.equal(vertex.fake.calls('token').length, 2)
  t.equal(vertex.fake.last('generateContent')!.headers.authorization, 'Bearer fake-access-2')
})

t.test('a service-account key the token endpoint refuses leaves Vertex not ready and calls answering 503', async t => {
  const { vertex, backend } = await setup(t, serviceAccount)
  vertex.fake.tokenGate = () => ({ status: 400, body: { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' } })
  const err = await backend.generate({ model: 'gemini-2.5-pro', request: REQUEST }).catch(e => e)
  t.equal(err.code, 'UPSTREAM_UNAVAILABLE')
  t.equal(err.status, 503)
  t.match(err.message, /application-default credentials/)
  t.equal(vertex.fake.calls('generateContent').length, 0, 'nothing reaches Vertex without a token')
  const ready = await backend.ready()
  t.equal(ready.ok, false)
})

t.test('Vertex keeps the thought-signature sentinel the chat surface sends for a tool call whose signature was lost', async t => {
  const vertex = await startFakeVertex(t)
  const proxy = createProxy({ password: 'proxy-password-16chars', upstream: { backend: 'vertex', vertexEndpoint: vertex.url, apiKey: vertex.apiKey } })
  const server = http.createServer(createNodeListener(proxy.routeTable))
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    server.closeAllConnections()
    await new Promise<void>(resolve => server.close(() => resolve()))
    await proxy.close()
  })
  const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: 'Bearer proxy-password-16chars', 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'gemini-3.5-flash',
      messages: [
        { role: 'user', content: 'look it up' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_plain', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }] },
        { role: 'tool', tool_call_id: 'call_plain', content: '42' },
      ],
    }),
  })
  t.equal(res.status, 200)
  const sent = vertex.fake.last('generateContent')!.body.contents
  const call = sent.flatMap((c: { parts: Array<Record<string, unknown>> }) => c.parts).find((p: Record<string, unknown>) => p.functionCall !== undefined)
  t.equal(call.thoughtSignature, 'skip_thought_signature_validator')
  t.ok(sent.every((c: { role?: string }) => c.role === 'user' || c.role === 'model'), 'every content has a role Vertex accepts')
})

t.test('Vertex express mode: an API key without a project uses /v1/publishers/google/models on the global host, with x-goog-api-key', async t => {
  const { vertex, backend } = await setup(t, express)
  await backend.generate({ model: 'gemini-2.5-flash', request: REQUEST })
  const call = vertex.fake.last('generateContent')!
  t.equal(call.path, '/v1/publishers/google/models/gemini-2.5-flash:generateContent')
  t.equal(call.headers['x-goog-api-key'], vertex.apiKey)
  t.equal(call.headers.authorization, undefined)
  t.equal(vertex.fake.calls('token').length, 0, 'no credentials are loaded in express mode')
  t.same(await backend.ready(), { ok: true })
  const wrong = createBackend({ backend: 'vertex', vertexEndpoint: vertex.url, apiKey: 'wrong-key' })
  t.teardown(() => wrong.close())
  const err = await wrong.generate({ model: 'gemini-2.5-flash', request: REQUEST }).catch(e => e)
  t.equal(err.code, 'UPSTREAM_BAD_REQUEST')
  t.match(err.message, /API key not valid/)
  t.equal(vertexTarget({ apiKey: 'k', vertexLocation: 'europe-west4' }).url('gemini-2.5-pro', 'generateContent'),
    'https://aiplatform.googleapis.com/v1/publishers/google/models/gemini-2.5-pro:generateContent', 'express mode is served on the global host only')
})

t.test('Vertex hosts: global by default, R-aiplatform.googleapis.com for region R, VERTEX_ENDPOINT replaces the host', async t => {
  const url = (options: BackendOptions): string => vertexTarget({ projectId: 'proj-1', ...options }).url('gemini-2.5-pro', 'generateContent')
  t.equal(url({}), 'https://aiplatform.googleapis.com/v1/projects/proj-1/locations/global/publishers/google/models/gemini-2.5-pro:generateContent')
  t.equal(url({ vertexLocation: 'europe-west4' }), 'https://europe-west4-aiplatform.googleapis.com/v1/projects/proj-1/locations/europe-west4/publishers/google/models/gemini-2.5-pro:generateContent')
  t.equal(url({ vertexLocation: 'europe-west4', vertexEndpoint: 'https://vertex.internal.example/' }), 'https://vertex.internal.example/v1/projects/proj-1/locations/europe-west4/publishers/google/models/gemini-2.5-pro:generateContent')
})

t.test('a Vertex location cannot change the host it names', async t => {
  for (const bad of ['evil.example/', 'us-central1.evil.example', 'US-CENTRAL1', '', 'a/b']) {
    t.throws(() => createBackend({ backend: 'vertex', projectId: 'p', vertexLocation: bad }), { message: /createBackend: vertexLocation must be/ }, JSON.stringify(bad))
  }
  t.throws(() => createBackend({ backend: 'vertex', projectId: 'p', vertexEndpoint: 'ftp://x' }), { message: /vertexEndpoint/ })
})

t.test('Vertex is chosen only when asked for, and needs a project or an express-mode key', async t => {
  t.equal(OPTION_RULES.chooseBackend({ hasOAuth: false, hasKey: true, hasProject: true }), 'gemini-api')
  t.equal(OPTION_RULES.chooseBackend({ backend: 'vertex', hasOAuth: true, hasKey: false }), 'vertex')
  t.throws(() => createBackend({ backend: 'vertex' }), { code: 'UPSTREAM_NOT_CONFIGURED', message: /neither GOOGLE_CLOUD_PROJECT .* nor GEMINI_API_KEY/ })
  const bare = createVertexBackend({})
  t.teardown(() => bare.close())
  t.match(await bare.ready(), { ok: false, reason: /GOOGLE_CLOUD_PROJECT .* or GEMINI_API_KEY/ }, 'built directly without either, it is never ready')
})
