// The official @google/genai SDK drives Google's Interactions API through the gateway with a member's key
// (docs/interactions.md): create (streamed and not), get, cancel and delete on Gemini 4 Argon and Neon, the SDK's own
// automatic continuation, usage recorded under the `interactions` surface with the upstream's token counts.
import t from 'tap'
import { genai, setup } from './interactions-harness.ts'
import { usageReport } from '../support/gateway-keys.ts'

for (const model of ['gemini-4-argon', 'gemini-4-neon']) {
  t.test(`the @google/genai SDK drives ${model} through ai.interactions: create, stream, get, cancel, delete, usage under interactions`, async t => {
    const { url, fake, alice } = await setup(t)
    const ai = genai(url, alice.key)
    const made = await ai.interactions.create({ model, input: 'Hello there' })
    t.equal(made.status, 'completed')
    t.equal(made.output_text, 'Hello from the fake upstream.')
    t.equal(fake.last('interactions')!.body.model, model, 'the body went upstream with its model')

    const stream = await ai.interactions.create({ model, input: 'Stream please', stream: true })
    const types: string[] = []
    let text = ''
    let streamedId = ''
    for await (const event of stream) {
      types.push(event.event_type)
      if (event.event_type === 'step.delta' && event.delta.type === 'text') text += event.delta.text
      if (event.event_type === 'interaction.created') streamedId = event.interaction.id
    }
    t.same(types, ['interaction.created', 'interaction.status_update', 'step.start', 'step.delta', 'step.stop', 'interaction.completed'])
    t.equal(text, 'Hello from the fake upstream.')

    const got = await ai.interactions.get(made.id)
    t.equal(got.id, made.id)
    t.equal(got.output_text, 'Hello from the fake upstream.')
    const replayed: string[] = []
    for await (const event of await ai.interactions.get(made.id, { stream: true })) replayed.push(event.event_type)
    t.equal(replayed.at(-1), 'interaction.completed', 'a stored interaction\'s events again, streamed')
    t.equal(fake.last('interactions')!.query.stream, 'true')
    const cancelled = await ai.interactions.cancel(streamedId)
    t.equal(cancelled.status, 'cancelled')
    await ai.interactions.delete(made.id)
    const gone = await ai.interactions.get(made.id).catch((e: unknown) => e)
    t.match(gone, { status: 404 }, 'deleted upstream')

    const report = await usageReport(alice, 7)
    const row = report.rows.find((r: any) => r.surface === 'interactions' && r.model === model)
    t.match(row, { key_id: alice.keyId, requests: 2, input_tokens: 4, output_tokens: 16 }, 'both creates, charged the upstream\'s counts')
    t.ok(report.rows.some((r: any) => r.surface === 'interactions' && r.model === 'none' && r.requests >= 4), 'get, cancel and delete are requests')
  })

  t.test(`the SDK's automatic continuation on ${model} goes through the gateway, each hop continuing the caller's own interaction`, async t => {
    const { url, fake, alice } = await setup(t)
    fake.decodeTokens = 70000
    const made = await genai(url, alice.key).interactions.create({ model, input: 'Long' })
    t.equal(made.status, 'completed')
    t.equal(made.output_text?.replace(/ /g, '').length, 70000, 'both hops\' text, merged by the SDK')
    const hops = fake.calls('interactions')
    t.equal(hops.length, 2)
    t.equal(hops[1].body.continuation_token, 'fake-ict-65536')
    t.match(hops[1].body.previous_interaction_id, /^v1_fake/)
  })
}
