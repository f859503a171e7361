// Accounts and sessions survive restarts and crashes of the gateway process (`npm start` with
// AUTH_DATA_FILE), driven through spawnGateway.
import t from 'tap'
import type { Test } from 'tap'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { spawnGateway } from '../support/gateway.ts'
import { authClient } from '../support/auth-client.ts'
import type { Reply } from '../support/auth-client.ts'

async function dataDir (t: Test): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'gatehouse-persist-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

// The burst below signs up hundreds of users from 127.0.0.1: far past the default sign-up limit per address.
const ENV = { AUTH_ADMIN_PASSWORD: 'persisted-admin-password', LOG_LEVEL: 'warn', AUTH_SIGNUPS_PER_ADDRESS: '1000' }

t.test('restarting with the same AUTH_DATA_FILE keeps users and live sessions', async t => {
  const file = path.join(await dataDir(t), 'auth-db.json')
  const first = await spawnGateway({ ...ENV, AUTH_DATA_FILE: file })
  t.teardown(() => first.stop('SIGKILL'))
  const api1 = authClient(first.url + '/v1/api')
  t.equal((await api1.signup('Survivor', 'velvet-harbor-93', 's@example.com')).status, 201)
  const login = await api1.login('survivor', 'velvet-harbor-93')
  const { user_id: userId, access_token: token } = login.body
  t.equal((await first.stop('SIGTERM')).code, 0, 'clean stop')

  const second = await spawnGateway({ ...ENV, AUTH_DATA_FILE: file })
  t.teardown(() => second.stop('SIGKILL'))
  const api2 = authClient(second.url + '/v1/api')
  t.same((await api2.validate(userId, token)).body, { access_token: token, token_type: 'bearer' }, 'the session lives on')
  t.equal((await api2.call('GET', '/auth/get-user-id', { query: { username: 'SURVIVOR' } })).body, userId)
  const again = await api2.login('Survivor', 'velvet-harbor-93', 'other-device/1')
  t.match(again.body, { user_id: userId, username: 'Survivor', email: 's@example.com', date_joined: login.body.date_joined })
  t.same((await api2.logout(userId, token)).body, { message: 'Session forcefully expired' })
})

t.test('SIGKILL during a burst of sign-ups leaves a file that loads, with every answered sign-up in it', async t => {
  const file = path.join(await dataDir(t), 'auth-db.json')
  const first = await spawnGateway({ ...ENV, AUTH_DATA_FILE: file })
  t.teardown(() => first.stop('SIGKILL'))
  const api1 = authClient(first.url + '/v1/api')
  const answered: string[] = []
  let killed = false
  const burst: Array<Promise<Reply | undefined>> = []
  for (let i = 0; i < 300; i++) {
    const name = `burst_${i}`
    burst.push(api1.signup(name, 'velvet-harbor-93').then(res => {
      if (res.status === 201 && !killed) answered.push(name)
      return res
    }, () => undefined))
    if (i % 20 === 19) await new Promise(resolve => setTimeout(resolve, 5))
  }
  // Kill once some sign-ups have been answered and many are still in flight.
  const deadline = Date.now() + 15_000
  while (answered.length < 20 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 5))
  first.child.kill('SIGKILL')
  killed = true
  await first.exited
  await Promise.all(burst)
  t.ok(answered.length >= 20, `${answered.length} sign-ups answered 201 before the kill`)
  const saved = await readFile(file, 'utf8')
  t.doesNotThrow(() => JSON.parse(saved), 'the file is whole JSON')

  const second = await spawnGateway({ ...ENV, AUTH_DATA_FILE: file })
  t.teardown(() => second.stop('SIGKILL'))
  const api2 = authClient(second.url + '/v1/api')
  const missing: string[] = []
  for (const name of answered) {
    const res = await api2.call('GET', '/auth/get-user-id', { query: { username: name } })
    if (res.status !== 200) missing.push(name)
  }
  t.same(missing, [], 'every sign-up answered 201 before the kill is still there')
  t.equal((await api2.login(answered[0], 'velvet-harbor-93')).status, 200, 'and can log in')
})
