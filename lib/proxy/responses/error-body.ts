// The Responses surface's one error mapper (docs/responses.md, "Errors"): `{"error":{"message","type","param","code"}}`
// with the status and `type` the official OpenAI SDKs turn into their error classes, and the `code`s Codex acts on:
// rate_limit_exceeded (its message says "Please try again in N s", which Codex reads for its back-off),
// insufficient_quota (not retried: a spent daily allowance or dollar budget, the gateway's or the upstream's QUOTA_EXHAUSTED),
// context_length_exceeded (Gemini's "input token count exceeds the maximum"), model_not_found. Other catalogue
// errors carry their catalogue code in lower case. A stream that already began fails with the same code and message
// inside response.failed (response-from-gemini.ts).
import type { HandlerResponse } from '../../http/contract.ts'
import { foreignError, isGatehouseError } from '../../errors.ts'
import { CORS_HEADERS, WWW_AUTHENTICATE } from '../access/client-auth.ts'
import { RateLimitedError } from '../../metering/rate-limiter.ts'
import { isBudget } from '../../metering/budgets.ts'
import { errorReasons } from '../upstream/errors.ts'

const CONTEXT_TOO_LONG = /input token count.*exceeds the maximum|exceeds the maximum number of tokens|context (?:length|window)/i

export interface ResponsesError {
  status: number
  headers: Record<string, string>
  body: { error: { message: string, type: string, param: string | null, code: string | null } }
}

function typeFor (status: number, code: string | null): string {
  if (code === 'insufficient_quota') return 'insufficient_quota'
  if (status === 401) return 'authentication_error'
  if (status === 403) return 'permission_error'
  if (status === 404) return 'not_found_error'
  if (status === 429) return 'rate_limit_error'
  if (status >= 500) return 'server_error'
  return 'invalid_request_error'
}

export function responsesError (err: unknown): ResponsesError {
  const headers: Record<string, string> = { ...CORS_HEADERS }
  let status: number
  let message: string
  let code: string | null = null
  let param: string | null = null
  if (isGatehouseError(err)) {
    status = err.status
    if (err.code === 'UPSTREAM_ERROR' && err.upstreamStatus === 503) status = 503
    message = err.message
    code = err.code.toLowerCase()
    param = err.param ?? null
    const retryAfter = err.retryAfter === undefined ? undefined : Math.max(0, Math.ceil(err.retryAfter))
    if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter)
    if (err.code === 'PROXY_UNAUTHENTICATED') {
      headers['www-authenticate'] = WWW_AUTHENTICATE
      code = 'invalid_api_key'
    }
    if (err.code === 'MODEL_NOT_FOUND' || err.code === 'UPSTREAM_NOT_FOUND') code = 'model_not_found'
    // A spent day of tokens or a spent dollar budget waits for its window: retrying sooner cannot help.
    const dailyLimit = err instanceof RateLimitedError && (err.limit === 'tokens_per_day' || isBudget(err.limit))
    if (dailyLimit || (err.code === 'UPSTREAM_RATE_LIMITED' && errorReasons(err.upstreamBody).includes('QUOTA_EXHAUSTED'))) {
      code = 'insufficient_quota'
    } else if (err.code === 'RATE_LIMITED' || err.code === 'UPSTREAM_RATE_LIMITED') {
      code = 'rate_limit_exceeded'
      if (retryAfter !== undefined) message = `${message.replace(/\.?$/, '.')} Please try again in ${retryAfter}s.`
    } else if (err.code === 'UPSTREAM_BAD_REQUEST' && CONTEXT_TOO_LONG.test(message)) {
      code = 'context_length_exceeded'
    }
  } else {
    ({ status, message } = foreignError(err))
  }
  return { status, headers, body: { error: { message, type: typeFor(status, code), param, code } } }
}

/** The `error` of a failed response object (response.failed). */
export function failedResponseError (err: unknown): { code: string, message: string } {
  const { status, body } = responsesError(err)
  return { code: body.error.code ?? (status >= 500 ? 'server_error' : 'invalid_request_error'), message: body.error.message }
}

export function createResponsesErrorResponse (): (err: unknown) => HandlerResponse {
  return function responsesErrorResponse (err) {
    const { status, headers, body } = responsesError(err)
    return { status, headers, body }
  }
}
