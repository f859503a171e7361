// Reading the usage of an answer passed through as its bytes go by (lib/proxy/call/usage-scan.ts).
import t from 'tap'
import { UsageScan } from '../../../lib/proxy/call/usage-scan.ts'

const usage = (prompt: number, out: number): string => JSON.stringify({ usageMetadata: { promptTokenCount: prompt, candidatesTokenCount: out, promptTokensDetails: [{ modality: 'TEXT', tokenCount: prompt }] } })

/** Feeds `text` split into chunks of `size` bytes. */
function scan (text: string, size: number, running: boolean): UsageScan {
  const s = new UsageScan(running)
  const bytes = Buffer.from(text)
  for (let i = 0; i < bytes.length; i += size) s.push(bytes.subarray(i, i + size))
  return s
}

t.test('the usage of an answer passed through is read whatever its chunking, split marker and object included', async t => {
  const json = `{"embeddings":[{"values":[1,2]}],${usage(12, 3).slice(1)}`
  for (const size of [1, 2, 5, 14, 15, 16, 1000]) {
    t.same(scan(json, size, false).usage, { inputTokens: 12, outputTokens: 3, thinkingTokens: 0, cachedTokens: 0 }, `chunks of ${size}`)
  }
})

t.test('a stream\'s usage is its last running total; a JSON answer\'s usages add up', async t => {
  const sse = `data: ${usage(10, 1)}\n\ndata: ${usage(10, 7)}\n\n`
  t.same(scan(sse, 7, true).usage, { inputTokens: 10, outputTokens: 7, thinkingTokens: 0, cachedTokens: 0 })
  const many = `{"a":${usage(10, 1)},"b":${usage(5, 2)}}`
  t.same(scan(many, 9, false).usage, { inputTokens: 15, outputTokens: 3, thinkingTokens: 0, cachedTokens: 0 })
})

t.test('an answer without usage, or naming it in text only, reports none', async t => {
  t.equal(scan('{"embedding":{"values":[0.1]}}', 4, false).usage, undefined)
  t.equal(scan('{"text":"the \\"usageMetadata\\" field","usageMetadata":null}', 3, false).usage, undefined)
})

t.test('a usageMetadata too large to be one, or not JSON, is no usage and the search goes on', async t => {
  const huge = `{"usageMetadata":{"x":"${'y'.repeat(20_000)}"},${usage(3, 1).slice(1)}`
  t.same(scan(huge, 1000, false).usage, { inputTokens: 3, outputTokens: 1, thinkingTokens: 0, cachedTokens: 0 })
  t.equal(scan('{"usageMetadata":{"promptTokenCount":1,}}', 5, false).usage, undefined)
})

const grounded = (queries: string[], prompt = 10): string => JSON.stringify({ candidates: [{ groundingMetadata: { webSearchQueries: queries } }], ...JSON.parse(usage(prompt, 2)) })

t.test('the search queries an answer passed through ran are read whatever its chunking, brackets and quotes in a query included', async t => {
  const json = grounded(['a [b]', 'c \\"]\\" d', 'e'])
  for (const size of [1, 2, 5, 17, 18, 19, 1000]) {
    t.equal(scan(json, size, false).usage?.searchQueries, 3, `chunks of ${size}`)
  }
})

t.test('a stream\'s search queries are its largest event\'s (candidates added up); a JSON answer\'s add up', async t => {
  const twoCandidates = JSON.stringify({ candidates: [{ groundingMetadata: { webSearchQueries: ['a'] } }, { groundingMetadata: { webSearchQueries: ['b', 'c'] } }] })
  const sse = `data: ${grounded(['a', 'b'])}\r\n\r\ndata: ${twoCandidates}\r\n\r\ndata: ${grounded(['a', 'b'])}\r\n\r\n`
  for (const size of [3, 1000]) t.equal(scan(sse, size, true).usage?.searchQueries, 3, `one event's 3 queries, not 7 (chunks of ${size})`)
  t.equal(scan(`{"a":${grounded(['x'])},"b":${grounded(['y', 'z'])}}`, 9, false).usage?.searchQueries, 3)
})

t.test('search queries are charged with a usage only, and a list that is none counts none', async t => {
  t.equal(scan(JSON.stringify({ candidates: [{ groundingMetadata: { webSearchQueries: ['a'] } }] }), 4, false).usage, undefined)
  t.same(scan(`{"webSearchQueries":"a",${usage(3, 1).slice(1)}}`, 4, false).usage, { inputTokens: 3, outputTokens: 1, thinkingTokens: 0, cachedTokens: 0 })
  t.same(scan(`{"text":"the \\"webSearchQueries\\": [1]",${usage(3, 1).slice(1)}}`, 4, false).usage, { inputTokens: 3, outputTokens: 1, thinkingTokens: 0, cachedTokens: 0 })
})
