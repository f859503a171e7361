// countTokens rejects parts that carry only `thought` (its schema wants one of text, inlineData,
// functionCall, ...), so thought parts are turned into text first, as gemini-cli's converter does.
import type { GeminiRequest } from './backend.ts'

type Part = Record<string, unknown>

function countablePart (part: unknown): unknown {
  if (part === null || typeof part !== 'object' || !('thought' in part)) return part
  const { thought, thoughtSignature, ...rest } = part as Part
  void thoughtSignature
  if (thought === undefined || thought === false || thought === null) return rest
  if ('functionCall' in rest || 'functionResponse' in rest || 'inlineData' in rest || 'fileData' in rest) return rest
  // `thought: true` marks a text part as reasoning; an older shape carried the text in `thought` itself.
  const thoughtText = typeof thought === 'string' ? `[Thought: ${thought}]` : ''
  const text = typeof rest.text === 'string' ? rest.text : ''
  return { ...rest, text: [text, thoughtText].filter(s => s !== '').join('\n') }
}

/** The request's contents, ready for countTokens. */
export function countableContents (contents: unknown): unknown[] {
  if (!Array.isArray(contents)) return []
  return contents.map(content => {
    if (content === null || typeof content !== 'object') return content
    const parts = (content as { parts?: unknown }).parts
    return Array.isArray(parts) ? { ...content, parts: parts.map(countablePart) } : content
  })
}

/** `{contents}` or `{generateContentRequest: {contents, ...}}`, as the countTokens route accepts. */
export function contentsToCount (request: GeminiRequest): unknown[] {
  const nested = request.generateContentRequest as { contents?: unknown } | undefined
  return countableContents(nested?.contents ?? request.contents)
}
