// The proxy password (docs/model-proxy.md, "Password"): accepted as `?key=`, `x-goog-api-key`,
// `x-vendor-api-key`, `Authorization: Bearer` (scheme in any case) or `Authorization: Basic`
// (any username, password after the first colon). Any one matching form is enough.
// Comparison is constant-time on SHA-256 digests, so neither content nor length leaks.
// With no password configured every proxy route answers 503: there is no default password.
// Wrong passwords are counted per client address (access/password-attempts.ts).
import { hash, timingSafeEqual } from 'node:crypto'
import type { HandlerRequest, HandlerResponse } from '../../http/contract.ts'
import { addressBucket } from '../../http/client-address.ts'
import { fail } from '../../errors.ts'
import type { PasswordAttempts } from './password-attempts.ts'

/** Shortest proxy password accepted at start-up (GEMINI_AUTH_PASSWORD, createProxy's `password`). */
export const PROXY_PASSWORD_MIN_LENGTH = 16

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

/**
 * Returns a check that throws PROXY_PASSWORD_UNSET (503), PROXY_TOO_MANY_ATTEMPTS (429: the client's address
 * is locked out, even with the right password) or PROXY_UNAUTHENTICATED (401, counted against the address when
 * a password was presented). A request object that passed once passes again at once: the routes' authenticate
 * hook and their handlers run the same check on the same request.
 */
export function createClientAuth (password: string | undefined, attempts?: PasswordAttempts): (req: HandlerRequest) => void {
  const expected = password === undefined || password === '' ? undefined : digest(password)
  const passed = new WeakSet<HandlerRequest>()
  return function checkClientPassword (req) {
    if (passed.has(req)) return
    if (expected === undefined) throw fail('PROXY_PASSWORD_UNSET')
    const address = req.remoteAddress
    // Nothing to look up (and no bucket to compute) while no address has a wrong password on record.
    if (attempts?.tracking === true && address !== undefined) attempts.admit(addressBucket(address))
    let ok = false
    const presented = presentedPasswords(req)
    // Compare every presented form (no early exit), so timing does not tell which form matched.
    for (const candidate of presented) {
      if (timingSafeEqual(digest(candidate), expected)) ok = true
    }
    if (!ok) {
      // A request without any password is not a guess (a browser, a probe): only wrong ones count.
      if (attempts !== undefined && address !== undefined && presented.length > 0) attempts.failed(addressBucket(address))
      throw fail('PROXY_UNAUTHENTICATED')
    }
    passed.add(req)
  }
}
