// Built-in tools per access level (docs/model-proxy.md, "Built-in tools per access level"): what counts as each
// tool in both wire formats, and the rule on the pass-through paths, whose bodies carry tools the upstream uses
// later (a batch's inlined requests, a cache). Every model surface is checked in test/proxy/surface-conformance.test.ts.
import t from 'tap'
import { PASSWORD } from './harness.ts'
import { call, createCache, generateBody, setup, upload, upstreamCalls } from '../support/resource-members.ts'
import { checkTools, geminiToolsUsed, interactionToolsUsed, toolsInBody } from '../../lib/proxy/access/tool-policy.ts'
import { parseLimitsJson } from '../../lib/metering/limits-rule.ts'

t.test('a Tool field counts as its built-in tool in either spelling; older and Vertex search grounding count as googleSearch', async t => {
  t.same(geminiToolsUsed([{ googleSearch: {} }, { url_context: {} }, { GOOGLE_MAPS: {} }, { codeExecution: {} }, { file_search: { fileSearchStoreNames: [] } }]),
    ['googleSearch', 'urlContext', 'googleMaps', 'codeExecution', 'fileSearch'])
  t.same(geminiToolsUsed([{ googleSearchRetrieval: {} }]), ['googleSearch'])
  t.same(geminiToolsUsed([{ enterpriseWebSearch: {} }]), ['googleSearch'])
  t.same(geminiToolsUsed([{ functionDeclarations: [{ name: 'googleSearch' }] }]), [], 'a function named like a tool is a function')
  t.same(geminiToolsUsed('googleSearch'), [], 'a tools value that is no list names nothing (the upstream refuses it)')
})

t.test('an interaction tool counts by its type (google_search, url_context, google_maps, code_execution, file_search)', async t => {
  t.same(interactionToolsUsed([{ type: 'google_search' }, { type: 'url_context' }, { type: 'google_maps' }, { type: 'code_execution' }, { type: 'file_search' }]),
    ['googleSearch', 'urlContext', 'googleMaps', 'codeExecution', 'fileSearch'])
  t.same(interactionToolsUsed([{ type: 'function', name: 'google_search' }, { type: 'mcp_server', url: 'https://example.com' }]), [])
})

t.test('a body\'s tools are read wherever a tools list sits, but not inside a function call\'s args', async t => {
  const batch = { batch: { inputConfig: { requests: { requests: [{ request: { contents: [], tools: [{ codeExecution: {} }] } }] } } } }
  t.same(toolsInBody(batch), ['codeExecution'])
  t.same(toolsInBody({ model: 'models/x', tools: [{ google_search: {} }] }), ['googleSearch'], 'a cache\'s own tools')
  t.same(toolsInBody({ contents: [{ parts: [{ functionCall: { name: 'f', args: { tools: [{ googleSearch: {} }] } } }] }] }), [])
})

t.test('the rule: a key of a level whose tools leave one out is refused it (TOOL_NOT_ALLOWED naming tool and level); the operator never', async t => {
  const byLevel = parseLimitsJson('{"member": {"tools": ["urlContext"]}}')
  const member = { kind: 'key' as const, userId: 'u', keyId: 'k', accessLevel: 'member' as const, models: null }
  t.doesNotThrow(() => { checkTools(byLevel, member, ['urlContext']) })
  t.throws(() => { checkTools(byLevel, member, ['urlContext', 'googleMaps']) }, { code: 'TOOL_NOT_ALLOWED', status: 403, message: /access level member may not use the built-in tool googleMaps/ })
  t.throws(() => { checkTools(byLevel, { ...member, accessLevel: 'dev' }, ['googleSearch']) }, { code: 'TOOL_NOT_ALLOWED' }, 'a level left out: the nearest lower one\'s tools')
  t.doesNotThrow(() => { checkTools(byLevel, { kind: 'operator' }, ['googleMaps']) })
  t.doesNotThrow(() => { checkTools({}, member, ['googleSearch', 'urlContext', 'googleMaps', 'codeExecution', 'fileSearch']) }, 'no tools listed: all five')
})

t.test('a pass-through batch or cache whose tools the level may not use is a 403 TOOL_NOT_ALLOWED, and nothing is sent upstream', async t => {
  const { url, fake, alice } = await setup(t, { GEMINI_LIMITS: JSON.stringify({ member: { allow: ['batches', 'caches', 'files'], tools: ['urlContext'] } }) })
  const batchOf = (tools: unknown[]): unknown => ({ batch: { displayName: 'b', inputConfig: { requests: { requests: [{ request: generateBody({ tools }) }] } } } })
  const before = upstreamCalls(fake)
  const batch = await call(url, alice.key, 'POST', '/v1beta/models/gemini-2.5-flash:batchGenerateContent', batchOf([{ google_search: {} }]))
  t.equal(batch.status, 403)
  t.match(batch.body, { error: { code: 403, status: 'PERMISSION_DENIED', message: /built-in tool googleSearch/ } }, 'in Google\'s shape, naming the tool')
  const cache = await createCache(url, alice.key, { tools: [{ codeExecution: {} }] })
  t.equal(cache.status, 403)
  t.match(cache.body.error.message, /codeExecution/)
  t.equal(upstreamCalls(fake), before, 'neither reached the upstream')
  t.equal((await call(url, alice.key, 'POST', '/v1beta/models/gemini-2.5-flash:batchGenerateContent', batchOf([{ urlContext: {} }]))).status, 200, 'an allowed tool passes')
  t.equal((await call(url, PASSWORD, 'POST', '/v1beta/models/gemini-2.5-flash:batchGenerateContent', batchOf([{ googleSearch: {} }]))).status, 200, 'the operator password is never restricted')
})

t.test('the rule: a batch read from an uploaded file is refused to a level whose tools leave one out, since its requests go unread', async t => {
  const { url, fake, alice } = await setup(t, { GEMINI_LIMITS: JSON.stringify({ member: { allow: ['batches', 'files'], tools: ['urlContext'] } }) })
  const file = await upload(url, alice.key, JSON.stringify({ key: 'a', request: generateBody({ tools: [{ googleSearch: {} }] }) }))
  const before = upstreamCalls(fake)
  for (const inputConfig of [{ fileName: file }, { file_name: file }]) {
    const batch = await call(url, alice.key, 'POST', '/v1beta/models/gemini-2.5-flash:batchGenerateContent', { batch: { displayName: 'b', inputConfig } })
    t.equal(batch.status, 403, `${Object.keys(inputConfig)[0]}: refused`)
    t.match(batch.body.error.message, /does not read a batch's input file.*send the requests inlined/, 'the message says why and what to do instead')
  }
  t.equal(upstreamCalls(fake), before, 'nothing reached the upstream')
  const inlined = { batch: { displayName: 'b', inputConfig: { requests: { requests: [{ request: generateBody({ tools: [{ urlContext: {} }] }) }] } } } }
  t.equal((await call(url, alice.key, 'POST', '/v1beta/models/gemini-2.5-flash:batchGenerateContent', inlined)).status, 200, 'inlined requests are read and pass')
})

t.test('a batch read from a file passes for a level allowed every built-in tool (the default), and for the operator', async t => {
  const { url, alice } = await setup(t, { GEMINI_LIMITS: JSON.stringify({ member: { allow: ['batches', 'files'] } }) })
  const file = await upload(url, alice.key, JSON.stringify({ key: 'a', request: generateBody({}) }))
  t.equal((await call(url, alice.key, 'POST', '/v1beta/models/gemini-2.5-flash:batchGenerateContent', { batch: { displayName: 'b', inputConfig: { fileName: file } } })).status, 200)
})
