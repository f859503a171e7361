// Which model a forwarded path calls (docs/model-proxy.md, "Limits and usage"): `models/{model}` or
// `tunedModels/{model}`, with an optional `:{action}`, the collection and the action matched case-insensitively
// so that no spelling escapes the policy and the meter (`Models/…`, `:GenerateContent`).

export interface ModelTarget {
  /** `models` (resolved through the catalogue) or `tunedModels` (a project's own model, outside it). */
  collection: 'models' | 'tunedModels'
  /** The model as named, decoded. */
  model: string
  /** The action as sent, or undefined for a path on the model itself (details, its operations). */
  action?: string
}

/** Actions that produce no output: reserved nothing for it. Lower-cased. */
const NO_OUTPUT = new Set(['counttokens', 'embedcontent', 'batchembedcontents', 'asyncbatchembedcontent', 'counttexttokens', 'countmessagetokens', 'embedtext', 'batchembedtext'])
/** Actions that spend no tokens: a request, charged nothing when the upstream reports none. Lower-cased. */
const FREE = new Set(['counttokens', 'counttexttokens', 'countmessagetokens'])

/** The model target of a checked path (lib/proxy/native/pass-through.ts forwardedPath), or undefined when it names none. */
export function modelTargetOf (path: string): ModelTarget | undefined {
  const segments = path.split('/')
  for (let i = 0; i < segments.length - 1; i++) {
    const name = segments[i].toLowerCase()
    if (name !== 'models' && name !== 'tunedmodels') continue
    const named = decodeURIComponent(segments[i + 1])
    if (named === '') return undefined
    const collection = name === 'models' ? 'models' : 'tunedModels'
    const colon = named.indexOf(':')
    // An action belongs to the model's own segment only: `models/x/operations/y` is a path on the model, not a call.
    if (colon < 0 || i + 2 < segments.length) return { collection, model: colon < 0 ? named : named.slice(0, colon) }
    return { collection, model: named.slice(0, colon), action: named.slice(colon + 1) }
  }
  return undefined
}

/** Whether an action produces no output (counting, embedding), so reserves none. */
export const producesNoOutput = (action: string): boolean => NO_OUTPUT.has(action.toLowerCase())

/** Whether an action spends no tokens (counting), so costs nothing when the upstream reports no usage. */
export const spendsNoTokens = (action: string): boolean => FREE.has(action.toLowerCase())
