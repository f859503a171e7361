// The model file's lifecycle and behaviour fields are checked once, at load (docs/model-proxy.md, "The model file").
import t from 'tap'
import { loadModelFile, parseModelFile } from '../../lib/proxy/models/data.ts'

const base = (id: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  id, family: 'gemini-3', aliases: [], thinking: { levels: ['low', 'high'] }, sampling: [], input: ['text'], output: ['text'],
  backends: ['gemini-api', 'vertex'], limits: { input: 10, output: 10 }, sources: [], ...extra,
})
const load = (...models: Array<Record<string, unknown>>): unknown => {
  try {
    return parseModelFile({ models }, 'test.json')
  } catch (err) {
    return (err as Error).message
  }
}

t.test('a shutdown names its date and a replacement the file serves on that backend, and chains of replacements end', async t => {
  t.match(load(base('gemini-a', { status: { 'gemini-api': { stage: 'shutdown', on: '2026-12-01' } } })), /models\[0\]\.status\.gemini-api must be/)
  t.match(load(base('gemini-a', { status: { 'gemini-api': { stage: 'shutdown', on: '1 Dec', replacement: 'gemini-b' } } }), base('gemini-b')), /YYYY-MM-DD/)
  t.match(load(base('gemini-a', { status: { 'gemini-api': { stage: 'shutdown', on: '2026-12-01', replacement: 'gemini-z' } } })), /replacement must be a model of this file served by gemini-api/)
  t.match(load(base('gemini-a', { status: { vertex: { stage: 'shutdown', on: '2026-12-01', replacement: 'gemini-b' } } }), base('gemini-b', { backends: ['gemini-api'] })), /served by vertex/)
  t.match(load(
    base('gemini-a', { status: { 'gemini-api': { stage: 'shutdown', on: '2026-12-01', replacement: 'gemini-b' } } }),
    base('gemini-b', { status: { 'gemini-api': { stage: 'shutdown', on: '2026-12-01', replacement: 'gemini-a' } } }),
  ), /a chain of replacements that ends/)
  t.match(load(base('gemini-a', { status: { 'code-assist-2': { stage: 'ga' } } })), /named for a backend/)
  t.ok(Array.isArray(load(base('gemini-a', { status: { 'gemini-api': { stage: 'shutdown', on: '2026-12-01', replacement: 'gemini-b', since: '2025-06-17' } } }), base('gemini-b'))))
})

t.test('levels run lowest first, xhigh included; per-call limits, candidates and locations are checked', async t => {
  t.ok(Array.isArray(load(base('gemini-a', { thinking: { levels: ['low', 'medium', 'high', 'xhigh'], default: 'high' } }))))
  t.match(load(base('gemini-a', { thinking: { levels: ['high', 'low'] } })), /lowest first/)
  t.match(load(base('gemini-a', { limits: { input: 10, output: 10, perCall: { stream: 5 } } })), /limits\.perCall must be/)
  t.match(load(base('gemini-a', { maxCandidates: 0 })), /maxCandidates must be a positive whole number/)
  t.match(load(base('gemini-a', { locations: { vertex: [] } })), /locations\.vertex must be a non-empty array/)
  t.match(load(base('gemini-a', { penalties: ['presence'] })), /penalties must be an array of "presencePenalty", "frequencyPenalty"/)
})

t.test('what Google does not confirm is marked by the paths of the fields, and every path must be a field of the entry', async t => {
  t.ok(Array.isArray(load(base('gemini-a', { penalties: [], unconfirmed: ['penalties', 'limits.input'] }))))
  t.match(load(base('gemini-a', { unconfirmed: ['penalties'] })), /unconfirmed must be paths of fields this entry has/)
  const shipped = loadModelFile()
  for (const id of ['gemini-4-argon', 'gemini-4-neon', 'gemini-2.5-flash']) {
    const spec = shipped.find(s => s.id === id)
    t.ok(spec !== undefined && spec.sources.some(u => /^https:\/\/(ai\.google\.dev|docs\.cloud\.google\.com|documentation\.s3ns\.fr)\//.test(u)), `${id} cites Google's pages`)
    t.ok(spec !== undefined && spec.unconfirmed.length > 0, `${id} marks what they did not confirm`)
  }
  const argon = shipped.find(s => s.id === 'gemini-4-argon')
  t.same(argon?.limits, { input: 1048576, output: 1048576, window: 1048576, perCall: { stream: 65536, nonStream: 32768 } })
  t.same(argon?.locations, { vertex: ['global', 'us', 'eu'] })
  t.equal(argon?.explicitCaching, false)
  t.same(shipped.find(s => s.id === 'gemini-4-hydrogen')?.thinking, { levels: ['low', 'medium', 'high', 'xhigh'], default: 'high' })
})
