import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import type { HandlerResponse, SocketObserver } from './contract.ts'
import { isStreamBody } from './contract.ts'
import { createDispatcher, serveRoute, toTables, unknownRouteResponse, writeStreamBody } from './serve.ts'
import type { Tables } from './serve.ts'
import { parseTrustedProxies } from './client-address.ts'
import { serveUpgrade } from './upgrade.ts'
import type { Logger } from '../logger.ts'

export interface NodeListenerOptions {
  /** Answer for paths outside every table's scope when there is no `next` (default: 404 JSON, 405 for a known path). */
  notFound?: (req: IncomingMessage) => HandlerResponse
  /**
   * Proxies (addresses, CIDR ranges; a comma-separated string or a list) whose X-Forwarded-For / Forwarded
   * header names the client, for the limiters. Default none: the socket's peer is the client.
   */
  trustedProxies?: string | readonly string[]
  /** Told about handler errors outside the catalogue (bugs). Default none. */
  logger?: Logger
  /** Told about WebSocket routes' sockets and the requests served on them (Route.upgrade). Default none. */
  sockets?: SocketObserver
}

type Next = (err?: unknown) => void

/** The listener, with `upgrade` for the server's 'upgrade' event: `server.on('upgrade', listener.upgrade)` (WebSocket routes). */
export interface NodeListener {
  (req: IncomingMessage & { body?: unknown }, res: ServerResponse, next?: Next): void
  upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void
}

/**
 * A `node:http` request listener serving route tables (lib/http/serve.ts does the serving). It also works as
 * Express/Connect middleware: paths outside every table's scope go to `next()`, and a body already parsed by
 * express.json() is used as is.
 */
export function createNodeListener (tables: Tables, options: NodeListenerOptions = {}): NodeListener {
  const list = toTables(tables)
  const dispatch = createDispatcher(list)
  const serveOptions = {
    trustedProxies: options.trustedProxies === undefined ? undefined : parseTrustedProxies(options.trustedProxies),
    logger: options.logger,
    sockets: options.sockets,
  }
  const listener = function gatehouseListener (req: IncomingMessage & { body?: unknown }, res: ServerResponse, next?: Next): void {
    const url = new URL(req.url ?? '/', 'http://localhost')
    const method = (req.method ?? 'GET').toUpperCase()
    const found = dispatch(method, url.pathname)
    if (found.route === undefined) {
      // A table's scope is its own: unknown paths in it answer in its shape in every host, Express included.
      if (!found.inScope && next !== undefined) return next()
      const response = !found.inScope && options.notFound !== undefined
        ? options.notFound(req)
        : unknownRouteResponse(list, url.pathname, found.methodNotAllowed)
      void send(res, response)
      return
    }
    const controller = new AbortController()
    res.once('close', () => { if (!res.writableFinished) controller.abort() })
    void serveRoute(found.route, {
      method,
      path: url.pathname,
      params: found.params,
      query: url.searchParams,
      headers: req.headers,
      peerAddress: req.socket.remoteAddress,
      body: req,
      parsedBody: req.body,
      signal: controller.signal,
    }, serveOptions).then(async response => await send(res, response, controller.signal, options.logger)).catch(() => { res.destroy() })
  }
  listener.upgrade = function gatehouseUpgrade (req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://localhost')
    const host = { method: 'GET', path: url.pathname, params: {}, query: url.searchParams, headers: req.headers, peerAddress: req.socket.remoteAddress }
    const found = dispatch('GET', url.pathname)
    if (found.route !== undefined) host.params = found.params
    void serveUpgrade(list, found, host, socket, head, serveOptions)
  }
  return listener
}

async function send (res: ServerResponse, response: HandlerResponse, signal?: AbortSignal, logger?: Logger): Promise<void> {
  const headers: Record<string, string> = { ...response.headers }
  const { body } = response
  if (isStreamBody(body)) return await writeStreamBody(res, response.status, headers, body, signal, logger)
  if (body === undefined) {
    res.writeHead(response.status, headers)
    res.end()
    return
  }
  const payload = Buffer.from(JSON.stringify(body))
  headers['content-type'] ??= 'application/json; charset=utf-8'
  headers['content-length'] = String(payload.length)
  res.writeHead(response.status, headers)
  res.end(payload)
}
