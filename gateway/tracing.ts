// Loaded with `node --import` before any other module (package.json "start"), so the instrumentations can
// patch http, Hapi, undici and mongodb before they load. Tracing starts only when configured:
// OTEL_EXPORTER_OTLP_ENDPOINT (or _TRACES_ENDPOINT) or OTEL_TRACES_EXPORTER set. The other standard
// OTEL_* variables (headers, sampler, batch delays) are read by the SDK itself.
import { createRequire } from 'node:module'
import type { NodeSDK } from '@opentelemetry/sdk-node'
import { tracingSettings } from './tracing-env.ts'
import type { SocketObserver, SocketRequest } from '../lib/index.ts'

let sdk: NodeSDK | undefined
let nameSpans: ((template: string) => void) | undefined
let socketSpans: Required<Pick<SocketObserver, 'run' | 'served'>> | undefined

// From the OTEL_* variables alone: the full configuration loads the library, whose modules must load after the
// instrumentations. main.ts reports a bad value in one line (the library's readEnvironment checks them too).
const config = tracingSettings(process.env)
if (config.enabled) {
  const { NodeSDK } = await import('@opentelemetry/sdk-node')
  const { HttpInstrumentation } = await import('@opentelemetry/instrumentation-http')
  const { HapiInstrumentation } = await import('@opentelemetry/instrumentation-hapi')
  const { UndiciInstrumentation } = await import('@opentelemetry/instrumentation-undici')
  const { MongoDBInstrumentation } = await import('@opentelemetry/instrumentation-mongodb')
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http')
  const { context, trace } = await import('@opentelemetry/api')
  const { getRPCMetadata, RPCType } = await import('@opentelemetry/core')
  const { redactingTracerProvider } = await import('./trace-redaction.ts')
  const instrumentations = [
    new HttpInstrumentation({
      // Probes and scrapes every few seconds would drown the traces that matter.
      ignoreIncomingRequestHook: req => /^\/(livez|readyz|health|metrics)(\?|$)/.test(req.url ?? ''),
    }),
    new HapiInstrumentation(),
    new UndiciInstrumentation(),
    new MongoDBInstrumentation(),
  ]
  sdk = new NodeSDK({
    serviceName: config.serviceName,
    // With only an endpoint given, OTLP/HTTP in JSON (every collector accepts it on 4318); an explicit
    // OTEL_TRACES_EXPORTER lets the SDK choose the exporter and protocol from the OTEL_* variables.
    traceExporter: config.tracesExporter === undefined ? new OTLPTraceExporter() : undefined,
    instrumentations,
  })
  sdk.start()
  // Session tokens, proxy passwords and API keys travel in query strings (?token=, ?key=): every span is
  // redacted as it is made, whatever exporter the OTEL_* variables pick. Set after start(), which hands each
  // instrumentation the plain global provider.
  const redacting = redactingTracerProvider(trace.getTracerProvider())
  for (const instrumentation of instrumentations) instrumentation.setTracerProvider(redacting)
  // The instrumentations hook CommonJS require(), but the gateway imports Hapi as ESM, which bypasses that
  // hook. Requiring it once here lets the Hapi instrumentation patch the module object that the ESM import
  // then shares from the CommonJS cache. (MongoDB is patched through its internal requires.)
  createRequire(import.meta.url)('@hapi/hapi')
  // Hapi sees the library's wildcard routes (mountRoutes, onRoute); the request's spans take the table route's
  // template instead: the Hapi route span, active in the handler, and the HTTP server span, which reads its route
  // from the request's RPC metadata when the response ends.
  nameSpans = template => {
    const active = context.active()
    const metadata = getRPCMetadata(active)
    if (metadata?.type === RPCType.HTTP) metadata.route = template
    const span = trace.getSpan(active)
    span?.updateName(`route - ${template}`)
    span?.setAttribute('http.route', template)
  }
  // A request served over a WebSocket has no HTTP server span of its own (the upgrade bypasses the instrumentation):
  // it runs in one made for it, named and attributed as the HTTP instrumentation names a POST's, so its calls nest.
  const { SpanKind, SpanStatusCode } = await import('@opentelemetry/api')
  const tracer = redacting.getTracer('gatehouse-gateway')
  socketSpans = {
    run: async ({ method, route }, serve) => {
      await tracer.startActiveSpan(`${method} ${route}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'http.route': route, 'network.protocol.name': 'websocket' } }, async span => {
        try {
          await serve()
        } finally {
          span.end()
        }
      })
    },
    served: ({ status }) => {
      const span = trace.getActiveSpan()
      span?.setAttribute('http.response.status_code', status)
      if (status >= 500) span?.setStatus({ code: SpanStatusCode.ERROR })
    },
  }
}

/** Names the current request's trace spans after the table route it takes (MountOptions.onRoute); nothing without tracing. */
export function nameRequestSpans (template: string): void {
  nameSpans?.(template)
}

/** Runs a request served over a WebSocket in its own server span (gateway/socket-log.ts); as is without tracing. */
export async function inSocketSpan (request: { method: string, route: string }, serve: () => Promise<void>): Promise<void> {
  await (socketSpans === undefined ? serve() : socketSpans.run(request, serve))
}

/** Gives the span of a request served over a WebSocket its status; nothing without tracing. */
export function endSocketSpan (request: SocketRequest): void {
  socketSpans?.served(request)
}

/** Exports the spans still buffered; called by main.ts before the process exits. */
export async function shutdownTracing (): Promise<void> {
  await sdk?.shutdown()
}
