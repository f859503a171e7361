// The auth surface's one error mapper: every failure becomes `{"detail": "<message>"}`. It logs nothing: failures
// are logged once where they end (lib/errors.ts logFailure).
import type { HandlerResponse } from '../http/contract.ts'
import { ERRORS, hostClientStatus, isGatehouseError } from '../errors.ts'

/** Messages for the client errors a host server raises itself (Hapi's Boom, Express's body parser). */
const HOST_MESSAGES: Record<number, string> = {
  404: ERRORS.NOT_FOUND.message,
  405: ERRORS.METHOD_NOT_ALLOWED.message,
  413: ERRORS.PAYLOAD_TOO_LARGE.message,
  415: ERRORS.UNSUPPORTED_MEDIA_TYPE.message,
}

export function createAuthErrorResponse (): (err: unknown) => HandlerResponse {
  return function authErrorResponse (err) {
    if (isGatehouseError(err)) {
      const headers = err.retryAfter === undefined ? undefined : { 'retry-after': String(err.retryAfter) }
      return { status: err.status, headers, body: { detail: err.message } }
    }
    const hostStatus = hostClientStatus(err)
    if (hostStatus !== undefined) {
      // A host's 400 is a body it could not parse; its own wording may name internals, so use ours.
      const detail = HOST_MESSAGES[hostStatus] ?? (hostStatus === 400 ? ERRORS.INVALID_JSON.message : 'Bad request')
      return { status: hostStatus, body: { detail } }
    }
    return { status: 500, body: { detail: ERRORS.INTERNAL.message } }
  }
}
