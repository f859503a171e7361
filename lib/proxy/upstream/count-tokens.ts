// The one countTokens clean-up, used by the native route (lib/proxy/native/request.ts) and by both backends.
// countTokens rejects parts that carry only `thought` (its schema wants one of text, inlineData,
// functionCall, ...) and thought signatures, so thought parts are turned into text first, as gemini-cli's
// converter does, signatures are dropped, and parts (and contents) left empty are left out.
import type { GeminiContent } from '../gemini/hub.ts'

type Part = Record<string, unknown>

function countablePart (part: unknown): unknown[] {
  if (part === null || typeof part !== 'object') return [part]
  const { thought, thoughtSignature, ...rest } = part as Part
  void thoughtSignature
  if (thought === undefined || thought === false || thought === null) return Object.keys(rest).length > 0 ? [rest] : []
  if ('functionCall' in rest || 'functionResponse' in rest || 'inlineData' in rest || 'fileData' in rest) return [rest]
  // `thought: true` marks a text part as reasoning; an older shape carried the text in `thought` itself.
  const thoughtText = typeof thought === 'string' ? `[Thought: ${thought}]` : ''
  const text = [typeof rest.text === 'string' ? rest.text : '', thoughtText].filter(s => s !== '').join('\n')
  return text === '' ? [] : [{ ...rest, text }]
}

/** The request's contents, ready for countTokens (as the client sent them otherwise: the upstream judges them). */
export function countableContents (contents: unknown): GeminiContent[] {
  if (!Array.isArray(contents)) return []
  return contents.flatMap(content => {
    if (content === null || typeof content !== 'object') return [content]
    const parts = (content as { parts?: unknown }).parts
    if (!Array.isArray(parts)) return [content]
    const countable = parts.flatMap(countablePart)
    return countable.length > 0 ? [{ ...content, parts: countable }] : []
  }) as GeminiContent[]
}

/** The contents a countTokens body names: `{generateContentRequest: {contents, ...}}` or `{contents}`. */
export function requestedContents (request: Record<string, unknown>): unknown {
  const nested = request.generateContentRequest as { contents?: unknown } | undefined
  return nested?.contents ?? request.contents
}

/** `{contents}` or `{generateContentRequest: {contents, ...}}`, as the countTokens route accepts. */
export function contentsToCount (request: Record<string, unknown>): GeminiContent[] {
  return countableContents(requestedContents(request))
}
