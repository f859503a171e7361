// The system user at start-up, through the gateway: where a generated password goes, and a changed
// AUTH_ADMIN_PASSWORD. The start each rule is about runs exactly what `npm start` runs; the others run in process.
import t from 'tap'
import type { Test } from 'tap'
import { lstat, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { spawnGateway, startGateway } from '../support/gateway.ts'
import { authClient } from '../support/auth-client.ts'
import { startMongoStandIn } from '../support/mongo-standin.ts'

async function tempDir (t: Test): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'gatehouse-bootstrap-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

const mode = async (file: string): Promise<number> => (await stat(file)).mode & 0o777

t.test('the generated system password is never logged: it goes to a file only the process owner can read, whose path is logged', async t => {
  const dir = await tempDir(t)
  const env = { AUTH_DATA_FILE: path.join(dir, 'auth-db.json'), LOG_LEVEL: 'warn' }
  const first = await spawnGateway(env)
  t.teardown(() => first.stop('SIGKILL'))
  const file = path.join(dir, 'admin-password')
  const password = (await readFile(file, 'utf8')).trim()
  t.match(password, /^[A-Za-z0-9_-]{24}$/)
  t.equal(await mode(file), 0o600, 'mode 0600')
  t.notOk(first.output().includes(password), 'the password is nowhere in the output')
  t.match(first.logs().find(l => /generated password/.test(l.msg)), { level: 'warn', username: 'system', file, msg: `Created system user "system"; its generated password is in ${file} (readable only by this process's user)` },
    'the path is logged, even at LOG_LEVEL=warn')
  const api = authClient(first.url + '/v1/api')
  t.equal((await api.login('system', password)).body.access_level, 'hush', 'the password in the file works')
  t.equal((await first.stop()).code, 0)
  t.equal((await readFile(file, 'utf8')).trim(), password, 'the file outlives a persistent store\'s process')

  const second = await startGateway(env)
  t.teardown(second.close)
  t.notOk(second.logs.some(l => /generated password/.test(String(l.msg))), 'no file and no line on a start that creates nothing')
  t.equal((await authClient(second.url + '/v1/api').login('system', password)).status, 200)
})

t.test('a symlink planted at the password file path is not followed', async t => {
  const dir = await tempDir(t)
  const victim = path.join(dir, 'victim')
  await writeFile(victim, 'precious\n', { mode: 0o644 })
  const file = path.join(dir, 'admin-password')
  await symlink(victim, file)
  const gw = await startGateway({ AUTH_ADMIN_PASSWORD_FILE: file })
  t.teardown(gw.close)
  t.equal(await readFile(victim, 'utf8'), 'precious\n', 'the symlink target is untouched')
  t.equal(await mode(victim), 0o644)
  t.ok((await lstat(file)).isFile(), 'the path now holds a file of its own')
  t.equal(await mode(file), 0o600)
  const password = (await readFile(file, 'utf8')).trim()
  t.equal((await authClient(gw.url + '/v1/api').login('system', password)).status, 200)
})

t.test('memory-only, the password file is in a new private directory, removed when the gateway stops', async t => {
  const gw = await startGateway()
  const file: string = gw.logs.find(l => /generated password/.test(String(l.msg)))?.file
  t.match(file, new RegExp(`^${tmpdir()}/gatehouse-[^/]+/admin-password$`))
  t.equal(await mode(path.dirname(file)), 0o700, 'a directory only the owner can enter')
  t.equal(await mode(file), 0o600)
  const password = (await readFile(file, 'utf8')).trim()
  t.equal((await authClient(gw.url + '/v1/api').login('system', password)).status, 200)
  await gw.close()
  await t.rejects(stat(path.dirname(file)), { code: 'ENOENT' }, 'the password of a user that no longer exists is not left behind')

  const again = await startGateway()
  t.teardown(again.close)
  t.not(again.logs.find(l => /generated password/.test(String(l.msg)))?.file, file, 'each start gets a fresh directory')
})

t.test('a password file that cannot be written stops start-up with a message saying what to set', async t => {
  const dir = await tempDir(t)
  await writeFile(path.join(dir, 'not-a-directory'), '')
  const file = path.join(dir, 'not-a-directory', 'admin-password')
  await t.rejects(startGateway({ AUTH_ADMIN_PASSWORD_FILE: file }), /^could not write the generated password of system user "system" to .*not-a-directory\/admin-password \(.*\); set AUTH_ADMIN_PASSWORD_FILE to a writable path, or AUTH_ADMIN_PASSWORD/)
})

t.test('a changed AUTH_ADMIN_PASSWORD is applied at the next start, ends the system user\'s sessions, and is logged without the value', async t => {
  const dir = await tempDir(t)
  const base = { AUTH_DATA_FILE: path.join(dir, 'auth-db.json'), LOG_LEVEL: 'warn' }
  const first = await startGateway({ ...base, AUTH_ADMIN_PASSWORD: 'first-admin-password' })
  const login = await authClient(first.url + '/v1/api').login('system', 'first-admin-password', 'ops/1')
  t.equal(login.status, 200)
  await first.close()

  const second = await spawnGateway({ ...base, AUTH_ADMIN_PASSWORD: 'second-admin-password' })
  t.teardown(() => second.stop('SIGKILL'))
  const api = authClient(second.url + '/v1/api')
  t.match(second.logs().filter(l => /password/.test(l.msg)), [{ level: 'warn', username: 'system', msg: 'system user password replaced by the configured one; its sessions were ended' }])
  t.notOk(/first-admin-password|second-admin-password/.test(second.output()), 'neither value is logged')
  t.equal((await api.login('system', 'first-admin-password', 'ops/1')).status, 401, 'the old password is refused')
  t.equal((await api.validate(login.body.user_id, login.body.access_token, 'ops/1')).status, 401, 'the session opened with it is ended')
  const fresh = await api.login('system', 'second-admin-password', 'ops/2')
  t.equal(fresh.status, 200, 'the new one works')
  t.equal((await second.stop()).code, 0)

  const third = await startGateway({ ...base, AUTH_ADMIN_PASSWORD: 'second-admin-password' })
  t.teardown(third.close)
  t.notOk(third.logs.some(l => /password/.test(String(l.msg))), 'an unchanged password is not touched or mentioned')
  t.equal((await authClient(third.url + '/v1/api').validate(fresh.body.user_id, fresh.body.access_token, 'ops/2')).status, 200, 'and its sessions live on')
})

t.test('two gateways starting at once on one MongoDB with a new AUTH_ADMIN_PASSWORD: one replaces it, neither fails', async t => {
  const mongo = await startMongoStandIn()
  t.teardown(() => mongo.close())
  const env = { MONGODB_URL: mongo.url, LOG_LEVEL: 'info' }
  const seed = await startGateway({ ...env, AUTH_ADMIN_PASSWORD: 'seed-admin-password' })
  await seed.close()
  const replicas = await Promise.all([1, 2].map(() => startGateway({ ...env, AUTH_ADMIN_PASSWORD: 'rolled-admin-password' })))
  t.teardown(() => Promise.all(replicas.map(r => r.close())))
  const lines = replicas.flatMap(r => r.logs).filter(l => /^system user password/.test(String(l.msg))).map(l => l.msg)
  t.same(lines.sort(), ['system user password replaced by the configured one; its sessions were ended', 'system user password: another replica is applying the configured one'])
  for (const replica of replicas) t.equal((await authClient(replica.url + '/v1/api').login('system', 'rolled-admin-password')).status, 200)
})
