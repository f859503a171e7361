// The console's cookie (docs/console.md, "Security"): the opaque token of a server-side session in the store, which
// script cannot read (HttpOnly), no other site sends (SameSite=Strict) and, by its __Host- prefix, only this host
// over HTTPS may set. Browsers keep such a cookie only on a secure origin (https://, or http://localhost), so a
// sign-in from any other origin is refused before a session opens, unless the host allows plain HTTP (allowHttp).
import type { HandlerRequest } from '../http/contract.ts'
import { fail } from '../errors.ts'

export const COOKIE_NAME = '__Host-gatehouse-console'
/** The cookie on plain HTTP when the host allows it: without Secure, so without the __Host- prefix either. */
export const HTTP_COOKIE_NAME = 'gatehouse-console'

const SECURE_ATTRIBUTES = 'Path=/; Secure; HttpOnly; SameSite=Strict'
const HTTP_ATTRIBUTES = 'Path=/; HttpOnly; SameSite=Strict'

function valueOf (header: string, name: string): string | undefined {
  for (const part of header.split(';')) {
    const at = part.indexOf('=')
    if (at > 0 && part.slice(0, at).trim() === name) {
      const value = part.slice(at + 1).trim()
      return value === '' ? undefined : value
    }
  }
  return undefined
}

// The hosts browsers count as secure over http:// (the W3C "potentially trustworthy" loopback names).
function isLoopback (hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost') || /^127(?:\.\d{1,3}){3}$/.test(hostname) || hostname === '[::1]'
}

/**
 * Whether the browser that sent the request keeps a Secure cookie from it, from the page's origin it names (Origin,
 * sent on every fetch POST); a request with no Origin (no browser page) counts as secure, as before this check.
 */
export function secureOrigin (req: HandlerRequest): boolean {
  const origin = req.headers.origin
  if (origin === undefined) return true
  if (!URL.canParse(origin)) return false
  const url = new URL(origin)
  return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopback(url.hostname))
}

/** The cookie rules of one console: `allowHttp` adds a plain cookie for insecure origins (createConsole's option). */
export interface CookieJar {
  /** The session token in the request's cookie, or undefined. */
  token (req: HandlerRequest): string | undefined
  /** The Set-Cookie value that holds `token` for `maxAgeSeconds`; throws CONSOLE_NEEDS_HTTPS on an insecure origin. */
  session (req: HandlerRequest, token: string, maxAgeSeconds: number): string
  /** The Set-Cookie value that removes the request's cookie. */
  cleared (req: HandlerRequest): string
  /** Throws CONSOLE_NEEDS_HTTPS when the browser would drop the cookie: before a sign-in opens a session. */
  assertKept (req: HandlerRequest): void
}

export function cookieJar (allowHttp: boolean): CookieJar {
  const plain = (req: HandlerRequest): boolean => allowHttp && !secureOrigin(req)
  const jar: CookieJar = {
    token (req) {
      const header = req.headers.cookie
      if (header === undefined) return undefined
      return valueOf(header, COOKIE_NAME) ?? (allowHttp ? valueOf(header, HTTP_COOKIE_NAME) : undefined)
    },
    assertKept (req) {
      if (!allowHttp && !secureOrigin(req)) throw fail('CONSOLE_NEEDS_HTTPS')
    },
    session (req, token, maxAgeSeconds) {
      jar.assertKept(req)
      const [name, attributes] = plain(req) ? [HTTP_COOKIE_NAME, HTTP_ATTRIBUTES] : [COOKIE_NAME, SECURE_ATTRIBUTES]
      return `${name}=${token}; ${attributes}; Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`
    },
    cleared (req) {
      return plain(req) ? `${HTTP_COOKIE_NAME}=; ${HTTP_ATTRIBUTES}; Max-Age=0` : `${COOKIE_NAME}=; ${SECURE_ATTRIBUTES}; Max-Age=0`
    },
  }
  return jar
}
