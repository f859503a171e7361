// The Anthropic Messages surface's one error mapper: `{"type":"error","error":{"type","message"}}` with the
// statuses the official @anthropic-ai/sdk turns into its error classes (docs/messages.md, "Errors"). A
// busy or unavailable upstream is Anthropic's 529 overloaded_error, which Claude Code retries.
import type { HandlerResponse } from '../../http/contract.ts'
import { foreignError, isGatehouseError } from '../../errors.ts'
import { CORS_HEADERS, WWW_AUTHENTICATE } from '../access/client-auth.ts'

export type AnthropicErrorType = 'invalid_request_error' | 'authentication_error' | 'permission_error' | 'not_found_error' |
'request_too_large' | 'rate_limit_error' | 'api_error' | 'overloaded_error' | 'timeout_error'

/** Anthropic's status for "overloaded". */
export const OVERLOADED = 529

export interface AnthropicErrorBody {
  status: number
  headers: Record<string, string>
  body: { type: 'error', error: { type: AnthropicErrorType, message: string } }
}

function typeFor (status: number): AnthropicErrorType {
  if (status === 401) return 'authentication_error'
  if (status === 403) return 'permission_error'
  if (status === 404) return 'not_found_error'
  if (status === 408 || status === 504) return 'timeout_error'
  if (status === 413) return 'request_too_large'
  if (status === 429) return 'rate_limit_error'
  if (status === OVERLOADED) return 'overloaded_error'
  if (status >= 500) return 'api_error'
  return 'invalid_request_error'
}

export function messagesErrorBody (err: unknown): AnthropicErrorBody {
  const headers: Record<string, string> = { ...CORS_HEADERS }
  let status: number
  let message: string
  if (isGatehouseError(err)) {
    status = err.status
    message = err.message
    if (status === 503) status = OVERLOADED
    if (err.code === 'PROXY_UNAUTHENTICATED') headers['www-authenticate'] = WWW_AUTHENTICATE
    if (err.retryAfter !== undefined) headers['retry-after'] = String(Math.max(0, Math.ceil(err.retryAfter)))
    if (err.param !== undefined && err.param !== null && !message.includes(err.param)) message = `${err.param}: ${message}`
  } else {
    ({ status, message } = foreignError(err))
  }
  return { status, headers, body: { type: 'error', error: { type: typeFor(status), message } } }
}

export function createMessagesErrorResponse (): (err: unknown) => HandlerResponse {
  return function messagesErrorResponse (err) {
    const { status, headers, body } = messagesErrorBody(err)
    return { status, headers, body }
  }
}
