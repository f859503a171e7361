// A team's first hour on the console in a real Chromium (issue 31): over plain HTTP on a real host name the sign-in
// says why it cannot work and opens no session, unless CONSOLE_ALLOW_HTTP is set, where it works; and at a
// 390 px phone viewport no page scrolls sideways; an admin adds users by link or password, revokes keys, resets
// passwords and closes sign-up at both widths (axe at each). Screenshots land in test/console/screenshots (git-ignored).
import t from 'tap'
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'
import type { BrowserContext, Page } from 'playwright-core'
import type { Test } from 'tap'
import { startGateway } from '../support/gateway.ts'
import { ADMIN } from '../support/gateway-keys.ts'
import { authClient, DEVICE } from '../support/auth-client.ts'
import { ensureConsoleBuilt } from '../support/console-build.ts'

t.setTimeout(240_000)

const CHROMIUM = '/usr/bin/chromium'
const SHOTS = fileURLToPath(new URL('./screenshots/', import.meta.url))
/** A host name that is not localhost, which Chromium resolves to the test's 127.0.0.1 server. */
const LAN_HOST = 'gatehouse.lan'
const AXE = readFileSync(fileURLToPath(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url)), 'utf8')
/** axe's rules for WCAG 2.0, 2.1 and 2.2 at levels A and AA. */
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22a', 'wcag22aa']

interface TestT { teardown (fn: () => unknown): void }

async function launch (t: TestT, viewport: { width: number, height: number }): Promise<{ context: BrowserContext, page: Page }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-chromium-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const context = await chromium.launchPersistentContext(dataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', `--host-resolver-rules=MAP ${LAN_HOST} 127.0.0.1`],
    viewport,
  })
  t.teardown(() => context.close())
  const page = context.pages()[0] ?? await context.newPage()
  page.setDefaultTimeout(15_000)
  return { context, page }
}

async function submitSignIn (page: Page, url: string, username: string, password: string): Promise<void> {
  await page.goto(url)
  await page.getByRole('heading', { name: 'Sign in to Gatehouse' }).waitFor()
  await page.getByLabel('Username').fill(username)
  await page.getByLabel('Password').fill(password)
  await page.getByLabel('Password').press('Enter')
}

/** The admin's sessions in the store, through the JSON routes (which open one more, the first listed). */
async function adminSessions (gatewayUrl: string): Promise<unknown[]> {
  const api = authClient(gatewayUrl + '/v1/api')
  const admin = (await api.login(ADMIN.AUTH_ADMIN_USERNAME, ADMIN.AUTH_ADMIN_PASSWORD)).body
  const listed = await api.call('GET', '/auth/sessions', { query: { user_id: admin.user_id, token: admin.access_token }, headers: { 'user-agent': DEVICE } })
  return listed.body as unknown[]
}

