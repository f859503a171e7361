// Picks the upstream backend from configuration: Vertex AI when asked for, else Code Assist when OAuth credentials
// are given, else the public Gemini API when a key is, else a backend whose calls answer 503 saying what to configure.
import { ConfigurationError, fail } from '../../errors.ts'
import { BACKEND_KINDS, backendProblem, chooseBackend, isHttpUrl, vertexLocationProblem } from '../../option-rules.ts'
import type { Backend } from './backend.ts'
import { createCodeAssistBackend } from './code-assist-backend.ts'
import type { CodeAssistBackendOptions } from './code-assist-backend.ts'
import { apiKeyList, createGeminiApiBackend } from './gemini-api-backend.ts'
import type { GeminiApiBackendOptions } from './gemini-api-backend.ts'
import { createVertexBackend } from './vertex-backend.ts'
import type { VertexBackendOptions } from './vertex-backend.ts'

export interface BackendOptions extends CodeAssistBackendOptions, GeminiApiBackendOptions, VertexBackendOptions {
  /** Which upstream (GEMINI_BACKEND). Default `code-assist` with OAuth credentials, else `gemini-api` with an API key, else none; `vertex` only when chosen. */
  backend?: 'code-assist' | 'gemini-api' | 'vertex'
}

// Names the library's options first, then the variables the gateway (and readEnvironment) sets them from.
const NOT_CONFIGURED = 'No upstream is configured: give createProxy an `upstream` with credentials, credentialsFile or credentialsDir (Code Assist) or apiKey (Gemini API); from the environment: GEMINI_CREDENTIALS, GOOGLE_APPLICATION_CREDENTIALS, GEMINI_CREDENTIALS_DIR or GEMINI_API_KEY'

// The backends that stand for "no upstream", so the proxy can say none is configured (createProxy's upstream()).
const UNCONFIGURED = new WeakSet<Backend>()

/** A backend that answers every call with UPSTREAM_NOT_CONFIGURED (503) and is never ready. */
export function createUnconfiguredBackend (reason = NOT_CONFIGURED): Backend {
  const refuse = async (): Promise<never> => { throw fail('UPSTREAM_NOT_CONFIGURED', reason) }
  const backend: Backend = {
    generate: refuse,
    stream: refuse,
    countTokens: refuse,
    ready: async () => ({ ok: false, reason }),
    close: async () => {},
  }
  UNCONFIGURED.add(backend)
  return backend
}

/** False for the backend createBackend returns when no upstream is configured. */
export function isConfiguredBackend (backend: Backend): boolean {
  return !UNCONFIGURED.has(backend)
}

function refuse (name: string, rule: string, value: unknown, prefix: string): never {
  const shown = typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? ` (got ${JSON.stringify(value)})` : ''
  throw new ConfigurationError(prefix + name, `createBackend: ${name} must be ${rule}${shown}`)
}

/**
 * Checks every createBackend option's type and range (not the credentials' content, which the Code Assist
 * backend checks as it loads them); throws ConfigurationError naming the option. `prefix` is `upstream.` when
 * createProxy checks its `upstream`. Secrets (apiKey, credentials, oauthClientSecret) are never shown.
 */
export function checkBackendOptions (options: BackendOptions, prefix = ''): void {
  if (options === null || typeof options !== 'object') refuse('options', 'an object', undefined, prefix)
  const o = options as Record<string, unknown>
  if (o.backend !== undefined && !(BACKEND_KINDS as readonly unknown[]).includes(o.backend)) refuse('backend', BACKEND_KINDS.map(k => `'${k}'`).join(' or '), o.backend, prefix)
  for (const name of ['codeAssistEndpoint', 'geminiApiEndpoint', 'vertexEndpoint']) {
    if (o[name] !== undefined && !isHttpUrl(o[name])) refuse(name, 'an http(s) URL', o[name], prefix)
  }
  for (const name of ['apiKey', 'oauthClientSecret']) if (o[name] !== undefined && typeof o[name] !== 'string') refuse(name, 'a string', undefined, prefix)
  for (const name of ['credentialsFile', 'credentialsDir', 'oauthClientId', 'projectId', 'userAgentVersion']) {
    if (o[name] !== undefined && (typeof o[name] !== 'string' || o[name] === '')) refuse(name, 'a non-empty string', o[name], prefix)
  }
  if (o.vertexLocation !== undefined) {
    const problem = vertexLocationProblem(o.vertexLocation, { vertex: o.backend === 'vertex', hasProject: o.projectId !== undefined, hasEndpoint: o.vertexEndpoint !== undefined }, { project: 'projectId', endpoint: 'vertexEndpoint' })
    if (problem !== undefined) throw new ConfigurationError(prefix + 'vertexLocation', `createBackend: vertexLocation ${problem}`)
  }
  if (o.credentials !== undefined && typeof o.credentials !== 'string' && (o.credentials === null || typeof o.credentials !== 'object' || Array.isArray(o.credentials))) {
    refuse('credentials', 'OAuth credentials as a JSON string or object', undefined, prefix)
  }
  for (const name of ['connectTimeoutMs', 'idleTimeoutMs', 'retryBaseDelayMs', 'onboardPollIntervalMs', 'onboardTimeoutMs', 'refreshTimeoutMs', 'credentialCooldownMs', 'maxCredentialCooldownMs', 'credentialReprobeMs', 'maxCredentialReprobeMs']) {
    const v = o[name]
    if (v !== undefined && !(Number.isSafeInteger(v) && (v as number) >= 1)) refuse(name, 'a positive whole number of ms', v, prefix)
  }
  for (const name of ['maxRetries', 'maxRetryDelayMs', 'refreshMarginMs']) {
    const v = o[name]
    if (v !== undefined && !(Number.isSafeInteger(v) && (v as number) >= 0)) refuse(name, 'a whole number, 0 or more', v, prefix)
  }
  if (o.now !== undefined && typeof o.now !== 'function') refuse('now', 'a function', undefined, prefix)
  if (o.writeBack !== undefined && typeof o.writeBack !== 'boolean') refuse('writeBack', 'true or false', o.writeBack, prefix)
}

/**
 * Throws ConfigurationError at start-up on a bad option, and when the chosen backend lacks what it needs (with
 * `code` UPSTREAM_NOT_CONFIGURED) or its credentials are unusable. With no upstream at all it returns a backend
 * whose calls answer 503: the intended state of a proxy deployed without credentials.
 */
export function createBackend (options: BackendOptions): Backend {
  checkBackendOptions(options)
  const inputs = {
    backend: options.backend,
    hasOAuth: options.credentials !== undefined || options.credentialsFile !== undefined || options.credentialsDir !== undefined,
    hasKey: apiKeyList(options.apiKey).length > 0,
    hasProject: options.projectId !== undefined,
  }
  const problem = backendProblem(inputs)
  if (problem !== undefined) throw new ConfigurationError('backend', problem, { code: 'UPSTREAM_NOT_CONFIGURED' })
  const kind = chooseBackend(inputs)
  if (kind === 'code-assist') return createCodeAssistBackend(options)
  if (kind === 'gemini-api') return createGeminiApiBackend(options)
  if (kind === 'vertex') return createVertexBackend(options)
  options.logger?.warn(NOT_CONFIGURED)
  return createUnconfiguredBackend()
}
