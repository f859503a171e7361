// node bench/chat-validation.ts [path to lib/proxy/chat/request-schema.ts]: µs per validation of a chat request with 1 and
// with 40 text messages, by the validator in this tree or the one at the path given (an older version, say).
import { pathToFileURL } from 'node:url'
import { resolve } from 'node:path'

const path = process.argv[2] ?? new URL('../lib/proxy/chat/request-schema.ts', import.meta.url).pathname
const { createChatRequestValidator } = await import(pathToFileURL(resolve(path)).href) as typeof import('../lib/proxy/chat/request-schema.ts')
const validate = createChatRequestValidator()

for (const count of [1, 40]) {
  const body = {
    model: 'gemini-2.5-flash',
    stream: true,
    messages: Array.from({ length: count }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: `message number ${i}` })),
  }
  const rounds = count === 1 ? 100_000 : 5_000
  for (let i = 0; i < rounds / 10; i++) validate(body) // warm up
  const started = performance.now()
  for (let i = 0; i < rounds; i++) validate(body)
  console.log(`${count} message${count === 1 ? '' : 's'}: ${((performance.now() - started) * 1000 / rounds).toFixed(2)} µs per request`)
}
