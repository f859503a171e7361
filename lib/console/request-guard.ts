// The console's cross-site request rule (docs/console.md, "Security"): an unsafe method must come from the console's
// own page. The browser says so in Sec-Fetch-Site (Origin where it does not send that), and the custom header
// needs a CORS preflight no other origin passes, so a form or an image on another site cannot send it.
import type { HandlerRequest } from '../http/contract.ts'
import { fail } from '../errors.ts'

/** The header the console's script sends on every API call (value `1`). */
export const CONSOLE_HEADER = 'x-gatehouse-console'

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

function hostOf (origin: string): string | undefined {
  try {
    return new URL(origin).host.toLowerCase()
  } catch {
    return undefined
  }
}

/** Throws CROSS_SITE_REQUEST unless a safe method, or an unsafe one from the same origin carrying CONSOLE_HEADER. */
export function assertSameOrigin (req: HandlerRequest): void {
  if (SAFE_METHODS.has(req.method.toUpperCase())) return
  const site = req.headers['sec-fetch-site']
  if (site !== undefined) {
    if (site !== 'same-origin') throw fail('CROSS_SITE_REQUEST')
  } else {
    const origin = req.headers.origin
    const from = origin === undefined ? undefined : hostOf(origin)
    // Behind an ingress the Host may be rewritten; the host the browser used is then in X-Forwarded-Host.
    const hosts = [req.headers.host, req.headers['x-forwarded-host']?.split(',')[0]?.trim()].filter(h => h !== undefined).map(h => h.toLowerCase())
    if (from === undefined || !hosts.includes(from)) throw fail('CROSS_SITE_REQUEST')
  }
  if (req.headers[CONSOLE_HEADER] !== '1') throw fail('CROSS_SITE_REQUEST', `The console's API needs the ${CONSOLE_HEADER} header`)
}
