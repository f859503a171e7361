// The proxy's route table, derived from the registered surfaces (./surfaces.ts): each route answers in its surface's
// error shape, runs under the lifecycle's deny by default (lib/proxy/call/lifecycle.ts, governed), and each path gets
// its CORS preflight. Every route checks the proxy password or a user's key except preflights, first in the
// authenticate hook hosts run before reading the body (Route.authenticate), then in the handler.
import type { Handler, HandlerRequest, HandlerResponse, Route, RouteTable } from '../http/contract.ts'
import type { ProxyContext } from './context.ts'
import { preflightResponse } from './access/client-auth.ts'
import { RateLimitedError } from '../metering/rate-limiter.ts'
import { governed } from './call/lifecycle.ts'
import { runModelCall } from './call/run-model-call.ts'
import type { SurfaceDeclaration, SurfaceRoute } from './call/surface.ts'

type Mapper = (err: unknown, req?: HandlerRequest) => HandlerResponse

/**
 * `mapper` as every failure of a request passes it: it ends the request's call (its concurrency slot freed,
 * recorded with the status answered) and carries its x-ratelimit-* headers, a refusal's own included.
 */
function metered (ctx: ProxyContext, mapper: Mapper): Mapper {
  const wrapped = (err: unknown, req?: HandlerRequest): HandlerResponse => {
    const response = mapper(err, req)
    const call = req === undefined ? undefined : ctx.metering.callOf(req)
    if (call !== undefined) {
      call.end(response.status)
      response.headers = { ...response.headers, ...call.headers }
    } else if (err instanceof RateLimitedError) {
      response.headers = { ...response.headers, ...err.headers }
    }
    return response
  }
  // Named as the mapper it wraps: a route's surface reads as its mapper's name.
  return Object.defineProperty(wrapped, 'name', { value: mapper.name })
}

const preflight: Handler = async req => preflightResponse(req)

/** One surface's routes: each governed under the surface's name, then a preflight for each path not yet given one. */
function surfaceRoutes (ctx: ProxyContext, surface: SurfaceDeclaration, preflighted: Set<string>): Route[] {
  const surfaceError = metered(ctx, surface.errorResponse())
  // Preflights carry no password and need none.
  const authenticate = async (req: HandlerRequest): Promise<undefined> => {
    if (req.method !== 'OPTIONS') await ctx.checkAuth(req)
    return undefined
  }
  const build = (route: SurfaceRoute, handler: Handler, errorResponse: Mapper): Route => ({
    method: route.method,
    path: route.path,
    handler: governed(ctx, surface.name, handler),
    maxBytes: ctx.maxBodyBytes,
    bodyBudget: ctx.bodyBudget,
    bodyRead: ctx.bodyRead,
    authenticate,
    errorResponse,
    ...(route.streamBody === undefined ? {} : { streamBody: route.streamBody }),
  })
  const routeOf = (route: SurfaceRoute): Route => {
    const errorResponse = route.errorResponse === undefined ? surfaceError : metered(ctx, route.errorResponse)
    const handler = route.call === undefined ? route.handler : runModelCall(ctx, surface, route.call)
    if (handler === undefined) throw new TypeError(`The ${surface.name} surface's ${route.method} ${route.path} has neither call nor handler`)
    const built = build(route, handler, errorResponse)
    if (route.upgrade !== undefined) built.upgrade = route.upgrade(routeOf)
    return built
  }
  const routes: Route[] = []
  for (const route of surface.routes(ctx)) {
    routes.push(routeOf(route))
    if (route.noPreflight !== true && !preflighted.has(route.path)) {
      preflighted.add(route.path)
      routes.push(build({ method: 'OPTIONS', path: route.path }, preflight, routes[routes.length - 1].errorResponse as Mapper))
    }
  }
  return routes
}

export function proxyRoutes (ctx: ProxyContext, surfaces: SurfaceDeclaration[]): RouteTable & { routes: Route[] } {
  const preflighted = new Set<string>()
  const routes = surfaces.flatMap(surface => surfaceRoutes(ctx, surface, preflighted))
  // Unknown /v1 paths answer in the chat-completions shape (the first surface's); /v1beta/* is the native wildcard's.
  return { scope: '/v1', routes, errorResponse: routes[0].errorResponse }
}
