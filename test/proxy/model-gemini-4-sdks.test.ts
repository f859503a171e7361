// The official openai and @google/genai SDKs drive Gemini 4 Argon and Neon through the proxy, against a fake Gemini
// API that refuses what Gemini 4 refuses (docs/model-proxy.md, "Gemini 4").
import t from 'tap'
import OpenAI from 'openai'
import { GoogleGenAI, ThinkingLevel } from '@google/genai'
import { startProxy, PASSWORD } from './harness.ts'

const openai = (url: string): OpenAI => new OpenAI({ apiKey: PASSWORD, baseURL: `${url}/v1`, maxRetries: 0, timeout: 20000 })
const genai = (url: string): GoogleGenAI => new GoogleGenAI({ apiKey: PASSWORD, httpOptions: { baseUrl: url, timeout: 20000, apiVersion: 'v1beta' } })
const words = (text: string): number => text.split(/\s+/).filter(w => w !== '').length

for (const model of ['gemini-4-argon', 'gemini-4-neon']) {
  t.test(`the openai SDK drives ${model} through chat completions, streamed and not, with the fields Gemini 4 refuses dropped`, async t => {
    const h = await startProxy(t, { backendName: 'gemini-api' })
    const completion = await openai(h.url).chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Hello?' }],
      temperature: 0.2,
      presence_penalty: 0.4,
      n: 2,
      reasoning_effort: 'high',
    })
    t.equal(completion.model, model)
    t.equal(completion.choices[0].message.content, 'Hello from the fake upstream.')
    t.same(h.fake.last('generateContent')!.body.generationConfig, { thinkingConfig: { thinkingLevel: 'high', includeThoughts: true } })

    h.fake.decodeTokens = 70000
    const stream = await openai(h.url).chat.completions.create({ model, messages: [{ role: 'user', content: 'Long' }], max_tokens: 100000, stream: true })
    let text = ''
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? ''
    t.equal(words(text), 70000, 'past one call\'s output')
    t.equal(h.fake.calls('streamGenerateContent').length, 2)
  })

  t.test(`the @google/genai SDK drives ${model} through generateContent; its own continuation loop goes through the proxy`, async t => {
    const h = await startProxy(t, { backendName: 'gemini-api' })
    const response = await genai(h.url).models.generateContent({
      model,
      contents: 'Hello',
      config: { thinkingConfig: { thinkingLevel: ThinkingLevel.HIGH }, temperature: 0.1, frequencyPenalty: 0.3 },
    })
    t.equal(response.text, 'Hello from the fake upstream.')
    t.same(h.fake.last('generateContent')!.body.generationConfig, { thinkingConfig: { thinkingLevel: 'HIGH' } })

    h.fake.decodeTokens = 70000
    const long = await genai(h.url).models.generateContent({ model, contents: 'Long', config: { maxOutputTokens: 100000 } })
    t.equal(words(long.text ?? ''), 70000, 'the SDK followed the continuation token')
    const calls = h.fake.calls('generateContent').slice(1)
    t.ok(calls.length >= 2, 'several calls')
    t.match(calls[1].body.continuationToken, /^fake-ct-/, 'the token reached the upstream at the request\'s top level')
  })
}
