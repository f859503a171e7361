// data: URLs (RFC 2397): `data:<type>/<subtype>[;param=value]*[;base64],<data>`.
// The reference split on `;` and `,` and silently dropped anything with an extra parameter;
// here parameters are allowed, the media type is required, and the bytes must really be base64.

export interface DataUrl {
  /** Lower-cased `type/subtype`, parameters removed. */
  mimeType: string
  params: Record<string, string>
  bytes: Buffer
}

const MEDIA_TYPE = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/
const BASE64 = /^[A-Za-z0-9+/\-_]*={0,2}$/

/** Parses a data URL; throws an Error whose message says what is wrong. */
export function parseDataUrl (url: string): DataUrl {
  if (!/^data:/i.test(url)) throw new Error('not a data: URL')
  const comma = url.indexOf(',')
  if (comma < 0) throw new Error('the data URL has no comma before its data')
  const header = url.slice(5, comma).split(';').map(s => s.trim())
  const mimeType = (header.shift() ?? '').toLowerCase()
  if (mimeType === '') throw new Error('the data URL has no media type')
  if (!MEDIA_TYPE.test(mimeType)) throw new Error(`the data URL media type "${mimeType}" is not valid`)
  let base64 = false
  const params: Record<string, string> = {}
  header.forEach((p, i) => {
    if (p.toLowerCase() === 'base64' && i === header.length - 1) { base64 = true; return }
    const eq = p.indexOf('=')
    if (eq <= 0) throw new Error(`the data URL parameter "${p}" is not valid`)
    params[p.slice(0, eq).toLowerCase()] = p.slice(eq + 1)
  })
  const data = url.slice(comma + 1)
  let bytes: Buffer
  if (base64) {
    const compact = data.replace(/\s+/g, '')
    let text = compact
    try { text = decodeURIComponent(compact) } catch { /* keep as is: validated below */ }
    if (!BASE64.test(text) || text.replace(/=+$/, '').length % 4 === 1) throw new Error('the data URL is marked base64 but its data is not base64')
    bytes = Buffer.from(text, text.includes('-') || text.includes('_') ? 'base64url' : 'base64')
  } else {
    try {
      bytes = Buffer.from(decodeURIComponent(data), 'latin1')
    } catch {
      throw new Error('the data URL has malformed percent-encoding')
    }
  }
  return { mimeType, params, bytes }
}
