// Thinking configuration per model (docs/model-proxy.md, "Thinking"). A model in the model file gets what its
// entry accepts (lib/proxy/models/data.ts): a budget within its range, or one of its levels, never both. Other
// models go by family: Gemini 3 takes a thinkingLevel instead of a budget (the two cannot be combined). Where the
// table has no value for a family the budget is left out: a null budget is never sent.
import type { ModelName, ThinkingVariant } from './name.ts'
import type { ModelFamily } from './data.ts'
import type { ThinkingControl, ThinkingLevel } from './data.ts'

export interface ThinkingConfig {
  thinkingBudget?: number
  thinkingLevel?: ThinkingLevel
  includeThoughts?: boolean
}

/** OpenAI `reasoning_effort` values we accept; `max` and `xhigh` mean the largest budget. */
export const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const
export type ReasoningEffort = typeof REASONING_EFFORTS[number]

type Setting = number | ThinkingLevel | 'dynamic' | undefined
type Thinking = 'gemini-2.5-flash' | 'gemini-2.5-pro' | 'gemini-3' | 'gemini-4' | 'other'

const VARIANT_SETTINGS: Record<Thinking, Record<ThinkingVariant, Setting>> = {
  'gemini-2.5-flash': { default: -1, none: 0, max: 24576 },
  // Pro models cannot turn thinking off; 128 is their smallest budget.
  'gemini-2.5-pro': { default: -1, none: 128, max: 32768 },
  'gemini-3': { default: 'dynamic', none: 'low', max: 'high' },
  // Gemini 4 takes levels only, LOW to HIGH on every model (docs/model-proxy.md, "Thinking").
  'gemini-4': { default: 'dynamic', none: 'low', max: 'high' },
  other: { default: -1, none: undefined, max: undefined },
}

const EFFORT_SETTINGS: Record<Thinking, Record<'off' | 'low' | 'medium' | 'high', Setting>> = {
  'gemini-2.5-flash': { off: 0, low: 1000, medium: -1, high: 24576 },
  'gemini-2.5-pro': { off: 128, low: 1000, medium: -1, high: 32768 },
  'gemini-3': { off: 'low', low: 'low', medium: 'dynamic', high: 'high' },
  'gemini-4': { off: 'low', low: 'low', medium: 'medium', high: 'high' },
  other: { off: undefined, low: 1000, medium: -1, high: undefined },
}

function thinks (family: ModelFamily): family is Thinking {
  return family !== 'image' && family !== 'legacy' && family !== 'embedding'
}

type Want = 'off' | 'minimal' | 'low' | 'medium' | 'high' | 'max'

/**
 * What a model of the file gets. Budgets: off is the budget that turns thinking off (else the smallest), low
 * 1000 within the range, medium dynamic (-1), high and max the largest. Levels: off and -nothinking `low` where
 * accepted (else the lowest level), minimal `minimal` where accepted (else as off), medium `medium` where accepted
 * (else the model's own default), high `high` where accepted (else the highest), max (`xhigh`, -maxthinking) the highest.
 */
function fromSpec (control: ThinkingControl, want: Want | 'default'): Setting {
  if (want === 'default') return 'budget' in control ? -1 : 'dynamic'
  if ('budget' in control) {
    const { min, max, off } = control.budget
    if (want === 'off' || want === 'minimal') return off ?? min
    if (want === 'low') return Math.min(Math.max(1000, min), max)
    if (want === 'medium') return -1
    return max
  }
  const { levels } = control
  const lowest = levels.includes('low') ? 'low' : levels[0]
  if (want === 'minimal') return levels.includes('minimal') ? 'minimal' : lowest
  if (want === 'off' || want === 'low') return lowest
  if (want === 'medium') return levels.includes('medium') ? 'medium' : 'dynamic'
  if (want === 'high' && levels.includes('high')) return 'high'
  return levels[levels.length - 1]
}

