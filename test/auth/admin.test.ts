// The admin routes and the system user, over HTTP.
import t from 'tap'
import { startAuthHarness, ADMIN_PASSWORD } from '../support/auth-harness.ts'
import type { AuthHarness, TestUser } from '../support/auth-harness.ts'
import type { Reply } from '../support/auth-client.ts'
import type { UserPatch } from '../../lib/index.ts'
import { createEmbeddedStore, createAuthService } from '../../lib/index.ts'

const listUsers = (h: AuthHarness, admin: TestUser, extra: Record<string, string | number> = {}): Promise<Reply> =>
  h.call('GET', '/admin/users', { query: { user_id: admin.userId, token: admin.token, ...extra }, headers: { 'user-agent': admin.device } })

const adminCall = (h: AuthHarness, admin: TestUser, method: string, targetPath: string, json?: unknown, device = admin.device): Promise<Reply> =>
  h.call(method, `/admin/user/${targetPath}`, { query: { admin_id: admin.userId, token: admin.token }, headers: { 'user-agent': device }, json })

const setLevel = (h: AuthHarness, admin: TestUser, target: string, level: unknown): Promise<Reply> =>
  adminCall(h, admin, 'PUT', `${target}/access-level`, { access_level: level })

t.test('GET /admin/users lists users in date_joined order with limit and offset', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const admin = await h.admin()
  for (const name of ['first', 'second', 'third']) {
    h.advance(1)
    await h.signup(name, 'velvet-harbor-93', `${name}@example.com`)
  }
  const all = await listUsers(h, admin)
  t.equal(all.status, 200)
  t.same(all.body.map((u: { username: string }) => u.username), ['system', 'first', 'second', 'third'])
  t.same(Object.keys(all.body[1]).sort(), ['access_level', 'date_joined', 'email', 'username'])
  t.match(all.body[1], { username: 'first', email: 'first@example.com', access_level: 'default', date_joined: /Z$/ })
  t.same((await listUsers(h, admin, { limit: 2 })).body.map((u: { username: string }) => u.username), ['system', 'first'])
  t.same((await listUsers(h, admin, { limit: 2, offset: 2 })).body.map((u: { username: string }) => u.username), ['second', 'third'])
  t.same((await listUsers(h, admin, { offset: 10 })).body, [])
})

t.test('GET /admin/users: limit defaults to 100 and may not exceed 1000', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const admin = await h.admin()
  for (let i = 0; i < 104; i++) await h.store.users.insert({ id: i.toString(16).padStart(24, '0'), username: `bulk_${i}`, usernameKey: `bulk_${i}`, passwordHash: 'x', email: null, accessLevel: 'default', dateJoined: new Date(Date.UTC(2020, 0, 1, 0, 0, i)) })
  t.equal((await listUsers(h, admin)).body.length, 100)
  t.equal((await listUsers(h, admin, { limit: 1000 })).body.length, 105)
  t.equal((await listUsers(h, admin, { limit: 1001 })).status, 400)
})

t.test('admin routes answer 403 Insufficient permissions below level hush', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const admin = await h.admin()
  const user = await h.newUser()
  const target = await h.newUser()
  const before = await h.snapshot()
  for (const level of ['default', 'member', 'admin', 'dev']) {
    t.equal((await setLevel(h, admin, user.userId, level)).status, 200)
    const replies = [
      await listUsers(h, user),
      await adminCall(h, user, 'GET', target.userId),
      await adminCall(h, user, 'PUT', target.userId, { email: 'pwned@example.com' }),
      await setLevel(h, user, user.userId, 'hush'),
    ]
    for (const res of replies) {
      t.equal(res.status, 403, level)
      t.same(res.body, { detail: 'Insufficient permissions' })
    }
  }
  const after = JSON.parse(await h.snapshot()).filter((u: { id: string }) => u.id !== user.userId)
  t.same(after, JSON.parse(before).filter((u: { id: string }) => u.id !== user.userId), 'no other user changed')
})

t.test('the caller\'s level is read on every call: a demotion takes effect at once, a promotion too', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const admin = await h.admin()
  const deputy = await h.newUser()
  t.equal((await listUsers(h, deputy)).status, 403)
  t.equal((await setLevel(h, admin, deputy.userId, 'hush')).status, 200)
  t.equal((await listUsers(h, deputy)).status, 200, 'promoted: same session, now allowed')
  t.equal((await setLevel(h, admin, deputy.userId, 'dev')).status, 200)
  t.equal((await listUsers(h, deputy)).status, 403, 'demoted: refused at once')
})

