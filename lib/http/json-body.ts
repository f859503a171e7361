import type { HandlerRequest } from './contract.ts'
import { fail } from '../errors.ts'

/**
 * The request body as a JSON value. Accepts raw bytes or a string (parsed here, so every host gives
 * the same errors) or a value a host has already parsed. An empty body is undefined.
 * With `requireJsonType`, a body sent with a non-JSON content type is refused (415).
 */
export function readJsonBody (req: HandlerRequest, requireJsonType = false): unknown {
  const { body } = req
  if (body === undefined || body === null) return undefined
  const isRaw = typeof body === 'string' || body instanceof Uint8Array
  if (!isRaw) return body
  const text = typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')
  if (text.trim() === '') return undefined
  if (requireJsonType) {
    const type = req.headers['content-type']
    if (type !== undefined && !/^application\/([\w.+-]*\+)?json\b/i.test(type.trim())) throw fail('UNSUPPORTED_MEDIA_TYPE')
  }
  try {
    return JSON.parse(text)
  } catch {
    throw fail('INVALID_JSON')
  }
}
