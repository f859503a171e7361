// The console's cookie (docs/console.md, "Security"): the opaque token of a server-side session in the store, which
// script cannot read (HttpOnly), no other site sends (SameSite=Strict) and, by its __Host- prefix, only this host
// over HTTPS may set (browsers also count http://localhost as secure, which is how tests run it).
import type { HandlerRequest } from '../http/contract.ts'

export const COOKIE_NAME = '__Host-gatehouse-console'

/** The session token in the request's cookie, or undefined. */
export function cookieToken (req: HandlerRequest): string | undefined {
  const header = req.headers.cookie
  if (header === undefined) return undefined
  for (const part of header.split(';')) {
    const at = part.indexOf('=')
    if (at > 0 && part.slice(0, at).trim() === COOKIE_NAME) {
      const value = part.slice(at + 1).trim()
      return value === '' ? undefined : value
    }
  }
  return undefined
}

const ATTRIBUTES = 'Path=/; Secure; HttpOnly; SameSite=Strict'

/** The Set-Cookie value that holds `token` for `maxAgeSeconds` (the session's lifetime). */
export function sessionCookie (token: string, maxAgeSeconds: number): string {
  return `${COOKIE_NAME}=${token}; ${ATTRIBUTES}; Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`
}

/** The Set-Cookie value that removes the cookie. */
export function clearedCookie (): string {
  return `${COOKIE_NAME}=; ${ATTRIBUTES}; Max-Age=0`
}
