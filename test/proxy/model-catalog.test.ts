import t from 'tap'
import { createModelCatalog, DEFAULT_MODELS } from '../../lib/index.ts'
import { parseModelName } from '../../lib/proxy/models/name.ts'
import { chatThinking, variantThinking } from '../../lib/proxy/models/thinking.ts'

t.test('model names: every suffix is stripped, in any order, and read as a set', async t => {
  const table: Array<[string, string, boolean, string]> = [
    // requested, base, search, thinking
    ['gemini-2.5-pro', 'gemini-2.5-pro', false, 'default'],
    ['gemini-2.5-pro-search', 'gemini-2.5-pro', true, 'default'],
    ['gemini-2.5-pro-nothinking', 'gemini-2.5-pro', false, 'none'],
    ['gemini-2.5-flash-maxthinking', 'gemini-2.5-flash', false, 'max'],
    ['gemini-2.5-pro-search-maxthinking', 'gemini-2.5-pro', true, 'max'],
    ['gemini-2.5-pro-maxthinking-search', 'gemini-2.5-pro', true, 'max'],
    ['gemini-2.5-flash-search-nothinking', 'gemini-2.5-flash', true, 'none'],
    ['gemini-3-pro-preview-maxthinking', 'gemini-3-pro-preview', false, 'max'],
    ['models/gemini-2.5-flash-search', 'gemini-2.5-flash', true, 'default'],
    ['lm-2.5-pro', 'gemini-2.5-pro', false, 'default'],
    ['lm-2.5-flash-search-nothinking', 'gemini-2.5-flash', true, 'none'],
    ['gemini-2.5-pro-search-search', 'gemini-2.5-pro', true, 'default'],
  ]
  for (const [requested, base, search, thinking] of table) {
    const m = parseModelName(requested)
    t.same({ base: m.base, search: m.search, thinking: m.thinking }, { base, search, thinking }, requested)
  }
  t.equal(parseModelName('models/lm-2.5-pro').requested, 'lm-2.5-pro', 'the requested name keeps its spelling, without models/')
  t.equal(parseModelName('gemini-2.5-pro-nothinking-maxthinking').conflicting, true)
})

t.test('model families decide thinking: budgets per family, levels for Gemini 3, nothing for image and 1.x models', async t => {
  const table: Array<[string, unknown]> = [
    ['gemini-2.5-flash', { thinkingBudget: -1, includeThoughts: true }],
    ['gemini-2.5-flash-nothinking', { thinkingBudget: 0, includeThoughts: false }],
    ['gemini-2.5-flash-maxthinking', { thinkingBudget: 24576, includeThoughts: true }],
    ['gemini-2.5-flash-lite-nothinking', { thinkingBudget: 0, includeThoughts: false }],
    ['gemini-2.5-pro', { thinkingBudget: -1, includeThoughts: true }],
    ['gemini-2.5-pro-nothinking', { thinkingBudget: 128, includeThoughts: true }],
    ['gemini-2.5-pro-maxthinking', { thinkingBudget: 32768, includeThoughts: true }],
    ['gemini-3-pro-preview', { includeThoughts: true }],
    ['gemini-3-pro-preview-nothinking', { thinkingLevel: 'low', includeThoughts: true }],
    ['gemini-3-pro-preview-maxthinking', { thinkingLevel: 'high', includeThoughts: true }],
    ['gemini-3-flash-preview-nothinking', { thinkingLevel: 'low', includeThoughts: false }],
    ['gemini-exp-1206', { thinkingBudget: -1, includeThoughts: true }],
    ['gemini-exp-1206-nothinking', { includeThoughts: false }],
    ['gemini-exp-1206-maxthinking', { includeThoughts: true }],
    ['gemini-2.5-flash-image-preview', undefined],
    ['gemini-1.5-pro', undefined],
    ['gemini-1.0-pro-maxthinking', undefined],
  ]
  for (const [name, expected] of table) t.same(variantThinking(parseModelName(name)), expected, name)
  for (const [name] of table) {
    const config = variantThinking(parseModelName(name))
    t.notOk(config !== undefined && Object.values(config).includes(null), `${name}: never a null budget`)
  }
})

