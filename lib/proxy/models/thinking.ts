// Thinking configuration per model family (docs/model-proxy.md, "Thinking").
// Gemini 3 takes a thinkingLevel instead of a budget (the two cannot be combined). Where the table
// has no value for a family the budget is left out: a null budget is never sent.
import type { ModelName, ModelFamily, ThinkingVariant } from './name.ts'

export interface ThinkingConfig {
  thinkingBudget?: number
  thinkingLevel?: 'low' | 'high'
  includeThoughts?: boolean
}

/** OpenAI `reasoning_effort` values we accept; `max` and `xhigh` mean the largest budget. */
export const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const
export type ReasoningEffort = typeof REASONING_EFFORTS[number]

type Setting = number | 'low' | 'high' | 'dynamic' | undefined

const VARIANT_SETTINGS: Record<'gemini-2.5-flash' | 'gemini-2.5-pro' | 'gemini-3' | 'other', Record<ThinkingVariant, Setting>> = {
  'gemini-2.5-flash': { default: -1, none: 0, max: 24576 },
  // Pro models cannot turn thinking off; 128 is their smallest budget.
  'gemini-2.5-pro': { default: -1, none: 128, max: 32768 },
  'gemini-3': { default: 'dynamic', none: 'low', max: 'high' },
  other: { default: -1, none: undefined, max: undefined },
}

const EFFORT_SETTINGS: Record<'gemini-2.5-flash' | 'gemini-2.5-pro' | 'gemini-3' | 'other', Record<'off' | 'low' | 'medium' | 'high', Setting>> = {
  'gemini-2.5-flash': { off: 0, low: 1000, medium: -1, high: 24576 },
  'gemini-2.5-pro': { off: 128, low: 1000, medium: -1, high: 32768 },
  'gemini-3': { off: 'low', low: 'low', medium: 'dynamic', high: 'high' },
  other: { off: undefined, low: 1000, medium: -1, high: undefined },
}

function thinks (family: ModelFamily): family is 'gemini-2.5-flash' | 'gemini-2.5-pro' | 'gemini-3' | 'other' {
  return family !== 'image' && family !== 'legacy'
}

function includeThoughts (model: ModelName): boolean {
  const pro = model.family === 'gemini-2.5-pro' || (model.family === 'gemini-3' && model.base.includes('-pro'))
  return pro || model.thinking !== 'none'
}

function apply (setting: Setting, include: boolean): ThinkingConfig {
  const config: ThinkingConfig = {}
  if (typeof setting === 'number') config.thinkingBudget = setting
  else if (setting === 'low' || setting === 'high') config.thinkingLevel = setting
  config.includeThoughts = include
  return config
}

/** The thinkingConfig a model name implies by itself; undefined for models that do not think. */
export function variantThinking (model: ModelName): ThinkingConfig | undefined {
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
  if (!thinks(model.family)) return undefined
  if (effort === undefined || effort === null || model.thinking !== 'default') return variantThinking(model)
  const level = effort === 'none' || effort === 'minimal' ? 'off' : effort === 'xhigh' || effort === 'max' ? 'high' : effort
  return apply(EFFORT_SETTINGS[model.family][level], includeThoughts(model))
}
