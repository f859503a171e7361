import t from 'tap'
import type { Test } from 'tap'
import { open, readdir, stat, readFile } from 'node:fs/promises'
import path from 'node:path'
import { SILENT_LOGGER, GatehouseError } from '../../lib/index.ts'
import { createCodeAssistBackend } from '../../lib/proxy/upstream/code-assist-backend.ts'
import type { CodeAssistBackendOptions } from '../../lib/proxy/upstream/code-assist-backend.ts'
import { createCredentialsFileWriter } from '../../lib/proxy/upstream/credentials-file.ts'
import { errorReply, invalidGrant, startFakeUpstream } from '../support/fake-upstream.ts'
import type { FakeUpstream } from '../support/fake-upstream.ts'
import { credentialsObject, readCredentialsFile, writeCredentialsFile } from '../support/credentials-files.ts'

const CALL = { model: 'gemini-2.5-pro', request: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] } }

async function fakeFor (t: Test): Promise<FakeUpstream> {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  return fake
}

function backendFor (t: Test, fake: FakeUpstream, options: CodeAssistBackendOptions): ReturnType<typeof createCodeAssistBackend> {
  const backend = createCodeAssistBackend({ codeAssistEndpoint: fake.url, retryBaseDelayMs: 1, ...options })
  t.teardown(() => backend.close())
  return backend
}

function bearer (fake: FakeUpstream, call: 'generateContent' | 'loadCodeAssist' = 'generateContent'): Array<string | undefined> {
  return fake.calls(call).map(r => r.headers.authorization)
}

t.test('the access token is refreshed only when less than 5 minutes of validity remain', async t => {
  for (const [name, expiresInMs, refreshes] of [['4 min left', 4 * 60_000, 1], ['6 min left', 6 * 60_000, 0], ['no expiry', null, 1], ['already expired', -60_000, 1]] as const) {
    const fake = await fakeFor(t)
    const backend = backendFor(t, fake, { credentials: credentialsObject('authorized-user', { tokenUri: fake.tokenUri, expiresInMs, projectId: 'p' }) })
    await backend.generate(CALL)
    t.equal(fake.calls('token').length, refreshes, `${name}: ${refreshes} refresh`)
    t.same(bearer(fake), [refreshes === 1 ? 'Bearer fake-access-1' : 'Bearer stored-access-token'], `${name}: the call carries the right token`)
  }
})

t.test('a refresh posts the refresh_token grant to the credentials\' own token_uri', async t => {
  const fake = await fakeFor(t)
  const backend = backendFor(t, fake, { credentials: credentialsObject('authorized-user', { tokenUri: fake.tokenUri, expiresInMs: 0, clientId: 'cid', clientSecret: 'csecret', refreshToken: 'rt-1' }) })
  await backend.generate(CALL)
  const token = fake.last('token')
  t.equal(token?.method, 'POST')
  t.match(token?.headers['content-type'], /application\/x-www-form-urlencoded/)
  t.same(token?.body, { grant_type: 'refresh_token', refresh_token: 'rt-1', client_id: 'cid', client_secret: 'csecret' })
})

t.test('ten concurrent calls with an expired token cause one refresh', async t => {
  const fake = await fakeFor(t)
  fake.reply('token', { delayMs: 50 })
  const backend = backendFor(t, fake, { credentials: credentialsObject('gemini-cli', { tokenUri: fake.tokenUri, expiresInMs: 0, clientId: 'c', clientSecret: 's' }) })
  await Promise.all(Array.from({ length: 10 }, () => backend.generate(CALL)))
  t.equal(fake.calls('token').length, 1, 'one refresh')
  t.equal(fake.calls('loadCodeAssist').length, 1, 'one project discovery')
  t.same(new Set(bearer(fake)), new Set(['Bearer fake-access-1']), 'all ten used the new token')
})

