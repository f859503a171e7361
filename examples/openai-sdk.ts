// Call the gateway's chat-completions API with the official openai SDK.
// Run: GATEHOUSE_URL=http://127.0.0.1:8888 GEMINI_AUTH_PASSWORD=... npm run example examples/openai-sdk.ts
import OpenAI from 'openai'

const client = new OpenAI({
  baseURL: `${process.env.GATEHOUSE_URL ?? 'http://127.0.0.1:8888'}/v1`,
  apiKey: process.env.GEMINI_AUTH_PASSWORD ?? ''
})

const models = await client.models.list()
console.log('models:', models.data.slice(0, 3).map(m => m.id).join(', '), '...')

const completion = await client.chat.completions.create({
  model: 'gemini-2.5-flash',
  messages: [{ role: 'user', content: 'Say hello in five words.' }]
})
console.log('answer:', completion.choices[0]?.message.content)

const stream = await client.chat.completions.create({
  model: 'gemini-2.5-flash',
  messages: [{ role: 'user', content: 'Count to three.' }],
  stream: true,
  stream_options: { include_usage: true }
})
let text = ''
for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? ''
console.log('streamed:', text)