t.test('admin routes need a live session on the same device (401) and the user-agent header (400)', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const admin = await h.admin()
  const user = await h.newUser()
  t.equal((await adminCall(h, admin, 'GET', user.userId, undefined, 'other-device/1')).status, 401)
  t.same((await adminCall(h, admin, 'GET', user.userId, undefined, 'other-device/1')).body, { detail: 'Device mismatch' })
  const noAgent = await h.call('GET', '/admin/users', { query: { user_id: admin.userId, token: admin.token } })
  t.equal(noAgent.status, 400)
  t.same(noAgent.body, { detail: 'The user-agent header is required' })
  const noToken = await h.call('GET', `/admin/user/${user.userId}`, { query: { admin_id: admin.userId }, headers: { 'user-agent': admin.device } })
  t.equal(noToken.status, 401)
  t.equal((await listUsers(h, { ...admin, token: user.token })).status, 401, 'someone else\'s token')
  h.advance(3600)
  const expired = await listUsers(h, admin)
  t.equal(expired.status, 401)
  t.same(expired.body, { detail: 'Token expired' })
})

t.test('GET /admin/user/{user_id} answers the user, 404 when unknown', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const admin = await h.admin()
  await h.signup('Looked_Up', 'velvet-harbor-93', 'look@example.com')
  const id = (await h.call('GET', '/auth/get-user-id', { query: { username: 'looked_up' } })).body
  const res = await adminCall(h, admin, 'GET', id)
  t.equal(res.status, 200)
  t.match(res.body, { username: 'Looked_Up', email: 'look@example.com', access_level: 'default', date_joined: /Z$/ })
  t.notOk('password' in res.body || 'passwordHash' in res.body)
  const missing = await adminCall(h, admin, 'GET', 'f'.repeat(24))
  t.equal(missing.status, 404)
  t.same(missing.body, { detail: 'User not found' })
  t.equal((await adminCall(h, admin, 'GET', 'not-an-id')).status, 400, 'a malformed id is a 400')
})

t.test('PUT /admin/user/{user_id} updates the user and answers the updated user', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const admin = await h.admin()
  const user = await h.newUser({ username: 'managed' })
  const res = await adminCall(h, admin, 'PUT', user.userId, { username: 'Managed2', email: 'M@Example.com' })
  t.equal(res.status, 200)
  t.match(res.body, { username: 'Managed2', email: 'm@example.com', access_level: 'default' })
  t.same(Object.keys(res.body).sort(), ['access_level', 'date_joined', 'email', 'username'])
  t.equal((await adminCall(h, admin, 'PUT', 'f'.repeat(24), { email: 'x@example.com' })).status, 404)
  t.equal((await adminCall(h, admin, 'PUT', user.userId, {})).status, 400, 'empty body')
  const clash = await adminCall(h, admin, 'PUT', user.userId, { username: 'SYSTEM' })
  t.equal(clash.status, 400)
  t.same(clash.body, { detail: 'Username already exists' })
  t.equal((await adminCall(h, admin, 'PUT', user.userId, { access_level: 'hush' })).status, 400, 'levels change only through the access-level route')
})

t.test('an admin setting a common password, or one containing the username, is refused with 400 and a clear detail', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const admin = await h.admin()
  const user = await h.newUser({ username: 'weakling' })
  const common = await adminCall(h, admin, 'PUT', user.userId, { password: 'qwerty123456' })
  t.equal(common.status, 400)
  t.same(common.body, { detail: 'This password is one of the most common passwords; choose a less predictable one' })
  const own = await adminCall(h, admin, 'PUT', user.userId, { password: 'WeakLing-2030' })
  t.equal(own.status, 400)
  t.same(own.body, { detail: 'The password must not contain the username' })
  t.equal((await h.login('weakling', user.password, 'elsewhere/1')).status, 200, 'the password is unchanged')
})

t.test('a weak configured admin password stops start-up with a message saying why', async t => {
  const store = await createEmbeddedStore()
  t.teardown(() => store.close())
  t.throws(() => createAuthService({ store, adminPassword: 'iloveyou123' }), new TypeError('createAuthService: adminPassword is refused (This password is one of the most common passwords; choose a less predictable one); leave it unset to have one generated'))
  t.throws(() => createAuthService({ store, adminUsername: 'root', adminPassword: 'root-secret-2030' }), /adminPassword is refused \(The password must not contain the username\)/)
  t.doesNotThrow(() => createAuthService({ store, adminPassword: 'velvet-harbor-93' }))
})

