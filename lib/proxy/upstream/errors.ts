// Upstream error answers (Google's RPC error shape) turned into GatehouseErrors the routes can map:
// the code follows the HTTP status, the message is the upstream's own, enriched here and only here (a
// hint on 404, a prefix on 401, the links the user must visit), and the Google error object travels along
// so the native surface can pass it through unchanged. Every surface shows the message as it is.
import { fail } from '../../errors.ts'
import type { ErrorCode, GatehouseError } from '../../errors.ts'

export interface GoogleErrorObject {
  code?: number
  message?: string
  status?: string
  details?: Array<Record<string, any>>
}

/** The Google error body inside a response text, or undefined when there is none. Array-shaped stream errors give their first element. */
export function parseErrorBody (text: string): { error: GoogleErrorObject } | undefined {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return undefined
  }
  if (Array.isArray(parsed)) parsed = parsed[0]
  if (parsed === null || typeof parsed !== 'object') return undefined
  const error = (parsed as Record<string, unknown>).error
  if (error === null || typeof error !== 'object' || Array.isArray(error)) return undefined
  return parsed as { error: GoogleErrorObject }
}

function detailsOf (body: { error: GoogleErrorObject } | undefined): Array<Record<string, any>> {
  const details = body?.error.details
  return Array.isArray(details) ? details.filter(d => d !== null && typeof d === 'object') : []
}

function detailOfType (body: { error: GoogleErrorObject } | undefined, type: string): Array<Record<string, any>> {
  return detailsOf(body).filter(d => typeof d['@type'] === 'string' && d['@type'].endsWith(type))
}

/** `34.07s` (protobuf Duration JSON) in seconds. */
function parseDuration (value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined
  const m = /^\s*(\d+(?:\.\d+)?)s\s*$/.exec(value)
  return m === null ? undefined : Number(m[1])
}

/** RetryInfo.retryDelay in seconds, when the upstream gave one. */
export function retryDelaySeconds (body: { error: GoogleErrorObject } | undefined): number | undefined {
  for (const d of detailOfType(body, 'google.rpc.RetryInfo')) {
    const s = parseDuration(d.retryDelay)
    if (s !== undefined) return s
  }
  return undefined
}

/** Every ErrorInfo reason in the body (RATE_LIMIT_EXCEEDED, QUOTA_EXHAUSTED, VALIDATION_REQUIRED, SECURITY_POLICY_VIOLATED, ...). */
export function errorReasons (body: unknown): string[] {
  const parsed = body !== null && typeof body === 'object' ? body as { error: GoogleErrorObject } : undefined
  return detailsOf(parsed).map(d => d.reason).filter((r): r is string => typeof r === 'string')
}

function helpLinks (body: { error: GoogleErrorObject } | undefined): string[] {
  const links: string[] = []
  for (const d of detailOfType(body, 'google.rpc.Help')) {
    for (const link of Array.isArray(d.links) ? d.links : []) {
      if (typeof link?.url !== 'string') continue
      links.push(typeof link.description === 'string' && link.description !== '' ? `${link.description}: ${link.url}` : link.url)
    }
  }
  for (const d of detailOfType(body, 'google.rpc.ErrorInfo')) {
    const url = d.metadata?.validation_url ?? d.metadata?.validationUrl ?? d.metadata?.activationUrl
    if (typeof url === 'string' && /^https?:\/\//.test(url) && !links.some(l => l.endsWith(url))) links.push(url)
  }
  return links
}

function codeForStatus (status: number): ErrorCode {
  if (status === 400) return 'UPSTREAM_BAD_REQUEST'
  if (status === 401) return 'UPSTREAM_CREDENTIALS_REJECTED'
  if (status === 403) return 'UPSTREAM_PERMISSION_DENIED'
  if (status === 404) return 'UPSTREAM_NOT_FOUND'
  if (status === 408) return 'UPSTREAM_TIMEOUT'
  if (status === 429) return 'UPSTREAM_RATE_LIMITED'
  if (status === 503) return 'UPSTREAM_UNAVAILABLE'
  if (status >= 400 && status < 500 && status !== 499) return 'UPSTREAM_BAD_REQUEST'
  return 'UPSTREAM_ERROR'
}

/** The error for an upstream answer with a non-2xx status (or an error event inside a stream). */
export function upstreamError (status: number, text: string): GatehouseError {
  const body = parseErrorBody(text)
  const code = codeForStatus(status)
  let message = typeof body?.error.message === 'string' && body.error.message !== ''
    ? body.error.message
    : `Upstream answered HTTP ${status}`
  if (status === 401) message = `Upstream credentials rejected: ${message}`
  // Gemini 3 previews answer 404 until the account has preview access (docs/upstream-protocol.md, "Upstream errors").
  if (status === 404) message = `${message}${/[.!?]$/.test(message) ? '' : '.'} The model may not exist or may not be enabled for this account (Gemini 3 previews need preview access).`
  const links = helpLinks(body).filter(link => !message.includes(link))
  if (links.length > 0) message = `${message} (${links.join('; ')})`
  const delay = retryDelaySeconds(body)
  return fail(code, message, {
    upstreamStatus: status,
    upstreamBody: body,
    retryAfter: status === 429 && delay !== undefined ? Math.max(1, Math.ceil(delay)) : undefined,
  })
}
