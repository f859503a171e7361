// The model list in the shape Codex CLI reads from `GET /v1/models?client_version=…` (docs/responses.md, "Codex's
// model list"): `{"models": [ModelInfo]}`, each entry with the fields Codex's ModelInfo requires. Built from the
// OpenAI list the caller may see, so the model policy applies as it does there.
import type { ModelName } from './name.ts'
import { variantThinking } from './thinking.ts'

/** The context window Codex is told of for a model the file does not know (the file's default input limit). */
const DEFAULT_CONTEXT_WINDOW = 1048576

const EFFORT_TEXT: Record<string, string> = {
  minimal: 'As little thinking as the model allows',
  low: 'Less thinking, faster answers',
  medium: 'The model\'s own thinking budget',
  high: 'The most thinking the model allows',
}

/** The efforts Codex may send for a model: a model of levels offers those Codex knows, a budget model low to high. */
function reasoningLevels (model: ModelName): { levels: string[], default: string } {
  const control = model.spec?.thinking
  if (control !== undefined && control !== null && 'levels' in control) {
    const levels = control.levels.filter(l => l in EFFORT_TEXT)
    const given = control.default
    return { levels, default: given !== undefined && levels.includes(given) ? given : levels.includes('medium') ? 'medium' : levels[0] }
  }
  return { levels: ['low', 'medium', 'high'], default: 'medium' }
}

/** One catalogue entry as Codex's ModelInfo (codex-rs/protocol/src/openai_models.rs in openai/codex). */
function codexEntry (entry: Record<string, unknown>, priority: number, resolve: (id: string) => ModelName): Record<string, unknown> {
  const slug = String(entry.id)
  const model = resolve(slug)
  const thinks = model.thinking !== 'none' && variantThinking(model) !== undefined
  const reasoning = thinks ? reasoningLevels(model) : undefined
  const limits = model.spec?.limits
  return {
    slug,
    display_name: slug,
    description: null,
    ...(reasoning === undefined ? {} : { default_reasoning_level: reasoning.default }),
    supported_reasoning_levels: reasoning === undefined ? [] : reasoning.levels.map(effort => ({ effort, description: EFFORT_TEXT[effort] })),
    // Codex compacts at 90 % of the window it is told of; Gemini 4's is the 1,048,576 tokens all turns share.
    context_window: limits === undefined ? DEFAULT_CONTEXT_WINDOW : limits.window ?? limits.input,
    // Responses Lite is a request contract of OpenAI's own backend; the gateway serves the standard one.
    use_responses_lite: false,
    shell_type: 'shell_command',
    visibility: 'list',
    supported_in_api: true,
    priority,
    upgrade: null,
    base_instructions: '',
    supports_reasoning_summaries: thinks,
    support_verbosity: false,
    default_verbosity: null,
    apply_patch_tool_type: 'freeform',
    truncation_policy: { mode: 'tokens', limit: 10000 },
    supports_parallel_tool_calls: true,
    experimental_supported_tools: [],
    input_modalities: ['text', 'image'],
  }
}

/** `entries` (the OpenAI list's data) as Codex's list; `resolve` is the catalog's. */
export function codexModelList (entries: ReadonlyArray<Record<string, unknown>>, resolve: (id: string) => ModelName): { models: Array<Record<string, unknown>> } {
  return { models: entries.map((entry, i) => codexEntry(entry, i, resolve)) }
}
