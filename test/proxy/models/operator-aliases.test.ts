// Model aliases (docs/model-proxy.md, "Model aliases"): the names a client sends, mapped by the operator to
// catalogue models on every surface, held to the model policy, and checked once at construction.
import t from 'tap'
import { startProxy, PASSWORD } from '../harness.ts'
import { ConfigurationError, createProxy } from '../../../lib/index.ts'
import type { KeyCaller, KeyResolver } from '../../../lib/index.ts'

const MEMBER_KEY = 'ghk_member' + 'M'.repeat(37)
const keys: KeyResolver = {
  async resolveKey (secret) {
    return secret === MEMBER_KEY ? { kind: 'key', userId: 'a'.repeat(24), keyId: 'b'.repeat(24), accessLevel: 'member', models: null } satisfies KeyCaller : undefined
  },
}
const modelAliases = { 'claude-*': 'gemini-3.8-flash', 'claude-haiku-*': 'gemini-3.5-flash-lite', 'claude-opus-4-8': 'gemini-4-argon' }

async function messages (url: string, model: string, key = PASSWORD): Promise<Response> {
  return fetch(`${url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
  })
}

t.test('a Claude Code model name goes upstream as the model its alias names: an exact name first, then the longest pattern', async t => {
  const h = await startProxy(t, { backendName: 'gemini-api', modelAliases })
  for (const [asked, sent] of [['claude-sonnet-4-6', 'gemini-3.8-flash'], ['claude-haiku-4-5-20251001', 'gemini-3.5-flash-lite'], ['claude-opus-4-8', 'gemini-4-argon'], ['gemini-3.5-flash', 'gemini-3.5-flash']]) {
    const res = await messages(h.url, asked)
    t.equal(res.status, 200, asked)
    await res.text()
    t.equal(h.fake.last('generateContent')?.model, sent, `${asked} → ${sent}`)
  }
  const chat = await fetch(`${h.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${PASSWORD}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: 'x' }] }) })
  t.equal(chat.status, 200, 'every surface resolves through the same table')
  await chat.text()
  const unmapped = await messages(h.url, 'gpt-5')
  t.equal(unmapped.status, 404, 'a name no entry matches is resolved as it is')
  await unmapped.text()
})

t.test('the model policy judges the model an alias names', async t => {
  const h = await startProxy(t, { backendName: 'gemini-api', keys, modelAliases, modelAccess: { member: ['gemini-3.8-flash*'] } })
  const allowed = await messages(h.url, 'claude-sonnet-4-6', MEMBER_KEY)
  t.equal(allowed.status, 200)
  await allowed.text()
  const denied = await messages(h.url, 'claude-haiku-4-5', MEMBER_KEY)
  t.equal(denied.status, 403)
  t.match(await denied.json(), { type: 'error', error: { type: 'permission_error', message: /gemini-3.5-flash-lite/ } })
})

t.test('a bad alias table is a ConfigurationError for modelAliases naming the entry, at construction', async t => {
  const cases: Array<[unknown, RegExp]> = [
    [['claude-*'], /modelAliases must be an object/],
    [{ 'claude *': 'gemini-3.8-flash' }, /modelAliases\["claude \*"\] is not a model name or pattern/],
    [{ 'claude-*': 3 }, /modelAliases\["claude-\*"\] must map to a model name/],
    [{ 'claude-*': 'gpt-5' }, /modelAliases\["claude-\*"\] maps to "gpt-5": The model `gpt-5` does not exist/],
    [Object.fromEntries(Array.from({ length: 257 }, (_, i) => [`m${i}`, 'gemini-3.8-flash'])), /at most 256 entries/],
  ]
  for (const [aliases, message] of cases) {
    const err = (() => { try { createProxy({ password: PASSWORD, modelAliases: aliases as Record<string, string> }); return undefined } catch (e) { return e } })()
    t.ok(err instanceof ConfigurationError, JSON.stringify(aliases).slice(0, 40))
    t.equal((err as ConfigurationError).option, 'modelAliases')
    t.match((err as Error).message, message)
  }
})