t.test('an admin password change ends all of the target\'s sessions', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const admin = await h.admin()
  const user = await h.newUser({ username: 'reset_me' })
  const res = await adminCall(h, admin, 'PUT', user.userId, { password: 'admin-chosen-password' })
  t.equal(res.status, 200)
  t.equal((await h.validate(user.userId, user.token, user.device)).status, 401, 'logged out everywhere')
  t.equal((await h.login('reset_me', 'admin-chosen-password', 'new/1')).status, 200)
  t.equal((await listUsers(h, admin)).status, 200, 'the admin is still logged in')
})

t.test('an admin changing their own password through the admin route keeps the session in use', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const admin = await h.admin()
  const elsewhere = await h.login('system', ADMIN_PASSWORD, 'second-console/1')
  t.equal((await adminCall(h, admin, 'PUT', admin.userId, { password: 'new-admin-password' })).status, 200)
  t.equal((await listUsers(h, admin)).status, 200)
  t.equal((await h.validate(admin.userId, elsewhere.body.access_token, 'second-console/1')).status, 401)
})

t.test('the access-level route accepts only the five levels and answers the updated user', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const admin = await h.admin()
  const user = await h.newUser()
  for (const level of ['member', 'admin', 'dev', 'hush', 'default']) {
    const res = await setLevel(h, admin, user.userId, level)
    t.equal(res.status, 200, level)
    t.equal(res.body.access_level, level)
    t.match(res.body, { username: user.username, date_joined: /Z$/ })
  }
  const before = await h.snapshot()
  for (const level of ['root', 'HUSH', 'superuser', '', null, 4, ['hush'], { $ne: 'default' }]) {
    const res = await setLevel(h, admin, user.userId, level)
    t.equal(res.status, 400, JSON.stringify(level))
    t.type(res.body.detail, 'string')
  }
  t.equal(await h.snapshot(), before)
  t.equal((await setLevel(h, admin, 'f'.repeat(24), 'member')).status, 404)
})

t.test('the last hush user cannot be demoted (400)', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const admin = await h.admin()
  const res = await setLevel(h, admin, admin.userId, 'dev')
  t.equal(res.status, 400)
  t.same(res.body, { detail: 'The last hush user cannot be demoted' })
  t.equal((await listUsers(h, admin)).status, 200, 'still hush')
  const deputy = await h.newUser()
  await setLevel(h, admin, deputy.userId, 'hush')
  t.equal((await setLevel(h, admin, admin.userId, 'member')).status, 200, 'with a second hush user, one may step down')
  t.equal((await setLevel(h, deputy, deputy.userId, 'member')).status, 400, 'but the new last one may not')
})

t.test('two hush users demoting each other at once leave one hush user', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const admin = await h.admin()
  const deputy = await h.newUser()
  await setLevel(h, admin, deputy.userId, 'hush')
  const [a, b] = await Promise.all([setLevel(h, admin, deputy.userId, 'default'), setLevel(h, deputy, admin.userId, 'default')])
  const statuses = [a.status, b.status].sort()
  t.equal(statuses[0], 200, 'one demotion goes through')
  t.match(String(statuses[1]), /^40[03]$/, 'the other is refused: last hush user (400), or the caller is no longer hush (403)')
  t.equal(await h.store.users.countByAccessLevel('hush'), 1)
})

t.test('the system user is created at start-up with level hush', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const admin = await h.admin()
  const res = await adminCall(h, admin, 'GET', admin.userId)
  t.match(res.body, { username: 'system', access_level: 'hush' })
})

t.test('without a configured password the system user gets a random one, returned once', async t => {
  const store = await createEmbeddedStore()
  t.teardown(() => store.close())
  const service = createAuthService({ store, argon2: { memoryCost: 64, timeCost: 1 } })
  const first = await service.ensureSystemUser()
  t.equal(first.username, 'system')
  t.equal(first.created, true)
  t.match(first.generatedPassword, /^[A-Za-z0-9_-]{24}$/)
  const second = await service.ensureSystemUser()
  t.same(second, { username: 'system', created: false }, 'no password the second time')
  const h = await startAuthHarness({ store, adminPassword: undefined })
  t.teardown(h.close)
  t.equal((await h.login('system', first.generatedPassword as string)).status, 200, 'the generated password works')
})

t.test('a configured admin password is used and never returned', async t => {
  const store = await createEmbeddedStore()
  t.teardown(() => store.close())
  const service = createAuthService({ store, adminUsername: 'root_admin', adminPassword: 'configured-password', argon2: { memoryCost: 64, timeCost: 1 } })
  t.same(await service.ensureSystemUser(), { username: 'root_admin', created: true })
  const h = await startAuthHarness({ store, adminUsername: 'root_admin', adminPassword: 'configured-password' })
  t.teardown(h.close)
  t.equal((await h.login('root_admin', 'configured-password')).body.access_level, 'hush')
})