t.test('reasoning_effort maps to a budget or level, and a -nothinking/-maxthinking suffix wins over it', async t => {
  const table: Array<[string, string, unknown]> = [
    ['gemini-2.5-flash', 'none', { thinkingBudget: 0, includeThoughts: true }],
    ['gemini-2.5-flash', 'minimal', { thinkingBudget: 0, includeThoughts: true }],
    ['gemini-2.5-flash', 'low', { thinkingBudget: 1000, includeThoughts: true }],
    ['gemini-2.5-flash', 'medium', { thinkingBudget: -1, includeThoughts: true }],
    ['gemini-2.5-flash', 'high', { thinkingBudget: 24576, includeThoughts: true }],
    ['gemini-2.5-pro', 'none', { thinkingBudget: 128, includeThoughts: true }],
    ['gemini-2.5-pro', 'max', { thinkingBudget: 32768, includeThoughts: true }],
    ['gemini-3-pro-preview', 'low', { thinkingLevel: 'low', includeThoughts: true }],
    ['gemini-3-pro-preview', 'medium', { includeThoughts: true }],
    ['gemini-3-pro-preview', 'high', { thinkingLevel: 'high', includeThoughts: true }],
    ['gemini-exp-1206', 'high', { includeThoughts: true }],
    ['gemini-exp-1206', 'low', { thinkingBudget: 1000, includeThoughts: true }],
    ['gemini-2.5-flash-nothinking', 'high', { thinkingBudget: 0, includeThoughts: false }],
    ['gemini-2.5-pro-maxthinking', 'low', { thinkingBudget: 32768, includeThoughts: true }],
    ['gemini-2.5-flash-image-preview', 'high', undefined],
  ]
  for (const [name, effort, expected] of table) {
    t.same(chatThinking(parseModelName(name), effort as never), expected, `${name} + ${effort}`)
  }
})

t.test('the default catalog lists every originally specified model, the current ones and their variants', async t => {
  const catalog = createModelCatalog()
  for (const id of ['gemini-2.5-pro', 'gemini-2.5-flash', 'gemini-1.5-pro', 'gemini-1.5-flash', 'gemini-1.0-pro', 'gemini-2.5-flash-lite',
    'gemini-3-pro-preview', 'gemini-3-flash-preview', 'gemini-2.5-flash-image-preview']) {
    t.ok(catalog.ids.includes(id), id)
  }
  for (const id of ['gemini-2.5-pro-search', 'gemini-2.5-pro-nothinking', 'gemini-2.5-flash-maxthinking',
    'gemini-2.5-pro-search-maxthinking', 'gemini-3-pro-preview-search', 'gemini-1.5-pro-search']) {
    t.ok(catalog.ids.includes(id), id)
  }
  t.notOk(catalog.ids.some(id => id.startsWith('gemini-2.5-flash-image-preview-')), 'the image model has no variants')
  t.notOk(catalog.ids.includes('gemini-1.5-pro-nothinking'), 'models that do not think get no thinking variants')
  t.same([...catalog.ids], [...catalog.ids].sort(), 'sorted')
  for (const id of ['gemini-3.8-flash', 'gemini-3.5-flash-lite', 'gemini-3.1-pro-preview', 'gemini-embedding-2', 'gemini-2.5-flash-image']) {
    t.ok(DEFAULT_MODELS.includes(id), `today's ${id}`)
  }
})

t.test('the catalog can be configured, and the lm- alias finds entries', async t => {
  const catalog = createModelCatalog(['gemini-2.5-flash', 'lm-2.5-pro'])
  t.same(catalog.ids.filter(id => parseModelName(id).base === id), ['gemini-2.5-flash', 'gemini-2.5-pro'])
  t.equal(catalog.get('lm-2.5-pro')?.name, 'models/gemini-2.5-pro')
  t.equal(catalog.get('models/gemini-2.5-pro-search')?.displayName, 'Gemini 2.5 Pro with Google Search')
  t.equal(catalog.get('gemini-3-pro-preview'), undefined)
})

