// Grounded requests as a usage dimension (docs/accounts.md, "Usage"): a call whose answer ran Google Search queries
// counts one grounded request in its usage row, an ungrounded call 0, through the gateway and its usage API.
import t from 'tap'
import { startGateway } from '../support/gateway.ts'
import { startFakeUpstream, geminiResponse, streamReply } from '../support/fake-upstream.ts'
import { ADMIN, keyUser, usageReport } from '../support/gateway-keys.ts'

const USAGE = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 }

function grounded (body: Record<string, any>): Record<string, any> {
  body.candidates[0].groundingMetadata = { webSearchQueries: ['gatehouse release', 'gatehouse changelog'], groundingChunks: [] }
  return body
}

t.test('a grounded call counts one grounded request in the usage API and an ungrounded call 0', async t => {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const gateway = await startGateway({ ...ADMIN, GEMINI_API_KEY: 'upstream-key', GEMINI_API_ENDPOINT: fake.url, LOG_LEVEL: 'silent' })
  t.teardown(() => gateway.close())
  const user = await keyUser(gateway.url, 'grounded_user')
  const ask = async (model: string, action = 'generateContent'): Promise<void> => {
    const res = await fetch(`${gateway.url}/v1beta/models/${model}:${action}${action === 'streamGenerateContent' ? '?alt=sse' : ''}`, {
      method: 'POST',
      headers: { 'x-goog-api-key': user.key, 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ parts: [{ text: 'news?' }] }], tools: [{ googleSearch: {} }] }),
    })
    t.equal(res.status, 200)
    await res.arrayBuffer()
  }
  fake.setDefault('generateContent', { body: grounded(geminiResponse({ text: 'found', finishReason: 'STOP', usage: USAGE })) })
  await ask('gemini-4-argon')
  fake.setDefault('streamGenerateContent', streamReply([geminiResponse({ text: 'f' }), grounded(geminiResponse({ text: 'ound', finishReason: 'STOP', usage: USAGE }))]))
  await ask('gemini-4-argon', 'streamGenerateContent')
  fake.setDefault('generateContent', { body: geminiResponse({ text: 'plain', finishReason: 'STOP', usage: USAGE }) })
  await ask('gemini-3.5-flash')

  const report = await usageReport(user, 3)
  const byModel = Object.fromEntries(report.rows.map((r: { model: string, requests: number, grounded_requests: number }) => [r.model, [r.requests, r.grounded_requests]]))
  t.same(byModel, { 'gemini-4-argon': [2, 2], 'gemini-3.5-flash': [1, 0] }, 'each grounded call counts 1 (not its 2 queries), the plain call 0')
  t.equal(report.totals.grounded_requests, 2, 'summed in the totals')
})
