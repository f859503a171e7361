// OpenAI message content → Gemini parts (docs/chat-completions.md, "Content parts").
// Text keeps the reference's Markdown round trip: `![alt](data:image/...;base64,...)` inside text
// (what this proxy itself emits for generated images) becomes inlineData again. Parts that cannot be
// used are a 400 naming the part, never silently dropped. Images go with the type their bytes show
// (images/bytes.ts).
import { HEAD_BYTES, isBase64, parseDataUrl } from '../images/data-url.ts'
import { imageTypeOf } from '../images/bytes.ts'
import { tooManyParts } from './request-schema.ts'
import type { ContentPart } from './request-schema.ts'
import { invalidParam, withParam } from './error-body.ts'
import { isGatehouseError } from '../../errors.ts'
import type { FetchedImage, ImageAllowance } from '../images/fetch.ts'
import type { GeminiPart } from '../gemini/hub.ts'

export type { GeminiPart }

export interface ContentContext {
  /** Fetches http(s) image URLs; without it such parts are a 400. */
  fetchImage?: (url: string, signal?: AbortSignal, allowance?: ImageAllowance) => Promise<FetchedImage>
  /** Shared by the image fetches of one request (see toGeminiRequest's maxImageBytes). */
  imageAllowance?: ImageAllowance
  /** Parts the request may still produce (Markdown images inside text count); TOO_MANY_PARTS beyond. */
  partAllowance?: PartAllowance
  signal?: AbortSignal
}

export interface PartAllowance {
  remaining: number
  /** The allowance it started with, for the error message. */
  readonly total: number
}

function take (ctx: ContentContext | undefined, parts: number): void {
  const allowance = ctx?.partAllowance
  if (allowance === undefined) return
  allowance.remaining -= parts
  if (allowance.remaining < 0) throw tooManyParts(allowance.total)
}

const IMAGE_LINK = '](data:image/'
const URL_END = /[)\s]/g

interface MarkdownImage { start: number, end: number, url: string }

/**
 * The Markdown images `![alt](data:image/...)` in text, in order: the matches the pattern
 * /!\[[^\]\n]*\]\((data:image\/[^)\s]+)\)/g would give, found in linear time (that regex backtracks
 * quadratically: 40 KB of `![` took it two seconds). Each `](data:image/` is a candidate; the end of its URL is
 * found once per stretch of text, and its alt text is looked for backwards only as far as the previous `]`.
 */
function markdownImages (text: string): MarkdownImage[] {
  const found: MarkdownImage[] = []
  let from = 0
  let urlEnd = -1
  for (let link = text.indexOf(IMAGE_LINK); link >= 0; link = text.indexOf(IMAGE_LINK, Math.max(link + 1, from))) {
    const dataStart = link + IMAGE_LINK.length
    if (urlEnd < dataStart) {
      URL_END.lastIndex = dataStart
      urlEnd = URL_END.exec(text)?.index ?? text.length
    }
    if (urlEnd === dataStart || urlEnd === text.length || text.charCodeAt(urlEnd) !== 0x29) continue
    // The earliest `![` whose alt text reaches this `]` without a `]` or a newline, after the previous image.
    let start = -1
    for (let i = link - 1; i > from; i--) {
      const c = text.charCodeAt(i)
      if (c === 0x5d || c === 0x0a) break
      if (c === 0x5b && text.charCodeAt(i - 1) === 0x21) start = i - 1
    }
    if (start < 0) continue
    found.push({ start, end: urlEnd + 1, url: text.slice(link + 2, urlEnd) })
    from = urlEnd + 1
  }
  return found
}

/** Text with embedded Markdown data-URL images → text and inlineData parts, in order. */
export function textToParts (text: string, ctx?: ContentContext): GeminiPart[] {
  const parts: GeminiPart[] = []
  const push = (part: GeminiPart): void => {
    take(ctx, 1)
    parts.push(part)
  }
  let last = 0
  for (const m of text.includes(IMAGE_LINK) ? markdownImages(text) : []) {
    let image: GeminiPart
    try {
      const data = parseDataUrl(m.url)
      const type = imageTypeOf(data.mimeType, data.head)
      // Not a usable image: it stays text, as the client wrote it.
      if (!('mimeType' in type)) continue
      image = { inlineData: { mimeType: type.mimeType, data: data.base64 } }
    } catch {
      continue
    }
    const before = text.slice(last, m.start)
    if (before.trim() !== '') push({ text: before })
    push(image)
    last = m.end
  }
  const rest = last === 0 ? text : text.slice(last)
  if (rest.trim() !== '' || parts.length === 0) push({ text: rest })
  return parts
}

/** An image part for bytes declared as `declared` (base64, its first bytes decoded in `head`), or a 400 naming `param`. */
function imagePart (declared: string, base64: string, head: Uint8Array, param: string): GeminiPart {
  const type = imageTypeOf(declared, head)
  if (!('mimeType' in type)) throw invalidParam(`Invalid image: ${type.error}`, param)
  return { inlineData: { mimeType: type.mimeType, data: base64 } }
}

