// WebSockets in the request log, metrics and traces (lib's SocketObserver, given to hapiPlugin): each request served
// over a socket (a Responses turn) is logged, counted and traced as the POST it is served as, with
// `transport: "websocket"`; the socket's own opening and closing are logged and gauged.
import { randomUUID } from 'node:crypto'
import type { SocketObserver } from '../lib/index.ts'
import { preRedacted } from './logger.ts'
import type { Logger } from './logger.ts'
import type { Metrics } from './metrics.ts'
import { endSocketSpan, inSocketSpan } from './tracing.ts'

export function socketObserver (logger: Logger, metrics: Metrics): SocketObserver {
  return {
    run: inSocketSpan,
    opened ({ route, remoteAddress }) {
      metrics.socketOpened(route)
      logger.info(preRedacted({ route, transport: 'websocket', remoteAddress }), 'websocket opened')
    },
    closed ({ route, remoteAddress, code, seconds }) {
      metrics.socketClosed(route)
      logger.info(preRedacted({ route, transport: 'websocket', code, durationMs: Math.round(seconds * 10000) / 10, remoteAddress }), 'websocket closed')
    },
    served (request) {
      const { method, route, status, seconds, remoteAddress, aborted } = request
      metrics.observeSocketRequest(method, route, status, seconds)
      endSocketSpan(request)
      // The request line's fields (gateway/server.ts, installRequestLog), one id per request as on HTTP.
      const entry = preRedacted({ reqId: randomUUID(), method, route, url: route, transport: 'websocket', status, durationMs: Math.round(seconds * 10000) / 10, remoteAddress, ...(aborted ? { aborted: true } : {}) })
      if (status >= 500) logger.error(entry, 'request')
      else logger.info(entry, 'request')
    },
  }
}
