// The proxy password (docs/model-proxy.md, "Password"): accepted as `?key=`, `x-goog-api-key`,
// `x-vendor-api-key`, `Authorization: Bearer` (scheme in any case) or `Authorization: Basic`
// (any username, password after the first colon). Any one matching form is enough.
// Comparison is constant-time on SHA-256 digests, so neither content nor length leaks.
// With no password configured every proxy route answers 503: there is no default password.
import { hash, timingSafeEqual } from 'node:crypto'
import type { HandlerRequest, HandlerResponse } from '../http/contract.ts'
import { fail } from '../errors.ts'

/** Added to every proxy response: browser clients call the proxy from any origin, without cookies. */
export const CORS_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'retry-after',
})

export const WWW_AUTHENTICATE = 'Bearer realm="gatehouse", Basic realm="gatehouse", charset="UTF-8"'

const DEFAULT_ALLOWED_HEADERS = 'authorization, content-type, x-goog-api-key, x-vendor-api-key, x-goog-api-client, x-stainless-arch, x-stainless-lang, x-stainless-os, x-stainless-package-version, x-stainless-runtime, x-stainless-runtime-version, x-stainless-retry-count, x-stainless-timeout'

/**
 * The answer to a CORS preflight, given without authentication. `*` origins never come with
 * Allow-Credentials (browsers reject the pair); the requested headers are echoed because a bare `*`
 * does not cover Authorization.
 */
export function preflightResponse (req: HandlerRequest): HandlerResponse {
  const requested = req.headers['access-control-request-headers']
  return {
    status: 204,
    headers: {
      ...CORS_HEADERS,
      'access-control-allow-methods': 'GET, POST, OPTIONS',
      'access-control-allow-headers': requested !== undefined && requested.trim() !== '' ? requested : DEFAULT_ALLOWED_HEADERS,
      'access-control-max-age': '86400',
    },
  }
}

function digest (value: string): Buffer {
  return hash('sha256', value, 'buffer')
}

/** Every password the request presents, in the order the forms are checked. */
export function presentedPasswords (req: HandlerRequest): string[] {
  const found: string[] = []
  if (typeof req.query.key === 'string') found.push(req.query.key)
  for (const name of ['x-goog-api-key', 'x-vendor-api-key']) {
    const value = req.headers[name]
    if (typeof value === 'string') found.push(value.trim())
  }
  const authorization = req.headers.authorization?.trim()
  if (authorization !== undefined) {
    const m = /^(\S+)\s+(.*)$/.exec(authorization)
    const scheme = m?.[1].toLowerCase()
    if (scheme === 'bearer') {
      found.push(m![2].trim())
    } else if (scheme === 'basic') {
      const decoded = Buffer.from(m![2].trim(), 'base64').toString('utf8')
      const colon = decoded.indexOf(':')
      if (colon >= 0) found.push(decoded.slice(colon + 1))
    }
  }
  return found
}

/** Returns a check that throws PROXY_PASSWORD_UNSET (503) or PROXY_UNAUTHENTICATED (401). */
export function createClientAuth (password: string | undefined): (req: HandlerRequest) => void {
  const expected = password === undefined || password === '' ? undefined : digest(password)
  return function checkClientPassword (req) {
    if (expected === undefined) throw fail('PROXY_PASSWORD_UNSET')
    let ok = false
    // Compare every presented form (no early exit), so timing does not tell which form matched.
    for (const candidate of presentedPasswords(req)) {
      if (timingSafeEqual(digest(candidate), expected)) ok = true
    }
    if (!ok) throw fail('PROXY_UNAUTHENTICATED')
  }
}
