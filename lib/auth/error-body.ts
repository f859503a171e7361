// The auth surface's one error mapper: every failure becomes `{"detail": "<message>"}`. It logs nothing: failures
// are logged once where they end (lib/errors.ts logFailure).
import type { HandlerResponse } from '../http/contract.ts'
import { foreignError, isGatehouseError } from '../errors.ts'

export function createAuthErrorResponse (): (err: unknown) => HandlerResponse {
  return function authErrorResponse (err) {
    if (isGatehouseError(err)) {
      const headers = err.retryAfter === undefined ? undefined : { 'retry-after': String(err.retryAfter) }
      return { status: err.status, headers, body: { detail: err.message } }
    }
    const { status, message } = foreignError(err)
    return { status, body: { detail: message } }
  }
}
