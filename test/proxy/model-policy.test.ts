import t from 'tap'
import { startProxy, PASSWORD } from './harness.ts'
import type { KeyCaller, KeyResolver } from '../../lib/index.ts'
import { createProxy } from '../../lib/index.ts'
import { createModelPolicy } from '../../lib/proxy/access/model-policy.ts'
import OpenAI from 'openai'
import { ApiError, GoogleGenAI } from '@google/genai'

const MEMBER_KEY = 'ghk_member' + 'M'.repeat(37)
const NARROW_KEY = 'ghk_narrow' + 'N'.repeat(37)
const ADMIN_KEY = 'ghk_admin' + 'D'.repeat(38)
const keyOf = (accessLevel: KeyCaller['accessLevel'], models: string[] | null): KeyCaller =>
  ({ kind: 'key', userId: 'a'.repeat(24), keyId: 'b'.repeat(24), accessLevel, models })
const keys: KeyResolver = {
  async resolveKey (secret) {
    return ({ [MEMBER_KEY]: keyOf('member', null), [NARROW_KEY]: keyOf('member', ['gemini-2.5-flash-lite']), [ADMIN_KEY]: keyOf('admin', null) } as Record<string, KeyCaller>)[secret]
  },
}
// Members may use the 2.5 flash family only; admins (not named) every model.
const modelAccess = { member: ['gemini-2.5-flash*'] }

const chat = (model: string): string => JSON.stringify({ model, messages: [{ role: 'user', content: 'x' }] })
const native = '{"contents":[{"parts":[{"text":"x"}]}]}'

async function callBoth (url: string, key: string, model: string): Promise<[number, any, number, any]> {
  const c = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: chat(model) })
  const n = await fetch(`${url}/v1beta/models/${model}:generateContent`, { method: 'POST', headers: { 'x-goog-api-key': key }, body: native })
  return [c.status, await c.json(), n.status, await n.json()]
}

t.test("a key cannot use a model outside its owner's access level (403 on both surfaces)", async t => {
  const h = await startProxy(t, { backendName: 'code-assist', keys, modelAccess })
  const [cs, cb, ns, nb] = await callBoth(h.url, MEMBER_KEY, 'gemini-2.5-pro')
  t.equal(cs, 403)
  t.match(cb, { error: { type: 'permission_error', code: 403, param: 'model', message: /may not use the model `gemini-2.5-pro`/ } })
  t.equal(ns, 403)
  t.match(nb, { error: { code: 403, status: 'PERMISSION_DENIED', message: /gemini-2.5-pro/ } })
  for (const model of ['gemini-2.5-pro-search-maxthinking', 'lm-2.5-pro', 'models/gemini-2.5-pro']) {
    const res = await fetch(`${h.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${MEMBER_KEY}` }, body: chat(model) })
    t.equal(res.status, 403, `${model}: variants and spellings of a denied model are denied too`)
    await res.arrayBuffer()
  }
  const stream = await fetch(`${h.url}/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse`, { method: 'POST', headers: { 'x-goog-api-key': MEMBER_KEY }, body: native })
  t.equal(stream.status, 403, 'streams too')
  await stream.arrayBuffer()
  const count = await fetch(`${h.url}/v1beta/models/gemini-2.5-pro:countTokens`, { method: 'POST', headers: { 'x-goog-api-key': MEMBER_KEY }, body: native })
  t.equal(count.status, 403, 'and countTokens')
  await count.arrayBuffer()
  t.equal(h.fake.requests.filter(r => r.call !== 'token' && r.call !== 'loadCodeAssist').length, 0, 'nothing reached the upstream')

  const allowed = await callBoth(h.url, MEMBER_KEY, 'gemini-2.5-flash-nothinking')
  t.same([allowed[0], allowed[2]], [200, 200], 'a model of the level is allowed, variants included')
  const admin = await callBoth(h.url, ADMIN_KEY, 'gemini-2.5-pro')
  t.same([admin[0], admin[2]], [200, 200], 'a level the policy does not name may use every model')
  const operator = await callBoth(h.url, PASSWORD, 'gemini-1.0-pro')
  t.same([operator[0], operator[2]], [200, 200], 'the operator password may use everything')
})

