// Search grounding and function tools, one rule for both surfaces: the upstream rejects googleSearch together
// with functionDeclarations on 2.x models, so on every model and both routes the function tools win. googleSearch
// (asked for by a -search model name, or on the chat route by a `web_search` tool) is added only to a request
// that declares no function tools; otherwise it is left out.

/** What becomes of a search the request asked for: added, left out for its function tools, or none was asked for. */
export type SearchOutcome = 'add' | 'dropped' | 'none'

export function searchOutcome (wantsSearch: boolean, declaresFunctionTools: boolean): SearchOutcome {
  if (!wantsSearch) return 'none'
  return declaresFunctionTools ? 'dropped' : 'add'
}

/** Whether Gemini `tools` declare any function (`functionDeclarations`, or `function_declarations` as sent). */
export function declaresFunctions (tools: readonly unknown[]): boolean {
  return tools.some(t => t !== null && typeof t === 'object' && !Array.isArray(t) &&
    (nonEmptyArray((t as Record<string, unknown>).functionDeclarations) || nonEmptyArray((t as Record<string, unknown>).function_declarations)))
}

function nonEmptyArray (value: unknown): boolean {
  return Array.isArray(value) && value.length > 0
}
