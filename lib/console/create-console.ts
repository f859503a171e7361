// createConsole: the web console (docs/console.md) as a route table any host mounts beside the others: its page
// and files, and its JSON API, which signs in to a cookie session and calls the accounts service's own rules.
// Each page area's routes are their own module (lib/console/routes/); this file checks the options and wires them.
import type { HandlerResponse, Route, RouteTable } from '../http/contract.ts'
import type { AuthService } from '../auth/service.ts'
import type { Proxy } from '../proxy/create-proxy.ts'
import type { RateLimiter } from '../metering/rate-limiter.ts'
import type { ConsoleParts } from './console-parts.ts'
import { authParts } from '../auth/service.ts'
import { createAuthErrorResponse } from '../auth/error-body.ts'
import { ConfigurationError } from '../errors.ts'
import { cookieJar } from './cookie-session.ts'
import { createCallers } from './callers.ts'
import { consoleRoute } from './console-parts.ts'
import { createStaticAssets, defaultAssetsDir } from './static-assets.ts'
import { withSecurityHeaders } from './security-headers.ts'
import { DEFAULT_CONSOLE_PATH } from '../option-rules.ts'
import { assetRoutes } from './routes/assets.ts'
import { sessionRoutes, signInRoutes } from './routes/session.ts'
import { meRoutes } from './routes/me.ts'
import { keyRoutes } from './routes/keys.ts'
import { usageRoutes } from './routes/usage.ts'
import { adminUserChangeRoutes, adminUserRoutes } from './routes/admin-users.ts'
import { adminSettingsRoutes } from './routes/admin-settings.ts'
import { adminKeyRoutes } from './routes/admin-keys.ts'
import { adminUsageRoutes } from './routes/admin-usage.ts'
import { adminUpstreamRoutes } from './routes/admin-upstream.ts'

export interface ConsoleOptions {
  /** The accounts service the console signs in to (createAuthService's result). Required. */
  auth: AuthService
  /** The proxy, for the admin's upstream page (credential states, models served). Default none: that page says so. */
  proxy?: Proxy
  /** The rate limiter the proxy admits with, for "what is left now". Default none: only the limits are shown. */
  limiter?: RateLimiter
  /** Where the console is served: its page at `${path}/`, its API under `${path}/api`. Default `/console`. */
  path?: string
  /** The folder of the built console (index.html, app.js, app.css). Default the package's console/build. */
  assetsDir?: string
  /**
   * Sign-in over plain HTTP from a host name other than localhost, with a cookie without Secure: for a trusted
   * network only (anyone on the path can read the session). Logged as a warning. Default false: such a sign-in
   * answers 403 CONSOLE_NEEDS_HTTPS and opens no session (docs/console.md, "Security").
   */
  allowHttp?: boolean
}

export interface Console {
  /** The console's routes, scoped to its path, for hapiPlugin, createNodeListener() or createFetchHandler(). */
  readonly routeTable: RouteTable
  /** routeTable.routes. */
  readonly routes: Route[]
}

/** The checked `path` option: `/a/b`, no trailing slash. */
function consolePath (path: unknown): string {
  if (path === undefined) return DEFAULT_CONSOLE_PATH
  if (typeof path !== 'string' || !/^(?:\/[A-Za-z0-9._~-]+)+\/?$/.test(path)) {
    throw new ConfigurationError('path', `createConsole: path must be a path such as /console (segments of letters, digits, ".", "_", "~", "-"), got ${JSON.stringify(path)}`)
  }
  return path.replace(/\/$/, '')
}

/** The page areas, in the order their routes are listed. */
const AREAS: Array<(parts: ConsoleParts) => Route[]> = [
  assetRoutes, signInRoutes, meRoutes, sessionRoutes, keyRoutes, usageRoutes,
  adminUserRoutes, adminKeyRoutes, adminUserChangeRoutes, adminSettingsRoutes, adminUsageRoutes, adminUpstreamRoutes,
]

export function createConsole (options: ConsoleOptions): Console {
  const auth = options?.auth === undefined ? undefined : authParts(options.auth)
  if (auth === undefined) throw new ConfigurationError('auth', 'createConsole: options.auth must be the result of createAuthService()')
  const base = consolePath(options.path)
  if (options.allowHttp !== undefined && typeof options.allowHttp !== 'boolean') throw new ConfigurationError('allowHttp', `createConsole: allowHttp must be true or false, got ${JSON.stringify(options.allowHttp)}`)
  const cookies = cookieJar(options.allowHttp === true)
  if (options.allowHttp === true) auth.options.logger?.warn(`console: allowHttp is on: sign-in over plain HTTP sends the session cookie unencrypted; use it on a trusted network only (${base}/)`)
  const authError = createAuthErrorResponse()
  const errorResponse = (err: unknown): HandlerResponse => withSecurityHeaders(authError(err))
  const parts: ConsoleParts = {
    base,
    auth,
    cookies,
    callers: createCallers(auth, cookies),
    assets: createStaticAssets(options.assetsDir ?? defaultAssetsDir()),
    proxy: options.proxy,
    limiter: options.limiter,
    route: consoleRoute(base, auth.options.maxBodyBytes, errorResponse),
  }
  const routes = AREAS.flatMap(area => area(parts))
  return { routeTable: { scope: base, routes, errorResponse }, routes }
}
