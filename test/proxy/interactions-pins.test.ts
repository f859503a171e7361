// An interaction is pinned to the pooled credential that created it (docs/interactions.md, "Credentials"): with two
// Gemini API keys whose projects each keep their own interactions (fake.keyScoped), every later get, cancel, delete and
// continuation goes through the key that made it, streamed or not, while calls naming none go round the pool.
import t from 'tap'
import { setup, genai } from './interactions-harness.ts'
import { resourcesInInteraction } from '../../lib/proxy/upstream/resource-pins.ts'

t.test('a create names for pinning the interaction it continues and the uploaded files its media carry', async t => {
  t.same(resourcesInInteraction({
    model: 'gemini-4-argon',
    previous_interaction_id: 'v1_abc',
    input: [{ type: 'text', text: 'files/not-a-uri' }, { type: 'image', uri: 'https://generativelanguage.googleapis.com/v1beta/files/img1' }, { type: 'document', uri: 'files/doc2' }, { type: 'video', uri: 'https://www.youtube.com/watch?v=x' }],
  }), ['interactions/v1_abc', 'files/img1', 'files/doc2'])
  t.same(resourcesInInteraction({ model: 'gemini-4-argon', input: 'hi' }), [])
})

t.test('an interaction created through key #1 is fetched, continued, cancelled and deleted through key #1', async t => {
  const { url, fake, alice } = await setup(t, { GEMINI_API_KEY: 'k1,k2' })
  fake.keyScoped = true
  const ai = genai(url, alice.key)
  const keyOf = (): string => String(fake.last('interactions')!.headers['x-goog-api-key'])

  const first = await ai.interactions.create({ model: 'gemini-4-argon', input: 'one' })
  const firstKey = keyOf()
  const stream = await ai.interactions.create({ model: 'gemini-4-neon', input: 'two', stream: true })
  let streamedId = ''
  for await (const event of stream) if (event.event_type === 'interaction.created') streamedId = event.interaction.id
  const secondKey = keyOf()
  t.not(firstKey, secondKey, 'calls naming no interaction go round the pool')

  // Twice each in a row: a pool going round would hand the second of each to the other key.
  for (let i = 0; i < 2; i++) {
    t.equal((await ai.interactions.get(first.id)).id, first.id)
    t.equal(keyOf(), firstKey, 'get through the creating key')
  }
  for (let i = 0; i < 2; i++) {
    t.equal((await ai.interactions.get(streamedId)).id, streamedId)
    t.equal(keyOf(), secondKey, 'a streamed creation is pinned too')
  }
  const next = await ai.interactions.create({ model: 'gemini-4-argon', input: 'three', previous_interaction_id: first.id })
  t.equal(next.status, 'completed')
  t.equal(keyOf(), firstKey, 'the continuation through the creating key')
  t.equal((await ai.interactions.cancel(streamedId)).status, 'cancelled')
  t.equal(keyOf(), secondKey)
  await ai.interactions.delete(first.id)
  t.equal(keyOf(), firstKey)
})