t.test('an existing system user is left as it is, except that its level is restored to hush', async t => {
  const store = await createEmbeddedStore()
  t.teardown(() => store.close())
  const h = await startAuthHarness({ store })
  t.teardown(h.close)
  const admin = await h.admin()
  const deputy = await h.newUser()
  await setLevel(h, admin, deputy.userId, 'hush')
  await setLevel(h, deputy, admin.userId, 'member')
  await adminCall(h, deputy, 'PUT', admin.userId, { email: 'ops@example.com' })
  const restart = createAuthService({ store, adminPassword: ADMIN_PASSWORD, argon2: { memoryCost: 64, timeCost: 1 } })
  t.same(await restart.ensureSystemUser(), { username: 'system', created: false })
  const record = await store.users.findById(admin.userId)
  t.equal(record?.accessLevel, 'hush', 'level restored')
  t.equal(record?.email, 'ops@example.com', 'email kept')
  t.equal((await h.validate(admin.userId, admin.token, admin.device)).status, 200, 'the unchanged password ends no session')
  t.equal((await h.login('system', ADMIN_PASSWORD, 'x/1')).status, 200, 'password kept')
})

t.test('a changed configured admin password is applied at the next start, ending the system user\'s sessions, logged without the value', async t => {
  const store = await createEmbeddedStore()
  t.teardown(() => store.close())
  const h = await startAuthHarness({ store })
  t.teardown(h.close)
  const admin = await h.admin()
  const user = await h.newUser()
  const lines: Array<[unknown, string | undefined]> = []
  const log = (obj: unknown, msg?: string): void => { lines.push([obj, msg]) }
  const restart = createAuthService({ store, adminPassword: 'the-new-admin-password', argon2: { memoryCost: 64, timeCost: 1 }, logger: { debug: log, info: log, warn: log, error: log } })
  t.same(await restart.ensureSystemUser(), { username: 'system', created: false, passwordChanged: true })
  t.equal((await h.login('system', ADMIN_PASSWORD, 'x/1')).status, 401, 'the old password no longer works')
  t.equal((await h.login('system', 'the-new-admin-password', 'x/1')).status, 200, 'the configured one does')
  t.equal((await h.validate(admin.userId, admin.token, admin.device)).status, 401, 'sessions opened with the old password are ended')
  t.equal((await h.validate(user.userId, user.token, user.device)).status, 200, 'other users keep theirs')
  t.same(lines, [[{ username: 'system' }, 'system user password replaced by the configured one; its sessions were ended']])
  t.notMatch(JSON.stringify(lines), /the-new-admin-password|admin-password-for-tests/, 'no password in the log')
  t.same(await restart.ensureSystemUser(), { username: 'system', created: false }, 'the start after that changes nothing')
})

t.test('replicas starting at once with a changed admin password apply it once and end no session opened under it', async t => {
  const store = await createEmbeddedStore()
  t.teardown(() => store.close())
  const h = await startAuthHarness({ store })
  t.teardown(h.close)
  await h.admin()
  await h.admin()
  const replicas = [1, 2, 3].map(() => createAuthService({ store, adminPassword: 'rolled-out-password', argon2: { memoryCost: 64, timeCost: 1 } }))
  const results = await Promise.all(replicas.map(r => r.ensureSystemUser()))
  t.equal(results.filter(r => r.passwordChanged === true).length, 1, 'one replica applies it')
  t.equal((await h.login('system', 'rolled-out-password', 'x/1')).status, 200)
  const fresh = await h.login('system', 'rolled-out-password', 'ops/2')
  t.same(await replicas[1].ensureSystemUser(), { username: 'system', created: false }, 'a replica restarting later finds it applied')
  t.equal((await h.validate(fresh.body.user_id, fresh.body.access_token, 'ops/2')).status, 200, 'and ends no session opened under it')
})

t.test('a system user whose stored hash cannot be read gets the configured password', async t => {
  const store = await createEmbeddedStore()
  t.teardown(() => store.close())
  const h = await startAuthHarness({ store })
  t.teardown(h.close)
  const admin = await h.admin()
  await store.users.update(admin.userId, { passwordHash: 'not-a-phc-string' })
  const restart = createAuthService({ store, adminPassword: ADMIN_PASSWORD, argon2: { memoryCost: 64, timeCost: 1 } })
  t.match(await restart.ensureSystemUser(), { passwordChanged: true })
  t.equal((await h.login('system', ADMIN_PASSWORD, 'x/1')).status, 200)
})

