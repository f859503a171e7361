// The headers every console answer carries (docs/console.md, "Security"): a CSP that allows only the console's own
// files, no sniffing, no referrer; data answers are never stored by a cache.
import type { HandlerResponse } from '../http/contract.ts'

/** The console's Content-Security-Policy: no inline script or style, no other origin. */
export const CONSOLE_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
})

/** A JSON answer of the console's API: the security headers and no-store. */
export function dataResponse (body: unknown, status = 200, headers: Record<string, string> = {}): HandlerResponse {
  return { status, headers: { ...SECURITY_HEADERS, 'cache-control': 'no-store', ...headers }, body }
}

/** `response` with the security headers added (an error answer from the accounts mapper). */
export function withSecurityHeaders (response: HandlerResponse): HandlerResponse {
  return { ...response, headers: { ...SECURITY_HEADERS, 'cache-control': 'no-store', ...response.headers } }
}
