import t from 'tap'
import type { Test } from 'tap'
import { createCodeAssistBackend } from '../../lib/proxy/upstream/code-assist-backend.ts'
import type { CodeAssistBackendOptions } from '../../lib/proxy/upstream/code-assist-backend.ts'
import { currentTier, errorReply, needsOnboarding, operation, startFakeUpstream, validationRequired } from '../support/fake-upstream.ts'
import type { FakeUpstream } from '../support/fake-upstream.ts'
import { credentialsObject, readCredentialsFile, writeCredentialsFile } from '../support/credentials-files.ts'

const CALL = { model: 'gemini-2.5-flash', request: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] } }

async function setup (t: Test, options: Partial<CodeAssistBackendOptions> = {}): Promise<{ fake: FakeUpstream, backend: ReturnType<typeof createCodeAssistBackend> }> {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const backend = createCodeAssistBackend({
    codeAssistEndpoint: fake.url,
    credentials: credentialsObject('authorized-user', { tokenUri: fake.tokenUri }),
    onboardPollIntervalMs: 10,
    onboardTimeoutMs: 2000,
    retryBaseDelayMs: 1,
    ...options,
  })
  t.teardown(() => backend.close())
  return { fake, backend }
}

t.test('a configured project is sent to loadCodeAssist and used when the account has a tier but no project of its own', async t => {
  const { fake, backend } = await setup(t, { projectId: 'env-project' })
  fake.reply('loadCodeAssist', currentTier(null))
  await backend.generate(CALL)
  t.same(fake.last('loadCodeAssist')?.body, {
    cloudaicompanionProject: 'env-project',
    metadata: { ideType: 'IDE_UNSPECIFIED', platform: 'PLATFORM_UNSPECIFIED', pluginType: 'GEMINI', duetProject: 'env-project' },
  })
  t.equal(fake.last('generateContent')?.body.project, 'env-project')
  t.equal(fake.calls('onboardUser').length, 0)
})

t.test("an onboarded account uses the project loadCodeAssist names, and it is saved to the credentials file", async t => {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const file = await writeCredentialsFile(t, 'authorized-user', { tokenUri: fake.tokenUri })
  const backend = createCodeAssistBackend({ codeAssistEndpoint: fake.url, credentialsFile: file })
  fake.reply('loadCodeAssist', currentTier('assigned-project'))
  await backend.generate(CALL)
  await backend.generate(CALL)
  t.same(fake.last('loadCodeAssist')?.body, { metadata: { ideType: 'IDE_UNSPECIFIED', platform: 'PLATFORM_UNSPECIFIED', pluginType: 'GEMINI' } }, 'no project sent when none is configured')
  t.same(fake.calls('generateContent').map(r => r.body.project), ['assigned-project', 'assigned-project'])
  t.equal(fake.calls('loadCodeAssist').length, 1, 'discovered once, then cached')
  await backend.close()
  t.equal((await readCredentialsFile(file)).project_id, 'assigned-project')
})

t.test('a new free-tier account is onboarded without a project, polling the operation until it is done', async t => {
  const { fake, backend } = await setup(t)
  fake.reply('loadCodeAssist', needsOnboarding('free-tier'))
  fake.reply('onboardUser', operation({ done: false, name: 'operations/onboard-42' }))
  fake.reply('getOperation', operation({ done: false, name: 'operations/onboard-42' }), operation({ done: true, name: 'operations/onboard-42', project: 'managed-free-project' }))
  await backend.generate(CALL)
  t.same(fake.last('onboardUser')?.body, { tierId: 'free-tier', metadata: { ideType: 'IDE_UNSPECIFIED', platform: 'PLATFORM_UNSPECIFIED', pluginType: 'GEMINI' } }, 'no cloudaicompanionProject, no duetProject')
  t.same(fake.calls('getOperation').map(r => `${r.method} ${r.path}`), ['GET /v1internal/operations/onboard-42', 'GET /v1internal/operations/onboard-42'])
  t.equal(fake.last('generateContent')?.body.project, 'managed-free-project')
  t.same((await backend.ready()), { ok: true })
})

t.test('a free-tier account is onboarded without a project even when one is configured', async t => {
  const { fake, backend } = await setup(t, { projectId: 'env-project' })
  fake.reply('loadCodeAssist', needsOnboarding('free-tier'))
  fake.reply('onboardUser', operation({ done: true, project: 'managed' }))
  await backend.generate(CALL)
  t.notOk('cloudaicompanionProject' in fake.last('onboardUser')!.body)
  t.equal(fake.last('generateContent')?.body.project, 'managed')
})

t.test('a standard-tier account is onboarded with the configured project', async t => {
  const { fake, backend } = await setup(t, { projectId: 'env-project' })
  fake.reply('loadCodeAssist', needsOnboarding('standard-tier'))
  fake.reply('onboardUser', operation({ done: true }))
  await backend.generate(CALL)
  t.same(fake.last('onboardUser')?.body, {
    tierId: 'standard-tier',
    cloudaicompanionProject: 'env-project',
    metadata: { ideType: 'IDE_UNSPECIFIED', platform: 'PLATFORM_UNSPECIFIED', pluginType: 'GEMINI', duetProject: 'env-project' },
  })
  t.equal(fake.last('generateContent')?.body.project, 'env-project', 'the configured project when the operation names none')
})