t.test('a replica that fails to store the changed admin password leaves the change to the next start', async t => {
  const store = await createEmbeddedStore()
  t.teardown(() => store.close())
  const h = await startAuthHarness({ store })
  t.teardown(h.close)
  const broken = { ...store, users: { ...store.users, update: async () => { throw new Error('write failed') } } }
  const failing = createAuthService({ store: broken, adminPassword: 'next-password-1', argon2: { memoryCost: 64, timeCost: 1 } })
  await t.rejects(failing.ensureSystemUser(), /write failed/)
  const retry = createAuthService({ store, adminPassword: 'next-password-1', argon2: { memoryCost: 64, timeCost: 1 } })
  t.match(await retry.ensureSystemUser(), { passwordChanged: true }, 'its claim was released, so the retry applies it at once')
  t.equal((await h.login('system', 'next-password-1', 'x/1')).status, 200)
})

t.test('two replicas starting at once create one system user', async t => {
  const store = await createEmbeddedStore()
  t.teardown(() => store.close())
  const cheap = { memoryCost: 64, timeCost: 1 }
  const results = await Promise.all([1, 2, 3].map(() => createAuthService({ store, argon2: cheap }).ensureSystemUser()))
  t.equal(results.filter(r => r.created).length, 1)
  t.equal(results.filter(r => r.generatedPassword !== undefined).length, 1)
  t.equal(await store.users.countByAccessLevel('hush'), 1)
})

t.test('two replicas demoting the only two hush users at once still leave a hush user', async t => {
  const store = await createEmbeddedStore()
  t.teardown(() => store.close())
  const one = await startAuthHarness({ store })
  const two = await startAuthHarness({ store })
  t.teardown(async () => { await one.close(); await two.close() })
  const admin = await one.admin()
  const deputy = await one.newUser()
  await setLevel(one, admin, deputy.userId, 'hush')
  const [a, b] = await Promise.all([setLevel(one, admin, deputy.userId, 'member'), setLevel(two, deputy, admin.userId, 'member')])
  t.ok([a.status, b.status].some(s => s !== 200), 'not both demotions went through')
  t.ok(await store.users.countByAccessLevel('hush') >= 1, 'at least one hush user remains')
})

const setDisabled = (h: AuthHarness, admin: TestUser, target: string, disabled: unknown): Promise<Reply> =>
  adminCall(h, admin, 'PUT', `${target}/status`, { disabled })

t.test('an admin ends every session of a user', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const admin = await h.admin()
  const user = await h.newUser({ username: 'kicked' })
  const phone = await h.login('kicked', user.password, 'phone/1.0')
  const bystander = await h.newUser()
  const res = await adminCall(h, admin, 'DELETE', `${user.userId}/sessions`)
  t.equal(res.status, 200)
  t.same(res.body, { message: 'Sessions ended', ended: 2 })
  t.equal((await h.validate(user.userId, user.token)).status, 401)
  t.equal((await h.validate(user.userId, phone.body.access_token, 'phone/1.0')).status, 401)
  t.equal((await h.validate(bystander.userId, bystander.token)).status, 200, 'other users keep theirs')
  t.equal((await listUsers(h, admin)).status, 200, 'the admin keeps theirs')
  t.equal((await h.login('kicked', user.password)).status, 200, 'the user may log in again')
  const missing = await adminCall(h, admin, 'DELETE', `${'f'.repeat(24)}/sessions`)
  t.same([missing.status, missing.body], [404, { detail: 'User not found' }])
})

t.test('a disabled user cannot log in, gets 401 on every session check and loses every session', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const admin = await h.admin()
  const user = await h.newUser({ username: 'suspended' })
  const phone = await h.login('suspended', user.password, 'phone/1.0')
  const res = await setDisabled(h, admin, user.userId, true)
  t.equal(res.status, 200)
  t.same(res.body, { username: 'suspended', email: null, access_level: 'default', date_joined: res.body.date_joined, disabled: true })
  t.equal((await h.validate(user.userId, user.token)).status, 401, 'the session in use ended')
  t.equal((await h.validate(user.userId, phone.body.access_token, 'phone/1.0')).status, 401, 'and every other')
  t.same(await h.store.sessions.listByUser(user.userId), [], 'none left in the store')
  const login = await h.login('suspended', user.password, 'new/1')
  t.same([login.status, login.body], [401, { detail: 'This account is disabled' }], 'the right password is told the account is disabled')
  const wrong = await h.login('suspended', 'wrong-password', 'new/1')
  t.same([wrong.status, wrong.body], [401, { detail: 'Invalid credentials' }], 'a wrong password learns nothing more than for any account')

  // A session that outlived the disable (a login racing it, or one put in the store directly) answers 401 on every check.
  await h.store.users.update(user.userId, { disabled: false })
  const raced = await h.login('suspended', user.password, 'racer/1')
  await h.store.users.update(user.userId, { disabled: true })
  const token = raced.body.access_token
  const ua = { 'user-agent': 'racer/1' }
  const checks: Array<[string, Promise<Reply>]> = [
    ['validate', h.validate(user.userId, token, 'racer/1')],
    ['list sessions', h.call('GET', '/auth/sessions', { query: { user_id: user.userId }, headers: { ...ua, token } })],
    ['end sessions', h.call('DELETE', '/auth/sessions', { query: { user_id: user.userId }, headers: { ...ua, token } })],
    ['self-update', h.call('PUT', '/auth/user/update', { query: { user_id: user.userId }, headers: { ...ua, token }, json: { email: 'x@example.com' } })],
  ]
  for (const [name, reply] of checks) {
    const r = await reply
    t.same([r.status, r.body], [401, { detail: 'This account is disabled' }], name)
  }
})

