// Gemini 3 thought signatures, the rule every surface that replays function calls follows
// (docs/upstream-protocol.md, "Thought signatures"): a function call of the active loop sent back without its
// signature is rejected, so calls whose signature was lost get Google's documented placeholder.
import type { GeminiContent } from './gemini/hub.ts'

/** Google's documented placeholder for a function call whose signature is unknown, the same on every backend (docs/upstream-protocol.md, "Thought signatures"). */
export const SKIP_THOUGHT_SIGNATURE = 'skip_thought_signature_validator'


/** Marks the first unsigned functionCall of each model turn after the last real user prompt. */
export function addPlaceholderSignatures (contents: GeminiContent[]): void {
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
