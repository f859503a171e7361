// Request bodies as JSON (lib/http/json-body.ts): bodies nested too deeply or holding too many values are
// refused before anything walks them (test/gateway/json-limits.test.ts has every surface's 400 on the gateway).
import t from 'tap'
import { parseJson, MAX_JSON_KEYS, MAX_JSON_VALUES } from '../../lib/http/json-body.ts'
import { readJsonBody } from '../../lib/index.ts'
import type { HandlerRequest } from '../../lib/index.ts'

const nested = (depth: number, inner = '1'): string => '['.repeat(depth) + inner + ']'.repeat(depth)
const request = (body: unknown): HandlerRequest => ({ method: 'POST', path: '/', params: {}, query: {}, headers: {}, body })

t.test('a body a host has parsed already gets the same limits, without recursion', async t => {
  let deep: unknown = 1
  for (let i = 0; i < 200_000; i++) deep = [deep]
  t.throws(() => readJsonBody(request({ a: deep })), { code: 'JSON_TOO_DEEP', status: 400 })
  t.throws(() => readJsonBody(request({ a: Array.from({ length: MAX_JSON_VALUES + 1 }, () => 0) })), { code: 'JSON_TOO_MANY_VALUES', status: 400 })
  const cyclic: Record<string, unknown> = {}
  cyclic.self = cyclic
  t.throws(() => readJsonBody(request(cyclic)), { code: 'JSON_TOO_DEEP' }, 'even a cycle ends')
  const fine = { a: [{ b: [1, 2, 3] }], c: 'x' }
  t.equal(readJsonBody(request(fine)), fine)
})

t.test('a JSON body may hold at most 100000 values: more is a 400 before JSON.parse builds them', async t => {
  t.throws(() => parseJson('[' + '{},'.repeat(MAX_JSON_VALUES) + '{}]'), { code: 'JSON_TOO_MANY_VALUES', status: 400 })
  t.throws(() => parseJson('{' + Array.from({ length: MAX_JSON_VALUES + 1 }, (_, i) => `"k${i}":0`).join(',') + '}'), { code: 'JSON_TOO_MANY_VALUES' })
  t.same((parseJson('[' + '0,'.repeat(MAX_JSON_VALUES / 2) + '0]') as unknown[]).length, MAX_JSON_VALUES / 2 + 1)
})

t.test('a JSON body may hold at most 10000 different object keys; repeated keys count only as values', async t => {
  const keys = (n: number, from = 0): string => Array.from({ length: n }, (_, i) => `"k${from + i}": 0`).join(',')
  t.equal(Object.keys(parseJson(`{${keys(MAX_JSON_KEYS)}}`) as object).length, MAX_JSON_KEYS)
  t.throws(() => parseJson(`{${keys(MAX_JSON_KEYS + 1)}}`), { code: 'JSON_TOO_MANY_VALUES', status: 400, message: /more than 10000 different object keys/ })
  t.throws(() => parseJson(`[${Array.from({ length: MAX_JSON_KEYS + 1 }, (_, i) => `{"k${i}" : 0}`).join(',')}]`), { code: 'JSON_TOO_MANY_VALUES' }, 'spread over many objects, and with spaces before the colon')
  t.equal((parseJson(`[${'{"role":"user","text":"x"},'.repeat(30_000)}{}]`) as unknown[]).length, 30_001, 'repeated keys are fine')
  t.equal((parseJson(`[${Array.from({ length: MAX_JSON_KEYS + 1 }, (_, i) => `"k${i}"`).join(',')}]`) as unknown[]).length, MAX_JSON_KEYS + 1, 'strings that are not keys are no keys')
  const many: Record<string, number> = {}
  for (let i = 0; i <= MAX_JSON_KEYS; i++) many[`k${i}`] = i
  t.throws(() => readJsonBody(request({ a: many })), { code: 'JSON_TOO_MANY_VALUES' }, 'a body a host parsed too')
})

t.test('the depth check reads strings as strings: brackets, quotes and escapes inside them do not count', async t => {
  const tricky = ['"' + '['.repeat(200) + '"', '"\\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["', '["\\\\", ' + nested(60) + ']', '"' + '\\"'.repeat(1000) + '"']
  for (const text of tricky) t.same(parseJson(text), JSON.parse(text), text.slice(0, 30))
  t.throws(() => parseJson('["\\\\", ' + nested(70) + ']'), { code: 'JSON_TOO_DEEP' }, 'an escaped backslash ends no string early')
  t.throws(() => parseJson('{"a": ' + nested(64) + '}'), { code: 'JSON_TOO_DEEP' })
  t.throws(() => parseJson('[1,'), { code: 'INVALID_JSON' })
  t.throws(() => parseJson('"never closed ['), { code: 'INVALID_JSON' })
  t.same(parseJson(' '.repeat(100) + '{"a" : [ 1 , 2 ] }' + ' '.repeat(100)), { a: [1, 2] })
})
