// Native paths under /v1beta/: `models` (list), `models/{model}` (one entry) and
// `models/{model}:{action}` for the actions served here; any other path is passed through. The path is URL-decoded first (some clients send `%3A` for the colon
// and `%2F` inside the model), and a `models/` prefix inside the model name is removed.
import { fail } from '../../errors.ts'

const NATIVE_ACTIONS = ['generateContent', 'streamGenerateContent', 'countTokens'] as const
export type NativeAction = typeof NATIVE_ACTIONS[number]

export type NativeTarget =
  | { kind: 'list' }
  /** Any other path: passed through (lib/proxy/native/pass-through.ts). */
  | { kind: 'other' }
  | { kind: 'model', model: string, action?: NativeAction }

/** `rest` is the raw path after `/v1beta/`. Throws NOT_FOUND for a path that is not validly URL-encoded or names no model before its action. */
export function parseNativePath (rest: string): NativeTarget {
  let decoded: string
  try {
    decoded = decodeURIComponent(rest)
  } catch {
    throw fail('NOT_FOUND', 'The path is not validly URL-encoded')
  }
  const segments = decoded.split('/').filter(s => s !== '')
  const at = segments.indexOf('models')
  if (at < 0) return { kind: 'other' }
  const tail = segments.slice(at + 1)
  while (tail[0] === 'models') tail.shift()
  if (tail.length === 0) return { kind: 'list' }
  if (tail.length > 1) return { kind: 'other' }
  const colon = tail[0].indexOf(':')
  if (colon < 0) return { kind: 'model', model: tail[0] }
  const model = tail[0].slice(0, colon)
  const action = tail[0].slice(colon + 1)
  if (model === '') throw fail('NOT_FOUND', 'The path names no model')
  if (!(NATIVE_ACTIONS as readonly string[]).includes(action)) return { kind: 'other' }
  return { kind: 'model', model, action: action as NativeAction }
}
