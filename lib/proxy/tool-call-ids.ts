// Tool-call ids that carry Gemini 3 thought signatures across turns.
// Gemini 3 requires the signature it attached to a functionCall to come back with that call in the
// next request; chat-completions clients only echo the tool-call id. So the signature travels inside
// the id (`call_<24 hex>_<signature as base64url>`), and is restored when the id comes back.
import { randomBytes } from 'node:crypto'

export { SKIP_THOUGHT_SIGNATURE } from './thought-signatures.ts'

const ID = /^call_([0-9a-f]{24})(?:_([A-Za-z0-9_-]+))?$/

export function newToolCallId (thoughtSignature?: string): string {
  const id = `call_${randomBytes(12).toString('hex')}`
  if (thoughtSignature === undefined || thoughtSignature === '') return id
  return `${id}_${Buffer.from(thoughtSignature, 'base64').toString('base64url')}`
}

/** The thought signature inside an id made by newToolCallId, if any. */
export function thoughtSignatureOf (toolCallId: string): string | undefined {
  const m = ID.exec(toolCallId)
  if (m === null || m[2] === undefined) return undefined
  return Buffer.from(m[2], 'base64url').toString('base64')
}
