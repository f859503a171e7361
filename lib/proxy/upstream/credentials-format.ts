// OAuth user credentials as they are stored: gemini-cli's `oauth_creds.json` (access_token,
// expiry_date in epoch ms, scope string) and google-auth's "authorized_user" JSON (token, expiry as
// ISO-8601, scopes array, client_id/client_secret, token_uri, plus the reference's project_id).
// Parsing normalises both; updating writes changes back in the keys the original already used.

export type CredentialsFormat = 'gemini-cli' | 'authorized-user'

export interface OAuthCredentialsData {
  format: CredentialsFormat
  accessToken?: string
  /** Epoch ms; undefined (missing or unparseable) counts as expired. */
  expiryMs?: number
  refreshToken: string
  scopes?: string[]
  clientId?: string
  clientSecret?: string
  tokenUri: string
  projectId?: string
}

export const DEFAULT_TOKEN_URI = 'https://oauth2.googleapis.com/token'

function nonEmptyString (value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined
}

/** An `expiry` string (ISO-8601; no zone means UTC, as Python's google-auth writes it) in epoch ms. */
export function parseIsoExpiry (value: unknown): number | undefined {
  const text = nonEmptyString(value)?.trim()
  if (text === undefined) return undefined
  const zoned = /(Z|[+-]\d{2}:?\d{2})$/i.test(text) ? text : `${text}Z`
  // Python writes microseconds; Date.parse wants at most milliseconds.
  const ms = Date.parse(zoned.replace(/(\.\d{3})\d+/, '$1'))
  return Number.isFinite(ms) ? ms : undefined
}

function parseEpochMs (value: unknown): number | undefined {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : undefined
}

function detectFormat (raw: Record<string, unknown>): CredentialsFormat {
  if ('expiry_date' in raw) return 'gemini-cli'
  if ('token' in raw || 'expiry' in raw || 'client_id' in raw || raw.type === 'authorized_user') return 'authorized-user'
  return 'gemini-cli'
}

/** Normalises stored credentials; throws an Error saying what is wrong (`where` names the source). */
export function parseCredentials (raw: unknown, where: string): OAuthCredentialsData {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new Error(`${where} must hold OAuth credentials as a JSON object`)
  }
  const r = raw as Record<string, unknown>
  const refreshToken = nonEmptyString(r.refresh_token)
  if (refreshToken === undefined) {
    throw new Error(`${where} has no refresh_token: use the oauth_creds.json written by gemini-cli's login, or authorized_user credentials`)
  }
  const scopes = Array.isArray(r.scopes)
    ? r.scopes.filter((s): s is string => typeof s === 'string')
    : nonEmptyString(r.scope)?.split(/\s+/).filter(s => s !== '')
  return {
    format: detectFormat(r),
    accessToken: nonEmptyString(r.access_token) ?? nonEmptyString(r.token),
    // gemini-cli's epoch-ms expiry is the more precise of the two when both are present.
    expiryMs: parseEpochMs(r.expiry_date) ?? parseIsoExpiry(r.expiry),
    refreshToken,
    scopes,
    clientId: nonEmptyString(r.client_id),
    clientSecret: nonEmptyString(r.client_secret),
    tokenUri: nonEmptyString(r.token_uri) ?? DEFAULT_TOKEN_URI,
    projectId: nonEmptyString(r.project_id),
  }
}

export interface CredentialsUpdate {
  accessToken?: string
  expiryMs?: number
  projectId?: string
}

/**
 * The stored object with the update applied, in the keys the original uses (both when it has both),
 * else in its format's own keys. Everything else (client, scopes, token_type, id_token, ...) is kept.
 */
export function updateCredentials (raw: Record<string, unknown>, update: CredentialsUpdate): Record<string, unknown> {
  const format = detectFormat(raw)
  const out: Record<string, unknown> = { ...raw }
  if (update.accessToken !== undefined) {
    const useToken = 'token' in raw || (format === 'authorized-user' && !('access_token' in raw))
    const useAccessToken = 'access_token' in raw || !useToken
    if (useToken) out.token = update.accessToken
    if (useAccessToken) out.access_token = update.accessToken
  }
  if (update.expiryMs !== undefined) {
    const useIso = 'expiry' in raw || (format === 'authorized-user' && !('expiry_date' in raw))
    const useMs = 'expiry_date' in raw || !useIso
    if (useIso) out.expiry = new Date(update.expiryMs).toISOString()
    if (useMs) out.expiry_date = update.expiryMs
  }
  if (update.projectId !== undefined) out.project_id = update.projectId
  return out
}