t.test('an upstream 401 triggers one refresh and one retry', async t => {
  const fake = await fakeFor(t)
  fake.acceptedTokens = new Set()
  const backend = backendFor(t, fake, { credentials: credentialsObject('authorized-user', { tokenUri: fake.tokenUri, projectId: 'p' }) })
  const res = await backend.generate(CALL)
  t.equal(res.candidates?.[0]?.content?.parts?.[0]?.text, 'Hello from the fake upstream.')
  t.same(bearer(fake), ['Bearer stored-access-token', 'Bearer fake-access-1'])
  t.equal(fake.calls('token').length, 1)
})

t.test('ten concurrent 401s share one refresh', async t => {
  const fake = await fakeFor(t)
  fake.acceptedTokens = new Set()
  fake.reply('token', { delayMs: 30 })
  const backend = backendFor(t, fake, { credentials: credentialsObject('authorized-user', { tokenUri: fake.tokenUri, projectId: 'p' }) })
  await Promise.all(Array.from({ length: 10 }, () => backend.generate(CALL)))
  t.equal(fake.calls('token').length, 1)
  t.equal(fake.calls('generateContent').length, 20)
})

t.test('a second 401 after the refresh is reported as rejected credentials (503), not retried again', async t => {
  const fake = await fakeFor(t)
  fake.reply('generateContent', errorReply(401), errorReply(401))
  const backend = backendFor(t, fake, { credentials: credentialsObject('authorized-user', { tokenUri: fake.tokenUri, projectId: 'p' }) })
  const err = await backend.generate(CALL).catch(e => e)
  t.ok(err instanceof GatehouseError)
  t.equal(err.code, 'UPSTREAM_CREDENTIALS_REJECTED')
  t.equal(err.status, 503)
  t.equal(err.upstreamStatus, 401)
  t.equal(fake.calls('generateContent').length, 2)
  t.equal(fake.calls('token').length, 1)
})

t.test('invalid_grant marks the credential unusable: 503 with a clear message, not ready, no more refreshes', async t => {
  const fake = await fakeFor(t)
  fake.reply('token', invalidGrant())
  const backend = backendFor(t, fake, { credentials: credentialsObject('authorized-user', { tokenUri: fake.tokenUri, expiresInMs: 0, projectId: 'p' }) })
  const err = await backend.generate(CALL).catch(e => e)
  t.equal(err.code, 'UPSTREAM_CREDENTIALS_UNUSABLE')
  t.equal(err.status, 503)
  t.match(err.message, /invalid_grant.*revoked or has expired.*Log in again/)
  const ready = await backend.ready()
  t.equal(ready.ok, false)
  t.match(ready.reason, /invalid_grant/)
  const again = await backend.stream(CALL).catch(e => e)
  t.equal(again.code, 'UPSTREAM_CREDENTIALS_UNUSABLE')
  t.equal(fake.calls('token').length, 1, 'the token endpoint is not asked again')
  t.equal(fake.calls('generateContent').length, 0)
})

t.test('invalid_grant during the refresh after a 401 is reported the same way', async t => {
  const fake = await fakeFor(t)
  fake.acceptedTokens = new Set()
  fake.reply('token', invalidGrant())
  const backend = backendFor(t, fake, { credentials: credentialsObject('authorized-user', { tokenUri: fake.tokenUri, projectId: 'p' }) })
  const err = await backend.generate(CALL).catch(e => e)
  t.equal(err.code, 'UPSTREAM_CREDENTIALS_UNUSABLE')
  t.equal((await backend.ready()).ok, false)
})

t.test('a token endpoint that fails otherwise gives 503 without marking the credential unusable', async t => {
  const fake = await fakeFor(t)
  fake.reply('token', { status: 400, body: { error: 'invalid_request', error_description: 'odd' } })
  const backend = backendFor(t, fake, { credentials: credentialsObject('authorized-user', { tokenUri: fake.tokenUri, expiresInMs: 0, projectId: 'p' }) })
  const err = await backend.generate(CALL).catch(e => e)
  t.equal(err.code, 'UPSTREAM_UNAVAILABLE')
  t.match(err.message, /Could not refresh the upstream access token: invalid_request/)
  await backend.generate(CALL)
  t.equal(fake.calls('token').length, 2, 'the next call refreshes again and works')
})

