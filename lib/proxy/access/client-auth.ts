// The proxy password or a user's API key (docs/model-proxy.md, "Password"): accepted as `?key=`,
// `x-goog-api-key`, `x-vendor-api-key`, `Authorization: Bearer` (scheme in any case) or `Authorization: Basic`
// (any username, password after the first colon). Any one matching form is enough.
// Comparison with the operator password is constant-time on SHA-256 digests, so neither content nor length
// leaks; values that look like keys (`ghk_`) go to the accounts service, which looks them up by digest.
// With neither a password nor keys configured every proxy route answers 503: there is no default password.
// Wrong passwords and wrong keys are counted per client address (access/password-attempts.ts), which refuses only
// wrong ones: a valid credential is never throttled.
import { hash, timingSafeEqual } from 'node:crypto'
import type { HandlerRequest, HandlerResponse } from '../../http/contract.ts'
import { addressBucket } from '../../http/client-address.ts'
import { fail } from '../../errors.ts'
import type { PasswordAttempts } from './password-attempts.ts'
import { KEY_PREFIX } from './caller.ts'
import type { KeyCaller, KeyResolver, ProxyCaller } from './caller.ts'

/** Shortest proxy password accepted at start-up (GEMINI_AUTH_PASSWORD, createProxy's `password`). */
export const PROXY_PASSWORD_MIN_LENGTH = 16

/**
 * Added to every proxy response: browser clients call the proxy from any origin, without cookies, and may read
 * the headers that tell them when to retry (Retry-After, the x-ratelimit-* of a key's limits).
 */
export const CORS_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'retry-after, x-ratelimit-limit-requests, x-ratelimit-remaining-requests, x-ratelimit-reset-requests, x-ratelimit-limit-tokens, x-ratelimit-remaining-tokens, x-ratelimit-reset-tokens, x-gatehouse-budget, x-gatehouse-budget-remaining-usd, x-gatehouse-budget-reset',
})

export const WWW_AUTHENTICATE = 'Bearer realm="gatehouse", Basic realm="gatehouse", charset="UTF-8"'

const DEFAULT_ALLOWED_HEADERS = 'authorization, content-type, x-goog-api-key, x-vendor-api-key, x-goog-api-client, x-api-key, anthropic-version, anthropic-beta, anthropic-dangerous-direct-browser-access, x-stainless-arch, x-stainless-lang, x-stainless-os, x-stainless-package-version, x-stainless-runtime, x-stainless-runtime-version, x-stainless-retry-count, x-stainless-timeout'

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
  for (const name of ['x-goog-api-key', 'x-vendor-api-key', 'x-api-key']) {
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

/** Longest value sent to resolveKey. */
const KEY_MAX_LENGTH = 128

const OPERATOR: ProxyCaller = Object.freeze({ kind: 'operator' })

/**
 * Returns a check that resolves with the request's caller or throws PROXY_PASSWORD_UNSET (503: neither a password
 * nor keys configured), PROXY_UNAUTHENTICATED (401, counted against the address when a password or key was
 * presented) or, for a wrong one from an address past its wrong attempts, PROXY_TOO_MANY_ATTEMPTS (429). The caller is remembered per request object: the routes' authenticate hook and their handlers run
 * the same check on the same request, and the second run answers at once.
 */
export function createClientAuth (password: string | undefined, attempts?: PasswordAttempts, keys?: KeyResolver): (req: HandlerRequest) => Promise<ProxyCaller> {
  const expected = password === undefined || password === '' ? undefined : digest(password)
  const callers = new WeakMap<HandlerRequest, ProxyCaller>()
  return async function checkClient (req) {
    const known = callers.get(req)
    if (known !== undefined) return known
    if (expected === undefined && keys === undefined) throw fail('PROXY_PASSWORD_UNSET')
    let operator = false
    const presented = presentedPasswords(req)
    // Compare every presented form (no early exit), so timing does not tell which form matched.
    for (const candidate of presented) {
      if (expected !== undefined && timingSafeEqual(digest(candidate), expected)) operator = true
    }
    let caller: ProxyCaller | undefined = operator ? OPERATOR : undefined
    if (caller === undefined && keys !== undefined) {
      for (let i = 0; i < presented.length; i++) {
        const secret = presented[i]
        // Keys are short (the prefix and 43 characters): longer values are not worth a lookup; each is looked up once.
        if (!secret.startsWith(KEY_PREFIX) || secret.length > KEY_MAX_LENGTH || presented.indexOf(secret) < i) continue
        const key: KeyCaller | undefined = await keys.resolveKey(secret)
        if (key !== undefined) { caller = key; break }
      }
    }
    if (caller === undefined) {
      // A request without any password is not a guess (a browser, a probe): only wrong ones count.
      const address = req.remoteAddress
      if (attempts !== undefined && address !== undefined && presented.length > 0) attempts.failed(addressBucket(address))
      throw fail('PROXY_UNAUTHENTICATED')
    }
    callers.set(req, caller)
    return caller
  }
}
