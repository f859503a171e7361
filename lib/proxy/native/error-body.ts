// The native surface's one error mapper. Upstream errors pass through unchanged, with the upstream
// status and body (an array-shaped stream error is unwrapped to its first element), so Google's
// `status` and `details` (RetryInfo, Help links) reach the client; a 429 also gets Retry-After.
// Our own errors use Google's shape: `{"error":{"code","message","status"}}`.
import type { HandlerResponse } from '../../http/contract.ts'
import { foreignError, isGatehouseError } from '../../errors.ts'
import type { GatehouseError } from '../../errors.ts'
import { CORS_HEADERS, WWW_AUTHENTICATE } from '../access/client-auth.ts'

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  405: 'UNIMPLEMENTED',
  408: 'DEADLINE_EXCEEDED',
  409: 'ABORTED',
  413: 'INVALID_ARGUMENT',
  415: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'UNIMPLEMENTED',
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
}

function googleStatusName (status: number): string {
  return STATUS_NAMES[status] ?? (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION')
}

export interface GoogleErrorBody {
  error: { code: number, message: string, status: string, details?: unknown[] }
}

export function googleError (status: number, message: string): GoogleErrorBody {
  return { error: { code: status, message, status: googleStatusName(status) } }
}

// Failures of our own credentials are ours to explain: the client must not read them as its key being wrong.
const NOT_PASSED_THROUGH = new Set(['UPSTREAM_CREDENTIALS_REJECTED', 'UPSTREAM_CREDENTIALS_UNUSABLE', 'UPSTREAM_NOT_CONFIGURED', 'UPSTREAM_SETUP_FAILED'])

/** The upstream body to pass through, if this error carries one. */
function passThrough (err: GatehouseError): Record<string, unknown> | undefined {
  if (NOT_PASSED_THROUGH.has(err.code)) return undefined
  const body = Array.isArray(err.upstreamBody) ? err.upstreamBody[0] : err.upstreamBody
  if (body === null || typeof body !== 'object') return undefined
  const error = (body as { error?: unknown }).error
  return error !== null && typeof error === 'object' ? body as Record<string, unknown> : undefined
}

export interface NativeErrorBody {
  status: number
  headers: Record<string, string>
  body: unknown
}

export function nativeErrorBody (err: unknown): NativeErrorBody {
  const headers: Record<string, string> = { ...CORS_HEADERS }
  if (isGatehouseError(err)) {
    if (err.retryAfter !== undefined) headers['retry-after'] = String(Math.max(0, Math.ceil(err.retryAfter)))
    if (err.code === 'PROXY_UNAUTHENTICATED') headers['www-authenticate'] = WWW_AUTHENTICATE
    const upstream = passThrough(err)
    if (upstream !== undefined) {
      const status = err.upstreamStatus ?? err.status
      return { status: status >= 400 && status <= 599 ? status : err.status, headers, body: upstream }
    }
    return { status: err.status, headers, body: googleError(err.status, err.message) }
  }
  const { status, message } = foreignError(err)
  return { status, headers, body: googleError(status, message) }
}

export function createNativeErrorResponse (): (err: unknown) => HandlerResponse {
  return function nativeErrorResponse (err) {
    return nativeErrorBody(err)
  }
}
