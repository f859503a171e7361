// Native paths under /v1beta/: `models` (list), `models/{model}` (one entry) and
// `models/{model}:{action}`. The path is URL-decoded first (some clients send `%3A` for the colon
// and `%2F` inside the model), and a `models/` prefix inside the model name is removed.
import { fail } from '../../errors.ts'

const NATIVE_ACTIONS = ['generateContent', 'streamGenerateContent', 'countTokens'] as const
export type NativeAction = typeof NATIVE_ACTIONS[number]

export type NativeTarget =
  | { kind: 'list' }
  | { kind: 'model', model: string, action?: NativeAction }

/** `rest` is the raw path after `/v1beta/`. Throws NOT_FOUND for paths the proxy does not serve. */
export function parseNativePath (rest: string): NativeTarget {
  let decoded: string
  try {
    decoded = decodeURIComponent(rest)
  } catch {
    throw fail('NOT_FOUND', 'The path is not validly URL-encoded')
  }
  const segments = decoded.split('/').filter(s => s !== '')
  const at = segments.indexOf('models')
  if (at < 0) throw fail('NOT_FOUND', `No model in the path /v1beta/${rest}; use /v1beta/models/{model}:generateContent`)
  const tail = segments.slice(at + 1)
  while (tail[0] === 'models') tail.shift()
  if (tail.length === 0) return { kind: 'list' }
  if (tail.length > 1) throw fail('NOT_FOUND', `Unknown path /v1beta/${rest}`)
  const colon = tail[0].indexOf(':')
  if (colon < 0) return { kind: 'model', model: tail[0] }
  const model = tail[0].slice(0, colon)
  const action = tail[0].slice(colon + 1)
  if (model === '') throw fail('NOT_FOUND', 'The path names no model')
  if (!(NATIVE_ACTIONS as readonly string[]).includes(action)) {
    throw fail('NOT_FOUND', `Unknown action "${action}"; this proxy serves ${NATIVE_ACTIONS.join(', ')}`)
  }
  return { kind: 'model', model, action: action as NativeAction }
}
