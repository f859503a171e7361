// Which of Google's built-in tools a key may send (docs/model-proxy.md, "Built-in tools per access level"): its
// level's `tools` in GEMINI_LIMITS (lib/metering/limits-rule.ts, allowedTools). Read from what goes upstream: the
// Gemini request every translating surface built (the `-search` variant's googleSearch included), an interaction's
// `tools`, or a key's JSON body on a pass-through path; the operator password is never restricted.
import { fail } from '../../errors.ts'
import { allowedTools, BUILT_IN_TOOLS } from '../../metering/limits-rule.ts'
import type { BuiltInTool, LimitsByLevel } from '../../metering/limits-rule.ts'
import type { ProxyCaller } from './caller.ts'
import { FREE_FORM } from './resource-paths.ts'

/** A spelling without case or underscores: `google_search`, `googleSearch` and `GOOGLE_SEARCH` are one name. */
const folded = (name: string): string => name.replace(/_/g, '').toLowerCase()

/**
 * The built-in tool each Tool field (generateContent) or tool type (Interactions) stands for, by its folded name.
 * The older search grounding (`googleSearchRetrieval`) and Vertex's web grounding (`enterpriseWebSearch`) are
 * Google Search as far as a level is concerned: each grounds on the web and bills per grounded request.
 */
const TOOL_NAMES: ReadonlyMap<string, BuiltInTool> = new Map([
  ['googlesearch', 'googleSearch'],
  ['googlesearchretrieval', 'googleSearch'],
  ['enterprisewebsearch', 'googleSearch'],
  ['urlcontext', 'urlContext'],
  ['googlemaps', 'googleMaps'],
  ['codeexecution', 'codeExecution'],
  ['filesearch', 'fileSearch'],
])

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

function add (found: Set<BuiltInTool>, name: string): void {
  const tool = TOOL_NAMES.get(folded(name))
  if (tool !== undefined) found.add(tool)
}

/** The built-in tools a generateContent `tools` list asks for: the fields of each Tool, in either spelling. */
export function geminiToolsUsed (tools: unknown): BuiltInTool[] {
  const found = new Set<BuiltInTool>()
  if (Array.isArray(tools)) for (const tool of tools) if (isObject(tool)) for (const key of Object.keys(tool)) add(found, key)
  return [...found]
}

/** The built-in tools an Interactions `tools` list asks for: each tool's `type` (`google_search`, `url_context`, ...). */
export function interactionToolsUsed (tools: unknown): BuiltInTool[] {
  const found = new Set<BuiltInTool>()
  if (Array.isArray(tools)) for (const tool of tools) if (isObject(tool) && typeof tool.type === 'string') add(found, tool.type)
  return [...found]
}

/**
 * The built-in tools any `tools` list inside a JSON body asks for (a batch's inlined requests, a cache's tools, an
 * embedding's nothing), in either shape; a function call's `args` and the like are data and name none.
 */
export function toolsInBody (body: unknown): BuiltInTool[] {
  const found = new Set<BuiltInTool>()
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) walk(item)
      return
    }
    if (!isObject(value)) return
    for (const [key, inner] of Object.entries(value)) {
      const field = folded(key)
      if (FREE_FORM.has(field)) continue
      if (field === 'tools') for (const tool of [...geminiToolsUsed(inner), ...interactionToolsUsed(inner)]) found.add(tool)
      walk(inner)
    }
  }
  walk(body)
  return [...found]
}

/**
 * The one check: TOOL_NOT_ALLOWED (403) naming the first of `used` the caller's level may not send; `searchName`:
 * the model was named with `-search`, which adds googleSearch, so the message says so.
 */
export function checkTools (byLevel: LimitsByLevel, caller: ProxyCaller, used: readonly BuiltInTool[], searchName = false): void {
  if (caller.kind !== 'key' || used.length === 0) return
  const allowed = allowedTools(byLevel, caller.accessLevel)
  const refused = used.find(tool => !allowed.includes(tool))
  if (refused === undefined) return
  const why = searchName && refused === 'googleSearch' ? ' (a -search model name adds it: use the name without -search)' : ''
  throw fail('TOOL_NOT_ALLOWED', `Keys of access level ${caller.accessLevel} may not use the built-in tool ${refused}${why}; ask the operator to allow "${refused}" in this level's tools`)
}

/**
 * A batch whose requests are in an uploaded file asks for tools the gateway never reads (it forwards upload bytes
 * unparsed): only a level that may send every built-in tool may start one; others send the requests inlined.
 */
export function checkToolsUnread (byLevel: LimitsByLevel, caller: ProxyCaller): void {
  if (caller.kind !== 'key') return
  const allowed = allowedTools(byLevel, caller.accessLevel)
  const refused = BUILT_IN_TOOLS.find(tool => !allowed.includes(tool))
  if (refused === undefined) return
  throw fail('TOOL_NOT_ALLOWED', `Keys of access level ${caller.accessLevel} may not use the built-in tool ${refused}, and the gateway does not read a batch's input file to see whether its requests do; send the requests inlined (each is checked), or ask the operator to allow every built-in tool in this level's tools`)
}

/** The check bound to the proxy's level table (ProxyContext.tools). */
export interface ToolPolicy {
  /** Throws TOOL_NOT_ALLOWED when `caller` is a key whose level may not send one of `used` (checkTools). */
  check (caller: ProxyCaller, used: readonly BuiltInTool[], searchName?: boolean): void
}

export function createToolPolicy (byLevel: LimitsByLevel): ToolPolicy {
  return { check: (caller, used, searchName) => { checkTools(byLevel, caller, used, searchName) } }
}
