// A local OTLP/HTTP endpoint (JSON encoding, as @opentelemetry/exporter-trace-otlp-http sends) that keeps
// every exported span, so a test can point OTEL_EXPORTER_OTLP_ENDPOINT at it and assert span trees.
import http from 'node:http'
import type { AddressInfo } from 'node:net'

export interface ReceivedSpan {
  traceId: string
  spanId: string
  /** '' for a root span. */
  parentSpanId: string
  name: string
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number
  attributes: Record<string, unknown>
  /** The instrumentation scope, e.g. @opentelemetry/instrumentation-http. */
  scope: string
  /** Resource attributes (service.name...). */
  resource: Record<string, unknown>
  /** The span as exported (events, status, links...), for checks on everything a collector would see. */
  raw: Record<string, unknown>
}

export interface OtlpReceiver {
  /** Base URL for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string
  spans: ReceivedSpan[]
  /** Resolves once a span matching `match` has arrived (rejects after timeoutMs, default 10000). */
  waitForSpan (match: (span: ReceivedSpan) => boolean, timeoutMs?: number): Promise<ReceivedSpan>
  close (): Promise<void>
}

export const SPAN_KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3 } as const

function value (v: any): unknown {
  if (v === null || typeof v !== 'object') return v
  if ('stringValue' in v) return v.stringValue
  if ('intValue' in v) return Number(v.intValue)
  if ('doubleValue' in v) return v.doubleValue
  if ('boolValue' in v) return v.boolValue
  if ('arrayValue' in v) return (v.arrayValue.values ?? []).map(value)
  return v
}

function attributes (list: any[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const a of list ?? []) out[a.key] = value(a.value)
  return out
}

export async function startOtlpReceiver (): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = []
  const waiters = new Set<() => void>()
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      if (req.url === '/v1/traces' && /json/.test(req.headers['content-type'] ?? '')) {
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
          for (const rs of body.resourceSpans ?? []) {
            const resource = attributes(rs.resource?.attributes)
            for (const ss of rs.scopeSpans ?? []) {
              for (const s of ss.spans ?? []) {
                spans.push({
                  traceId: String(s.traceId),
                  spanId: String(s.spanId),
                  parentSpanId: s.parentSpanId === undefined ? '' : String(s.parentSpanId),
                  name: s.name,
                  kind: s.kind,
                  attributes: attributes(s.attributes),
                  scope: ss.scope?.name ?? '',
                  resource,
                  raw: s,
                })
              }
            }
          }
          for (const wake of waiters) wake()
        } catch {
          res.writeHead(400).end()
          return
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    waitForSpan (match, timeoutMs = 10000) {
      return new Promise((resolve, reject) => {
        const check = (): boolean => {
          const found = spans.find(match)
          if (found === undefined) return false
          waiters.delete(wake)
          clearTimeout(timer)
          resolve(found)
          return true
        }
        const wake = (): void => { check() }
        const timer = setTimeout(() => {
          waiters.delete(wake)
          reject(new Error(`no matching span within ${timeoutMs} ms; got: ${spans.map(s => `${s.scope} ${s.name}`).join(', ')}`))
        }, timeoutMs)
        waiters.add(wake)
        check()
      })
    },
    close: () => new Promise(resolve => { server.closeAllConnections(); server.close(() => resolve()) }),
  }
}