t.test('an account that must be validated fails with 503 and the validation link', async t => {
  const { fake, backend } = await setup(t)
  fake.setDefault('loadCodeAssist', validationRequired('https://accounts.example/verify?x=1', 'Verify your account to continue.'))
  const err = await backend.generate(CALL).catch(e => e)
  t.equal(err.code, 'UPSTREAM_SETUP_FAILED')
  t.equal(err.status, 503)
  t.match(err.message, /Account validation required: Verify your account to continue\..*https:\/\/accounts\.example\/verify\?x=1/)
  const ready = await backend.ready()
  t.equal(ready.ok, false)
  t.match(ready.reason, /accounts\.example\/verify/)
  t.equal(fake.calls('onboardUser').length, 0)
  t.equal(fake.calls('generateContent').length, 0)
})

t.test('onboarding that never finishes gives up after the configured cap', async t => {
  // The cap counts from the first onboardUser call, whose token fetch may be slow on a loaded machine: room for
  // several 10 ms polls whatever the load, and still far below the default.
  const { fake, backend } = await setup(t, { onboardTimeoutMs: 400 })
  fake.reply('loadCodeAssist', needsOnboarding('free-tier'))
  fake.setDefault('onboardUser', operation({ done: false }))
  fake.setDefault('getOperation', operation({ done: false }))
  const started = Date.now()
  const err = await backend.generate(CALL).catch(e => e)
  t.equal(err.code, 'UPSTREAM_SETUP_FAILED')
  t.match(err.message, /did not finish within/)
  t.ok(Date.now() - started < 5000)
  t.ok(fake.calls('getOperation').length >= 2)
})

t.test('an account with a tier but no project anywhere is told to set GOOGLE_CLOUD_PROJECT', async t => {
  const { fake, backend } = await setup(t)
  fake.setDefault('loadCodeAssist', currentTier(null))
  const err = await backend.generate(CALL).catch(e => e)
  t.equal(err.code, 'UPSTREAM_SETUP_FAILED')
  t.match(err.message, /set GOOGLE_CLOUD_PROJECT/)
})

t.test('ineligible-tier reasons are shown when onboarding yields no project', async t => {
  const { fake, backend } = await setup(t)
  fake.setDefault('loadCodeAssist', { body: { allowedTiers: [{ id: 'standard-tier', isDefault: true }], ineligibleTiers: [{ reasonCode: 'INELIGIBLE_ACCOUNT', reasonMessage: 'Your account is not eligible for the free tier.' }] } })
  fake.setDefault('onboardUser', operation({ done: true }))
  const err = await backend.generate(CALL).catch(e => e)
  t.match(err.message, /Your account is not eligible for the free tier\./)
})

t.test('an upstream error during discovery becomes 503 with the upstream reason, and is not cached', async t => {
  const { fake, backend } = await setup(t, { maxRetries: 0 })
  fake.reply('loadCodeAssist', errorReply(403, { message: 'Permission denied on resource project x.', helpUrl: 'https://console.example/enable' }))
  const err = await backend.generate(CALL).catch(e => e)
  t.equal(err.code, 'UPSTREAM_SETUP_FAILED')
  t.equal(err.status, 503)
  t.equal(err.upstreamStatus, 403)
  t.match(err.message, /Upstream project discovery failed: Permission denied on resource project x\..*https:\/\/console\.example\/enable/)
  await backend.generate(CALL)
  t.equal(fake.calls('loadCodeAssist').length, 2, 'the next call tries again')
})

t.test('a VPC-SC refusal of loadCodeAssist counts as the standard tier with the configured project', async t => {
  const { fake, backend } = await setup(t, { projectId: 'vpc-project', maxRetries: 0 })
  fake.reply('loadCodeAssist', errorReply(403, { message: 'Request is prohibited by organization\'s policy.', reason: 'SECURITY_POLICY_VIOLATED' }))
  await backend.generate(CALL)
  t.equal(fake.last('generateContent')?.body.project, 'vpc-project')
})

t.test('concurrent first calls share one discovery', async t => {
  const { fake, backend } = await setup(t)
  fake.reply('loadCodeAssist', { ...currentTier('shared'), delayMs: 30 })
  await Promise.all(Array.from({ length: 8 }, () => backend.generate(CALL)))
  t.equal(fake.calls('loadCodeAssist').length, 1)
  t.same(new Set(fake.calls('generateContent').map(r => r.body.project)), new Set(['shared']))
})

t.test('ready() resolves the project once and reports success', async t => {
  const { fake, backend } = await setup(t)
  t.same(await backend.ready(), { ok: true })
  t.same(await backend.ready(), { ok: true })
  t.equal(fake.calls('loadCodeAssist').length, 1)
})
