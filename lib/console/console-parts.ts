// What each page area's routes (lib/console/routes/) are built from: createConsole makes these once and hands
// the same parts to every area, so a rule the areas share (the route guard, the caller) lives here once.
import type { HandlerRequest, HandlerResponse, Route } from '../http/contract.ts'
import type { AuthParts } from '../auth/service.ts'
import type { Proxy } from '../proxy/create-proxy.ts'
import type { RateLimiter } from '../metering/rate-limiter.ts'
import type { CookieJar } from './cookie-session.ts'
import type { Callers } from './callers.ts'
import type { StaticAssets } from './static-assets.ts'
import { assertSameOrigin } from './request-guard.ts'

export type ConsoleHandler = (req: HandlerRequest) => Promise<HandlerResponse>

export interface ConsoleParts {
  /** The console's path (createConsole's `path`, checked): `/console` by default, no trailing slash. */
  base: string
  /** The accounts service's own parts, whose rules the console calls (lib/auth/service.ts). */
  auth: AuthParts
  cookies: CookieJar
  callers: Callers
  assets: StaticAssets
  /** createConsole's `proxy`, for the upstream page and the models a key may name. */
  proxy?: Proxy
  /** createConsole's `limiter`, for "what is left now". */
  limiter?: RateLimiter
  /** A route at `base + path`, refused unread when cross-site (consoleRoute). */
  route: (method: string, path: string, handler: ConsoleHandler) => Route
}

/** The route maker of a console at `base`: every route guarded against cross-site requests, with its error body. */
export function consoleRoute (base: string, maxBytes: number, errorResponse: (err: unknown) => HandlerResponse): ConsoleParts['route'] {
  return (method, path, handler) => ({
    method,
    path: base + path,
    maxBytes,
    errorResponse,
    // Before the body is read: a cross-site request is refused unread.
    authenticate: (req) => { assertSameOrigin(req) },
    handler: async (req) => {
      assertSameOrigin(req)
      return await handler(req)
    },
  })
}