t.test('sign-in over plain HTTP on a host name other than localhost: refused with why and what to do, no session left; CONSOLE_ALLOW_HTTP signs in', async t => {
  ensureConsoleBuilt()
  mkdirSync(SHOTS, { recursive: true })
  const strict = await startGateway({ LOG_LEVEL: 'silent', ...ADMIN })
  t.teardown(() => strict.close())
  const open = await startGateway({ ...ADMIN, CONSOLE_ALLOW_HTTP: 'true' })
  t.teardown(() => open.close())
  const { page } = await launch(t, { width: 1280, height: 900 })

  const lan = (url: string): string => `http://${LAN_HOST}:${new URL(url).port}/console/`
  await submitSignIn(page, lan(strict.url), ADMIN.AUTH_ADMIN_USERNAME, ADMIN.AUTH_ADMIN_PASSWORD)
  const alert = page.getByRole('alert')
  await alert.getByText(/needs HTTPS/).waitFor()
  t.match(await alert.textContent(), /browser drops the console's Secure cookie.*HTTPS.*http:\/\/localhost.*CONSOLE_ALLOW_HTTP=true/, 'the message says why and what to do')
  t.ok(await page.getByRole('heading', { name: 'Sign in to Gatehouse' }).isVisible(), 'still on the sign-in form, which says so')
  await page.screenshot({ path: join(SHOTS, 'insecure-origin-refused.png'), fullPage: true })
  t.equal((await adminSessions(strict.url)).length, 1, 'no console session was left behind: only the JSON login just made')
  const { page: phone } = await launch(t, { width: 390, height: 844 })
  await submitSignIn(phone, lan(strict.url), ADMIN.AUTH_ADMIN_USERNAME, ADMIN.AUTH_ADMIN_PASSWORD)
  await phone.getByRole('alert').getByText(/needs HTTPS/).waitFor()
  await audit(t, phone, 'insecure-origin-refused', 390)

  await submitSignIn(page, `${strict.url}/console/`, ADMIN.AUTH_ADMIN_USERNAME, ADMIN.AUTH_ADMIN_PASSWORD)
  await page.getByRole('heading', { name: `Hello, ${ADMIN.AUTH_ADMIN_USERNAME}` }).waitFor()
  t.pass('the same console signs in on 127.0.0.1, which browsers count as secure')

  await submitSignIn(page, lan(open.url), ADMIN.AUTH_ADMIN_USERNAME, ADMIN.AUTH_ADMIN_PASSWORD)
  await page.getByRole('heading', { name: `Hello, ${ADMIN.AUTH_ADMIN_USERNAME}` }).waitFor()
  t.pass('with CONSOLE_ALLOW_HTTP=true the sign-in over plain HTTP works')
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Sessions', exact: true }).press('Enter')
  // Waited for: the page before it (with a table of its own) may still be on screen for a moment.
  await page.locator('main table', { hasText: '(this browser)' }).waitFor()
  t.pass('and the page stays signed in')
  t.ok(open.logs.some(l => l.level === 'warn' && /allowHttp is on/.test(String(l.msg))), 'the opt-out is logged as a warning at start')
})

t.test('at a 390 px viewport no console page scrolls sideways: wide tables scroll in their own box', async t => {
  ensureConsoleBuilt()
  mkdirSync(SHOTS, { recursive: true })
  const gw = await startGateway({ LOG_LEVEL: 'silent', ...ADMIN })
  t.teardown(() => gw.close())
  const { page } = await launch(t, { width: 390, height: 844 })
  await submitSignIn(page, `${gw.url}/console/`, ADMIN.AUTH_ADMIN_USERNAME, ADMIN.AUTH_ADMIN_PASSWORD)
  await page.getByRole('heading', { name: `Hello, ${ADMIN.AUTH_ADMIN_USERNAME}` }).waitFor()
  // A key, so the keys page has its table.
  await page.goto(`${gw.url}/console/#/keys`)
  await page.getByLabel('Name').fill('phone-key-with-a-long-name')
  await page.getByLabel('Name').press('Enter')
  await page.getByRole('button', { name: 'I have saved it' }).press('Enter')
  const pages = ['#/', '#/keys', '#/usage', '#/sessions', '#/account', '#/admin/users', '#/admin/usage', '#/admin/upstream']
  for (const hash of pages) {
    await page.goto(`${gw.url}/console/${hash}`)
    await page.locator('main h1').first().waitFor()
    await page.waitForLoadState('networkidle')
    const width = await page.evaluate('document.documentElement.scrollWidth') as number
    t.ok(width <= 390, `${hash}: the page is ${width} px wide, within the 390 px viewport`)
    // Evaluated through the DevTools protocol, so the page's CSP (no inline script) does not block axe itself.
    await page.evaluate(`${AXE}\n;0`)
    const result = await page.evaluate(`axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(AXE_TAGS)} } })`) as { violations: Array<{ id: string, nodes: Array<{ target: unknown }> }> }
    t.same(result.violations.map(v => `${v.id}: ${JSON.stringify(v.nodes.map(n => n.target))}`), [], `${hash}: axe (WCAG 2.2 AA) at 390 px`)
    await page.screenshot({ path: join(SHOTS, `phone-${hash.replace(/[#/]+/g, '-').replace(/^-|-$/g, '') || 'overview'}.png`), fullPage: true })
  }
})

t.test('with public sign-up closed (AUTH_PUBLIC_SIGNUP=false) an admin adds a user, revokes their key and resets their password in the console, at 1280 px and at 390 px', async t => {
  ensureConsoleBuilt()
  mkdirSync(SHOTS, { recursive: true })
  const gw = await startGateway({ LOG_LEVEL: 'silent', AUTH_PUBLIC_SIGNUP: 'false', ...ADMIN })
  t.teardown(() => gw.close())
  const closed = await authClient(gw.url + '/v1/api').signup('walk_in', 'quiet-lantern-58')
  t.match([closed.status, closed.body], [403, { detail: 'Sign-up is closed here: ask an admin to add you' }], 'public sign-up answers 403 SIGNUP_CLOSED')
  for (const [width, height] of [[1280, 900], [390, 844]] as const) await t.test(`at ${width} px`, async t => { await manageUser(t, gw.url, width, height) })
})

/** The admin adds `newbie_<width>` with a password, makes them a member, revokes their key and resets their password. */
async function manageUser (t: Test, url: string, width: number, height: number): Promise<void> {
  const api = authClient(url + '/v1/api')
  const newbie = `newbie_${width}`
  const { page } = await launch(t, { width, height })
  await submitSignIn(page, `${url}/console/`, ADMIN.AUTH_ADMIN_USERNAME, ADMIN.AUTH_ADMIN_PASSWORD)
  await page.getByRole('heading', { name: `Hello, ${ADMIN.AUTH_ADMIN_USERNAME}` }).waitFor()
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Users', exact: true }).press('Enter')
  await page.getByLabel('New username').fill(newbie)
  await page.getByLabel('Set a password for them').check()
  await page.getByLabel('Their password').fill('bright-harbor-71')
  await page.getByRole('button', { name: 'Add user' }).press('Enter')
  await page.getByText(`${newbie} added: pass the password on to them.`).waitFor()
  await page.getByRole('heading', { name: `Manage ${newbie}` }).waitFor()
  await page.getByLabel('Access level').selectOption('member')
  await page.getByRole('button', { name: 'Set level' }).press('Enter')
  await page.getByText('Level set to member.').waitFor()

  const first = (await api.login(newbie, 'bright-harbor-71')).body
  t.ok(first.user_id, 'the added user signs in with the password the admin set')
  const created = await api.call('POST', '/auth/keys', { query: { user_id: first.user_id }, headers: { 'user-agent': DEVICE, token: first.access_token }, json: { name: 'laptop' } })
  t.equal(created.status, 201, 'and, as a member, makes a key')
  const models = (): Promise<number> => fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${created.body.key as string}` } }).then(r => r.status)
  t.equal(await models(), 200, 'the key works')

  await page.getByRole('button', { name: 'Close' }).press('Enter')
  await page.getByRole('button', { name: `Manage ${newbie}` }).press('Enter')
  await page.getByRole('button', { name: `Revoke key laptop of ${newbie}` }).press('Enter')
  await page.getByRole('alertdialog').getByRole('button', { name: 'Revoke laptop' }).press('Enter')
  await page.getByText('Key laptop revoked.').waitFor()
  await page.getByText(`${newbie} has no keys.`).waitFor()
  t.equal(await models(), 401, 'the revoked key is refused')

  await page.getByLabel('New password').fill('fresh-meadow-93')
  await page.getByRole('button', { name: 'Reset password', exact: true }).press('Enter')
  await page.getByText(`New password set for ${newbie}; their sessions ended.`).waitFor()
  t.equal((await api.login(newbie, 'bright-harbor-71')).status, 401, 'the old password no longer signs in')
  t.equal((await api.login(newbie, 'fresh-meadow-93')).status, 200, 'the new one does')
  const validate = await api.validate(first.user_id, first.access_token)
  t.equal(validate.status, 401, 'the session opened with the old password ended')
  await audit(t, page, 'admin-user-managed', width)
}

/** axe (WCAG 2.2 AA) on the page as it is now, and no sideways scroll at a phone width. */
async function audit (t: Test, page: Page, name: string, width: number): Promise<void> {
  await page.waitForLoadState('networkidle')
  const scroll = await page.evaluate('document.documentElement.scrollWidth') as number
  t.ok(scroll <= width, `${name}: the page is ${scroll} px wide, within ${width} px`)
  await page.evaluate(`${AXE}\n;0`)
  const result = await page.evaluate(`axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(AXE_TAGS)} } })`) as { violations: Array<{ id: string, nodes: Array<{ target: unknown }> }> }
  t.same(result.violations.map(v => `${v.id}: ${JSON.stringify(v.nodes.map(n => n.target))}`), [], `${name}: axe (WCAG 2.2 AA) at ${width} px`)
  await page.screenshot({ path: join(SHOTS, `${name}-${width}.png`), fullPage: true })
}

t.test('an admin adds a user by a sign-in link, at 1280 px and at 390 px: its holder chooses a password and is signed in, once', async t => {
  ensureConsoleBuilt()
  mkdirSync(SHOTS, { recursive: true })
  const gw = await startGateway({ LOG_LEVEL: 'silent', AUTH_PUBLIC_SIGNUP: 'false', ...ADMIN })
  t.teardown(() => gw.close())
  for (const [width, height] of [[1280, 900], [390, 844]] as const) {
    await t.test(`at ${width} px`, async t => {
      const username = `linked_${width}`
      const { page } = await launch(t, { width, height })
      await submitSignIn(page, `${gw.url}/console/`, ADMIN.AUTH_ADMIN_USERNAME, ADMIN.AUTH_ADMIN_PASSWORD)
      await page.getByRole('heading', { name: `Hello, ${ADMIN.AUTH_ADMIN_USERNAME}` }).waitFor()
      await page.goto(`${gw.url}/console/#/admin/users`)
      await page.getByLabel('New username').fill(username)
      t.ok(await page.getByLabel('Send a sign-in link: they choose a password').isChecked(), 'a link is the default way in')
      await page.getByRole('button', { name: 'Add user' }).press('Enter')
      await page.getByText(`${username} added: send them the sign-in link below.`).waitFor()
      const link = await page.getByLabel(`Sign-in link for ${username}`).inputValue()
      t.match(link, new RegExp(`^${gw.url}/console/#/welcome/[0-9a-f]{24}\\.`), 'the link is this console\'s own address')
      await audit(t, page, 'sign-in-link-made', width)

      const { page: theirs } = await launch(t, { width, height })
      await theirs.goto(link)
      await theirs.getByRole('heading', { name: 'Welcome to Gatehouse' }).waitFor()
      await audit(t, theirs, 'sign-in-link-welcome', width)
      await theirs.getByLabel('New password').fill('amber-orchard-64')
      await theirs.getByLabel('The same password again').fill('amber-orchard-46')
      await theirs.getByText('The two passwords differ.').waitFor()
      await theirs.getByLabel('The same password again').fill('amber-orchard-64')
      await theirs.getByRole('button', { name: 'Set password and sign in' }).press('Enter')
      await theirs.getByRole('heading', { name: `Hello, ${username}` }).waitFor()
      t.notOk(theirs.url().includes('welcome'), 'the spent token left the address bar')
      t.equal((await authClient(gw.url + '/v1/api').login(username, 'amber-orchard-64')).status, 200, 'the chosen password signs in')

      await theirs.goto(link)
      await theirs.getByLabel('New password').fill('amber-orchard-65')
      await theirs.getByLabel('The same password again').fill('amber-orchard-65')
      await theirs.getByRole('button', { name: 'Set password and sign in' }).press('Enter')
      t.match(await theirs.getByRole('alert').textContent(), /used already/, 'the link works once, and says so')
    })
  }
})

