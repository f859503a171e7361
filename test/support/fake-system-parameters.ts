// Google's system parameters as its API front end applies them to a JSON answer (cloud.google.com/apis/docs/
// system-parameters), for the Gemini API fakes (fake-upstream.ts, fake-pass-through.ts), so a test sees what
// forwarding them would leak:
//   fields / $fields      a field mask: `a,b(c,d),e/f` keeps only those fields (arrays item by item)
//   alt / $alt = proto    the answer as protobuf (application/x-protobuf): here each top-level field as a
//                         length-delimited record of its JSON text, bytes no JSON reader parses
//   callback / $callback  JSONP: `// API callback\nname(<json>);` as text/javascript
// alt=json (the default), sse and media are the routes' own business.

export interface Shaped { contentType: string, body: Buffer }

function param (query: Record<string, string>, name: string): string | undefined {
  return query[name] ?? query[`$${name}`]
}

/** The top-level comma-separated items of a mask, parentheses kept together. */
function items (mask: string): string[] {
  const out: string[] = []
  let depth = 0
  let start = 0
  for (let i = 0; i < mask.length; i++) {
    if (mask[i] === '(') depth++
    else if (mask[i] === ')') depth--
    else if (mask[i] === ',' && depth === 0) { out.push(mask.slice(start, i)); start = i + 1 }
  }
  out.push(mask.slice(start))
  return out.map(s => s.trim()).filter(s => s !== '')
}

/** `value` cut to the field mask `mask`, as Google's `fields` does. */
export function applyFieldMask (value: unknown, mask: string): unknown {
  if (Array.isArray(value)) return value.map(v => applyFieldMask(v, mask))
  if (value === null || typeof value !== 'object') return value
  const source = value as Record<string, unknown>
  const kept: Record<string, unknown> = {}
  for (const item of items(mask)) {
    const open = item.indexOf('(')
    const [head, rest] = open >= 0 && item.endsWith(')')
      ? [item.slice(0, open), item.slice(open + 1, -1)]
      : item.includes('/') ? [item.slice(0, item.indexOf('/')), item.slice(item.indexOf('/') + 1)] : [item, undefined]
    if (!(head in source)) continue
    const inner = rest === undefined ? source[head] : applyFieldMask(source[head], rest)
    const had = kept[head]
    kept[head] = had !== null && typeof had === 'object' && inner !== null && typeof inner === 'object' && !Array.isArray(inner) ? { ...had, ...inner } : inner
  }
  return kept
}

function protobuf (value: unknown): Buffer {
  const records: Buffer[] = []
  const fields = value !== null && typeof value === 'object' ? Object.values(value) : [value]
  fields.forEach((field, i) => {
    const text = Buffer.from(JSON.stringify(field))
    // Field number i+1, wire type 2 (length-delimited), the length as a varint.
    const length: number[] = []
    let n = text.length
    do { length.push((n & 0x7f) | (n > 0x7f ? 0x80 : 0)); n >>>= 7 } while (n > 0)
    records.push(Buffer.from([((i + 1) << 3) | 2, ...length]), text)
  })
  return Buffer.concat(records)
}

/** The answer `json` as Google shapes it for `query`'s system parameters; undefined when none of them is set. */
export function shapeAnswer (query: Record<string, string>, json: unknown, ok: boolean): Shaped | undefined {
  const fields = param(query, 'fields')
  const alt = param(query, 'alt')
  const callback = param(query, 'callback')
  if (fields === undefined && alt !== 'proto' && callback === undefined) return undefined
  const value = fields !== undefined && ok ? applyFieldMask(json, fields) : json
  if (alt === 'proto') return { contentType: 'application/x-protobuf', body: protobuf(value) }
  const text = JSON.stringify(value)
  if (callback !== undefined) return { contentType: 'text/javascript; charset=UTF-8', body: Buffer.from(`// API callback\n${callback}(${text});`) }
  return { contentType: 'application/json; charset=UTF-8', body: Buffer.from(text) }
}
