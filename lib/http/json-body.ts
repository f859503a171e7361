import type { HandlerRequest } from './contract.ts'
import { fail } from '../errors.ts'

/** Deepest nesting of arrays and objects a JSON body may have (JSON_TOO_DEEP beyond). */
export const MAX_JSON_DEPTH = 64
/**
 * Most values (array elements and object members) a JSON body may hold (JSON_TOO_MANY_VALUES beyond).
 * JSON.parse takes up to about 0.5 µs per value (empty objects): 25 MiB of `{},` took it 4 s.
 */
export const MAX_JSON_VALUES = 100_000
/**
 * Most different object keys a JSON body may hold (JSON_TOO_MANY_VALUES beyond). Each new key costs V8 a new
 * property name, and often a new object shape: 3 µs or more, against 0.03 µs for a number. 99 000 different keys
 * held the event loop for 150 ms; repeated keys (`role`, `text`) cost little and are not limited beyond the values.
 */
export const MAX_JSON_KEYS = 10_000

/** What the JSON texts of one request may still hold; shared when a request carries JSON inside strings. */
export interface JsonAllowance {
  values: number
  /** The different keys seen so far. */
  keys: Set<string>
}

// The next character that matters to nesting or to counting values. After a long run of others (whitespace,
// numbers), the regex engine finds it many times faster than a loop over every character would.
const STRUCTURE = /["[\]{},]/g
// A quote after an even number of backslashes (none included): the end of a JSON string. It starts with the quote,
// so the regex engine jumps from quote to quote, and looks back only over the backslashes before each.
const STRING_END = /(?<=(?:^|[^\\])(?:\\\\)*)"/g

/** The index of the quote closing the string that opens at `open`, or -1 when it is not closed. */
function stringEnd (text: string, open: number): number {
  const quote = text.indexOf('"', open + 1)
  if (quote < 0 || text.charCodeAt(quote - 1) !== 0x5c) return quote
  // Escapes: the regex engine looks for the end in one pass (one indexOf per escaped quote could be millions).
  STRING_END.lastIndex = open + 1
  const m = STRING_END.exec(text)
  return m === null ? -1 : m.index
}

/**
 * Refuses JSON text nested deeper than MAX_JSON_DEPTH or holding more values or different keys than the allowance,
 * before JSON.parse builds any of it. One pass, no recursion, linear in the text; it stops at the first excess, so
 * the places it stops at (a few per value) are bounded by the limit whatever the size. Malformed text is left
 * to JSON.parse to report.
 */
function checkJsonText (text: string, allowance: JsonAllowance): void {
  let depth = 0
  let run = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      const end = stringEnd(text, i)
      if (end < 0) return
      // A key when a colon follows (after any whitespace, which matters to nothing here).
      let next = end + 1
      for (let w = text.charCodeAt(next); w === 0x20 || w === 0x0a || w === 0x0d || w === 0x09; w = text.charCodeAt(++next));
      if (text.charCodeAt(next) === 0x3a) addKey(text.slice(i + 1, end), allowance)
      i = next - 1
      run = 0
    } else if (c === 0x5b || c === 0x7b || c === 0x2c) {
      if (c !== 0x2c && ++depth > MAX_JSON_DEPTH) throw tooDeep()
      if (--allowance.values < 0) throw tooManyValues()
      run = 0
    } else if (c === 0x5d || c === 0x7d) {
      depth--
      run = 0
    } else if (++run === 32) {
      STRUCTURE.lastIndex = i
      const next = STRUCTURE.exec(text)
      if (next === null) return
      i = next.index - 1
      run = 0
    }
  }
}

/** The same limits for a value a host has parsed already (Express's express.json()), walked without recursion. */
function checkJsonValue (value: unknown, allowance: JsonAllowance): void {
  const stack: Array<[unknown, number]> = [[value, 0]]
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number]
    if (node === null || typeof node !== 'object') continue
    if (depth + 1 > MAX_JSON_DEPTH) throw tooDeep()
    const children = Array.isArray(node) ? node : Object.values(node)
    allowance.values -= Math.max(1, children.length)
    if (allowance.values < 0) throw tooManyValues()
    if (!Array.isArray(node)) for (const key of Object.keys(node)) addKey(key, allowance)
    for (const child of children) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1])
    }
  }
}

function tooDeep (): Error {
  return fail('JSON_TOO_DEEP', `The JSON is nested more than ${MAX_JSON_DEPTH} levels deep`)
}

function tooManyValues (): Error {
  return fail('JSON_TOO_MANY_VALUES', `The JSON holds more than ${MAX_JSON_VALUES} values`)
}

function addKey (key: string, allowance: JsonAllowance): void {
  allowance.keys.add(key)
  if (allowance.keys.size > MAX_JSON_KEYS) throw fail('JSON_TOO_MANY_VALUES', `The JSON holds more than ${MAX_JSON_KEYS} different object keys`)
}

/** A fresh allowance: MAX_JSON_VALUES values, MAX_JSON_KEYS different keys. */
export function jsonAllowance (): JsonAllowance {
  return { values: MAX_JSON_VALUES, keys: new Set() }
}

/**
 * JSON text → value, within MAX_JSON_DEPTH and the allowance (which it spends). Throws INVALID_JSON,
 * JSON_TOO_DEEP or JSON_TOO_MANY_VALUES. For JSON clients send inside strings too (tool results).
 */
export function parseJson (text: string, allowance: JsonAllowance = jsonAllowance()): unknown {
  checkJsonText(text, allowance)
  try {
    return JSON.parse(text)
  } catch {
    throw fail('INVALID_JSON')
  }
}

/**
 * The request body as a JSON value. Accepts raw bytes or a string (parsed here, so every host gives
 * the same errors) or a value a host has already parsed. An empty body is undefined.
 * With `requireJsonType`, a body sent with a non-JSON content type is refused (415).
 * Either way the body may nest at most MAX_JSON_DEPTH deep and hold at most MAX_JSON_VALUES values (400).
 */
export function readJsonBody (req: HandlerRequest, requireJsonType = false): unknown {
  const { body } = req
  if (body === undefined || body === null) return undefined
  const isRaw = typeof body === 'string' || body instanceof Uint8Array
  if (!isRaw) {
    checkJsonValue(body, jsonAllowance())
    return body
  }
  const text = typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')
  if (text.trim() === '') return undefined
  if (requireJsonType) {
    const type = req.headers['content-type']
    if (type !== undefined && !/^application\/([\w.+-]*\+)?json\b/i.test(type.trim())) throw fail('UNSUPPORTED_MEDIA_TYPE')
  }
  return parseJson(text)
}
