// The one owner of which query parameters a pass-through request may send upstream (docs/model-proxy.md,
// "Pass-through", query): deny by default. Google's system parameters (`callback`, `fields`, `alt=proto`,
// `quotaUser`, `$.xgafv`, ... any of them `$`-prefixed too) reshape an answer past the gateway's checks (a JSONP or
// protobuf list cannot be filtered by owner, a field mask hides usageMetadata), so each route passes only the
// parameters its own method takes, and anything else is refused with a 400 naming the parameter.
import { fail } from '../../errors.ts'

/** Values of `alt` a route takes: JSON, the answer's default, everywhere; SSE on a stream; the bytes on a download. */
function altValues (path: string): string[] {
  if (/:stream[A-Za-z]*$/i.test(path)) return ['json', 'sse']
  if (/:download$/i.test(path)) return ['json', 'media']
  return ['json']
}

/** The parameters (besides `alt` and the client's own `key`) the route of `method path` takes. */
function routeParameters (method: string, path: string): string[] {
  // The upload protocol's own: how the upload is sent, and a resumable session's id.
  if (/^\/upload\//.test(path)) return ['uploadType', 'upload_id', 'upload_protocol']
  if (method === 'GET') return ['pageSize', 'pageToken']
  if (method === 'PATCH') return ['updateMask']
  if (method === 'DELETE') return ['force']
  return []
}

/**
 * The query to forward for `method path` (a checked pass-through path): the client's own `key` dropped, every
 * other parameter checked against the route's list; throws INVALID_INPUT (400) naming the first one refused.
 */
export function forwardedQuery (method: string, path: string, query: Record<string, string>): string {
  const allowed = routeParameters(method, path)
  const params = new URLSearchParams()
  for (const name in query) {
    if (name === 'key') continue
    const value = query[name]
    if (name === 'alt') {
      const values = altValues(path)
      if (!values.includes(value)) throw fail('INVALID_INPUT', `alt=${value} is not passed through on ${method} ${path}: it takes alt=${values.join(' or alt=')} only`)
    } else if (!allowed.includes(name)) {
      const takes = [...allowed, ...altValues(path).map(v => `alt=${v}`)].join(', ')
      throw fail('INVALID_INPUT', `The query parameter ${name} is not passed through on ${method} ${path}: it takes only ${takes} (docs/model-proxy.md, "Pass-through")`)
    }
    params.append(name, value)
  }
  const text = params.toString()
  return text === '' ? '' : `?${text}`
}
