// The Code Assist backend (the upstream gemini-cli uses): OAuth user credentials, project discovery,
// and the {model, project, user_prompt_id, request} / {response, traceId} envelope around the public
// Gemini API shapes the routes work with.
import { randomUUID } from 'node:crypto'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigurationError, isGatehouseError } from '../../errors.ts'
import { createCredentialPool } from './credential-pool.ts'
import { failureKind } from './error-reasons.ts'
import { geminiEventStream } from './backend.ts'
import type { Backend, GeminiResponse, UpstreamCall } from './backend.ts'
import { loadOAuthCredential } from './credentials.ts'
import type { OAuthCredentialOptions } from './credentials.ts'
import { createCodeAssistSetup } from './code-assist-setup.ts'
import type { CodeAssistSetup } from './code-assist-setup.ts'
import { createUpstreamClient } from './client.ts'
import type { UpstreamAuth } from './client.ts'
import { contentsToCount } from './count-tokens.ts'
import type { UpstreamClientOptions } from './options.ts'

import { DEFAULT_CODE_ASSIST_ENDPOINT } from '../../option-rules.ts'
export { DEFAULT_CODE_ASSIST_ENDPOINT } from '../../option-rules.ts'

export interface CodeAssistBackendOptions extends OAuthCredentialOptions, UpstreamClientOptions {
  /** Code Assist base URL. Default `https://cloudcode-pa.googleapis.com` (CODE_ASSIST_ENDPOINT). */
  codeAssistEndpoint?: string
  /** A directory of OAuth credential files (`*.json`), used as a pool; each is written back on refresh like credentialsFile. Wins over credentials/credentialsFile. Default unset (GEMINI_CREDENTIALS_DIR). */
  credentialsDir?: string
  /** Upstream project (GOOGLE_CLOUD_PROJECT and aliases). Default unset: discovered through loadCodeAssist/onboardUser. */
  projectId?: string
  /** Wait between polls of the onboarding operation in ms. Default 5000. */
  onboardPollIntervalMs?: number
  /** Give up on onboarding after this many ms. Default 120000. */
  onboardTimeoutMs?: number
}

/** The inner GenerateContentResponse of a Code Assist answer (changed in place); responseId comes from traceId when missing. */
export function unwrapCodeAssistResponse (envelope: unknown): GeminiResponse {
  const e = envelope !== null && typeof envelope === 'object' && !Array.isArray(envelope) ? envelope as Record<string, unknown> : {}
  const traceId = typeof e.traceId === 'string' ? e.traceId : undefined
  const inner = e.response
  if (inner === null || typeof inner !== 'object' || Array.isArray(inner)) {
    return traceId === undefined ? { candidates: [] } : { candidates: [], responseId: traceId }
  }
  const response = inner as GeminiResponse
  // Set in place rather than copied: the envelope is the client's freshly parsed JSON, read by no one else, and a
  // copy of every streamed event is garbage the collector pays for.
  if (response.responseId === undefined && traceId !== undefined) response.responseId = traceId
  return response
}

/**
 * The credentials to load: every `*.json` file of credentialsDir (named by file name, in name order), else the
 * one given by credentials/credentialsFile (named `credentials`). Throws ConfigurationError naming credentialsDir
 * when it cannot be read or holds no credentials file.
 */
function credentialSources (options: CodeAssistBackendOptions): Array<{ name: string, source: OAuthCredentialOptions }> {
  const dir = options.credentialsDir
  if (dir === undefined) return [{ name: 'credentials', source: {} }]
  let files: string[]
  try {
    files = readdirSync(dir, { withFileTypes: true }).filter(e => !e.isDirectory() && e.name.endsWith('.json')).map(e => e.name).sort()
  } catch (err) {
    throw new ConfigurationError('credentialsDir', `credentialsDir (GEMINI_CREDENTIALS_DIR) cannot be read: ${(err as Error).message}`, { code: 'UPSTREAM_NOT_CONFIGURED' })
  }
  if (files.length === 0) throw new ConfigurationError('credentialsDir', `credentialsDir (GEMINI_CREDENTIALS_DIR) holds no *.json credentials file: ${dir}`, { code: 'UPSTREAM_NOT_CONFIGURED' })
  return files.map(name => ({ name, source: { credentials: undefined, credentialsFile: join(dir, name) } }))
}

