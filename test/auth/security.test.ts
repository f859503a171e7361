// Security properties, with the real (OWASP) argon2 parameters: how passwords and tokens are kept,
// equal work for unknown usernames, nothing secret in any answer or log, no 500 for client input.
import t from 'tap'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { hash, verify } from '@node-rs/argon2'
import { startAuthHarness, ADMIN_PASSWORD } from '../support/auth-harness.ts'
import type { Reply } from '../support/auth-client.ts'
import type { Store } from '../../lib/index.ts'
import { createEmbeddedStore } from '../../lib/index.ts'
import { tokenDigest } from '../../lib/auth/tokens.ts'

const OWASP = { memoryCost: 19456, timeCost: 2, parallelism: 1 }

t.test('passwords are stored as argon2id hashes with m=19456 KiB, t=2, p=1 by default', async t => {
  const h = await startAuthHarness({ realArgon2: true })
  t.teardown(h.close)
  await h.signup('hashed', 'velvet-harbor-93')
  const record = await h.store.users.findByUsernameKey('hashed')
  t.match(record?.passwordHash, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/)
  t.notMatch(record?.passwordHash, /velvet-harbor-93/)
  t.ok(await verify(record!.passwordHash, 'velvet-harbor-93'))
})

t.test('a session token is stored only as its SHA-256 digest', async t => {
  const dir = await mkdtemp(path.join(tmpdir(), 'gatehouse-auth-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'auth-db.json')
  const store = await createEmbeddedStore({ file })
  const h = await startAuthHarness({ store, realArgon2: true })
  t.teardown(async () => { await h.close(); await store.close() })
  const u = await h.newUser()
  await store.flush()
  // The data file and its journal (lib/store/embedded-journal.ts): all that is saved.
  const saved = await readFile(file, 'utf8') + await readFile(`${file}.journal`, 'utf8')
  t.notOk(saved.includes(u.token), 'the token is nowhere in the saved data')
  t.ok(saved.includes(tokenDigest(u.token)), 'its digest is')
  t.notOk(saved.includes(u.password), 'nor is the password')
  t.equal(await store.sessions.findByTokenHash(u.token), null)
  t.match(await store.sessions.findByTokenHash(tokenDigest(u.token)), { userId: u.userId, device: u.device })
})

function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

t.test('an unknown username costs the same argon2 work as a known one', async t => {
  const h = await startAuthHarness({ realArgon2: true, loginLimits: { perUsername: 1000, perAddress: 1000 } })
  t.teardown(h.close)
  await h.signup('timed_user', 'velvet-harbor-93')
  const timed = async (username: string): Promise<number> => {
    const start = performance.now()
    const res = await h.login(username, 'wrong-password')
    t.equal(res.status, 401)
    return performance.now() - start
  }
  await timed('timed_user')
  await timed('no_such_user')
  const known: number[] = []
  const unknown: number[] = []
  for (let i = 0; i < 9; i++) {
    known.push(await timed('timed_user'))
    unknown.push(await timed(`no_such_user_${i}`))
  }
  const stored = await hash('x', OWASP)
  const raw: number[] = []
  for (let i = 0; i < 5; i++) {
    const start = performance.now()
    await verify(stored, 'y')
    raw.push(performance.now() - start)
  }
  const ratio = median(unknown) / median(known)
  t.comment(`median login ms: known ${median(known).toFixed(1)}, unknown ${median(unknown).toFixed(1)}; raw argon2 verify ${median(raw).toFixed(1)}`)
  t.ok(ratio > 0.6 && ratio < 1.7, `unknown/known time ratio ${ratio.toFixed(2)} is close to 1`)
  t.ok(median(unknown) >= 0.6 * median(raw), 'an unknown username pays at least one argon2 verification')
})

t.test('the password and its hash never appear in any answer or log', async t => {
  const h = await startAuthHarness({ realArgon2: true })
  t.teardown(h.close)
  const replies: Reply[] = []
  const keep = async (p: Promise<Reply>): Promise<Reply> => { const r = await p; replies.push(r); return r }
  const password = 'very-secret-password-1'
  const newPassword = 'very-secret-password-2'
  await keep(h.signup('secretive', password, 's@example.com'))
  await keep(h.signup('secretive', password))
  await keep(h.login('secretive', 'wrong-password'))
  const login = await keep(h.login('secretive', password))
  const u = { userId: login.body.user_id, token: login.body.access_token }
  const admin = await keep(h.login('system', ADMIN_PASSWORD, 'console/1'))
  const ua = { 'user-agent': 'gatehouse-tests/1.0 (device A)' }
  const adminQ = { admin_id: admin.body.user_id, token: admin.body.access_token }
  await keep(h.validate(u.userId, u.token))
  await keep(h.call('GET', '/auth/search-users', { query: { query: 'secret' } }))
  await keep(h.call('GET', '/auth/get-user-id', { query: { username: 'secretive' } }))
  await keep(h.call('PUT', '/auth/user/update', { query: { user_id: u.userId }, headers: { ...ua, token: u.token }, json: { password: newPassword } }))
  await keep(h.call('PUT', '/auth/user/update', { query: { user_id: u.userId }, headers: { ...ua, token: u.token }, json: { password: 'short' } }))
  await keep(h.call('GET', '/admin/users', { query: { user_id: adminQ.admin_id, token: adminQ.token }, headers: { 'user-agent': 'console/1' } }))
  await keep(h.call('GET', `/admin/user/${u.userId}`, { query: adminQ, headers: { 'user-agent': 'console/1' } }))
  await keep(h.call('PUT', `/admin/user/${u.userId}`, { query: adminQ, headers: { 'user-agent': 'console/1' }, json: { email: 'new@example.com' } }))
  await keep(h.call('PUT', `/admin/user/${u.userId}/access-level`, { query: adminQ, headers: { 'user-agent': 'console/1' }, json: { access_level: 'member' } }))
  await keep(h.logout(u.userId, u.token))
  const hashes = (await h.store.users.list(100, 0)).map(user => user.passwordHash)
  const everything = replies.map(r => r.text + JSON.stringify(r.headers)).join('\n') + JSON.stringify(h.logs)
  for (const secret of [password, newPassword, ADMIN_PASSWORD, ...hashes, '$argon2']) {
    t.notOk(everything.includes(secret), `never shown: ${secret.slice(0, 12)}…`)
  }
  for (const r of replies) t.notOk(/password/i.test(Object.keys(r.body ?? {}).join()), 'no password field in any answer')
})

t.test('hashes made with older parameters are upgraded at the next successful login', async t => {
  const store = await createEmbeddedStore()
  t.teardown(() => store.close())
  const old = await startAuthHarness({ store })
  await old.signup('legacy', 'velvet-harbor-93')
  await old.close()
  t.match((await store.users.findByUsernameKey('legacy'))?.passwordHash, /m=64,t=1,p=1/)
  const h = await startAuthHarness({ store, realArgon2: true })
  t.teardown(h.close)
  t.equal((await h.login('legacy', 'wrong-password')).status, 401)
  t.match((await store.users.findByUsernameKey('legacy'))?.passwordHash, /m=64,t=1,p=1/, 'not on a failed login')
  t.equal((await h.login('legacy', 'velvet-harbor-93')).status, 200)
  t.match((await store.users.findByUsernameKey('legacy'))?.passwordHash, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
  t.equal((await h.login('legacy', 'velvet-harbor-93', 'other/1')).status, 200, 'the upgraded hash verifies')
})

t.test('an unexpected failure answers 500 "Internal error", is logged, and shows no details', async t => {
  const base = await createEmbeddedStore()
  t.teardown(() => base.close())
  let broken = false
  const users = new Proxy(base.users, {
    get (target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      return typeof value === 'function'
        ? (...args: unknown[]) => {
            if (broken) throw new Error('connection to db-7.internal:27017 lost')
            return value.apply(target, args)
          }
        : value
    },
  })
  const store: Store = { ...base, users }
  const h = await startAuthHarness({ store })
  t.teardown(h.close)
  broken = true
  const res = await h.call('GET', '/auth/get-user-id', { query: { username: 'system' } })
  t.equal(res.status, 500)
  t.same(res.body, { detail: 'Internal error' })
  t.notMatch(res.text, /db-7|27017|at /)
  t.equal(h.logs.filter(l => l.level === 'error').length, 1, 'logged once for the operator')
})
