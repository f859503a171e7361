import t from 'tap'
import { mkdtemp, writeFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadModelFile, DEFAULT_MODELS_FILE } from '../../lib/proxy/models/data.ts'
import { chatThinking, variantThinking } from '../../lib/proxy/models/thinking.ts'
import { toGeminiRequest } from '../../lib/proxy/chat/request-to-gemini.ts'
import { prepareNativeRequest } from '../../lib/proxy/native/request.ts'
import { applyRequestRules } from '../../lib/proxy/call/request-rules.ts'
import { createProxy, createModelCatalog, ConfigurationError } from '../../lib/index.ts'

const catalog = createModelCatalog()
const EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const

t.test('the shipped model file names a source or a note for every model and lists today\'s models and the seed\'s', async t => {
  const specs = loadModelFile()
  for (const id of ['gemini-3.8-flash', 'gemini-3.5-flash-lite', 'gemini-3.1-pro-preview', 'gemini-embedding-2', 'gemini-2.5-flash-image',
    'gemini-2.5-pro', 'gemini-2.5-flash', 'gemini-1.5-pro', 'gemini-1.5-flash', 'gemini-1.0-pro']) {
    t.ok(specs.some(s => s.id === id), id)
  }
  for (const s of specs) t.ok(s.sources.every(u => u.startsWith('https://')), `${s.id}: sources are addresses`)
  t.ok(DEFAULT_MODELS_FILE.endsWith('models.json'))
})

t.test('a model that takes thinking levels never gets a budget, and only levels it accepts', async t => {
  for (const id of catalog.ids) {
    const model = catalog.resolve(id)
    const control = model.spec?.thinking
    if (control === undefined || control === null || !('levels' in control)) continue
    for (const effort of [undefined, ...EFFORTS]) {
      const config = chatThinking(model, effort)
      t.equal(config?.thinkingBudget, undefined, `${id} + ${String(effort)}: no budget`)
      if (config?.thinkingLevel !== undefined) t.ok(control.levels.includes(config.thinkingLevel), `${id} + ${String(effort)}: ${config.thinkingLevel} is accepted`)
    }
  }
  // Gemini 3.8 Flash takes LOW/MEDIUM/HIGH: reasoning_effort "minimal" and -nothinking become low, never minimal.
  t.same(chatThinking(catalog.resolve('gemini-3.8-flash'), 'minimal'), { thinkingLevel: 'low', includeThoughts: true })
  t.same(variantThinking(catalog.resolve('gemini-3.8-flash-nothinking')), { thinkingLevel: 'low', includeThoughts: false })
  t.same(chatThinking(catalog.resolve('gemini-3.8-flash'), 'medium'), { thinkingLevel: 'medium', includeThoughts: true })
  t.same(chatThinking(catalog.resolve('gemini-3.8-flash'), 'max'), { thinkingLevel: 'high', includeThoughts: true })
  t.same(chatThinking(catalog.resolve('gemini-3.5-flash-lite'), 'minimal'), { thinkingLevel: 'minimal', includeThoughts: true })
})

t.test('a model that takes a thinking budget never gets a level, and the budget stays within its range', async t => {
  for (const id of catalog.ids) {
    const model = catalog.resolve(id)
    const control = model.spec?.thinking
    if (control === undefined || control === null || !('budget' in control)) continue
    for (const effort of [undefined, ...EFFORTS]) {
      const config = chatThinking(model, effort)
      t.equal(config?.thinkingLevel, undefined, `${id} + ${String(effort)}: no level`)
      const b = config?.thinkingBudget
      t.ok(b === -1 || (b !== undefined && b >= control.budget.min && b <= control.budget.max), `${id} + ${String(effort)}: ${String(b)} in range`)
    }
  }
})

t.test('the seed\'s models think as before when resolved through the model file', async t => {
  t.same(variantThinking(catalog.resolve('gemini-2.5-pro-nothinking')), { thinkingBudget: 128, includeThoughts: true })
  t.same(variantThinking(catalog.resolve('gemini-2.5-flash-maxthinking')), { thinkingBudget: 24576, includeThoughts: true })
  t.same(chatThinking(catalog.resolve('gemini-2.5-flash'), 'low'), { thinkingBudget: 1000, includeThoughts: true })
  t.same(variantThinking(catalog.resolve('lm-3-flash-preview-nothinking')), { thinkingLevel: 'low', includeThoughts: false })
  t.equal(variantThinking(catalog.resolve('gemini-1.5-pro')), undefined)
  t.ok(catalog.ids.includes('gemini-1.0-pro-search'))
})

t.test('a retired id is served by its replacement', async t => {
  const model = catalog.resolve('gemini-3.7-flash-maxthinking')
  t.equal(model.base, 'gemini-3.8-flash', 'the upstream gets the replacement')
  t.equal(model.requested, 'gemini-3.7-flash-maxthinking', 'the client sees the name it asked for')
  t.same(variantThinking(model), { thinkingLevel: 'high', includeThoughts: true })
  t.notOk(catalog.ids.includes('gemini-3.7-flash'), 'retired ids are not listed')
})

