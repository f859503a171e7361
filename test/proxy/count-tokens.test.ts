import t from 'tap'
import { contentsToCount, countableContents } from '../../lib/proxy/upstream/count-tokens.ts'
import { countTokensRequest } from '../../lib/proxy/native/request.ts'

// The countTokens clean-up the native route and both backends share (lib/proxy/upstream/count-tokens.ts).
t.test('countTokens gets the same contents from the native route and from the backend: thought parts become text, signatures dropped', async t => {
  const contents = [
    { role: 'user', parts: [{ text: 'count these' }, { text: 'signed', thoughtSignature: 'sig' }] },
    { role: 'model', parts: [{ text: 'reasoning', thought: true, thoughtSignature: 'sig' }, { thought: 'old style' }, { functionCall: { name: 'f', args: {} }, thought: true, thoughtSignature: 'sig' }] },
    { role: 'model', parts: [{ thought: true }, { thoughtSignature: 'sig' }] },
  ]
  const expected = [
    { role: 'user', parts: [{ text: 'count these' }, { text: 'signed' }] },
    { role: 'model', parts: [{ text: 'reasoning' }, { text: '[Thought: old style]' }, { functionCall: { name: 'f', args: {} } }] },
  ]
  for (const body of [{ contents }, { generateContentRequest: { model: 'models/x', contents } }]) {
    t.same(countTokensRequest(body), { contents: expected }, 'native route')
    t.same(contentsToCount(body), expected, 'backend')
  }
})

t.test('thought parts are made countable the way gemini-cli does it', async t => {
  t.same(countableContents([
    { role: 'model', parts: [{ thought: 'old style thought' }, { text: 'a', thought: false }, 'odd'] },
    'not an object',
    { role: 'user' },
  ]), [
    { role: 'model', parts: [{ text: '[Thought: old style thought]' }, { text: 'a' }, 'odd'] },
    'not an object',
    { role: 'user' },
  ])
  t.same(countableContents(undefined), [])
})