t.test('a disabled user can be enabled again and log in', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const admin = await h.admin()
  const user = await h.newUser({ username: 'returning' })
  t.equal((await setDisabled(h, admin, user.userId, true)).status, 200)
  t.equal((await setDisabled(h, admin, user.userId, true)).status, 200, 'disabling twice is fine')
  const res = await setDisabled(h, admin, user.userId, false)
  t.equal(res.status, 200)
  t.equal(res.body.disabled, false)
  const login = await h.login('returning', user.password)
  t.equal(login.status, 200)
  t.equal((await h.validate(user.userId, login.body.access_token)).status, 200)
})

t.test('the last enabled hush user cannot be disabled (400); a disabled hush user counts for neither rule', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const admin = await h.admin()
  const res = await setDisabled(h, admin, admin.userId, true)
  t.same([res.status, res.body], [400, { detail: 'The last enabled hush user cannot be disabled' }])
  t.equal((await listUsers(h, admin)).status, 200, 'still enabled and logged in')
  const deputy = await h.newUser()
  await setLevel(h, admin, deputy.userId, 'hush')
  t.equal((await setDisabled(h, admin, deputy.userId, true)).status, 200, 'with two enabled hush users, one may be disabled')
  t.equal((await setDisabled(h, admin, admin.userId, true)).status, 400, 'then the other is the last enabled one')
  t.equal((await setLevel(h, admin, admin.userId, 'member')).status, 400, 'and cannot be demoted either')
  t.equal((await setLevel(h, admin, deputy.userId, 'member')).status, 200, 'the disabled hush user may be demoted')
  t.equal(await h.store.users.countByAccessLevel('hush'), 1)
})

t.test('a disabled admin is refused by every admin route', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const admin = await h.admin()
  const deputy = await h.newUser({ username: 'deputy' })
  await setLevel(h, admin, deputy.userId, 'hush')
  const fresh = await h.login('deputy', deputy.password, 'console/2')
  await h.store.users.update(deputy.userId, { disabled: true })
  const asDeputy = { ...deputy, token: fresh.body.access_token, device: 'console/2' }
  const before = await h.snapshot()
  const replies = [
    await listUsers(h, asDeputy),
    await adminCall(h, asDeputy, 'GET', admin.userId),
    await adminCall(h, asDeputy, 'PUT', admin.userId, { email: 'x@example.com' }),
    await setLevel(h, asDeputy, admin.userId, 'member'),
    await setDisabled(h, asDeputy, admin.userId, true),
    await adminCall(h, asDeputy, 'DELETE', `${admin.userId}/sessions`),
    await adminCall(h, asDeputy, 'DELETE', `${admin.userId}/lockout`),
  ]
  for (const res of replies) t.same([res.status, res.body], [401, { detail: 'This account is disabled' }])
  t.equal(await h.snapshot(), before, 'nothing changed')
  t.equal((await listUsers(h, admin)).status, 200, 'the admin kept their session')
})

t.test('an admin clears a user\'s login lockout', async t => {
  const h = await startAuthHarness({ loginLimits: { perUsername: 2 } })
  t.teardown(h.close)
  const admin = await h.admin()
  const user = await h.newUser({ username: 'locked_out' })
  for (let i = 0; i < 3; i++) await h.login('locked_out', 'wrong-password', 'attacker/1')
  t.equal((await h.login('locked_out', user.password)).status, 429, 'locked out')
  const res = await adminCall(h, admin, 'DELETE', `${user.userId}/lockout`)
  t.same([res.status, res.body], [200, { message: 'Lockout cleared' }])
  t.equal((await h.login('locked_out', user.password)).status, 200, 'the owner logs in again')
  t.equal((await adminCall(h, admin, 'DELETE', `${user.userId}/lockout`)).status, 200, 'clearing with no lockout is fine')
  t.equal((await adminCall(h, admin, 'DELETE', `${'f'.repeat(24)}/lockout`)).status, 404)
})

