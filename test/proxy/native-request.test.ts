import t from 'tap'
import { parseNativePath } from '../../lib/proxy/native/path.ts'
import { countTokensRequest, prepareNativeRequest } from '../../lib/proxy/native/request.ts'
import { parseModelName } from '../../lib/proxy/models/name.ts'
import { DEFAULT_SAFETY_SETTINGS } from '../../lib/proxy/safety-settings.ts'

t.test('native paths: models/{model}:{action}, URL-decoded, models/ prefix stripped', async t => {
  const table: Array<[string, unknown]> = [
    ['models', { kind: 'list' }],
    ['models/', { kind: 'list' }],
    ['models/gemini-2.5-pro', { kind: 'model', model: 'gemini-2.5-pro' }],
    ['models/gemini-2.5-pro:generateContent', { kind: 'model', model: 'gemini-2.5-pro', action: 'generateContent' }],
    ['models/gemini-2.5-pro%3AstreamGenerateContent', { kind: 'model', model: 'gemini-2.5-pro', action: 'streamGenerateContent' }],
    ['models/models%2Fgemini-2.5-flash:countTokens', { kind: 'model', model: 'gemini-2.5-flash', action: 'countTokens' }],
    ['models/lm-2.5-pro-search:generateContent', { kind: 'model', model: 'lm-2.5-pro-search', action: 'generateContent' }],
  ]
  for (const [path, expected] of table) t.same(parseNativePath(path), expected, path)
})

t.test('native paths the proxy does not serve itself are passed through; a path naming no model before its action or badly encoded is 404', async t => {
  for (const path of ['chat/completions', '', 'tunedModels/x:generateContent', 'models/x:embedContent', 'models/x:', 'models/a/b', 'cachedContents', 'files/abc']) {
    t.same(parseNativePath(path), { kind: 'other' }, path)
  }
  for (const path of ['models/:generateContent', 'models/%E0%A4%A']) {
    t.throws(() => parseNativePath(path), { code: 'NOT_FOUND', status: 404 }, path)
  }
})

const pro = parseModelName('gemini-2.5-pro')

