// One OAuth user credential for the Code Assist upstream: loaded once at start-up from a JSON string
// or a file, refreshed through its own token_uri with google-auth-library's OAuth2Client (we decide
// when), one refresh at a time, and written back to its file when the token or project changed.
// Never an interactive login: a credential that cannot be refreshed is reported, not repaired.
import { readFileSync, realpathSync, statSync } from 'node:fs'
import type { OAuth2Client } from 'google-auth-library'
import { ConfigurationError, fail } from '../../errors.ts'
import type { GatehouseError } from '../../errors.ts'
import { parseCredentials, updateCredentials } from './credentials-format.ts'
import type { CredentialsFormat, OAuthCredentialsData } from './credentials-format.ts'
import { createCredentialsFileWriter } from './credentials-file.ts'
import type { CredentialsFileWriter } from './credentials-file.ts'
import { SILENT_LOGGER } from '../../logger.ts'
import type { Logger } from '../../logger.ts'
import { optionalPackage } from '../../load-package.ts'

export interface OAuthCredentialOptions {
  /** OAuth credentials JSON, as a string or already parsed (GEMINI_CREDENTIALS). Wins over credentialsFile. Never written. */
  credentials?: string | Readonly<Record<string, unknown>>
  /** Path to a credentials file (GOOGLE_APPLICATION_CREDENTIALS); refreshed tokens and a discovered project are written back. */
  credentialsFile?: string
  /** OAuth client id for credentials without their own (GEMINI_OAUTH_CLIENT_ID). */
  oauthClientId?: string
  /** OAuth client secret for credentials without their own (GEMINI_OAUTH_CLIENT_SECRET). */
  oauthClientSecret?: string
  /** Refresh when less than this many ms of validity are left. Default 300000 (5 min). */
  refreshMarginMs?: number
  /** Timeout of one token refresh request in ms. Default 15000. */
  refreshTimeoutMs?: number
  /** Write refreshed tokens and a discovered project back to credentialsFile. Default true. */
  writeBack?: boolean
  logger?: Logger
}

export interface OAuthCredential {
  readonly source: 'json' | 'file'
  readonly format: CredentialsFormat
  /** The project id stored with the credentials (project_id), if any. */
  projectId (): string | undefined
  /** A valid access token; refreshes first when under the margin. Throws UPSTREAM_CREDENTIALS_UNUSABLE / UPSTREAM_UNAVAILABLE. */
  accessToken (): Promise<string>
  /** The upstream rejected this token (401): refresh, unless another call already did. */
  refreshAfterRejection (rejectedToken: string): Promise<string>
  /** Remembers a discovered project id and writes it back to a file source when it changed. */
  saveProjectId (projectId: string): Promise<void>
  /** Why the credential can no longer be used (a refresh answered invalid_grant), else undefined. */
  unusableReason (): string | undefined
  /** Tries a refresh even after invalid_grant (a credential pool's re-probe): resolves with a token and forgets the refusal when the token endpoint grants one. */
  reprobe (): Promise<string>
  /** Resolves when pending write-backs have finished. */
  flush (): Promise<void>
}

const DEFAULT_REFRESH_MARGIN_MS = 5 * 60_000
// Google's tokens last an hour; used only if a token answer omits expires_in.
const ASSUMED_LIFETIME_MS = 3600_000

// Unusable credentials are a configuration error found at start-up; `code` keeps the UPSTREAM_NOT_CONFIGURED they were.
const NOT_CONFIGURED = { code: 'UPSTREAM_NOT_CONFIGURED' } as const