t.test('an admin closes public sign-up in the console, at 1280 px and at 390 px, and opens it again', async t => {
  ensureConsoleBuilt()
  mkdirSync(SHOTS, { recursive: true })
  const gw = await startGateway({ LOG_LEVEL: 'silent', ...ADMIN })
  t.teardown(() => gw.close())
  const api = authClient(gw.url + '/v1/api')
  for (const [width, height] of [[1280, 900], [390, 844]] as const) {
    await t.test(`at ${width} px`, async t => {
      const { page } = await launch(t, { width, height })
      await submitSignIn(page, `${gw.url}/console/`, ADMIN.AUTH_ADMIN_USERNAME, ADMIN.AUTH_ADMIN_PASSWORD)
      await page.getByRole('heading', { name: `Hello, ${ADMIN.AUTH_ADMIN_USERNAME}` }).waitFor()
      await page.goto(`${gw.url}/console/#/admin/users`)
      const open = page.getByLabel('Anyone may sign up')
      await open.waitFor()
      t.ok(await open.isChecked(), 'open by default')
      await open.uncheck()
      await page.getByRole('button', { name: 'Save sign-up and lookup' }).press('Enter')
      await page.getByText('Saved: sign-up closed').waitFor()
      t.equal((await api.signup(`walk_in_${width}`, 'quiet-lantern-58')).status, 403, 'sign-up is closed')
      await audit(t, page, 'signup-closed', width)
      await open.check()
      await page.getByRole('button', { name: 'Save sign-up and lookup' }).press('Enter')
      await page.getByText('Saved: sign-up open').waitFor()
      t.equal((await api.signup(`walk_in_${width}`, 'quiet-lantern-58')).status, 201, 'and open again')
    })
  }
})
