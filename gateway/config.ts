// The gateway's configuration: the library's environment reader (readEnvironment, which the examples
// share) and whether traces are exported, decided as gateway/tracing.ts decides it.
import { readEnvironment } from '../lib/index.ts'
import type { EnvironmentConfig } from '../lib/index.ts'
import { tracingSettings } from './tracing-env.ts'

export { EnvironmentError as ConfigError, configurationErrorLine } from '../lib/index.ts'
export type { LogLevel, BackendKind as GeminiBackend } from '../lib/index.ts'

export interface GatewayConfig extends EnvironmentConfig {
  /** Service name on traces. Default `gatehouse` (OTEL_SERVICE_NAME). */
  readonly otelServiceName: string
  /** OTEL_TRACES_EXPORTER as given (otlp, console, zipkin...): the SDK picks that exporter. Default unset: OTLP over HTTP with JSON. */
  readonly otelTracesExporter?: string
  /** Traces are exported: OTEL_EXPORTER_OTLP_ENDPOINT (or _TRACES_ENDPOINT) or OTEL_TRACES_EXPORTER (not `none`) is set. Default false. */
  readonly tracingEnabled: boolean
}

/** Reads and validates the environment; throws ConfigError (one line naming the variable) on a bad value. */
export function loadConfig (env: Record<string, string | undefined>): GatewayConfig {
  const config = readEnvironment(env)
  const tracing = tracingSettings(env)
  const exporter = tracing.tracesExporter === undefined ? {} : { otelTracesExporter: tracing.tracesExporter }
  return Object.freeze({ ...config, otelServiceName: tracing.serviceName, ...exporter, tracingEnabled: tracing.enabled })
}
