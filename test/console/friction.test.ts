// Issue 31's console friction in a real Chromium, at 1280 px and at a 390 px phone width: usage reads right (errors
// columns, refusals no model, owners beside keys, a revoked key's name kept, bars, ISO days, a refused range shows
// only its error), actions that cannot be undone ask first, a wrong re-auth password is told beside its button in
// plain words, a lockout says when it ends, validation errors read as words, a level change says how the limits
// change, and the upstream page groups models by family with their stage. axe (WCAG 2.2 AA) on each page;
// screenshots land in test/console/screenshots (git-ignored).
import t from 'tap'
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'
import type { Page } from 'playwright-core'
import type { Test } from 'tap'
import { startGateway } from '../support/gateway.ts'
import type { StartedGateway } from '../support/gateway.ts'
import { startFakePassThrough } from '../support/fake-pass-through.ts'
import { ADMIN } from '../support/gateway-keys.ts'
import { authClient, DEVICE } from '../support/auth-client.ts'
import { ensureConsoleBuilt } from '../support/console-build.ts'

t.setTimeout(300_000)

const CHROMIUM = '/usr/bin/chromium'
const SHOTS = fileURLToPath(new URL('./screenshots/', import.meta.url))
const AXE = readFileSync(fileURLToPath(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url)), 'utf8')
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22a', 'wcag22aa']
const PASSWORD = 'quiet-lantern-58'
/** The gateway's fixed clock: a day after gemini-3-pro-preview's shutdown on the Gemini API (the model file). */
const DAY = '2026-06-01'
const NOW = Date.parse(`${DAY}T12:00:00Z`)

/** Signs `username` up and has the admin promote them to member (recent authentication: the admin's password). */
async function makeMember (url: string, username: string): Promise<void> {
  const api = authClient(url + '/v1/api')
  if ((await api.signup(username, PASSWORD)).status !== 201) throw new Error('signup failed')
  const admin = (await api.login(ADMIN.AUTH_ADMIN_USERNAME, ADMIN.AUTH_ADMIN_PASSWORD)).body
  const id = (await api.call('GET', '/auth/get-user-id', { query: { username } })).body
  const promoted = await api.call('PUT', `/admin/user/${id}/access-level`, {
    query: { admin_id: admin.user_id },
    headers: { 'user-agent': DEVICE, authorization: `Bearer ${admin.access_token}` },
    json: { access_level: 'member', current_password: ADMIN.AUTH_ADMIN_PASSWORD },
  })
  if (promoted.status !== 200) throw new Error(`promotion answered ${promoted.status} ${promoted.text}`)
}

async function audit (t: Test, page: Page, name: string, width: number): Promise<void> {
  await page.waitForLoadState('networkidle')
  if (width < 500) t.ok(await page.evaluate('document.documentElement.scrollWidth') as number <= width, `${name}: no sideways scroll at ${width} px`)
  await page.evaluate(`${AXE}\n;0`)
  const result = await page.evaluate(`axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(AXE_TAGS)} } })`) as { violations: Array<{ id: string, nodes: Array<{ target: unknown }> }> }
  t.same(result.violations.map(v => `${v.id}: ${JSON.stringify(v.nodes.map(n => n.target))}`), [], `${name}: axe (WCAG 2.2 AA) at ${width} px`)
  await page.screenshot({ path: join(SHOTS, `friction-${width}-${name}.png`), fullPage: true })
}

async function signIn (page: Page, gw: StartedGateway, username: string, password: string): Promise<void> {
  await page.goto(`${gw.url}/console/`)
  await page.getByRole('heading', { name: 'Sign in to Gatehouse' }).waitFor()
  await page.getByLabel('Username').fill(username)
  await page.getByLabel('Password').fill(password)
  await page.getByLabel('Password').press('Enter')
}

async function go (page: Page, label: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: label, exact: true }).press('Enter')
  await page.locator('main h1').first().waitFor()
}

