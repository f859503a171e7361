// OpenAI `tools` / `tool_choice` → Gemini `tools` / `toolConfig` (docs/chat-completions.md, "Tools").
// Parameters go upstream as `parametersJsonSchema`, which takes full JSON Schema, so client schemas
// need no reduction to the OpenAPI subset.

export interface OpenAITool {
  type: string
  function?: { name: string, description?: string, parameters?: Record<string, unknown>, strict?: boolean | null }
}

export type OpenAIToolChoice = 'none' | 'auto' | 'required' | { type: 'function', function: { name: string } }

export interface FunctionDeclaration {
  name: string
  description?: string
  parametersJsonSchema?: Record<string, unknown>
}

export interface ToolMapping {
  functionDeclarations: FunctionDeclaration[]
  /** A `web_search` tool asked for Google Search grounding. */
  webSearch: boolean
  toolConfig?: { functionCallingConfig: { mode: 'AUTO' | 'NONE' | 'ANY', allowedFunctionNames?: string[] } }
}

/** Gemini's rule for function names. */
export const FUNCTION_NAME = /^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$/

export const WEB_SEARCH_TOOL_TYPES = ['web_search', 'web_search_preview', 'google_search']

export function mapTools (tools: readonly OpenAITool[] | undefined | null, toolChoice: OpenAIToolChoice | undefined | null): ToolMapping {
  const functionDeclarations: FunctionDeclaration[] = []
  let webSearch = false
  for (const tool of tools ?? []) {
    if (WEB_SEARCH_TOOL_TYPES.includes(tool.type)) {
      webSearch = true
      continue
    }
    const fn = tool.function
    if (fn === undefined) continue
    const declaration: FunctionDeclaration = { name: fn.name }
    if (fn.description !== undefined && fn.description !== null) declaration.description = fn.description
    if (fn.parameters !== undefined && fn.parameters !== null) declaration.parametersJsonSchema = fn.parameters
    functionDeclarations.push(declaration)
  }
  const mapping: ToolMapping = { functionDeclarations, webSearch }
  if (toolChoice !== undefined && toolChoice !== null && functionDeclarations.length > 0) {
    if (typeof toolChoice === 'string') {
      mapping.toolConfig = { functionCallingConfig: { mode: toolChoice === 'none' ? 'NONE' : toolChoice === 'required' ? 'ANY' : 'AUTO' } }
    } else {
      mapping.toolConfig = { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [toolChoice.function.name] } }
    }
  }
  return mapping
}
