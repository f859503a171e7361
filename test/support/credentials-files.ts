// OAuth credentials in each stored format, as objects, JSON strings or temp files (removed on teardown).
//
//   credentialsObject('gemini-cli', { tokenUri: fake.tokenUri })             gemini-cli oauth_creds.json (no client fields)
//   credentialsObject('authorized-user', { tokenUri, clientId, clientSecret }) google-auth authorized_user JSON
//   const file = await writeCredentialsFile(t, 'gemini-cli', { tokenUri })    a 0600 file in a fresh temp dir
//   await readCredentialsFile(file)                                          what is on disk now, parsed
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'

export type StoredFormat = 'gemini-cli' | 'authorized-user'

export interface CredentialsSpec {
  /** Token endpoint (the fake's tokenUri). */
  tokenUri?: string
  /** Default `stored-access-token`; null leaves it out. */
  accessToken?: string | null
  /** Validity left in ms. Default one hour; null leaves the expiry out. */
  expiresInMs?: number | null
  refreshToken?: string
  /** authorized-user defaults to `fake-client-id`/`fake-client-secret`; gemini-cli has none unless given. */
  clientId?: string
  clientSecret?: string
  projectId?: string
}

export function credentialsObject (format: StoredFormat, spec: CredentialsSpec = {}): Record<string, unknown> {
  const accessToken = spec.accessToken === undefined ? 'stored-access-token' : spec.accessToken
  const expiry = spec.expiresInMs === null ? undefined : Date.now() + (spec.expiresInMs ?? 3600_000)
  const out: Record<string, unknown> = {}
  if (format === 'gemini-cli') {
    if (accessToken !== null) out.access_token = accessToken
    out.refresh_token = spec.refreshToken ?? 'stored-refresh-token'
    out.scope = 'https://www.googleapis.com/auth/cloud-platform https://www.googleapis.com/auth/userinfo.email openid'
    out.token_type = 'Bearer'
    out.id_token = 'fake.id.token'
    if (expiry !== undefined) out.expiry_date = expiry
    if (spec.clientId !== undefined) out.client_id = spec.clientId
    if (spec.clientSecret !== undefined) out.client_secret = spec.clientSecret
    if (spec.tokenUri !== undefined) out.token_uri = spec.tokenUri
  } else {
    if (accessToken !== null) out.token = accessToken
    out.refresh_token = spec.refreshToken ?? 'stored-refresh-token'
    out.client_id = spec.clientId ?? 'fake-client-id'
    out.client_secret = spec.clientSecret ?? 'fake-client-secret'
    out.scopes = ['https://www.googleapis.com/auth/cloud-platform', 'https://www.googleapis.com/auth/userinfo.email']
    if (spec.tokenUri !== undefined) out.token_uri = spec.tokenUri
    if (expiry !== undefined) out.expiry = new Date(expiry).toISOString()
  }
  if (spec.projectId !== undefined) out.project_id = spec.projectId
  return out
}

/** Writes the credentials to `<temp dir>/oauth_creds.json` (pretty-printed unless compact) and returns the path. */
export async function writeCredentialsFile (
  t: { teardown (fn: () => unknown): void },
  format: StoredFormat,
  spec: CredentialsSpec = {},
  options: { compact?: boolean } = {},
): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'gatehouse-creds-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'oauth_creds.json')
  const obj = credentialsObject(format, spec)
  await writeFile(file, options.compact === true ? JSON.stringify(obj) : JSON.stringify(obj, null, 2) + '\n', { mode: 0o600 })
  return file
}

export async function readCredentialsFile (file: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(file, 'utf8'))
}