function imageFromDataUrl (url: string, param: string): GeminiPart {
  let data
  try {
    data = parseDataUrl(url)
  } catch (err) {
    throw invalidParam(`Invalid image data URL: ${(err as Error).message}`, param)
  }
  return imagePart(data.mimeType, data.base64, data.head, param)
}

const AUDIO_TYPES: Record<string, string> = { wav: 'audio/wav', mp3: 'audio/mp3', mpeg: 'audio/mpeg', flac: 'audio/flac', ogg: 'audio/ogg', aac: 'audio/aac', aiff: 'audio/aiff', webm: 'audio/webm', pcm16: 'audio/pcm' }

const FILE_TYPES: Record<string, string> = { pdf: 'application/pdf', txt: 'text/plain', md: 'text/markdown', csv: 'text/csv', html: 'text/html', json: 'application/json', png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', webp: 'image/webp' }

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

function base64Bytes (data: string, param: string, what: string): string {
  // A copy only when there is whitespace to take out: audio and files can be megabytes.
  const compact = /\s/.test(data) ? data.replace(/\s+/g, '') : data
  if (compact === '' || !isBase64(compact, BASE64)) throw invalidParam(`The ${what} is not base64`, param)
  return compact
}

async function partToGemini (part: ContentPart, ctx: ContentContext, param: string): Promise<GeminiPart[]> {
  if (part.type !== 'text') take(ctx, 1)
  switch (part.type) {
    case 'text':
      return textToParts(part.text, ctx)
    case 'refusal':
      return part.refusal === '' ? [] : [{ text: part.refusal }]
    case 'image_url': {
      const url = typeof part.image_url === 'string' ? part.image_url : part.image_url.url
      const urlParam = `${param}.image_url`
      if (/^data:/i.test(url)) return [imageFromDataUrl(url, urlParam)]
      if (!/^https?:\/\//i.test(url)) throw invalidParam('Image URLs must be http(s) or data: URLs', urlParam)
      if (ctx.fetchImage === undefined) throw invalidParam('Image URLs are not fetched by this proxy; send the image as a data: URL', urlParam)
      try {
        const image = await ctx.fetchImage(url, ctx.signal, ctx.imageAllowance)
        return [{ inlineData: { mimeType: image.mimeType, data: image.bytes.toString('base64') } }]
      } catch (err) {
        if (isGatehouseError(err)) throw withParam(err, urlParam)
        throw err
      }
    }
    case 'input_audio': {
      const format = part.input_audio.format.toLowerCase()
      const mimeType = AUDIO_TYPES[format]
      if (mimeType === undefined) throw invalidParam(`Unsupported audio format "${part.input_audio.format}"; use one of ${Object.keys(AUDIO_TYPES).join(', ')}`, `${param}.input_audio.format`)
      return [{ inlineData: { mimeType, data: base64Bytes(part.input_audio.data, `${param}.input_audio.data`, 'audio data') } }]
    }
    case 'file': {
      const { file_data: fileData, filename } = part.file
      const fileParam = `${param}.file`
      if (fileData === undefined) throw invalidParam('Uploaded file ids are not supported; send the file inline as file_data', `${fileParam}.file_id`)
      const dataParam = `${fileParam}.file_data`
      if (/^data:/i.test(fileData)) {
        let data
        try {
          data = parseDataUrl(fileData)
        } catch (err) {
          throw invalidParam(`Invalid file data URL: ${(err as Error).message}`, dataParam)
        }
        if (data.mimeType.startsWith('image/')) return [imagePart(data.mimeType, data.base64, data.head, dataParam)]
        return [{ inlineData: { mimeType: data.mimeType, data: data.base64 } }]
      }
      const ext = filename?.split('.').pop()?.toLowerCase() ?? ''
      const mimeType = FILE_TYPES[ext]
      if (mimeType === undefined) throw invalidParam('file_data must be a data: URL with a media type (or name a .pdf/.txt/... filename)', dataParam)
      const base64 = base64Bytes(fileData, dataParam, 'file data')
      if (mimeType.startsWith('image/')) return [imagePart(mimeType, base64, Buffer.from(base64.slice(0, (HEAD_BYTES / 3) * 4), 'base64'), dataParam)]
      return [{ inlineData: { mimeType, data: base64 } }]
    }
  }
}

/**
 * Content of one message → parts. A string is one text (empty strings are kept as the reference
 * does); an array is converted part by part, fetching image URLs concurrently.
 */
export async function contentToParts (content: string | ContentPart[] | null | undefined, ctx: ContentContext, param: string): Promise<GeminiPart[]> {
  if (content === null || content === undefined) return []
  if (typeof content === 'string') return textToParts(content, ctx)
  const converted = await Promise.all(content.map((part, i) => partToGemini(part, ctx, `${param}[${i}]`)))
  return converted.flat()
}

/** Only the text of some content (system messages, tool results). */
export function contentText (content: string | ContentPart[] | null | undefined): string {
  if (content === null || content === undefined) return ''
  if (typeof content === 'string') return content
  return content.map(p => p.type === 'text' ? p.text : p.type === 'refusal' ? p.refusal : '').join('')
}