t.test('native and OpenAI list shapes', async t => {
  const catalog = createModelCatalog()
  const native = catalog.nativeList().models.find(m => m.name === 'models/gemini-2.5-pro')
  t.match(native, {
    name: 'models/gemini-2.5-pro',
    version: '001',
    displayName: 'Gemini 2.5 Pro',
    inputTokenLimit: 1048576,
    outputTokenLimit: 65535,
    supportedGenerationMethods: ['generateContent', 'streamGenerateContent', 'countTokens'],
    temperature: 1,
    maxTemperature: 2,
    topP: 0.95,
    topK: 64,
  })
  const list = catalog.openaiList()
  t.equal(list.object, 'list')
  t.match(list.data.find(m => m.id === 'gemini-2.5-flash'), { id: 'gemini-2.5-flash', object: 'model', owned_by: 'google', root: 'gemini-2.5-flash', parent: null })
  t.equal(list.data.length, catalog.ids.length)
})

t.test('requests may name gemini- models outside the catalog; anything else is model_not_found', async t => {
  const catalog = createModelCatalog()
  t.equal(catalog.resolve('gemini-2.0-flash-exp').base, 'gemini-2.0-flash-exp', 'the upstream decides')
  t.equal(catalog.resolve('lm-2.5-pro-search').base, 'gemini-2.5-pro')
  for (const name of ['gpt-4o', 'claude-3', 'gemini-', '', 'gemini-2.5-pro-nothinking-maxthinking']) {
    t.throws(() => catalog.resolve(name), { code: 'MODEL_NOT_FOUND', status: 404 }, name)
  }
  t.equal(catalog.resolve(' models/gemini-2.5-pro ').requested, 'gemini-2.5-pro', 'surrounding spaces and models/ are not part of the name')
  t.throws(() => createModelCatalog(['gemini-2.5-pro', 'gemini-x\n']), { name: 'TypeError', message: /models: "gemini-x\\n" is not a model id/ })
})

t.test('standings: each listed base model with its family and stage on the backend at the clock given; a shut-down one names its replacement', async t => {
  const before = createModelCatalog(undefined, undefined, 'gemini-api', () => new Date('2026-03-08T23:59:59Z')).standings()
  const after = createModelCatalog(undefined, undefined, 'gemini-api', () => new Date('2026-03-09T00:00:00Z')).standings()
  const pro3 = (list: ReturnType<typeof before.slice>): unknown => list.find(s => s.id === 'gemini-3-pro-preview')
  t.same(pro3(before), { id: 'gemini-3-pro-preview', family: 'gemini-3', stage: 'ga', shutdownOn: '2026-03-09', replacement: 'gemini-3.1-pro-preview' }, 'still served, with the day it goes')
  t.same(pro3(after), { id: 'gemini-3-pro-preview', family: 'gemini-3', stage: 'shutdown', shutdownOn: '2026-03-09', replacement: 'gemini-3.1-pro-preview' }, 'from that day: shut down, served by its replacement')
  t.match(after.find(s => s.id === 'gemini-3.1-pro-preview'), { family: 'gemini-3', stage: 'preview' }, 'a stage the file leaves out: preview when the id says so')
  t.match(after.find(s => s.id === 'gemini-2.5-pro'), { stage: 'ga' })
  t.same(after.map(s => s.id), [...after.map(s => s.id)].sort(), 'sorted by id')
  t.ok(after.every(s => !/-(search|nothinking|maxthinking)$/.test(s.id)), 'base models only')
  t.ok(createModelCatalog().standings().every(s => s.stage !== 'shutdown'), 'no backend named: nothing is shut down')
})