/** The usage page on the gateway's day: the range typed as ISO days, then Show until `requests` are in. */
async function showDay (page: Page, requests: string): Promise<void> {
  const total = page.locator('dd[data-metric="requests"]')
  // The page's first load may fill in its default range after a fill: wait for it, and type the range on every try.
  await page.waitForLoadState('networkidle')
  // The usage ledger writes at most once a second: ask again until the calls show.
  for (let deadline = Date.now() + 15_000; Date.now() < deadline;) {
    await page.getByLabel('From (UTC, yyyy-mm-dd)').fill(DAY)
    await page.getByLabel('To (UTC, yyyy-mm-dd)').fill(DAY)
    await page.getByRole('button', { name: 'Show', exact: true }).press('Enter')
    await page.waitForLoadState('networkidle')
    if (await total.count() > 0 && await total.textContent() === requests) return
    await page.waitForTimeout(300)
  }
  const said = page.locator('main').getByRole('alert')
  throw new Error(`the usage of ${DAY} never showed ${requests} requests: ${await total.count() > 0 ? await total.textContent() ?? '' : 'no totals'}; ${await said.count() > 0 ? await said.textContent() ?? '' : 'no alert'}`)
}

async function walk (t: Test, gw: StartedGateway, width: number): Promise<void> {
  const member = `ada_${width}`
  await makeMember(gw.url, member)
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-chromium-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const context = await chromium.launchPersistentContext(dataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width, height: 900 },
  })
  t.teardown(() => context.close())
  const page = context.pages()[0] ?? await context.newPage()
  page.setDefaultTimeout(15_000)
  const problems: string[] = []
  page.on('pageerror', err => problems.push(err.message))

  // A lockout says when it ends (the server's retry-after), in words.
  const locked = `locked_${width}`
  await makeMember(gw.url, locked)
  const alert = page.locator('main').getByRole('alert')
  let lockout = ''
  for (let i = 0; i < 8 && !/try again at/.test(lockout); i++) {
    await signIn(page, gw, locked, 'not-the-password-1')
    await alert.waitFor()
    lockout = await alert.textContent() ?? ''
  }
  t.match(lockout, /^Too many failed login attempts\. You can try again at \d\d:\d\d UTC \(in 15 minutes\)\.$/, 'the lockout names the time it ends')

  await signIn(page, gw, member, PASSWORD)
  await page.getByRole('heading', { name: `Hello, ${member}` }).waitFor()

  // Keys: validation in words; a model the level may not use named; a wrong re-auth password told beside its button.
  await go(page, 'API keys')
  const form = page.locator('form.panel')
  await page.getByLabel('Name').fill('laptop')
  await page.getByLabel('Models (optional)').fill('a b')
  await page.getByRole('button', { name: 'Create key' }).press('Enter')
  await form.getByRole('alert').waitFor()
  const invalid = await form.getByRole('alert').textContent() ?? ''
  t.match(invalid, /^Models must be 1-128 letters, digits/, 'the field named as the form labels it')
  t.notMatch(invalid, /"models\[0\]"/, 'not the raw validation text')
  await page.getByLabel('Models (optional)').fill('gemini-2.5-pro')
  await page.getByRole('button', { name: 'Create key' }).press('Enter')
  const dialog = page.getByRole('dialog', { name: 'Confirm it is you' })
  await dialog.getByLabel('Current password').fill('wrong-password-12')
  await dialog.getByRole('button', { name: 'Confirm' }).press('Enter')
  await dialog.getByRole('alert').waitFor()
  t.equal(await dialog.getByRole('alert').textContent(), 'That is not your current password. Check it and try again.', 'the wrong password is told in the dialog, beside its button, in words')
  await audit(t, page, 'reauth-wrong-password', width)
  await dialog.getByLabel('Current password').fill(PASSWORD)
  await dialog.getByRole('button', { name: 'Confirm' }).press('Enter')
  await form.getByText(/Access level member may not use the model `gemini-2\.5-pro`/).waitFor()
  t.pass('a key for a model the level may not use is refused, naming it')
  await page.getByLabel('Models (optional)').fill('')
  await page.getByRole('button', { name: 'Create key' }).press('Enter')
  await dialog.getByLabel('Current password').fill(PASSWORD)
  await dialog.getByRole('button', { name: 'Confirm' }).press('Enter')
  const key = await page.locator('#new-key-value').inputValue()
  await page.getByRole('button', { name: 'I have saved it' }).press('Enter')

  // One call served, two refused before their calls (a model the policy refuses, an unknown one).
  const call = async (model: string, action: string, body: unknown): Promise<number> => {
    const res = await fetch(`${gw.url}/v1beta/models/${model}:${action}`, { method: 'POST', headers: { 'x-goog-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    await res.arrayBuffer()
    return res.status
  }
  t.equal(await call('gemini-embedding-2', 'embedContent', { content: { parts: [{ text: 'hi' }] } }), 200)
  t.equal(await call('gemini-2.5-pro', 'generateContent', { contents: [{ parts: [{ text: 'hi' }] }] }), 403)
  t.equal(await call('no-such-model', 'generateContent', { contents: [{ parts: [{ text: 'hi' }] }] }), 404)

  // Usage: errors columns, refusals no model, bars, ISO days; a refused range shows only its reason.
  await go(page, 'Usage')
  await showDay(page, '3')
  t.equal(await page.locator('dd[data-metric="errors_4xx"]').textContent(), '2', 'the refusals are errors')
  const byModel = await page.getByRole('region', { name: 'Totals' }).textContent() ?? ''
  t.match(byModel, /Errors 4xx.*Errors 5xx/, 'the errors columns')
  t.notMatch(byModel, /refused|none/, 'no model named for the refusals')
  t.equal(await page.locator('figure.chart').getAttribute('data-draw'), 'bars', 'daily counts drawn as bars')
  t.match(await page.getByRole('region', { name: 'Days with calls' }).textContent(), DAY, 'the table writes the day as the fields do')
  await audit(t, page, 'usage', width)
  await page.getByLabel('From (UTC, yyyy-mm-dd)').fill('2026-02-30')
  await page.getByRole('button', { name: 'Show', exact: true }).press('Enter')
  await page.locator('main').getByRole('alert').getByText('From is not a day of the calendar.').waitFor()
  t.equal(await page.locator('dl.totals').count(), 0, 'the old range\'s numbers are gone')
  await page.getByLabel('From (UTC, yyyy-mm-dd)').fill('06/01/2026')
  await page.getByRole('button', { name: 'Show', exact: true }).press('Enter')
  await page.locator('main').getByRole('alert').getByText(/^From must be a day written yyyy-mm-dd/).waitFor()
  await audit(t, page, 'usage-bad-range', width)

  // Revoke asks first: Cancel keeps the key.
  await go(page, 'API keys')
  await page.getByRole('button', { name: 'Revoke key laptop' }).press('Enter')
  const ask = page.getByRole('alertdialog', { name: 'Are you sure?' })
  t.match(await ask.textContent(), 'Revoke the key laptop?')
  await audit(t, page, 'revoke-confirm', width)
  await ask.getByRole('button', { name: 'Cancel' }).press('Enter')
  t.equal(await call('gemini-embedding-2', 'embedContent', { content: { parts: [{ text: 'hi' }] } }), 200, 'cancelled: the key still works')
  await page.getByRole('button', { name: 'Revoke key laptop' }).press('Enter')
  await ask.getByRole('button', { name: 'Revoke laptop' }).press('Enter')
  await page.getByText('You have no keys.').waitFor()
  t.equal(await call('gemini-embedding-2', 'embedContent', { content: { parts: [{ text: 'hi' }] } }), 401, 'confirmed: revoked')
  await go(page, 'Usage')
  await page.getByLabel('By', { exact: true }).selectOption('key')
  await showDay(page, '4')
  t.match(await page.getByRole('region', { name: 'Totals' }).textContent(), 'laptop (revoked)', 'a revoked key\'s name is kept in usage')
  await page.getByRole('button', { name: 'Sign out' }).press('Enter')
  await page.getByRole('heading', { name: 'Sign in to Gatehouse' }).waitFor()

  // The admin: owners beside keys, Disable asks first, models by family with their stage.
  await signIn(page, gw, ADMIN.AUTH_ADMIN_USERNAME, ADMIN.AUTH_ADMIN_PASSWORD)
  await page.getByRole('heading', { name: `Hello, ${ADMIN.AUTH_ADMIN_USERNAME}` }).waitFor()
  await go(page, 'All usage')
  await page.getByLabel('By', { exact: true }).selectOption('key')
  await showDay(page, width === 1280 ? '4' : '8')
  const byKey = page.getByRole('region', { name: 'Totals' })
  t.match(await byKey.locator('thead').textContent(), /^keyOwner/, 'an owner column')
  t.match(await byKey.locator('tbody').textContent(), `laptop (revoked)${member}`, 'the key beside its owner')
  await audit(t, page, 'all-usage-by-key', width)

  await go(page, 'Users')
  await page.getByLabel('Username contains').fill(member)
  await page.getByLabel('Username contains').press('Enter')
  await page.getByRole('button', { name: `Manage ${member}` }).press('Enter')
  await page.getByLabel('Access level').selectOption('dev')
  t.equal(await page.locator('#level-limits').textContent(), 'At dev their limits change: requests per minute 60 → unlimited; calls at once 8 → unlimited.', 'the console warns before a level change changes the limits')
  await page.getByLabel('Access level').selectOption('member')
  t.equal(await page.locator('#level-limits').textContent(), '', 'no warning for the level they have')
  // Deletes are sensitive too: clearing a lockout asks for the password, as the level and status changes do.
  await page.getByRole('button', { name: 'Clear login lockout' }).press('Enter')
  await page.getByRole('dialog', { name: 'Confirm it is you' }).getByLabel('Current password').fill(ADMIN.AUTH_ADMIN_PASSWORD)
  await page.getByRole('dialog', { name: 'Confirm it is you' }).getByRole('button', { name: 'Confirm' }).press('Enter')
  await page.getByText('Lockout cleared.').waitFor()
  await page.getByRole('button', { name: `Disable ${member}` }).press('Enter')
  await ask.getByRole('button', { name: 'Cancel' }).press('Enter')
  t.match(await page.locator('.panel dl').textContent(), 'Statusenabled', 'cancelled: still enabled')
  await page.getByRole('button', { name: `Disable ${member}` }).press('Enter')
  await ask.getByRole('button', { name: `Disable ${member}` }).press('Enter')
  await page.getByRole('dialog', { name: 'Confirm it is you' }).getByLabel('Current password').fill(ADMIN.AUTH_ADMIN_PASSWORD)
  await page.getByRole('dialog', { name: 'Confirm it is you' }).getByRole('button', { name: 'Confirm' }).press('Enter')
  await page.getByText(`${member} disabled; their sessions ended.`).waitFor()

  await go(page, 'Upstream')
  const gemini3 = page.getByRole('region', { name: 'Models of the gemini-3 family' })
  await gemini3.waitFor()
  t.match(await gemini3.textContent(), /gemini-3-pro-previewshut down since 2026-03-09; served by gemini-3\.1-pro-preview/, 'a shut-down model marked, with what serves it')
  t.equal(await gemini3.locator('tr.shut-down').count() >= 1, true)
  t.match(await page.getByRole('region', { name: 'Models of the gemini-2.5-flash family' }).textContent(), /gemini-2\.5-flash(GA|preview)/)
  await audit(t, page, 'upstream', width)
  t.same(problems, [], 'no page error')
}

t.test('the console\'s friction of issue 31, at 1280 px and at 390 px', async t => {
  ensureConsoleBuilt()
  mkdirSync(SHOTS, { recursive: true })
  const fake = await startFakePassThrough()
  t.teardown(() => fake.close())
  const gw = await startGateway({
    ...ADMIN,
    LOG_LEVEL: 'silent',
    GEMINI_API_KEY: 'upstream-key',
    GEMINI_API_ENDPOINT: fake.url,
    GEMINI_MODEL_ACCESS: JSON.stringify({ member: ['gemini-2.5-flash*', 'gemini-embedding*'] }),
    // dev has no entry: it takes admin's, an explicit {} (unlimited).
    GEMINI_LIMITS: JSON.stringify({ member: { rpm: 60 }, admin: {} }),
    // Every sensitive action asks for the password: the re-auth prompt is on the path.
    AUTH_REAUTH_SECONDS: '0',
  }, { now: () => new Date(NOW), sleep: async () => {} })
  t.teardown(() => gw.close())
  for (const width of [1280, 390]) await t.test(`at ${width} px`, async t => { await walk(t, gw, width) })
})
