// A gateway user with an API key, made the way a team does it over HTTP: sign up, an admin promotes the user to
// member, the user logs in and creates a key. Not a test file itself.
import { authClient } from './auth-client.ts'

export const ADMIN = { AUTH_ADMIN_USERNAME: 'gate_admin', AUTH_ADMIN_PASSWORD: 'gateway-admin-password' }
const UA = { 'user-agent': 'gatehouse-tests/1.0 (device A)' }

export interface KeyUser {
  userId: string
  key: string
  keyId: string
  /** GETs an admin route of the accounts service as the admin (query merged with admin_id). */
  admin (path: string, query?: Record<string, string>): Promise<any>
}

/** `admin`: the gateway's AUTH_ADMIN_USERNAME and AUTH_ADMIN_PASSWORD. Default ADMIN. */
export async function keyUser (url: string, username: string, keyBody: Record<string, unknown> = { name: 'ci' }, admin: { AUTH_ADMIN_USERNAME: string, AUTH_ADMIN_PASSWORD: string } = ADMIN): Promise<KeyUser> {
  const api = authClient(url + '/v1/api')
  const signup = await api.signup(username, 'quiet-lantern-58')
  if (signup.status !== 201 && signup.status !== 200) throw new Error(`signup: ${signup.status} ${signup.text}`)
  const session = (await api.login(admin.AUTH_ADMIN_USERNAME, admin.AUTH_ADMIN_PASSWORD)).body
  const as = { query: { admin_id: session.user_id }, headers: { ...UA, authorization: `Bearer ${session.access_token}` } }
  const user = (await api.login(username, 'quiet-lantern-58')).body
  const promoted = await api.call('PUT', `/admin/user/${user.user_id}/access-level`, { ...as, json: { access_level: 'member' } })
  if (promoted.status !== 200) throw new Error(`promote: ${promoted.status} ${promoted.text}`)
  const created = await api.call('POST', '/auth/keys', { query: { user_id: user.user_id }, headers: { ...UA, token: user.access_token }, json: keyBody })
  if (created.status !== 201) throw new Error(`create key: ${created.status} ${created.text}`)
  return {
    userId: user.user_id,
    key: created.body.key,
    keyId: created.body.key_id,
    admin: async (path, query = {}) => (await api.call('GET', path, { ...as, query: { ...as.query, ...query } })).body,
  }
}

/**
 * `user`'s usage report (GET /admin/usage), read as `reader`'s admin session, once its totals hold at least `requests`
 * requests: the ledger writes at most every second, so a test waits for the rows rather than assume the timing.
 */
export async function usageReport (user: KeyUser, requests: number, reader: KeyUser = user): Promise<any> {
  let report: any
  for (let i = 0; i < 50; i++) {
    report = await reader.admin('/admin/usage', { user_id: user.userId })
    if (report.totals?.requests >= requests) break
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  return report
}
