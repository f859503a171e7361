// Options shared by everything that talks to an upstream (both backends, the credential refresher,
// project discovery), with their defaults in one place.
import type { ProxyObserver } from './backend.ts'
import type { CredentialPoolOptions } from './credential-pool.ts'
import type { Logger } from '../../logger.ts'

export interface UpstreamClientOptions extends CredentialPoolOptions {
  /** Version in the gemini-cli style User-Agent `GeminiCLI/<version>/<model> (<platform>; <arch>; gatehouse)`. Default `0.36.0`. */
  userAgentVersion?: string
  /** TCP/TLS connect timeout in ms. Default 10000. */
  connectTimeoutMs?: number
  /** Longest wait in ms for the response headers and between two body chunks; streams have no overall limit. Default 300000 (5 min). */
  idleTimeoutMs?: number
  /** Retries of a unary call answered 499/5xx on the same credential (never for streams; a 429 is never retried on the same credential: the pool fails over). Default 1. */
  maxRetries?: number
  /** First backoff in ms without a RetryInfo hint; doubles per retry, with jitter. Default 1000. */
  retryBaseDelayMs?: number
  /** Longest upstream RetryInfo delay in ms that a 5xx retry waits out; a longer one fails at once. Default 10000. */
  maxRetryDelayMs?: number
  /** Logger. Default none. Tokens and keys are never logged. */
  logger?: Logger
  /** Told about every upstream HTTP call (for metrics). Default none. */
  observer?: ProxyObserver
}

export const UPSTREAM_DEFAULTS = {
  userAgentVersion: '0.36.0',
  connectTimeoutMs: 10_000,
  idleTimeoutMs: 300_000,
  maxRetries: 1,
  retryBaseDelayMs: 1000,
  maxRetryDelayMs: 10_000,
} as const