/** Loads the credential at start-up (a file is read synchronously, once). Throws ConfigurationError (code UPSTREAM_NOT_CONFIGURED) with a fix-it message. */
export function loadOAuthCredential (options: OAuthCredentialOptions): OAuthCredential {
  const logger = options.logger ?? SILENT_LOGGER
  const margin = options.refreshMarginMs ?? DEFAULT_REFRESH_MARGIN_MS
  const { raw, where, source, writer } = readSource(options, logger)
  let data: OAuthCredentialsData
  try {
    data = parseCredentials(raw, where)
  } catch (err) {
    throw new ConfigurationError(source === 'json' ? 'credentials' : 'credentialsFile', (err as Error).message, NOT_CONFIGURED)
  }
  const clientId = data.clientId ?? options.oauthClientId
  const clientSecret = data.clientSecret ?? options.oauthClientSecret
  if (clientId === undefined || clientSecret === undefined) {
    throw new ConfigurationError('oauthClientId',
      `${where} carries no OAuth client_id/client_secret (gemini-cli's oauth_creds.json has none): ` +
      'set GEMINI_OAUTH_CLIENT_ID and GEMINI_OAUTH_CLIENT_SECRET to the OAuth client that issued the refresh token', NOT_CONFIGURED)
  }
  // google-auth-library (about 20 MB with its HTTP stack) loads on the first refresh, so a process that never
  // refreshes a Code Assist token never loads it.
  let oauth: OAuth2Client | undefined
  async function oauthClient (): Promise<OAuth2Client> {
    const { OAuth2Client } = await optionalPackage('google-auth-library', 'createBackend', async () => await import('google-auth-library'))
    return new OAuth2Client({
      clientId,
      clientSecret,
      endpoints: { oauth2TokenUrl: data.tokenUri },
      transporterOptions: { timeout: options.refreshTimeoutMs ?? 15_000 },
    })
  }

  let stored: Record<string, unknown> = { ...(raw as Record<string, unknown>) }
  let accessToken = data.accessToken
  let expiryMs = data.expiryMs
  let projectId = data.projectId
  let unusable: string | undefined
  let refreshing: Promise<string> | undefined

  function persist (): void {
    if (writer === undefined) return
    stored = updateCredentials(stored, { accessToken, expiryMs, projectId })
    void writer.write(stored)
  }

  // Refreshing 5 minutes early (google-auth's own eager margin) leaves room for clock skew and keeps a
  // token from expiring between the check and the upstream's own check of it.
  function fresh (): boolean {
    return accessToken !== undefined && expiryMs !== undefined && expiryMs - Date.now() > margin
  }

  function refreshError (err: unknown): GatehouseError {
    const answer = (err as { response?: { data?: unknown } } | null)?.response?.data as { error?: unknown, error_description?: unknown } | undefined
    const code = typeof answer?.error === 'string' ? answer.error : undefined
    const detail = typeof answer?.error_description === 'string' ? `: ${answer.error_description}` : ''
    if (code === 'invalid_grant') {
      unusable = `The upstream OAuth refresh token was rejected (invalid_grant${detail}); it was revoked or has expired. ` +
        'Log in again (gemini-cli) to get new credentials, update them and restart.'
    } else if (code === 'invalid_client' || code === 'unauthorized_client') {
      unusable = `The OAuth client was rejected when refreshing the upstream token (${code}${detail}); a refresh token works only with ` +
        'the client that issued it: check client_id/client_secret in the credentials or GEMINI_OAUTH_CLIENT_ID/GEMINI_OAUTH_CLIENT_SECRET.'
    }
    if (unusable !== undefined) {
      logger.error({ tokenUri: data.tokenUri, reason: code }, unusable)
      return fail('UPSTREAM_CREDENTIALS_UNUSABLE', unusable, { cause: err })
    }
    const reason = code ?? (err instanceof Error ? err.message : String(err))
    logger.warn({ reason }, 'Refreshing the upstream access token failed')
    return fail('UPSTREAM_UNAVAILABLE', `Could not refresh the upstream access token: ${reason}`, { cause: err })
  }

  function refresh (): Promise<string> {
    if (unusable !== undefined) return Promise.reject(fail('UPSTREAM_CREDENTIALS_UNUSABLE', unusable))
    refreshing ??= (async () => {
      let result
      try {
        oauth ??= await oauthClient()
        oauth.setCredentials({ refresh_token: data.refreshToken })
        result = await oauth.refreshAccessToken()
      } catch (err) {
        throw refreshError(err)
      }
      const token = result.credentials.access_token
      if (typeof token !== 'string' || token === '') throw fail('UPSTREAM_UNAVAILABLE', 'The token endpoint answered without an access_token')
      const expiry = typeof result.credentials.expiry_date === 'number' ? result.credentials.expiry_date : Date.now() + ASSUMED_LIFETIME_MS
      const changed = token !== accessToken || expiry !== expiryMs
      accessToken = token
      expiryMs = expiry
      logger.debug({ expiresAt: new Date(expiry).toISOString() }, 'Refreshed the upstream access token')
      if (changed) persist()
      return token
    })().finally(() => { refreshing = undefined })
    return refreshing
  }

  return {
    source,
    format: data.format,
    projectId: () => projectId,
    async accessToken () {
      if (unusable !== undefined) throw fail('UPSTREAM_CREDENTIALS_UNUSABLE', unusable)
      if (refreshing === undefined && fresh()) return accessToken as string
      return refresh()
    },
    async refreshAfterRejection (rejectedToken) {
      if (refreshing !== undefined) return refreshing
      if (accessToken !== rejectedToken && fresh()) return accessToken as string
      return refresh()
    },
    async saveProjectId (id) {
      if (id === projectId) return
      projectId = id
      persist()
      await writer?.idle()
    },
    unusableReason: () => unusable,
    async reprobe () {
      const refused = unusable
      unusable = undefined
      try {
        return await refresh()
      } catch (err) {
        unusable ??= refused
        throw err
      }
    },
    flush: async () => { await writer?.idle() },
  }
}

interface Source {
  raw: unknown
  where: string
  source: 'json' | 'file'
  writer?: CredentialsFileWriter
}

function readSource (options: OAuthCredentialOptions, logger: Logger): Source {
  if (options.credentials !== undefined) {
    const where = 'GEMINI_CREDENTIALS'
    if (options.credentialsFile !== undefined) logger.info('Both GEMINI_CREDENTIALS and GOOGLE_APPLICATION_CREDENTIALS are set: using GEMINI_CREDENTIALS')
    if (typeof options.credentials !== 'string') return { raw: options.credentials, where, source: 'json' }
    try {
      return { raw: JSON.parse(options.credentials), where, source: 'json' }
    } catch {
      throw new ConfigurationError('credentials', `${where} is not valid JSON: it must hold OAuth credentials as a JSON object`, NOT_CONFIGURED)
    }
  }
  const given = options.credentialsFile
  if (given === undefined) throw new ConfigurationError('credentials', 'No upstream credentials: set GEMINI_CREDENTIALS or GOOGLE_APPLICATION_CREDENTIALS', NOT_CONFIGURED)
  const where = `The credentials file ${given} (GOOGLE_APPLICATION_CREDENTIALS)`
  let file: string
  let text: string
  let mode: number
  try {
    // Write to the real file, not over a symlink pointing at it.
    file = realpathSync(given)
    text = readFileSync(file, 'utf8')
    mode = statSync(file).mode & 0o777
  } catch (err) {
    throw new ConfigurationError('credentialsFile', `${where} cannot be read: ${(err as Error).message}`, NOT_CONFIGURED)
  }
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch {
    throw new ConfigurationError('credentialsFile', `${where} is not valid JSON`, NOT_CONFIGURED)
  }
  const writer = options.writeBack === false ? undefined : createCredentialsFileWriter(file, { original: text, mode, logger })
  return { raw, where, source: 'file', writer }
}
