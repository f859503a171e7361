// The one upgrade path, shared by the node:http and Hapi hosts ('upgrade' event): the route's credential check on
// the handshake (refused with the route's own HTTP error answer before anything is upgraded), the handshake itself,
// then the socket handed to the route (Route.upgrade).
import { STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
import type { HandlerRequest, HandlerResponse, Route, RouteTable } from './contract.ts'
import { fail, logFailure } from '../errors.ts'
import { clientAddress } from './client-address.ts'
import { firstQueryValues, joinedHeaders, unknownRouteResponse } from './serve.ts'
import type { Dispatch, HostRequest, ServeOptions } from './serve.ts'
import { handshakeProblem, serverWebSocket, switchingProtocols } from './websocket.ts'

/** Writes a plain HTTP answer on a socket that was not upgraded, and closes it. */
export function refuseUpgrade (socket: Duplex, response: HandlerResponse): void {
  if (socket.destroyed) return
  const payload = response.body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(response.body))
  let head = `HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? ''}\r\nConnection: close\r\nContent-Length: ${payload.length}\r\n`
  if (payload.length > 0) head += 'Content-Type: application/json; charset=utf-8\r\n'
  for (const [name, value] of Object.entries(response.headers ?? {})) head += `${name}: ${value}\r\n`
  socket.end(Buffer.concat([Buffer.from(head + '\r\n'), payload]))
}

/**
 * Serves an upgrade request on a dispatched path: no route answers as the tables answer a request no route takes
 * (404/405), a route without `upgrade` 400; then the route's authenticate, then the handshake. Never rejects.
 */
export async function serveUpgrade (tables: readonly RouteTable[], found: Dispatch, host: HostRequest, socket: Duplex, head: Buffer, options: ServeOptions = {}): Promise<void> {
  if (found.route === undefined) return refuseUpgrade(socket, unknownRouteResponse(tables, host.path, found.methodNotAllowed))
  if (found.route.upgrade === undefined) return refuseUpgrade(socket, found.route.errorResponse(fail('INVALID_INPUT', 'This path takes no WebSocket upgrade')))
  await upgradeRoute(found.route, host, socket, head, options)
}

async function upgradeRoute (route: Route, host: HostRequest, socket: Duplex, head: Buffer, options: ServeOptions): Promise<void> {
  const upgrade = route.upgrade as NonNullable<Route['upgrade']>
  const gone = new AbortController()
  socket.once('close', () => gone.abort(new Error('client disconnected')))
  const request: HandlerRequest = {
    method: host.method,
    path: host.path,
    params: host.params,
    query: firstQueryValues(host.query),
    headers: joinedHeaders(host.headers),
    body: undefined,
    remoteAddress: host.remoteAddress ?? clientAddress(host.peerAddress, host.headers, options.trustedProxies),
    signal: gone.signal,
  }
  const started = Date.now()
  const answered = (status: number): void => options.sockets?.handshake?.({ route: route.path, status, seconds: (Date.now() - started) / 1000, remoteAddress: request.remoteAddress })
  const refuse = (response: HandlerResponse): void => {
    refuseUpgrade(socket, response)
    answered(response.status)
  }
  try {
    const refused = route.authenticate === undefined ? undefined : await route.authenticate(request)
    if (refused !== undefined) return refuse(refused)
    const problem = handshakeProblem(request.headers)
    if (problem !== undefined) return refuse(route.errorResponse(fail('INVALID_INPUT', problem), request))
  } catch (err) {
    logFailure(options.logger, err, { route: route.path, method: request.method }, 'upgrade refused')
    return refuse(route.errorResponse(err, request))
  }
  if (socket.destroyed) return
  socket.write(switchingProtocols(request.headers['sec-websocket-key'] as string))
  answered(101)
  try {
    const ws = serverWebSocket(socket, head, { maxMessageBytes: route.maxBytes })
    const { sockets } = options
    const opened = Date.now()
    sockets?.opened?.({ route: route.path, remoteAddress: request.remoteAddress })
    ws.onClose(code => sockets?.closed?.({ route: route.path, remoteAddress: request.remoteAddress, code, seconds: (Date.now() - opened) / 1000 }))
    upgrade(request, ws, { logger: options.logger, sockets })
  } catch (err) {
    logFailure(options.logger, err, { route: route.path, method: request.method }, 'upgrade failed')
    socket.destroy()
  }
}
