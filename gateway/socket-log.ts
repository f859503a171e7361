// WebSockets in the request log, metrics and traces (lib's SocketObserver, given to hapiPlugin): each handshake is a
// request line (GET, 101 or its refusal) and each request served over a socket (a Responses turn) one too, counted
// and traced as the POST it is served as, both with `transport: "websocket"`; open sockets are gauged, closes logged.
import { randomUUID } from 'node:crypto'
import type { SocketObserver } from '../lib/index.ts'
import { preRedacted } from './logger.ts'
import type { Logger } from './logger.ts'
import type { Metrics } from './metrics.ts'
import { endSocketSpan, inSocketSpan } from './tracing.ts'

export function socketObserver (logger: Logger, metrics: Metrics): SocketObserver {
  return {
    run: inSocketSpan,
    handshake ({ route, status, seconds, remoteAddress }) {
      metrics.observeRequest('GET', route, status, seconds)
      requestLine(logger, { method: 'GET', route, status, seconds, remoteAddress, aborted: false })
    },
    opened ({ route }) { metrics.socketOpened(route) },
    closed ({ route, remoteAddress, code, seconds }) {
      metrics.socketClosed(route)
      logger.info(preRedacted({ route, transport: 'websocket', code, durationMs: Math.round(seconds * 10000) / 10, remoteAddress }), 'websocket closed')
    },
    served (request) {
      const { method, route, status, seconds, remoteAddress, aborted } = request
      metrics.observeSocketRequest(method, route, status, seconds)
      endSocketSpan(request)
      requestLine(logger, { method, route, status, seconds, remoteAddress, aborted })
    },
  }
}

/** The request line's fields (gateway/server.ts, installRequestLog), with an id of its own as on HTTP. */
function requestLine (logger: Logger, { method, route, status, seconds, remoteAddress, aborted }: { method: string, route: string, status: number, seconds: number, remoteAddress?: string, aborted: boolean }): void {
  const entry = preRedacted({ reqId: randomUUID(), method, route, url: route, transport: 'websocket', status, durationMs: Math.round(seconds * 10000) / 10, remoteAddress, ...(aborted ? { aborted: true } : {}) })
  if (status >= 500) logger.error(entry, 'request')
  else logger.info(entry, 'request')
}
