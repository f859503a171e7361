// The Gemini hub's one reader of parts, usage and finish reasons (lib/proxy/gemini/hub.ts).
import t from 'tap'
import { candidatesOf, finishReasonOf, outputChars, partKind, partsOf, readUsageMetadata, usageOf } from '../../../lib/proxy/gemini/hub.ts'
import { modelTargetOf } from '../../../lib/proxy/call/model-path.ts'

t.test('parts are read by kind: a function call first, then thought or answer text, then inline data', async t => {
  t.same([{ functionCall: { name: 'f' }, text: 'x' }, { text: 'a', thought: true }, { text: 'b' }, { inlineData: { data: '' } }, { executableCode: {} }, null].map(partKind),
    ['functionCall', 'thought', 'text', 'inlineData', 'other', 'other'])
  const answer = { candidates: [{ content: { parts: [{ text: 'ab' }, { text: 'cde', thought: true }] }, finishReason: 'STOP' }] }
  t.equal(partsOf(candidatesOf(answer)[0]).length, 2)
  t.equal(finishReasonOf(candidatesOf(answer)[0]), 'STOP')
  t.same(candidatesOf({ candidates: 'no' }), [], 'a field of the wrong type reads as absent')
  t.equal(outputChars([answer, answer, {}]), 10, 'text and thoughts forwarded')
})

t.test('usage is read from usageMetadata; a CachedContent\'s totalTokenCount is its input', async t => {
  t.same(usageOf({ usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 3, thoughtsTokenCount: 2, cachedContentTokenCount: 1, totalTokenCount: 9 } }), { inputTokens: 4, outputTokens: 3, thinkingTokens: 2, cachedTokens: 1 })
  t.same(readUsageMetadata({ totalTokenCount: 500 }), { inputTokens: 500, outputTokens: 0, thinkingTokens: 0, cachedTokens: 0 })
  t.same(readUsageMetadata({ promptTokenCount: -1, candidatesTokenCount: 'x' }), { inputTokens: 0, outputTokens: 0, thinkingTokens: 0, cachedTokens: 0 })
  t.equal(usageOf({}), undefined)
})

t.test('a model call in a path is matched case-insensitively, tuned models included', async t => {
  t.same(modelTargetOf('/v1beta/Models/gemini-2.5-flash:GenerateContent'), { collection: 'models', model: 'gemini-2.5-flash', action: 'GenerateContent' })
  t.same(modelTargetOf('/v1beta/tunedModels/my-1:generateContent'), { collection: 'tunedModels', model: 'my-1', action: 'generateContent' })
  t.same(modelTargetOf('/v1beta/models/gemini-2.5-flash%3AembedContent'), { collection: 'models', model: 'gemini-2.5-flash', action: 'embedContent' })
  t.same(modelTargetOf('/v1beta/models/gemini-2.5-flash/operations/x'), { collection: 'models', model: 'gemini-2.5-flash' })
  t.equal(modelTargetOf('/v1beta/files/abc'), undefined)
})