t.test('the session and account routes answer 403 below hush, 400 for a bad id or body', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const admin = await h.admin()
  const user = await h.newUser()
  const target = await h.newUser()
  const before = await h.snapshot()
  for (const res of [
    await setDisabled(h, user, target.userId, true),
    await adminCall(h, user, 'DELETE', `${target.userId}/sessions`),
    await adminCall(h, user, 'DELETE', `${target.userId}/lockout`),
  ]) t.same([res.status, res.body], [403, { detail: 'Insufficient permissions' }])
  t.equal((await h.validate(target.userId, target.token)).status, 200, 'the target kept their session')
  for (const body of [{}, { disabled: 'yes' }, { disabled: 1 }, { disabled: null }, { disabled: true, access_level: 'hush' }]) {
    t.equal((await adminCall(h, admin, 'PUT', `${target.userId}/status`, body)).status, 400, JSON.stringify(body))
  }
  t.equal((await setDisabled(h, admin, 'f'.repeat(24), true)).status, 404)
  for (const path of ['not-an-id/status', 'not-an-id/sessions', 'not-an-id/lockout']) {
    t.equal((await adminCall(h, admin, path.endsWith('status') ? 'PUT' : 'DELETE', path, path.endsWith('status') ? { disabled: true } : undefined)).status, 400, path)
  }
  t.equal(await h.snapshot(), before, 'nothing changed')
})

t.test('two replicas disabling or demoting the only two enabled hush users at once still leave one enabled', async t => {
  const store = await createEmbeddedStore()
  t.teardown(() => store.close())
  const one = await startAuthHarness({ store })
  const two = await startAuthHarness({ store })
  t.teardown(async () => { await one.close(); await two.close() })
  for (const demoteInstead of [false, true]) {
    const admin = await one.admin()
    const deputy = await one.newUser()
    await setLevel(one, admin, deputy.userId, 'hush')
    const [a, b] = await Promise.all([
      setDisabled(one, admin, deputy.userId, true),
      demoteInstead ? setLevel(two, deputy, admin.userId, 'member') : setDisabled(two, deputy, admin.userId, true),
    ])
    t.ok([a.status, b.status].some(s => s !== 200), 'not both went through')
    t.equal(await store.users.countByAccessLevel('hush'), 1, 'one enabled hush user remains')
    // Back to one enabled hush user (the system user) for the next round.
    await store.users.update(admin.userId, { disabled: false, accessLevel: 'hush' })
    await store.users.update(deputy.userId, { disabled: true, accessLevel: 'default' })
  }
})

t.test('a disable that another replica\'s change makes the last enabled hush user\'s is undone (400)', async t => {
  const base = await createEmbeddedStore()
  t.teardown(() => base.close())
  let racer: (() => Promise<unknown>) | undefined
  // Another replica's write lands between this replica's check and its update.
  const users = { ...base.users, update: async (id: string, patch: UserPatch) => { const run = racer; racer = undefined; await run?.(); return await base.users.update(id, patch) } }
  const h = await startAuthHarness({ store: { ...base, users } })
  t.teardown(h.close)
  const admin = await h.admin()
  const deputy = await h.newUser()
  await setLevel(h, admin, deputy.userId, 'hush')
  racer = () => base.users.update(deputy.userId, { disabled: true })
  const res = await setDisabled(h, admin, admin.userId, true)
  t.same([res.status, res.body], [400, { detail: 'The last enabled hush user cannot be disabled' }])
  t.equal((await base.users.findById(admin.userId))?.disabled, undefined, 'this replica\'s disable was undone')
  t.equal(await base.users.countByAccessLevel('hush'), 1)
})

const REAUTH = 'Changing a password, email or username, an access level, status or limits, creating an API key, or as an admin deleting one or ending sessions or a lockout, needs a fresh login or the current password (current_password)'

