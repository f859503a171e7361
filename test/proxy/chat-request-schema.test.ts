// The chat-completions request check (lib/proxy/chat/request-schema.ts): the quick checks that skip joi for plain
// scalar fields accept exactly what joi's schema accepts at the edges, so a fast path never lets a bad value through.
import t from 'tap'
import { createChatRequestValidator } from '../../lib/proxy/chat/request-schema.ts'

const validate = createChatRequestValidator()
const base = { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'Hi' }] }
const accepts = (extra: Record<string, unknown>): boolean => {
  try {
    validate({ ...base, ...extra })
    return true
  } catch {
    return false
  }
}

t.test('scalar fields are checked to their limits whether or not the quick check answers', async t => {
  const cases: Array<[Record<string, unknown>, boolean]> = [
    [{ model: '' }, false], [{ model: 7 }, false], [{ model: 'x' }, true],
    [{ stream: true }, true], [{ stream: null }, true], [{ stream: 'true' }, false], [{ stream: 1 }, false],
    [{ temperature: 0 }, true], [{ temperature: 2 }, true], [{ temperature: 2.0001 }, false], [{ temperature: -0.1 }, false], [{ temperature: '1' }, false],
    [{ top_p: 1 }, true], [{ top_p: 1.01 }, false],
    [{ top_k: 1 }, true], [{ top_k: 0 }, false], [{ top_k: 1.5 }, false],
    [{ max_tokens: 1 }, true], [{ max_tokens: 0 }, false], [{ max_tokens: 2.5 }, false], [{ max_tokens: 1e300 }, false], [{ max_tokens: null }, true],
    [{ max_completion_tokens: 100 }, true], [{ max_completion_tokens: -1 }, false],
    [{ n: 8 }, true], [{ n: 9 }, false],
    [{ seed: -5 }, true], [{ seed: 0.5 }, false], [{ seed: 2 ** 60 }, false],
    [{ presence_penalty: -2 }, true], [{ presence_penalty: 2.5 }, false],
    [{ frequency_penalty: 2 }, true], [{ frequency_penalty: -3 }, false],
    [{ logprobs: false }, true], [{ logprobs: 'yes' }, false],
    [{ top_logprobs: 20 }, true], [{ top_logprobs: 21 }, false],
  ]
  for (const [extra, expected] of cases) t.equal(accepts(extra), expected, JSON.stringify(extra))
})

t.test('a refused scalar names its parameter', async t => {
  t.throws(() => validate({ ...base, temperature: 3 }), { param: 'temperature', message: /`temperature` must be less than or equal to 2/ })
  t.throws(() => validate({ ...base, model: '' }), { param: 'model', message: /model/ })
})
