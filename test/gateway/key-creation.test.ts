// Making an API key over HTTP (docs/accounts.md, "API keys"): recent authentication, and PROXY_KEY_DEFAULT_DAYS.
import t from 'tap'
import { startGateway } from '../support/gateway.ts'
import { ADMIN, keyUser } from '../support/gateway-keys.ts'
import { authClient } from '../support/auth-client.ts'

const DAY = 86_400_000

for (const [setting, days] of [[undefined, 90], ['7', 7], ['0', null]] as const) {
  t.test(`a key without expires_in_days expires after PROXY_KEY_DEFAULT_DAYS (${setting ?? 'unset: 90'}; 0: never)`, async t => {
    const gateway = await startGateway({ ...ADMIN, LOG_LEVEL: 'silent', ...(setting === undefined ? {} : { PROXY_KEY_DEFAULT_DAYS: setting }) })
    t.teardown(() => gateway.close())
    const user = await keyUser(gateway.url, 'expiring_user')
    const [key] = await user.admin(`/admin/user/${user.userId}/keys`)
    if (days === null) t.equal(key.expires_at, null)
    else t.equal(Date.parse(key.expires_at) - Date.parse(key.created_at), days * DAY)
  })
}

t.test('with AUTH_REAUTH_SECONDS=0 every key creation, and every admin write, needs current_password', async t => {
  const gateway = await startGateway({ ...ADMIN, LOG_LEVEL: 'silent', AUTH_REAUTH_SECONDS: '0' })
  t.teardown(() => gateway.close())
  const api = authClient(gateway.url + '/v1/api')
  await api.signup('careful_user', 'quiet-lantern-58')
  const admin = (await api.login(ADMIN.AUTH_ADMIN_USERNAME, ADMIN.AUTH_ADMIN_PASSWORD)).body
  const user = (await api.login('careful_user', 'quiet-lantern-58')).body
  const ua = { 'user-agent': 'gatehouse-tests/1.0 (device A)' }
  await api.call('PUT', `/admin/user/${user.user_id}/access-level`, { query: { admin_id: admin.user_id }, headers: { ...ua, authorization: `Bearer ${admin.access_token}` }, json: { access_level: 'member', current_password: ADMIN.AUTH_ADMIN_PASSWORD } })
  const create = async (json: unknown): Promise<number> => (await api.call('POST', '/auth/keys', { query: { user_id: user.user_id }, headers: { ...ua, token: user.access_token }, json })).status
  t.equal(await create({ name: 'ci' }), 401, 'a session token alone cannot mint a key')
  t.equal(await create({ name: 'ci', current_password: 'quiet-lantern-58' }), 201, 'with the current password it can')
})