t.test('the OAuth client comes from the credentials, else from GEMINI_OAUTH_CLIENT_ID/SECRET, else start-up fails naming them', async t => {
  const fake = await fakeFor(t)
  const bare = credentialsObject('gemini-cli', { tokenUri: fake.tokenUri, expiresInMs: 0, projectId: 'p' })
  const err = (() => { try { createCodeAssistBackend({ credentials: bare }) } catch (e) { return e as GatehouseError } })()
  t.equal(err?.code, 'UPSTREAM_NOT_CONFIGURED')
  t.match(err?.message, /GEMINI_OAUTH_CLIENT_ID and GEMINI_OAUTH_CLIENT_SECRET/)

  const fromOptions = backendFor(t, fake, { credentials: bare, oauthClientId: 'opt-id', oauthClientSecret: 'opt-secret' })
  await fromOptions.generate(CALL)
  t.equal(fake.last('token')?.body.client_id, 'opt-id')
  t.equal(fake.last('token')?.body.client_secret, 'opt-secret')

  const own = credentialsObject('authorized-user', { tokenUri: fake.tokenUri, expiresInMs: 0, projectId: 'p', clientId: 'own-id', clientSecret: 'own-secret' })
  await backendFor(t, fake, { credentials: own, oauthClientId: 'opt-id', oauthClientSecret: 'opt-secret' }).generate(CALL)
  t.equal(fake.last('token')?.body.client_id, 'own-id', "the credentials' own client wins")
})

t.test('unusable credential sources fail at start-up with a message saying what to fix', async t => {
  const cases: Array<[string, CodeAssistBackendOptions, RegExp]> = [
    ['not JSON', { credentials: '{nope' }, /GEMINI_CREDENTIALS is not valid JSON/],
    ['no refresh token', { credentials: JSON.stringify({ token: 'x', client_id: 'c', client_secret: 's' }) }, /has no refresh_token/],
    ['missing file', { credentialsFile: '/nonexistent/oauth_creds.json' }, /credentials file \/nonexistent\/oauth_creds.json .*cannot be read/],
  ]
  for (const [name, options, message] of cases) {
    t.throws(() => createCodeAssistBackend(options), { code: 'UPSTREAM_NOT_CONFIGURED', message }, name)
  }
})

t.test('a JSON string source works like an object', async t => {
  const fake = await fakeFor(t)
  const backend = backendFor(t, fake, { credentials: JSON.stringify(credentialsObject('authorized-user', { tokenUri: fake.tokenUri, expiresInMs: 0, projectId: 'p' })) })
  await backend.generate(CALL)
  t.same(bearer(fake), ['Bearer fake-access-1'])
})

async function fileState (file: string): Promise<{ ino: number, mtimeMs: number, mode: number, text: string, others: string[] }> {
  const s = await stat(file)
  const others = (await readdir(path.dirname(file))).filter(f => f !== path.basename(file))
  return { ino: s.ino, mtimeMs: s.mtimeMs, mode: s.mode & 0o777, text: await readFile(file, 'utf8'), others }
}

t.test('a gemini-cli credentials file is written back in its own format after a refresh', async t => {
  const fake = await fakeFor(t)
  const file = await writeCredentialsFile(t, 'gemini-cli', { tokenUri: fake.tokenUri, expiresInMs: 0 })
  const before = await fileState(file)
  // An open handle keeps reading the original inode: an atomic rename leaves it untouched, an in-place write would not.
  const original = await open(file, 'r')
  t.teardown(() => original.close())
  const backend = createCodeAssistBackend({ codeAssistEndpoint: fake.url, credentialsFile: file, oauthClientId: 'c', oauthClientSecret: 's' })
  await backend.generate(CALL)
  await backend.close()
  const after = await fileState(file)
  const saved = JSON.parse(after.text)
  t.equal(saved.access_token, 'fake-access-1')
  t.ok(Math.abs(saved.expiry_date - (Date.now() + 3599_000)) < 10_000, 'expiry_date in epoch ms')
  t.equal(saved.project_id, 'fake-project', 'the discovered project is saved too')
  t.equal(saved.refresh_token, 'stored-refresh-token')
  t.equal(saved.id_token, 'fake.id.token')
  t.match(saved.scope, /cloud-platform/)
  for (const key of ['token', 'expiry', 'client_id', 'client_secret', 'scopes']) t.notOk(key in saved, `no ${key} added`)
  t.equal(await original.readFile('utf8'), before.text, 'replaced by rename (atomic), not rewritten in place')
  t.equal(after.mode, 0o600, 'file mode kept')
  t.same(after.others, [], 'no temp file left behind')
  t.ok(after.text.endsWith('}\n') && after.text.includes('\n  "'), 'pretty-printed like the original')
})

