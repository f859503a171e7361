// Picks the upstream backend from configuration: Code Assist when OAuth credentials are given, else the
// public Gemini API when a key is, else a backend whose calls answer 503 saying what to configure.
import { fail } from '../../errors.ts'
import type { Backend } from './backend.ts'
import { createCodeAssistBackend } from './code-assist-backend.ts'
import type { CodeAssistBackendOptions } from './code-assist-backend.ts'
import { createGeminiApiBackend } from './gemini-api-backend.ts'
import type { GeminiApiBackendOptions } from './gemini-api-backend.ts'

export interface BackendOptions extends CodeAssistBackendOptions, GeminiApiBackendOptions {
  /** Which upstream (GEMINI_BACKEND). Default `code-assist` with OAuth credentials, else `gemini-api` with an API key, else none. */
  backend?: 'code-assist' | 'gemini-api'
}

const NOT_CONFIGURED = 'No upstream is configured: set GEMINI_CREDENTIALS or GOOGLE_APPLICATION_CREDENTIALS (Code Assist), or GEMINI_API_KEY (Gemini API)'

/** A backend that answers every call with UPSTREAM_NOT_CONFIGURED (503) and is never ready. */
export function createUnconfiguredBackend (reason = NOT_CONFIGURED): Backend {
  const refuse = async (): Promise<never> => { throw fail('UPSTREAM_NOT_CONFIGURED', reason) }
  return {
    generate: refuse,
    stream: refuse,
    countTokens: refuse,
    ready: async () => ({ ok: false, reason }),
    close: async () => {},
  }
}

/** Throws UPSTREAM_NOT_CONFIGURED at start-up when the chosen backend lacks what it needs or its credentials are unusable. */
export function createBackend (options: BackendOptions): Backend {
  const hasOAuth = options.credentials !== undefined || options.credentialsFile !== undefined
  const hasKey = options.apiKey !== undefined && options.apiKey !== ''
  const kind = options.backend ?? (hasOAuth ? 'code-assist' : hasKey ? 'gemini-api' : undefined)
  if (kind === 'code-assist') {
    if (!hasOAuth) throw fail('UPSTREAM_NOT_CONFIGURED', 'GEMINI_BACKEND is code-assist but neither GEMINI_CREDENTIALS nor GOOGLE_APPLICATION_CREDENTIALS is set')
    return createCodeAssistBackend(options)
  }
  if (kind === 'gemini-api') {
    if (!hasKey) throw fail('UPSTREAM_NOT_CONFIGURED', 'GEMINI_BACKEND is gemini-api but GEMINI_API_KEY is not set')
    return createGeminiApiBackend(options)
  }
  options.logger?.warn(NOT_CONFIGURED)
  return createUnconfiguredBackend()
}
