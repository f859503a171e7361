// data: URLs (RFC 2397): `data:<type>/<subtype>[;param=value]*[;base64],<data>`.
// The reference split on `;` and `,` and silently dropped anything with an extra parameter;
// here parameters are allowed, the media type is required, and the bytes must really be base64.

export interface DataUrl {
  /** Lower-cased `type/subtype`, parameters removed. */
  mimeType: string
  params: Record<string, string>
  /** The data as standard, padded base64: what Gemini's inlineData takes. */
  base64: string
  /** The first decoded bytes (up to HEAD_BYTES), enough to recognise a file by its magic number. */
  head: Buffer
}

/** Decoded bytes kept in `head`: every magic number checked is within the first 12. */
export const HEAD_BYTES = 48

const MEDIA_TYPE = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/
const BASE64 = /^[A-Za-z0-9+/\-_]*={0,2}$/
const WHITESPACE = /\s/

/**
 * Parses a data URL; throws an Error whose message says what is wrong. Base64 data is checked and passed on
 * as it came, not decoded and encoded again: an image can be 20 MB, and every copy of it counts in a gateway
 * that holds several at once. Only whitespace, percent-encoding and the URL-safe alphabet cost a copy.
 */
export function parseDataUrl (url: string): DataUrl {
  if (!/^data:/i.test(url)) throw new Error('not a data: URL')
  const comma = url.indexOf(',')
  if (comma < 0) throw new Error('the data URL has no comma before its data')
  const header = url.slice(5, comma).split(';').map(s => s.trim())
  const mimeType = (header.shift() ?? '').toLowerCase()
  if (mimeType === '') throw new Error('the data URL has no media type')
  if (!MEDIA_TYPE.test(mimeType)) throw new Error(`the data URL media type "${mimeType}" is not valid`)
  let markedBase64 = false
  const params: Record<string, string> = {}
  header.forEach((p, i) => {
    if (p.toLowerCase() === 'base64' && i === header.length - 1) { markedBase64 = true; return }
    const eq = p.indexOf('=')
    if (eq <= 0) throw new Error(`the data URL parameter "${p}" is not valid`)
    params[p.slice(0, eq).toLowerCase()] = p.slice(eq + 1)
  })
  const data = url.slice(comma + 1)
  if (!markedBase64) {
    let bytes: Buffer
    try {
      bytes = Buffer.from(decodeURIComponent(data), 'latin1')
    } catch {
      throw new Error('the data URL has malformed percent-encoding')
    }
    return { mimeType, params, base64: bytes.toString('base64'), head: bytes.subarray(0, HEAD_BYTES) }
  }
  let text = WHITESPACE.test(data) ? data.replace(/\s+/g, '') : data
  if (text.includes('%')) {
    try { text = decodeURIComponent(text) } catch { /* keep as is: refused below */ }
  }
  if (!isBase64(text, BASE64)) throw new Error('the data URL is marked base64 but its data is not base64')
  if (text.includes('-') || text.includes('_')) text = text.replaceAll('-', '+').replaceAll('_', '/')
  const unpadded = text.length % 4
  if (unpadded !== 0) text += '='.repeat(4 - unpadded)
  return { mimeType, params, base64: text, head: Buffer.from(text.slice(0, (HEAD_BYTES / 3) * 4), 'base64') }
}

/**
 * Whether `text` is base64 in `alphabet` (a pattern of the whole string) with a length base64 can have,
 * checked without copying it: inline images, audio and files can be megabytes.
 */
export function isBase64 (text: string, alphabet: RegExp): boolean {
  return alphabet.test(text) && (text.length - trailingPadding(text)) % 4 !== 1
}

/** How many `=` end `text` (counted, not sliced off: a slice would copy a large string). */
function trailingPadding (text: string): number {
  let n = 0
  while (n < text.length && text.charCodeAt(text.length - 1 - n) === 61) n++
  return n
}