t.test('the JSON admin deletes (a key, a user\'s sessions, a lockout) need a recent sign-in or the admin\'s current password, as the admin writes do', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const admin = await h.admin()
  const user = await h.newUser({ username: 'target' })
  t.equal((await setLevel(h, admin, user.userId, 'member')).status, 200, 'members make keys')
  const key = await h.call('POST', '/auth/keys', { query: { user_id: user.userId }, headers: { 'user-agent': user.device, token: user.token }, json: { name: 'script' } })
  t.equal(key.status, 201)
  h.advance(600)
  const deleteKey = (json?: unknown): Promise<Reply> =>
    h.call('DELETE', `/admin/keys/${key.body.key_id as string}`, { query: { admin_id: admin.userId, token: admin.token }, headers: { 'user-agent': admin.device }, json })
  const deletes: Array<[string, () => Promise<Reply>]> = [
    ['DELETE /admin/keys/{key_id}', () => deleteKey()],
    ['DELETE /admin/user/{user_id}/sessions', () => adminCall(h, admin, 'DELETE', `${user.userId}/sessions`, { revoke_keys: true })],
    ['DELETE /admin/user/{user_id}/lockout', () => adminCall(h, admin, 'DELETE', `${user.userId}/lockout`)],
    // The admin's own account: the self-update's rule.
    ['DELETE /admin/user/{own id}/sessions', () => adminCall(h, admin, 'DELETE', `${admin.userId}/sessions`)],
  ]
  for (const [what, send] of deletes) {
    const res = await send()
    t.same([res.status, res.body], [401, { detail: REAUTH }], what)
  }
  t.equal((await h.call('GET', `/admin/user/${user.userId}/keys`, { query: { admin_id: admin.userId, token: admin.token }, headers: { 'user-agent': admin.device } })).body.length, 1, 'the key is still there')
  t.equal((await h.call('GET', '/auth/sessions', { query: { user_id: user.userId }, headers: { 'user-agent': user.device, token: user.token } })).status, 200, 'the user\'s session is still live')
  const wrong = await deleteKey({ current_password: 'not-the-password' })
  t.same([wrong.status, wrong.body], [401, { detail: 'current_password is not the current password' }])
  t.equal((await deleteKey({ current_password: ADMIN_PASSWORD })).status, 200, 'the current password proves the admin is present')
  t.equal((await adminCall(h, admin, 'DELETE', `${user.userId}/lockout`, { current_password: ADMIN_PASSWORD })).status, 200)
  const fresh = await h.admin()
  t.equal((await adminCall(h, fresh, 'DELETE', `${user.userId}/sessions`)).status, 200, 'a new sign-in is a recent one')
  t.equal((await h.call('GET', '/auth/sessions', { query: { user_id: user.userId }, headers: { 'user-agent': user.device, token: user.token } })).status, 401, 'the user\'s sessions ended')
  const own = await adminCall(h, fresh, 'DELETE', `${fresh.userId}/sessions`)
  t.equal(own.status, 200)
  t.equal((await adminCall(h, fresh, 'GET', user.userId)).status, 200, 'an admin ending their own sessions keeps the one in use')
})

t.test('the JSON admin writes (account fields, access level, status, limits) need a recent sign-in or the admin\'s current password, as the console does: a leaked admin token alone changes nobody', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  const admin = await h.admin()
  const user = await h.newUser({ username: 'target' })
  h.advance(600)
  const writes: Array<[string, Record<string, unknown>]> = [
    [user.userId, { email: 'taken@example.com' }],
    [user.userId, { password: 'attacker-chosen-password' }],
    [`${user.userId}/access-level`, { access_level: 'hush' }],
    [`${user.userId}/status`, { disabled: true }],
    [`${user.userId}/limits`, { rpm: 1 }],
    // The admin's own account: the self-update's rule.
    [admin.userId, { password: 'attacker-chosen-password' }],
    [`${admin.userId}/status`, { disabled: true }],
  ]
  const before = await h.snapshot()
  for (const [path, body] of writes) {
    const res = await adminCall(h, admin, 'PUT', path, body)
    t.same([res.status, res.body], [401, { detail: REAUTH }], `PUT ${path} ${JSON.stringify(body)}`)
  }
  // A wrong current_password is a failed login of the admin (the login limiter counts it).
  const wrong = await adminCall(h, admin, 'PUT', `${user.userId}/status`, { disabled: true, current_password: 'not-the-password' })
  t.same([wrong.status, wrong.body], [401, { detail: 'current_password is not the current password' }])
  t.equal(await h.snapshot(), before, 'nothing changed')
  t.equal((await adminCall(h, admin, 'GET', user.userId)).status, 200, 'reads need no recent sign-in')
  const proved = await adminCall(h, admin, 'PUT', `${user.userId}/access-level`, { access_level: 'member', current_password: ADMIN_PASSWORD })
  t.same([proved.status, proved.body.access_level], [200, 'member'], 'the current password proves the admin is present')
  t.notOk(proved.text.includes(ADMIN_PASSWORD))
  t.equal((await adminCall(h, admin, 'PUT', `${user.userId}/limits`, { rpm: 5, current_password: ADMIN_PASSWORD })).body.limits.rpm, 5)
  const fresh = await h.admin()
  t.equal((await adminCall(h, fresh, 'PUT', `${user.userId}/status`, { disabled: true })).status, 200, 'a new sign-in is a recent one')
})
