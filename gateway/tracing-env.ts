// Whether traces are exported, from the standard OTEL_* variables alone. It imports nothing: gateway/tracing.ts
// reads it before the instrumentations patch http, Hapi, undici and mongodb, so it must load none of them (the
// library's entry loads undici). The library's environment reader (readEnvironment) validates the
// same variables and reports a bad one.

export interface TracingSettings {
  /** OTEL_EXPORTER_OTLP_ENDPOINT (or _TRACES_ENDPOINT) is an http(s) URL, or OTEL_TRACES_EXPORTER is set and not `none`. */
  enabled: boolean
  /** OTEL_SERVICE_NAME. Default `gatehouse`. */
  serviceName: string
  /** OTEL_TRACES_EXPORTER as given; unset means OTLP over HTTP with JSON. */
  tracesExporter?: string
}

function value (env: Record<string, string | undefined>, name: string): string | undefined {
  const raw = env[name]?.trim()
  // An empty variable counts as unset, as everywhere in the configuration.
  return raw === undefined || raw === '' ? undefined : raw
}

function isHttpUrl (raw: string | undefined): boolean {
  if (raw === undefined || !URL.canParse(raw)) return false
  const { protocol } = new URL(raw)
  return protocol === 'http:' || protocol === 'https:'
}

export function tracingSettings (env: Record<string, string | undefined>): TracingSettings {
  const tracesExporter = value(env, 'OTEL_TRACES_EXPORTER')
  const enabled = tracesExporter !== undefined
    ? tracesExporter.toLowerCase() !== 'none'
    : isHttpUrl(value(env, 'OTEL_EXPORTER_OTLP_ENDPOINT')) || isHttpUrl(value(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'))
  const settings: TracingSettings = { enabled, serviceName: value(env, 'OTEL_SERVICE_NAME') ?? 'gatehouse' }
  if (tracesExporter !== undefined) settings.tracesExporter = tracesExporter
  return settings
}