t.test('an authorized_user credentials file keeps its client, token and ISO expiry keys', async t => {
  const fake = await fakeFor(t)
  const file = await writeCredentialsFile(t, 'authorized-user', { tokenUri: fake.tokenUri, expiresInMs: 0, clientId: 'file-client', clientSecret: 'file-secret' }, { compact: true })
  const backend = createCodeAssistBackend({ codeAssistEndpoint: fake.url, credentialsFile: file, projectId: 'env-project', oauthClientId: 'other', oauthClientSecret: 'other' })
  await backend.generate(CALL)
  await backend.close()
  const text = await readFile(file, 'utf8')
  const saved = JSON.parse(text)
  t.equal(saved.token, 'fake-access-1')
  t.match(saved.expiry, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  t.equal(saved.client_id, 'file-client')
  t.equal(saved.client_secret, 'file-secret')
  t.notOk('access_token' in saved)
  t.notOk('expiry_date' in saved)
  t.notOk('project_id' in saved, 'a configured project is not written into the file')
  t.notOk(text.includes('\n'), 'compact stays compact')
})

t.test('the credentials file is not touched when nothing changed', async t => {
  const fake = await fakeFor(t)
  const file = await writeCredentialsFile(t, 'authorized-user', { tokenUri: fake.tokenUri, projectId: 'stored-project' })
  const before = await fileState(file)
  const backend = createCodeAssistBackend({ codeAssistEndpoint: fake.url, credentialsFile: file })
  await backend.generate(CALL)
  await backend.generate(CALL)
  await backend.close()
  t.same(await fileState(file), before)
  t.equal(fake.calls('loadCodeAssist').length, 0, 'the stored project_id is used without discovery')
  t.equal(fake.last('generateContent')?.body.project, 'stored-project')
})

t.test('write-back can be turned off', async t => {
  const fake = await fakeFor(t)
  const file = await writeCredentialsFile(t, 'gemini-cli', { tokenUri: fake.tokenUri, expiresInMs: 0 })
  const before = await fileState(file)
  const backend = createCodeAssistBackend({ codeAssistEndpoint: fake.url, credentialsFile: file, writeBack: false, oauthClientId: 'c', oauthClientSecret: 's' })
  await backend.generate(CALL)
  await backend.close()
  t.same(await fileState(file), before)
})

t.test('file writes are serialised and atomic: every read sees a whole file, the last write wins', async t => {
  const file = await writeCredentialsFile(t, 'gemini-cli', {})
  const original = await readFile(file, 'utf8')
  const writer = createCredentialsFileWriter(file, { original, mode: 0o600, logger: SILENT_LOGGER })
  const writes = Array.from({ length: 30 }, (_, i) => writer.write({ ...JSON.parse(original), access_token: `token-${i}`, padding: 'x'.repeat(20_000) }))
  let reads = 0
  let torn = 0
  const reader = (async () => {
    while (reads < 200) {
      reads++
      try { JSON.parse(await readFile(file, 'utf8')) } catch { torn++ }
    }
  })()
  await Promise.all([...writes, reader])
  await writer.idle()
  t.equal(torn, 0, 'no read saw a partial file')
  t.equal((await readCredentialsFile(file)).access_token, 'token-29')
  t.same((await readdir(path.dirname(file))).filter(f => f !== path.basename(file)), [])
})