/**
 * A native client's thinkingConfig fitted to a model of the file that takes levels: a thinkingBudget is never sent
 * (0 becomes the lowest level when no level is set), and a level the model does not take becomes the nearest one it
 * does (MINIMAL the lowest, XHIGH the highest). Other configs are returned as they are.
 */
export function fitThinking (config: Record<string, unknown>, model: ModelName): Record<string, unknown> {
  const control = model.spec?.thinking
  if (control === undefined || control === null || !('levels' in control)) return config
  const fitted = { ...config }
  const budget = fitted.thinkingBudget
  delete fitted.thinkingBudget
  if (fitted.thinkingLevel === undefined && budget === 0) fitted.thinkingLevel = fromSpec(control, 'off')
  if (typeof fitted.thinkingLevel === 'string') {
    const asked = fitted.thinkingLevel.toLowerCase()
    const upper = fitted.thinkingLevel === fitted.thinkingLevel.toUpperCase()
    const level = (control.levels as string[]).includes(asked)
      ? asked
      : asked === 'minimal' ? fromSpec(control, 'minimal') : asked === 'xhigh' ? fromSpec(control, 'max') : undefined
    // The client's spelling (the SDKs send the enum's upper case) is kept.
    if (typeof level === 'string' && level !== 'dynamic') fitted.thinkingLevel = upper ? level.toUpperCase() : level
    else if (level === 'dynamic') delete fitted.thinkingLevel
  }
  return fitted
}

function includeThoughts (model: ModelName): boolean {
  const pro = model.family === 'gemini-2.5-pro' || (model.family === 'gemini-3' && model.base.includes('-pro'))
  return pro || model.thinking !== 'none'
}

function apply (setting: Setting, include: boolean): ThinkingConfig {
  const config: ThinkingConfig = {}
  if (typeof setting === 'number') config.thinkingBudget = setting
  else if (setting !== undefined && setting !== 'dynamic') config.thinkingLevel = setting
  config.includeThoughts = include
  return config
}

/** The thinkingConfig a model name implies by itself; undefined for models that do not think. */
export function variantThinking (model: ModelName): ThinkingConfig | undefined {
  if (model.spec !== undefined) {
    if (model.spec.thinking === null) return undefined
    return apply(fromSpec(model.spec.thinking, model.thinking === 'none' ? 'off' : model.thinking === 'max' ? 'max' : 'default'), includeThoughts(model))
  }
  if (!thinks(model.family)) return undefined
  return apply(VARIANT_SETTINGS[model.family][model.thinking], includeThoughts(model))
}

/**
 * What a model name adds to a native request's thinkingConfig: only what an explicit -nothinking/-maxthinking
 * suffix sets, and never `includeThoughts: true`. Native clients get Google's defaults otherwise, and thoughts
 * only when they ask for them: `@google/genai` and LangChain callers do not expect thought parts.
 */
export function nativeThinking (model: ModelName): ThinkingConfig | undefined {
  if (model.thinking === 'default') return undefined
  const config = variantThinking(model)
  if (config?.includeThoughts === true) delete config.includeThoughts
  return config !== undefined && Object.keys(config).length > 0 ? config : undefined
}

/**
 * The thinkingConfig for a chat request: a -nothinking/-maxthinking suffix wins over
 * `reasoning_effort`, which wins over the family default.
 */
export function chatThinking (model: ModelName, effort?: ReasoningEffort | null): ThinkingConfig | undefined {
  if (effort === undefined || effort === null || model.thinking !== 'default') return variantThinking(model)
  if (model.spec !== undefined) {
    if (model.spec.thinking === null) return undefined
    const want: Want = effort === 'none' ? 'off' : effort === 'xhigh' ? 'max' : effort
    return apply(fromSpec(model.spec.thinking, want), includeThoughts(model))
  }
  if (!thinks(model.family)) return undefined
  const level = effort === 'none' || effort === 'minimal' ? 'off' : effort === 'xhigh' || effort === 'max' ? 'high' : effort
  return apply(EFFORT_SETTINGS[model.family][level], includeThoughts(model))
}