t.test('the shipped model file follows Google\'s pages where they contradicted the earlier one', async t => {
  // Gemini 3.6 Flash takes MINIMAL (its guide's level table); the earlier file sent low for "minimal".
  t.same(chatThinking(catalog.resolve('gemini-3.6-flash'), 'minimal'), { thinkingLevel: 'minimal', includeThoughts: true })
  // The image previews were shut down for their GA ids on 2026-06-25; Gatehouse serves the old names with the new models.
  const june = createModelCatalog(undefined, undefined, 'gemini-api', () => new Date('2026-06-25T00:00:00Z'))
  t.equal(june.resolve('gemini-3-pro-image-preview').base, 'gemini-3-pro-image')
  t.equal(june.resolve('gemini-3.1-flash-image-preview').base, 'gemini-3.1-flash-image')
  // Google routes gemini-3.5-flash to 3.6 Flash only on the Gemini API; Vertex and Code Assist still serve it.
  t.equal(catalog.resolve('gemini-3.5-flash').base, 'gemini-3.5-flash')
  const specs = loadModelFile()
  t.same(specs.find(s => s.id === 'gemini-3.5-flash')?.backends, ['gemini-api', 'vertex', 'code-assist'])
  t.equal(specs.find(s => s.id === 'gemini-2.5-flash-lite')?.limits.output, 65536)
})

t.test('sampling parameters a model no longer accepts are dropped from what every surface translated (applyRequestRules)', async t => {
  const body = { model: 'gemini-3.8-flash', messages: [{ role: 'user' as const, content: 'x' }], temperature: 0.2, top_p: 0.5, top_k: 3, max_tokens: 10 }
  const flash = catalog.resolve('gemini-3.8-flash')
  const dropped = applyRequestRules(await toGeminiRequest(body as never, flash, { safetySettings: [] } as never), flash)
  t.same((dropped.generationConfig as Record<string, unknown>).temperature, undefined)
  t.same((dropped.generationConfig as Record<string, unknown>).topP, undefined)
  t.same((dropped.generationConfig as Record<string, unknown>).maxOutputTokens, 10, 'other fields stay')
  const pro = catalog.resolve('gemini-2.5-pro')
  const kept = applyRequestRules(await toGeminiRequest({ ...body, model: 'gemini-2.5-pro' } as never, pro, { safetySettings: [] } as never), pro)
  t.equal((kept.generationConfig as Record<string, unknown>).temperature, 0.2)
  const older = catalog.resolve('gemini-3.6-flash')
  const native = applyRequestRules(prepareNativeRequest({ contents: [], generationConfig: { temperature: 0.1, topK: 2, maxOutputTokens: 5 } }, older, []), older)
  t.same(native.generationConfig, { maxOutputTokens: 5 })
})

t.test('the embedding model is listed without chat variants', async t => {
  t.ok(catalog.ids.includes('gemini-embedding-2'))
  t.notOk(catalog.ids.some(id => id.startsWith('gemini-embedding-2-')))
  t.same(catalog.get('gemini-embedding-2')?.supportedGenerationMethods, ['embedContent', 'batchEmbedContents', 'countTokens'])
})

t.test('another model file replaces the shipped one; a bad one is refused naming the file and the field', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-models-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'models.json')
  const good = { models: [{ id: 'gemini-9-flash', family: 'gemini-3', aliases: ['gemini-8-flash'], thinking: { levels: ['low', 'high'] }, sampling: [], input: ['text'], output: ['text'], backends: ['vertex'], limits: { input: 1000, output: 100 }, sources: ['https://example.com/'] }] }
  await writeFile(file, JSON.stringify(good))
  const proxy = createProxy({ modelsFile: file })
  t.ok(proxy)
  const custom = createModelCatalog(undefined, loadModelFile(file))
  t.same(custom.ids, ['gemini-9-flash', 'gemini-9-flash-maxthinking', 'gemini-9-flash-nothinking', 'gemini-9-flash-search', 'gemini-9-flash-search-maxthinking', 'gemini-9-flash-search-nothinking'])
  t.equal(custom.resolve('gemini-8-flash').base, 'gemini-9-flash')

  const cases: Array<[string, unknown, RegExp]> = [
    ['not JSON', '{', /is not JSON/],
    ['both a level and a budget', { models: [{ ...good.models[0], thinking: { levels: ['low'], budget: { min: 0, max: 1 } } }] }, /models\[0\]\.thinking must be .*never both/],
    ['an unknown level', { models: [{ ...good.models[0], thinking: { levels: ['extreme'] } }] }, /models\[0\]\.thinking\.levels/],
    ['an unknown sampling field', { models: [{ ...good.models[0], sampling: ['seed'] }] }, /models\[0\]\.sampling/],
    ['an alias that is another id', { models: [good.models[0], { ...good.models[0], id: 'gemini-8-flash', aliases: [] }] }, /models\[1\]\.id must be unique/],
    ['a source that is not an address', { models: [{ ...good.models[0], sources: ['the docs'] }] }, /models\[0\]\.sources/],
    ['no backends', { models: [{ ...good.models[0], backends: undefined }] }, /models\[0\]\.backends must be a non-empty array of "gemini-api", "vertex", "code-assist"/],
    ['an empty backends list', { models: [{ ...good.models[0], backends: [] }] }, /models\[0\]\.backends must be a non-empty array/],
    ['an unknown backend', { models: [{ ...good.models[0], backends: ['openai'] }] }, /models\[0\]\.backends must be/],
  ]
  for (const [name, content, message] of cases) {
    await writeFile(file, typeof content === 'string' ? content : JSON.stringify(content))
    const err = await (async () => createProxy({ modelsFile: file }))().catch(e => e)
    t.ok(err instanceof ConfigurationError, `${name}: ConfigurationError`)
    t.equal(err.option, 'modelsFile', `${name}: names the option`)
    t.match(err.message, file, `${name}: names the file`)
    t.match(err.message, message, name)
  }
  const missing = await (async () => createProxy({ modelsFile: join(dir, 'nope.json') }))().catch(e => e)
  t.match(missing.message, /cannot be read \(ENOENT\)/)
})
