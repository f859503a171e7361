// The model list in the shape Codex CLI reads from `GET /v1/models?client_version=…` (docs/responses.md, "Codex's
// model list"): `{"models": [ModelInfo]}`, each entry with the fields Codex's ModelInfo requires. Built from the
// OpenAI list the caller may see, so the model policy applies as it does there.
import type { ModelName } from './name.ts'
import { variantThinking } from './thinking.ts'

/** One catalogue entry as Codex's ModelInfo. */
function codexEntry (entry: Record<string, unknown>, priority: number, resolve: (id: string) => ModelName): Record<string, unknown> {
  const slug = String(entry.id)
  const model = resolve(slug)
  const thinks = model.thinking !== 'none' && variantThinking(model) !== undefined
  return {
    slug,
    display_name: slug,
    description: null,
    ...(thinks ? { default_reasoning_level: 'medium' } : {}),
    supported_reasoning_levels: thinks
      ? [
          { effort: 'low', description: 'Less thinking, faster answers' },
          { effort: 'medium', description: 'The model\'s own thinking budget' },
          { effort: 'high', description: 'The most thinking the model allows' },
        ]
      : [],
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