t.test('the default safety settings are used only when the client sent none', async t => {
  t.same(prepareNativeRequest({ contents: [] }, pro, DEFAULT_SAFETY_SETTINGS).safetySettings, DEFAULT_SAFETY_SETTINGS)
  const mine = [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_LOW_AND_ABOVE' }]
  t.same(prepareNativeRequest({ contents: [], safetySettings: mine }, pro, DEFAULT_SAFETY_SETTINGS).safetySettings, mine)
})

// Item 17 of the hardening issue changed the rows marked *: native requests keep Google's defaults, so a plain
// model name adds nothing and no name adds includeThoughts: true.
t.test('thinking: variant suffixes set budgets, the client\'s own values win, never null, never empty', async t => {
  const table: Array<[string, Record<string, unknown>, unknown]> = [
    ['gemini-2.5-pro', {}, undefined], // *
    ['gemini-2.5-flash-nothinking', {}, { thinkingBudget: 0, includeThoughts: false }],
    ['gemini-2.5-pro-maxthinking', { generationConfig: { thinkingConfig: { includeThoughts: false } } }, { includeThoughts: false, thinkingBudget: 32768 }],
    ['gemini-2.5-pro', { generationConfig: { thinkingConfig: { thinkingBudget: 2048 } } }, { thinkingBudget: 2048 }], // *
    ['gemini-2.5-pro-nothinking', { generationConfig: { thinkingConfig: { thinkingBudget: 4096 } } }, { thinkingBudget: 4096 }], // *
    ['gemini-3-pro-preview', { generationConfig: { thinkingConfig: { thinkingBudget: 100 } } }, { thinkingBudget: 100 }], // *
    ['gemini-3-pro-preview-maxthinking', {}, { thinkingLevel: 'high' }], // *
    ['gemini-2.5-pro', { generationConfig: { thinkingConfig: { thinkingBudget: null } } }, undefined], // *
    ['gemini-exp-1206-maxthinking', {}, undefined], // *
    ['gemini-2.5-pro-nothinking', {}, { thinkingBudget: 128 }],
    ['gemini-2.5-flash', { generationConfig: { thinkingConfig: { includeThoughts: true } } }, { includeThoughts: true }],
    ['gemini-2.5-pro', { thinkingConfig: { thinkingBudget: 512, includeThoughts: false } }, { thinkingBudget: 512, includeThoughts: false }],
    ['gemini-2.5-flash-image-preview', {}, undefined],
    ['gemini-2.5-flash-image-preview', { generationConfig: { thinkingConfig: { thinkingBudget: null } } }, undefined],
    ['gemini-1.5-pro', { generationConfig: { temperature: 0.1 } }, undefined],
  ]
  for (const [name, body, expected] of table) {
    const request = prepareNativeRequest({ contents: [], ...body }, parseModelName(name), DEFAULT_SAFETY_SETTINGS) as any
    t.same(request.generationConfig?.thinkingConfig, expected, `${name} ${JSON.stringify(body)}`)
    t.notOk('thinkingConfig' in request, 'no top-level thinkingConfig goes upstream')
  }
  const image = prepareNativeRequest({ contents: [] }, parseModelName('gemini-2.5-flash-image-preview'), DEFAULT_SAFETY_SETTINGS)
  t.notOk('generationConfig' in image, 'no empty generationConfig is created')
})

t.test('search variants append googleSearch once, and not beside function declarations', async t => {
  const search = parseModelName('gemini-2.5-pro-search')
  const table: Array<[unknown, unknown]> = [
    [undefined, [{ googleSearch: {} }]],
    [[{ codeExecution: {} }], [{ codeExecution: {} }, { googleSearch: {} }]],
    [[{ googleSearch: {} }], [{ googleSearch: {} }]],
    [[{ google_search: {} }], [{ google_search: {} }]],
    [[{ functionDeclarations: [{ name: 'f' }] }], [{ functionDeclarations: [{ name: 'f' }] }]],
  ]
  for (const [tools, expected] of table) {
    const body = tools === undefined ? { contents: [] } : { contents: [], tools }
    t.same(prepareNativeRequest(body, search, DEFAULT_SAFETY_SETTINGS).tools, expected, JSON.stringify(tools))
  }
  t.notOk('tools' in prepareNativeRequest({ contents: [] }, pro, DEFAULT_SAFETY_SETTINGS))
})

t.test('the client body is not modified and other fields pass through', async t => {
  const body = { contents: [{ role: 'user', parts: [{ text: 'x' }] }], generationConfig: { temperature: 0.3 }, cachedContent: 'c1', systemInstruction: { parts: [{ text: 's' }] } }
  const copy = structuredClone(body)
  const request = prepareNativeRequest(body, pro, DEFAULT_SAFETY_SETTINGS) as any
  t.same(body, copy)
  t.equal(request.cachedContent, 'c1')
  t.same(request.systemInstruction, body.systemInstruction)
  t.equal(request.generationConfig.temperature, 0.3)
})

t.test('a body that is not a JSON object is a 400', async t => {
  for (const body of [[], 'text', 5, null]) {
    t.throws(() => prepareNativeRequest(body, pro, DEFAULT_SAFETY_SETTINGS), { code: 'INVALID_INPUT', status: 400 }, JSON.stringify(body))
  }
  t.same(prepareNativeRequest(undefined, pro, DEFAULT_SAFETY_SETTINGS).safetySettings, DEFAULT_SAFETY_SETTINGS, 'an empty body is {}')
})

t.test('countTokens takes both body forms and strips thoughts', async t => {
  const contents = [{ role: 'model', parts: [{ text: 'thinking', thought: true, thoughtSignature: 'sig' }, { text: 'answer', thoughtSignature: 'sig' }, { thought: true }] }, { role: 'user', parts: [{ thought: true }] }]
  const expected = { contents: [{ role: 'model', parts: [{ text: 'thinking' }, { text: 'answer' }] }] }
  t.same(countTokensRequest({ contents }), expected)
  t.same(countTokensRequest({ generateContentRequest: { model: 'models/x', contents } }), expected)
  t.throws(() => countTokensRequest({}), { code: 'INVALID_INPUT', status: 400 })
})
