import t from 'tap'
import type { Test } from 'tap'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Backend } from '../../lib/index.ts'
import { createBackend } from '../../lib/index.ts'
import { createMetrics } from '../../gateway/metrics.ts'
import { errorReply, googleErrors, invalidGrant, startFakeUpstream } from '../support/fake-upstream.ts'
import type { FakeUpstream } from '../support/fake-upstream.ts'
import { credentialsObject } from '../support/credentials-files.ts'
import type { CredentialsSpec } from '../support/credentials-files.ts'

const REQUEST = { contents: [{ role: 'user', parts: [{ text: 'two words' }] }] }

interface Pool {
  fake: FakeUpstream
  backend: Backend
  clock: { ms: number }
  /** The bearer token of every generate/stream call Code Assist received, in order. */
  tokensCalled (): string[]
  metricLines (name: string): Promise<string[]>
}

// GEMINI_CREDENTIALS_DIR of these files (authorized_user credentials against the fake's token endpoint).
async function pool (t: Test, files: Record<string, CredentialsSpec>): Promise<Pool> {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const dir = await mkdtemp(path.join(tmpdir(), 'gatehouse-credentials-dir-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  for (const [name, spec] of Object.entries(files)) {
    await writeFile(path.join(dir, name), JSON.stringify(credentialsObject('authorized-user', { tokenUri: fake.tokenUri, ...spec })), { mode: 0o600 })
  }
  const clock = { ms: Date.parse('2026-11-24T00:00:00Z') }
  const metrics = createMetrics({ models: ['gemini-2.5-flash'], defaultMetrics: false })
  const backend = createBackend({ credentialsDir: dir, codeAssistEndpoint: fake.url, maxRetries: 0, writeBack: false, now: () => new Date(clock.ms), observer: metrics.proxy })
  t.teardown(() => backend.close())
  return {
    fake,
    backend,
    clock,
    tokensCalled: () => fake.requests.filter(r => r.call === 'generateContent' || r.call === 'streamGenerateContent').map(r => String(r.headers.authorization).replace(/^Bearer /, '')),
    async metricLines (name) {
      return (await metrics.render()).body.split('\n').filter(l => l.startsWith(name + '{'))
    },
  }
}

t.test('a credentials file whose project answers 429 with RetryInfo cools down and the call fails over to the next file', async t => {
  const p = await pool(t, { 'a.json': { accessToken: 'token-a' }, 'b.json': { accessToken: 'token-b' } })
  p.fake.bearerReplies.set('token-a', errorReply(429, { retryDelay: '30s', reason: 'RATE_LIMIT_EXCEEDED' }))
  const answer = await p.backend.generate({ model: 'gemini-2.5-flash', request: REQUEST })
  t.equal(answer.candidates?.[0]?.content?.parts?.[0]?.text, 'Hello from the fake upstream.')
  t.same(p.tokensCalled(), ['token-a', 'token-b'])
  const states = await p.metricLines('gatehouse_upstream_credential_state')
  t.ok(states.includes('gatehouse_upstream_credential_state{credential="a.json",state="cooling"} 1'), 'metrics name the cooling file')
  t.ok(states.includes('gatehouse_upstream_credential_state{credential="b.json",state="ready"} 1'))
  t.ok((await p.metricLines('gatehouse_upstream_credential_cooldowns_total')).includes('gatehouse_upstream_credential_cooldowns_total{credential="a.json"} 1'))
  t.notOk((await p.metricLines('gatehouse_upstream_credential_state')).some(l => l.includes('token-')), 'never a token in metrics')

  // While a.json cools down every call (streams too) goes to b.json; after the RetryInfo delay a.json serves again.
  await p.backend.generate({ model: 'gemini-2.5-flash', request: REQUEST })
  for await (const event of await p.backend.stream({ model: 'gemini-2.5-flash', request: REQUEST })) t.ok(event.candidates)
  t.same(p.tokensCalled().slice(2), ['token-b', 'token-b'])
  p.fake.bearerReplies.clear()
  p.clock.ms += 30_000
  await p.backend.generate({ model: 'gemini-2.5-flash', request: REQUEST })
  await p.backend.generate({ model: 'gemini-2.5-flash', request: REQUEST })
  t.same(p.tokensCalled().slice(4).sort(), ['token-a', 'token-b'], 'both files in turn again')
})

t.test('a credentials file answering invalid_grant on refresh is set aside with its reason; the others serve', async t => {
  const p = await pool(t, {
    'a-revoked.json': { accessToken: null, expiresInMs: null, refreshToken: 'revoked-refresh-token' },
    'b.json': { accessToken: 'token-b' },
  })
  p.fake.tokenGate = form => form.refresh_token === 'revoked-refresh-token' ? invalidGrant() : undefined
  await p.backend.generate({ model: 'gemini-2.5-flash', request: REQUEST })
  await p.backend.generate({ model: 'gemini-2.5-flash', request: REQUEST })
  t.same(p.tokensCalled(), ['token-b', 'token-b'])
  t.equal(p.fake.calls('token').length, 1, 'the revoked file is not refreshed again')
  t.ok((await p.metricLines('gatehouse_upstream_credential_state')).includes('gatehouse_upstream_credential_state{credential="a-revoked.json",state="set_aside"} 1'))
  t.same(await p.backend.ready(), { ok: true }, 'ready while one file is usable')

  p.fake.bearerReplies.set('token-b', googleErrors.consumerInvalid())
  const err = await p.backend.generate({ model: 'gemini-2.5-flash', request: REQUEST }).catch(e => e)
  t.equal(err.code, 'UPSTREAM_CREDENTIALS_REJECTED')
  t.match(err.message, /a-revoked\.json: .*(invalid_grant|expired or revoked).*b\.json: CONSUMER_INVALID: Permission denied on resource project default/)
  t.equal((await p.backend.ready()).ok, false)
})

t.test('a 403 without a credential reason is the caller\'s error: the file stays in the pool', async t => {
  const p = await pool(t, { 'a.json': { accessToken: 'token-a' }, 'b.json': { accessToken: 'token-b' } })
  p.fake.bearerReplies.set('token-a', errorReply(403, { message: 'The caller does not have permission' }))
  const err = await p.backend.generate({ model: 'gemini-2.5-flash', request: REQUEST }).catch(e => e)
  t.equal(err.upstreamStatus, 403)
  t.same(p.tokensCalled(), ['token-a'], 'no failover')
  t.notOk((await p.metricLines('gatehouse_upstream_credential_state')).some(l => /state="(set_aside|cooling)"} 1/.test(l)))
})

