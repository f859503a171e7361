// Tool-call ids that carry Gemini 3 thought signatures across turns.
// Gemini 3 requires the signature it attached to a functionCall to come back with that call in the
// next request; chat-completions clients only echo the tool-call id. So the signature travels inside
// the id (`call_<24 hex>_<signature as base64url>`), and is restored when the id comes back.
import { randomBytes } from 'node:crypto'

/** Google's documented placeholder for a function call whose signature is unknown, the same on every backend (docs/upstream-protocol.md, "Thought signatures"). */
export const SKIP_THOUGHT_SIGNATURE = 'skip_thought_signature_validator'

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

interface Turn { role: string, parts: Array<Record<string, unknown>> }

/**
 * Marks the first unsigned functionCall of each model turn after the last real user prompt with Google's
 * placeholder, so models that validate signatures accept a loop whose signatures a client lost.
 */
export function addPlaceholderSignatures (contents: Turn[]): void {
  let start = 0
  for (let i = contents.length - 1; i >= 0; i--) {
    const c = contents[i]
    if (c.role === 'user' && c.parts.some(p => typeof p.text === 'string') && !c.parts.some(p => 'functionResponse' in p)) {
      start = i + 1
      break
    }
  }
  for (const c of contents.slice(start)) {
    if (c.role !== 'model') continue
    const call = c.parts.find(p => 'functionCall' in p)
    if (call !== undefined && call.thoughtSignature === undefined) call.thoughtSignature = SKIP_THOUGHT_SIGNATURE
  }
}
