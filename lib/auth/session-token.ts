// Where a request's session token may come from: the `token` header, `Authorization: Bearer`, and, for
// the seed's routes that named it there, the `token` query parameter. Query strings end up in access
// logs, proxies and browser history, so operators can turn that form off (queryTokens: false).
import type { HandlerRequest } from '../http/contract.ts'
import { fail } from '../errors.ts'

const BEARER = /^bearer(?:[ \t]+(.*))?$/i

/** The credentials of an `Authorization: Bearer` header; undefined for another scheme or none. */
function bearerToken (authorization: string | undefined): string | undefined {
  const match = authorization === undefined ? null : BEARER.exec(authorization.trim())
  return match === null ? undefined : match[1]?.trim() ?? ''
}

/**
 * The one session token the request carries, or undefined when it carries none (the session check then
 * answers 401). An empty value counts as absent. A token in the query is refused (401) when `queryTokens`
 * is off, even beside a header; forms that disagree are refused (401) rather than one of them picked.
 */
export function requestToken (req: HandlerRequest, queryToken: string | undefined, queryTokens: boolean): string | undefined {
  const forms: string[] = []
  if (queryToken !== undefined && queryToken !== '') {
    if (!queryTokens) throw fail('QUERY_TOKENS_DISABLED')
    forms.push(queryToken)
  }
  const header = req.headers.token
  if (header !== undefined && header !== '') forms.push(header)
  const bearer = bearerToken(req.headers.authorization)
  if (bearer !== undefined && bearer !== '') forms.push(bearer)
  if (forms.some(form => form !== forms[0])) throw fail('CONFLICTING_TOKENS')
  return forms[0]
}
