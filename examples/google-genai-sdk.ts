// Call the gateway's native API with the official @google/genai SDK.
// Run: GATEHOUSE_URL=http://127.0.0.1:8888 GEMINI_AUTH_PASSWORD=... npm run example examples/google-genai-sdk.ts
import { GoogleGenAI } from '@google/genai'

const ai = new GoogleGenAI({
  apiKey: process.env.GEMINI_AUTH_PASSWORD ?? '',
  httpOptions: { baseUrl: process.env.GATEHOUSE_URL ?? 'http://127.0.0.1:8888' }
})

const response = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'Say hello in five words.' })
console.log('answer:', response.text)

let text = ''
for await (const chunk of await ai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'Count to three.' })) text += chunk.text ?? ''
console.log('streamed:', text)

const tokens = await ai.models.countTokens({ model: 'gemini-2.5-flash', contents: 'How many tokens is this?' })
console.log('tokens:', tokens.totalTokens)