t.test('a 429 cools a file down for that model only', async t => {
  const p = await pool(t, { 'a.json': { accessToken: 'token-a' }, 'b.json': { accessToken: 'token-b' } })
  p.fake.reply('generateContent', errorReply(429, { retryDelay: '600s', reason: 'RATE_LIMIT_EXCEEDED' }))
  await p.backend.generate({ model: 'gemini-2.5-flash', request: REQUEST })
  await p.backend.generate({ model: 'gemini-2.5-pro', request: REQUEST })
  await p.backend.generate({ model: 'gemini-2.5-flash', request: REQUEST })
  t.same(p.tokensCalled(), ['token-a', 'token-b', 'token-a', 'token-b'])
})

t.test('a set-aside file is re-probed (a token refresh, loadCodeAssist) with backoff and comes back when the token endpoint grants one again', async t => {
  const p = await pool(t, {
    'a-revoked.json': { accessToken: null, expiresInMs: null, refreshToken: 'revoked-refresh-token' },
    'b-revoked.json': { accessToken: null, expiresInMs: null, refreshToken: 'revoked-for-good' },
  })
  let revoked = true
  p.fake.tokenGate = form => form.refresh_token === 'revoked-for-good' || (revoked && form.refresh_token === 'revoked-refresh-token') ? invalidGrant() : undefined
  await p.backend.generate({ model: 'gemini-2.5-flash', request: REQUEST }).catch(() => {})
  t.equal((await p.backend.ready()).ok, false)
  p.clock.ms += 60_000
  t.equal((await p.backend.ready()).ok, false, 'probed: still invalid_grant')
  const refreshes = p.fake.calls('token').length
  revoked = false
  p.clock.ms += 60_000
  t.equal((await p.backend.ready()).ok, false, 'the next probe waits twice as long')
  t.equal(p.fake.calls('token').length, refreshes)
  p.clock.ms += 60_000
  t.same(await p.backend.ready(), { ok: true })
  const answer = await p.backend.generate({ model: 'gemini-2.5-flash', request: REQUEST })
  t.ok(answer.candidates)
})
