// The search fee on Interactions answers (docs/prices.md, "How a call is priced"): an interaction's Google Search
// queries are its usage's own count (grounding_tool_count of type google_search), else the queries its
// google_search_call steps name, and they are billed as generateContent's are, per query from Gemini 3 on.
import t from 'tap'
import { startGateway } from '../support/gateway.ts'
import { startFakeUpstream } from '../support/fake-upstream.ts'
import { ADMIN, keyUser, usageReport } from '../support/gateway-keys.ts'

// 2026-12-01 12:00:01 UTC: gemini-4-argon at $4 / $20 per 1M input / output and $14 per 1,000 searches (docs/prices.md).
const AT = Date.UTC(2026, 11, 1, 12, 0, 1)
// 1,000 × $4 + 500 × $20 per 1M: 14,000 micro-dollars of tokens an interaction.
const USAGE = { total_input_tokens: 1000, total_output_tokens: 500, total_thought_tokens: 0, total_tokens: 1500 }
const SEARCH_CALL = { type: 'google_search_call', id: 'gs1', arguments: { queries: ['gatehouse release', 'gatehouse changelog'] } }
const SEARCH_RESULT = { type: 'google_search_result', call_id: 'gs1', result: [{ search_suggestions: '<div></div>' }] }
const ANSWER = { type: 'model_output', content: [{ type: 'text', text: 'found' }] }

t.test('an interaction pays the search fee per Google Search query: its usage\'s google_search count, else the queries of its google_search_call steps', async t => {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const gateway = await startGateway({ ...ADMIN, GEMINI_BACKEND: 'gemini-api', GEMINI_API_KEY: 'upstream-key', GEMINI_API_ENDPOINT: fake.url, LOG_LEVEL: 'silent' }, { now: () => new Date(AT) })
  t.teardown(() => gateway.close())
  const user = await keyUser(gateway.url, 'searching_user')
  const create = async (stream: boolean): Promise<void> => {
    const res = await fetch(`${gateway.url}/v1beta/interactions`, {
      method: 'POST',
      headers: { 'x-goog-api-key': user.key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gemini-4-argon', input: 'news?', tools: [{ type: 'google_search' }], stream }),
    })
    t.equal(res.status, 200)
    await res.arrayBuffer()
  }
  const interaction = (id: string, steps: unknown[], usage: Record<string, unknown>): Record<string, unknown> =>
    ({ id, object: 'interaction', model: 'gemini-4-argon', status: 'completed', steps, usage })

  fake.reply('interactions', { body: interaction('v1_plain', [ANSWER], USAGE) })
  await create(false)
  fake.reply('interactions', { body: interaction('v1_counted', [SEARCH_CALL, SEARCH_RESULT, ANSWER], { ...USAGE, grounding_tool_count: [{ type: 'google_search', count: 3 }, { type: 'google_maps', count: 5 }] }) })
  await create(false)
  fake.reply('interactions', {
    chunks: [
      { event_type: 'interaction.created', interaction: { id: 'v1_streamed', status: 'in_progress' } },
      { event_type: 'step.start', index: 0, step: SEARCH_CALL },
      { event_type: 'step.delta', index: 0, delta: { type: 'google_search_call', arguments: SEARCH_CALL.arguments } },
      { event_type: 'step.stop', index: 0 },
      { event_type: 'step.start', index: 1, step: SEARCH_RESULT },
      { event_type: 'step.stop', index: 1 },
      { event_type: 'step.start', index: 2, step: { type: 'model_output', content: [] } },
      { event_type: 'step.delta', index: 2, delta: { type: 'text', text: 'found' } },
      { event_type: 'step.stop', index: 2 },
      { event_type: 'interaction.completed', interaction: { id: 'v1_streamed', status: 'completed', usage: USAGE } },
    ],
  })
  await create(true)

  const report = await usageReport(user, 3)
  t.match(report.rows, [{ surface: 'interactions', model: 'gemini-4-argon', requests: 3, grounded_requests: 2 }])
  // Tokens 3 × 14,000; the counted one's 3 google_search (its maps count is no search) and the streamed one's 2
  // queries (the call repeated by its delta counts once) at $14 per 1,000: 5 × 14,000.
  t.equal(report.totals.cost_micros, 3 * 14_000 + 5 * 14_000)
})
