// OpenAI message content → Gemini parts (docs/chat-completions.md, "Content parts").
// Text keeps the reference's Markdown round trip: `![alt](data:image/...;base64,...)` inside text
// (what this proxy itself emits for generated images) becomes inlineData again. Parts that cannot be
// used are a 400 naming the part, never silently dropped.
import { isBase64, parseDataUrl } from './openai-data-url.ts'
import { canonicalImageType, imageMismatch } from './openai-image-bytes.ts'
import type { ContentPart } from './chat-request-schema.ts'
import { invalidParam, withParam } from './chat-error-body.ts'
import { isGatehouseError } from '../errors.ts'
import type { FetchedImage, ImageAllowance } from './image-fetch.ts'

export type GeminiPart = Record<string, unknown>

export interface ContentContext {
  /** Fetches http(s) image URLs; without it such parts are a 400. */
  fetchImage?: (url: string, signal?: AbortSignal, allowance?: ImageAllowance) => Promise<FetchedImage>
  /** Shared by the image fetches of one request (see toGeminiRequest's maxImageBytes). */
  imageAllowance?: ImageAllowance
  signal?: AbortSignal
}

const MARKDOWN_IMAGE = /!\[[^\]\n]*\]\((data:image\/[^)\s]+)\)/g

/** Text with embedded Markdown data-URL images → text and inlineData parts, in order. */
export function textToParts (text: string): GeminiPart[] {
  if (!text.includes('](data:image/')) return [{ text }]
  const parts: GeminiPart[] = []
  let last = 0
  for (const m of text.matchAll(MARKDOWN_IMAGE)) {
    let image: GeminiPart
    try {
      const data = parseDataUrl(m[1])
      if (imageMismatch(data.mimeType, data.head) !== undefined) continue
      image = { inlineData: { mimeType: canonicalImageType(data.mimeType), data: data.base64 } }
    } catch {
      // Not a usable image: it stays text, as the client wrote it.
      continue
    }
    const before = text.slice(last, m.index)
    if (before.trim() !== '') parts.push({ text: before })
    parts.push(image)
    last = m.index + m[0].length
  }
  const rest = text.slice(last)
  if (rest.trim() !== '' || parts.length === 0) parts.push({ text: rest })
  return parts
}

function imageFromDataUrl (url: string, param: string): GeminiPart {
  let data
  try {
    data = parseDataUrl(url)
  } catch (err) {
    throw invalidParam(`Invalid image data URL: ${(err as Error).message}`, param)
  }
  const mismatch = imageMismatch(data.mimeType, data.head)
  if (mismatch !== undefined) throw invalidParam(`Invalid image: ${mismatch}`, param)
  return { inlineData: { mimeType: canonicalImageType(data.mimeType), data: data.base64 } }
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
  switch (part.type) {
    case 'text':
      return textToParts(part.text)
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
      if (/^data:/i.test(fileData)) {
        try {
          const data = parseDataUrl(fileData)
          return [{ inlineData: { mimeType: data.mimeType, data: data.base64 } }]
        } catch (err) {
          throw invalidParam(`Invalid file data URL: ${(err as Error).message}`, `${fileParam}.file_data`)
        }
      }
      const ext = filename?.split('.').pop()?.toLowerCase() ?? ''
      const mimeType = FILE_TYPES[ext]
      if (mimeType === undefined) throw invalidParam('file_data must be a data: URL with a media type (or name a .pdf/.txt/... filename)', `${fileParam}.file_data`)
      return [{ inlineData: { mimeType, data: base64Bytes(fileData, `${fileParam}.file_data`, 'file data') } }]
    }
  }
}

/**
 * Content of one message → parts. A string is one text (empty strings are kept as the reference
 * does); an array is converted part by part, fetching image URLs concurrently.
 */
export async function contentToParts (content: string | ContentPart[] | null | undefined, ctx: ContentContext, param: string): Promise<GeminiPart[]> {
  if (content === null || content === undefined) return []
  if (typeof content === 'string') return textToParts(content)
  const converted = await Promise.all(content.map((part, i) => partToGemini(part, ctx, `${param}[${i}]`)))
  return converted.flat()
}

/** Only the text of some content (system messages, tool results). */
export function contentText (content: string | ContentPart[] | null | undefined): string {
  if (content === null || content === undefined) return ''
  if (typeof content === 'string') return content
  return content.map(p => p.type === 'text' ? p.text : p.type === 'refusal' ? p.refusal : '').join('')
}
