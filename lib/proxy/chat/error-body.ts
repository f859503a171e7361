// The chat-completions surface's one error mapper: `{"error":{"message","type","code","param"}}`,
// with the status and `type` the official OpenAI SDKs turn into their error classes
// (400 BadRequestError, 401 AuthenticationError, 403 PermissionDeniedError, 404 NotFoundError,
// 429 RateLimitError with Retry-After, 5xx InternalServerError).
// Upstream failures follow docs/errors.md, "Upstream failures": the message upstream/errors.ts made of the
// upstream's own is kept as it is; an upstream 5xx becomes 502 (503 stays 503); an upstream 401 that survived a
// token refresh is a 503.
// `code` is the HTTP status, except `model_not_found` for unknown models, as OpenAI does.
import type { HandlerResponse } from '../../http/contract.ts'
import { fail, foreignError, isGatehouseError } from '../../errors.ts'
import type { GatehouseError } from '../../errors.ts'
import { CORS_HEADERS, WWW_AUTHENTICATE } from '../access/client-auth.ts'

export function invalidParam (message: string, param: string | null): GatehouseError {
  return fail('INVALID_INPUT', message, { param })
}

/** `err`, now naming the request field at fault. */
export function withParam (err: GatehouseError, param: string | null): GatehouseError {
  err.param = param
  return err
}

function typeFor (status: number): string {
  if (status === 401) return 'authentication_error'
  if (status === 403) return 'permission_error'
  if (status === 429) return 'rate_limit_error'
  if (status >= 500) return 'api_error'
  return 'invalid_request_error'
}

export interface ChatErrorBody {
  status: number
  headers: Record<string, string>
  body: { error: { message: string, type: string, code: number | string, param: string | null } }
}

export function chatErrorBody (err: unknown): ChatErrorBody {
  const headers: Record<string, string> = { ...CORS_HEADERS }
  let status: number
  let message: string
  let code: number | string | undefined
  let param: string | null = null
  if (isGatehouseError(err)) {
    status = err.status
    if (err.code === 'UPSTREAM_ERROR' && err.upstreamStatus === 503) status = 503
    message = err.message
    if (err.code === 'MODEL_NOT_FOUND' || err.code === 'UPSTREAM_NOT_FOUND') code = 'model_not_found'
    if (err.code === 'PROXY_UNAUTHENTICATED') headers['www-authenticate'] = WWW_AUTHENTICATE
    if (err.retryAfter !== undefined) headers['retry-after'] = String(Math.max(0, Math.ceil(err.retryAfter)))
    param = err.param ?? null
  } else {
    ({ status, message } = foreignError(err))
  }
  return { status, headers, body: { error: { message, type: typeFor(status), code: code ?? status, param } } }
}

export function createChatErrorResponse (): (err: unknown) => HandlerResponse {
  return function chatErrorResponse (err) {
    const { status, headers, body } = chatErrorBody(err)
    return { status, headers, body }
  }
}