t.test("a key's own model list narrows its owner's policy", async t => {
  const h = await startProxy(t, { backendName: 'code-assist', keys, modelAccess })
  const lite = await callBoth(h.url, NARROW_KEY, 'gemini-2.5-flash-lite-search')
  t.same([lite[0], lite[2]], [200, 200], 'the one model of the key')
  const flash = await callBoth(h.url, NARROW_KEY, 'gemini-2.5-flash')
  t.same([flash[0], flash[2]], [403, 403], 'its owner may use gemini-2.5-flash, the key may not')
  const pro = await startProxy(t, { backendName: 'code-assist', keys: { resolveKey: async () => keyOf('member', ['gemini-2.5-pro']) }, modelAccess })
  const widened = await callBoth(pro.url, MEMBER_KEY, 'gemini-2.5-pro')
  t.same([widened[0], widened[2]], [403, 403], "a key's list never widens its owner's policy")
})

t.test('the model lists show only models the caller may use', async t => {
  const h = await startProxy(t, { backendName: 'code-assist', keys, modelAccess })
  const ids = async (key: string): Promise<{ openai: string[], native: string[], genai: string[] }> => {
    const o = await (await fetch(`${h.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json() as { data: Array<{ id: string }> }
    const n = await (await fetch(`${h.url}/v1beta/models`, { headers: { 'x-goog-api-key': key } })).json() as { models: Array<{ name: string }> }
    const g = await (await fetch(`${h.url}/v1/models`, { headers: { 'x-goog-api-key': key } })).json() as { models: Array<{ name: string }> }
    return { openai: o.data.map(m => m.id), native: n.models.map(m => m.name.slice(7)), genai: g.models.map(m => m.name.slice(7)) }
  }
  const member = await ids(MEMBER_KEY)
  t.ok(member.openai.length > 0 && member.openai.every(id => id.startsWith('gemini-2.5-flash')), 'members: only the flash family')
  t.ok(member.openai.includes('gemini-2.5-flash-lite-search'))
  t.same(member.native, member.openai, 'the native list holds the same models')
  t.same(member.genai, member.openai, 'as does /v1/models asked in the Google style')
  const narrow = (await ids(NARROW_KEY)).openai
  t.ok(narrow.length > 0 && narrow.every(id => id.startsWith('gemini-2.5-flash-lite')), "narrowed by the key's own list")
  t.ok(narrow.includes('gemini-2.5-flash-lite-search-nothinking'), 'variants of an allowed model are listed')
  const all = await ids(PASSWORD)
  t.ok(all.openai.includes('gemini-1.0-pro') && all.openai.length > member.openai.length, 'the operator sees everything')
  t.same((await ids(ADMIN_KEY)).openai, all.openai, 'as does a level the policy leaves out')

  for (const [path, headers] of [['/v1/models/gemini-2.5-pro', { authorization: `Bearer ${MEMBER_KEY}` }], ['/v1beta/models/gemini-2.5-pro', { 'x-goog-api-key': MEMBER_KEY }], ['/v1/models/gemini-2.5-pro', { 'x-goog-api-key': MEMBER_KEY }]] as const) {
    const res = await fetch(`${h.url}${path}`, { headers })
    t.equal(res.status, 404, `${path}: a model the caller may not use is not found`)
    await res.arrayBuffer()
  }
  const one = await fetch(`${h.url}/v1beta/models/gemini-2.5-flash`, { headers: { 'x-goog-api-key': MEMBER_KEY } })
  t.equal(one.status, 200, 'one it may use is found')
  await one.arrayBuffer()
})

t.test('minAccessLevel: keys of users below it may use nothing; the default is member', async t => {
  const h = await startProxy(t, { backendName: 'code-assist', keys: { resolveKey: async () => keyOf('default', null) } })
  const below = await callBoth(h.url, MEMBER_KEY, 'gemini-2.5-flash')
  t.same([below[0], below[2]], [403, 403], 'a default-level key (had resolveKey let it through) is refused every model')
  const list = await (await fetch(`${h.url}/v1/models`, { headers: { authorization: `Bearer ${MEMBER_KEY}` } })).json() as { data: unknown[] }
  t.same(list.data, [], 'and sees no models')
  const dev = await startProxy(t, { backendName: 'code-assist', keys, minAccessLevel: 'dev' })
  const admin = await callBoth(dev.url, ADMIN_KEY, 'gemini-2.5-flash')
  t.same([admin[0], admin[2]], [403, 403], 'with minAccessLevel dev, an admin key is refused')
})

t.test('patterns match whole base names; "*" is the only wildcard and "." is a dot', async t => {
  const policy = createModelPolicy({ member: ['gemini-2.5-flash', 'gemini-3-*'], admin: ['*'], dev: [] })
  const member = keyOf('member', null)
  t.ok(policy.allows(member, 'gemini-2.5-flash'))
  t.notOk(policy.allows(member, 'gemini-2x5-flash'), 'a dot is not any character')
  t.notOk(policy.allows(member, 'gemini-2.5-flash-lite'), 'no pattern: no prefix match')
  t.notOk(policy.allows(member, 'xgemini-2.5-flash'), 'anchored at the start')
  t.ok(policy.allows(member, 'gemini-3-pro-preview'))
  t.ok(policy.allows(keyOf('admin', null), 'anything-at-all'))
  t.notOk(policy.allows(keyOf('dev', null), 'gemini-2.5-flash'), 'an empty list allows nothing')
  t.ok(policy.allows(keyOf('hush', null), 'gemini-2.5-flash'), 'a level left out allows everything')
  t.notOk(policy.allows(keyOf('member', []), 'gemini-2.5-flash'), 'a key with an empty list may use nothing')
  t.ok(policy.allows({ kind: 'operator' }, 'anything'), 'the operator everything')
})

t.test('modelAccess and minAccessLevel are checked at construction, naming the option', async t => {
  const make = (options: Record<string, unknown>): unknown => createProxy({ password: PASSWORD, ...options })
  t.throws(() => make({ minAccessLevel: 'root' }), { message: /^createProxy: minAccessLevel must be one of default, member, admin, dev, hush/ })
  t.throws(() => make({ modelAccess: ['gemini-*'] }), { message: /^createProxy: modelAccess must be an object/ })
  t.throws(() => make({ modelAccess: { root: ['*'] } }), { message: /^createProxy: modelAccess must be keyed by access levels/ })
  t.throws(() => make({ modelAccess: { member: 'gemini-*' } }), { message: /^createProxy: modelAccess\.member must be an array of model-name patterns/ })
  t.throws(() => make({ modelAccess: { member: ['gemini-(.*)'] } }), { message: /modelAccess\.member/ })
  t.throws(() => make({ modelAccess: { member: ['x'.repeat(129)] } }), { message: /modelAccess\.member/ })
  t.throws(() => make({ modelAccess: { default: ['*'] } }), { message: /^createProxy: modelAccess\.default must be left out: default is below minAccessLevel/ })
  const proxy = createProxy({ password: PASSWORD, modelAccess: { default: ['*'], member: [] }, minAccessLevel: 'default' })
  t.teardown(() => proxy.close())
  t.pass('levels at or above minAccessLevel, and an empty list, are accepted')
})

t.test('the official SDKs driven with a key raise their permission error (403) for a denied model, and list only allowed models', async t => {
  const h = await startProxy(t, { backendName: 'code-assist', keys, modelAccess })
  const openai = new OpenAI({ apiKey: MEMBER_KEY, baseURL: `${h.url}/v1`, maxRetries: 0, timeout: 10000 })
  const err = await openai.chat.completions.create({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'x' }] }).catch(e => e)
  t.type(err, OpenAI.PermissionDeniedError)
  t.equal(err.status, 403)
  t.equal(err.type, 'permission_error')
  t.equal(err.param, 'model')
  const streamed = await openai.chat.completions.create({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'x' }], stream: true }).catch(e => e)
  t.type(streamed, OpenAI.PermissionDeniedError, 'a stream is refused before it starts')
  const ok = await openai.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'x' }] })
  t.equal(ok.choices[0].message.role, 'assistant', 'an allowed model answers')
  const listed: string[] = []
  for await (const m of openai.models.list()) listed.push(m.id)
  t.ok(listed.length > 0 && listed.every(id => id.startsWith('gemini-2.5-flash')), 'models.list shows only allowed models')

  for (const apiVersion of ['v1beta', 'v1']) {
    const ai = new GoogleGenAI({ apiKey: MEMBER_KEY, httpOptions: { baseUrl: h.url, timeout: 10000, apiVersion } })
    const denied = await ai.models.generateContent({ model: 'gemini-2.5-pro', contents: 'x' }).catch(e => e)
    t.type(denied, ApiError, `${apiVersion}: the SDK raises`)
    t.equal(denied.status, 403)
    t.match(denied.message, /PERMISSION_DENIED/)
    const deniedStream = await ai.models.generateContentStream({ model: 'gemini-2.5-pro', contents: 'x' }).catch(e => e)
    t.type(deniedStream, ApiError, `${apiVersion}: streams too`)
    t.equal(deniedStream.status, 403)
    const answer = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'x' })
    t.ok(answer.text, `${apiVersion}: an allowed model answers`)
  }
  t.equal(h.fake.calls('generateContent').length, 3, 'only the allowed calls reached the upstream')
})