/** Throws ConfigurationError (code UPSTREAM_NOT_CONFIGURED) at once when the credentials cannot be used (bad JSON, no refresh token, no OAuth client). */
export function createCodeAssistBackend (options: CodeAssistBackendOptions): Backend {
  const base = (options.codeAssistEndpoint ?? DEFAULT_CODE_ASSIST_ENDPOINT).replace(/\/+$/, '')
  // Parsed once, as these are called on every request; a malformed endpoint stays a string and fails
  // when called, as it always did.
  const endpoint = (path: string): string | URL => URL.canParse(base + path) ? new URL(base + path) : base + path
  const generateUrl = endpoint('/v1internal:generateContent')
  const streamUrl = endpoint('/v1internal:streamGenerateContent?alt=sse')
  const client = createUpstreamClient(options)
  // Each credential has its own account, so its own project (discovered per credential unless projectId is given).
  const members = credentialSources(options).map(({ name, source }) => {
    const credential = loadOAuthCredential({ ...options, ...source })
    const auth: UpstreamAuth = {
      async headers () {
        return { authorization: `Bearer ${await credential.accessToken()}` }
      },
      async rejected (used) {
        await credential.refreshAfterRejection(used.authorization.slice('Bearer '.length))
      },
    }
    const setup = createCodeAssistSetup({
      endpoint: base,
      client,
      auth,
      credential,
      project: options.projectId,
      pollIntervalMs: options.onboardPollIntervalMs,
      pollTimeoutMs: options.onboardTimeoutMs,
      logger: options.logger,
    })
    return { name, value: { credential, auth, setup } }
  })
  // A set-aside file is back when its token refreshes and its project answers loadCodeAssist again.
  const pool = createCredentialPool(members, options, async ({ credential, setup }) => {
    await credential.reprobe()
    await setup.check()
  })

  async function envelope (call: UpstreamCall, setup: CodeAssistSetup): Promise<Record<string, unknown>> {
    const project = await setup.project()
    const request = call.sessionId === undefined ? call.request : { ...call.request, session_id: call.sessionId }
    return { model: call.model, project, user_prompt_id: randomUUID(), request }
  }

  return {
    name: 'code-assist',
    async generate (call) {
      const answer = await pool.run(async ({ auth, setup }) => client.json({ url: generateUrl, body: await envelope(call, setup), model: call.model, auth, signal: call.signal, expectObject: true }), { model: call.model })
      return unwrapCodeAssistResponse(answer)
    },
    async stream (call) {
      return geminiEventStream(await pool.run(async ({ auth, setup }) => client.stream({ url: streamUrl, body: await envelope(call, setup), model: call.model, auth, signal: call.signal }, events => {
        const responses: GeminiResponse[] = []
        for (const event of events) {
          // Events without a response (bookkeeping such as credits) carry nothing for the client.
          if (event === null || typeof event !== 'object' || !('response' in event)) continue
          responses.push(unwrapCodeAssistResponse(event))
        }
        return responses
      }), { model: call.model }))
    },
    async countTokens (call) {
      const body = { request: { model: `models/${call.model}`, contents: contentsToCount(call.request) } }
      const answer = await pool.run(({ auth }) => client.json({ url: `${base}/v1internal:countTokens`, body, model: call.model, auth, signal: call.signal }), { model: call.model }) as Record<string, unknown>
      return { ...answer, totalTokens: typeof answer.totalTokens === 'number' ? answer.totalTokens : 0 }
    },
    async ready () {
      // Ready while one credential works; one that is refused (invalid_grant, no licence) is set aside on the way.
      await pool.reprobe()
      let reason: string | undefined
      for (const { name, value: { credential, setup } } of pool.usable()) {
        try {
          await credential.accessToken()
          await setup.project()
          return { ok: true }
        } catch (err) {
          reason = (err as Error).message
          if (isGatehouseError(err) && failureKind(err) === 'credential') pool.setAside(name, reason)
        }
      }
      return reason === undefined ? pool.ready() : { ok: false, reason }
    },
    async close () {
      for (const { value } of members) value.setup.close()
      await client.close()
      await Promise.all(members.map(m => m.value.credential.flush()))
    },
  }
}
