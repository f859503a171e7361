// The console in a real Chromium against the gateway (docs/console.md): a member signs in, makes a key, calls the
// proxy with it, sees the call in the usage chart, exports CSV and revokes the key; the admin finds the member,
// changes the level, sets a limit, disables and enables them. At the gateway's root, behind an ingress that strips a
// prefix, and behind one that keeps it (CONSOLE_PATH). Each page passes axe (WCAG 2.2 AA) in light and dark, no CSP
// violation or console error happens, and screenshots land in test/console/screenshots (git-ignored).
import t from 'tap'
import http from 'node:http'
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { AddressInfo } from 'node:net'
import { chromium } from 'playwright-core'
import type { BrowserContext } from 'playwright-core'
import { startGateway } from '../support/gateway.ts'
import { startFakeUpstream } from '../support/fake-upstream.ts'
import { staleCredentials } from '../proxy/harness.ts'
import { ADMIN } from '../support/gateway-keys.ts'
import { authClient, DEVICE } from '../support/auth-client.ts'
import { ensureConsoleBuilt } from '../support/console-build.ts'

// One browser launch drives the three sites: about a minute and a half on a busy 2-core machine.
t.setTimeout(300_000)

const CHROMIUM = '/usr/bin/chromium'
const SHOTS = fileURLToPath(new URL('./screenshots/', import.meta.url))
const AXE = readFileSync(fileURLToPath(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url)), 'utf8')
const MEMBER_PASSWORD = 'quiet-lantern-58'
/** axe's rules for WCAG 2.0, 2.1 and 2.2 at levels A and AA. */
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22a', 'wcag22aa']

interface Site {
  /** The console page's URL as the browser sees it. */
  page: string
  /** The gateway's root as clients see it (where /v1 is). */
  root: string
  /** The admin's screenshots and axe runs are taken on the first site only. */
  audit: boolean
  label: string
}

/** A reverse proxy that serves the gateway under `/gh`, removing the prefix as an ingress with rewrite does. */
async function strippingIngress (target: string): Promise<{ url: string, close (): Promise<void> }> {
  const to = new URL(target)
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/'
    if (!path.startsWith('/gh/')) { res.writeHead(404).end(); return }
    const upstream = http.request({ host: to.hostname, port: to.port, method: req.method, path: path.slice(3), headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    })
    upstream.on('error', () => res.destroy())
    req.pipe(upstream)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/gh`,
    close: () => new Promise<void>(resolve => { server.closeAllConnections(); server.close(() => resolve()) }),
  }
}

/** Signs up a user and has the admin promote them to member over the JSON routes. */
async function makeMember (gatewayUrl: string, username: string): Promise<void> {
  const api = authClient(gatewayUrl + '/v1/api')
  const ua = { 'user-agent': DEVICE }
  if ((await api.signup(username, MEMBER_PASSWORD)).status !== 201) throw new Error('signup failed')
  const admin = (await api.login(ADMIN.AUTH_ADMIN_USERNAME, ADMIN.AUTH_ADMIN_PASSWORD)).body
  const id = (await api.call('GET', '/auth/get-user-id', { query: { username } })).body
  const promoted = await api.call('PUT', `/admin/user/${id}/access-level`, { query: { admin_id: admin.user_id }, headers: { ...ua, authorization: `Bearer ${admin.access_token}` }, json: { access_level: 'member' } })
  if (promoted.status !== 200) throw new Error(`promotion answered ${promoted.status}`)
}

t.test('the console in Chromium: member and admin tasks at the root and under a prefix, accessible, no CSP violation', async t => {
  ensureConsoleBuilt()
  rmSync(SHOTS, { recursive: true, force: true })
  mkdirSync(SHOTS, { recursive: true })
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const upstream = { GEMINI_CREDENTIALS: JSON.stringify(staleCredentials(fake.tokenUri)), CODE_ASSIST_ENDPOINT: fake.url, LOG_LEVEL: 'silent', ...ADMIN }
  const root = await startGateway(upstream)
  t.teardown(() => root.close())
  const kept = await startGateway({ ...upstream, CONSOLE_PATH: '/team/console' })
  t.teardown(() => kept.close())
  const ingress = await strippingIngress(root.url)
  t.teardown(() => ingress.close())

  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-chromium-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const context: BrowserContext = await chromium.launchPersistentContext(dataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1200, height: 900 },
    acceptDownloads: true,
  })
  t.teardown(() => context.close())
  const page = context.pages()[0] ?? await context.newPage()
  const problems: string[] = []
  page.on('console', message => { if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) problems.push(`console: ${message.text()}`) })
  page.on('pageerror', err => problems.push(`page error: ${err.message}`))
  page.setDefaultTimeout(15_000)

  /** axe on the page as it is (light and dark), and a screenshot of each. */
  async function audit (site: Site, name: string): Promise<void> {
    if (!site.audit) return
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme })
      // Evaluated through the DevTools protocol, so the page's CSP (no inline script) does not block axe itself.
      await page.evaluate(`${AXE}\n;0`)
      const result = await page.evaluate(`axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(AXE_TAGS)} } })`) as { violations: Array<{ id: string, nodes: Array<{ target: unknown }> }> }
      t.same(result.violations.map(v => `${v.id}: ${JSON.stringify(v.nodes.map(n => n.target))}`), [], `axe (WCAG 2.2 AA), ${name}, ${scheme}`)
      await page.screenshot({ path: join(SHOTS, `${name}-${scheme}.png`), fullPage: true })
    }
    await page.emulateMedia({ colorScheme: 'light' })
  }

  async function go (label: string): Promise<void> {
    // By keyboard: the navigation link, then Enter.
    const link = page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: label, exact: true })
    await link.press('Enter')
    // Under load a re-render can swap the link between its focus and the key press: press again once if so.
    const current = page.locator('header nav a[aria-current="page"]', { hasText: label })
    await current.waitFor({ timeout: 5000 }).catch(async () => { await link.press('Enter'); await current.waitFor() })
    await page.locator('main h1').first().waitFor()
  }

  async function signIn (site: Site, username: string, password: string): Promise<void> {
    await page.goto(site.page)
    await page.getByRole('heading', { name: 'Sign in to Gatehouse' }).waitFor()
    await page.getByLabel('Username').fill(username)
    await page.getByLabel('Password').fill(password)
    await page.getByLabel('Password').press('Enter')
    await page.getByRole('heading', { name: `Hello, ${username}` }).waitFor()
  }

  async function signOut (): Promise<void> {
    await page.getByRole('button', { name: 'Sign out' }).press('Enter')
    await page.getByRole('heading', { name: 'Sign in to Gatehouse' }).waitFor()
  }

  async function memberTasks (site: Site, username: string): Promise<void> {
    await page.goto(site.page)
    await page.getByRole('heading', { name: 'Sign in to Gatehouse' }).waitFor()
    await audit(site, 'sign-in')
    await signIn(site, username, MEMBER_PASSWORD)
    await audit(site, 'overview')

    await go('API keys')
    await page.getByLabel('Name').fill('laptop')
    await page.getByLabel('Name').press('Enter')
    await page.getByRole('heading', { name: /Your new key/ }).waitFor()
    const key = await page.locator('#new-key-value').inputValue()
    t.match(key, /^ghk_/, `${site.label}: the key is shown once`)
    t.match(await page.locator('#snippet-panel pre').textContent(), `${site.root}/v1`, `${site.label}: the snippets name the gateway as the browser reaches it`)
    await audit(site, 'key-created')

    const call = await fetch(`${site.root}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] }),
    })
    t.equal(call.status, 200, `${site.label}: the proxy takes the new key`)
    await page.getByRole('button', { name: 'I have saved it' }).press('Enter')
    await audit(site, 'keys')

    await go('Usage')
    // The usage ledger writes at most once a second: ask again until the call shows.
    const requests = page.locator('dd[data-metric="requests"]')
    for (let deadline = Date.now() + 15_000; await requests.textContent() !== '1' && Date.now() < deadline;) {
      await page.waitForTimeout(300)
      await page.getByRole('button', { name: 'Show', exact: true }).press('Enter')
      await page.waitForLoadState('networkidle')
    }
    t.equal(await requests.textContent(), '1', `${site.label}: the call is in the usage totals`)
    t.ok(await page.locator('.chart canvas').count() > 0, `${site.label}: the chart is drawn`)
    t.match(await page.locator('.legend').textContent(), 'gemini-2.5-flash', `${site.label}: by model`)
    await audit(site, 'usage')
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export CSV' }).press('Enter')])
    const csv = readFileSync(await download.path(), 'utf8')
    t.match(csv, /^day,user_id,username,key_id,key_name,model,surface,requests/, `${site.label}: CSV header`)
    t.match(csv, new RegExp(`,${username},[0-9a-f]{24},laptop,gemini-2.5-flash,chat,1,`), `${site.label}: the call in the CSV`)

    await go('Sessions')
    // Waited for: the page before it (with tables of its own) may still be on screen for a moment.
    await page.locator('main table', { hasText: '(this browser)' }).waitFor()
    t.pass(`${site.label}: this browser's session is listed`)
    await audit(site, 'sessions')
    await go('Account')
    await audit(site, 'account')

    await go('API keys')
    await page.getByRole('button', { name: 'Revoke key laptop' }).press('Enter')
    await page.getByRole('alertdialog').getByRole('button', { name: 'Revoke laptop' }).press('Enter')
    await page.getByText('You have no keys.').waitFor()
    const after = await fetch(`${site.root}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] }),
    })
    t.equal(after.status, 401, `${site.label}: the revoked key is refused`)
    await signOut()
  }

  async function adminTasks (site: Site, member: string): Promise<void> {
    await signIn(site, ADMIN.AUTH_ADMIN_USERNAME, ADMIN.AUTH_ADMIN_PASSWORD)
    await go('Users')
    await page.getByLabel('Username contains').fill(member)
    await page.getByLabel('Username contains').press('Enter')
    await page.getByRole('button', { name: `Manage ${member}` }).press('Enter')
    await page.getByRole('heading', { name: `Manage ${member}` }).waitFor()
    await audit(site, 'users')
    const status = page.locator('.panel [role="status"], .panel [role="alert"]')
    await page.getByLabel('Access level').selectOption('admin')
    await page.getByRole('button', { name: 'Set level' }).press('Enter')
    await status.getByText('Level set to admin.').waitFor()
    await page.getByLabel('Requests per minute').fill('7')
    await page.getByRole('button', { name: 'Save limits' }).press('Enter')
    await status.getByText('Limits saved.').waitFor()
    t.match(await page.locator('.panel .help').textContent(), 'requests per minute 7', `${site.label}: the limit holds`)
    await page.getByRole('button', { name: `Disable ${member}` }).press('Enter')
    await page.getByRole('alertdialog').getByRole('button', { name: `Disable ${member}` }).press('Enter')
    await status.getByText(`${member} disabled; their sessions ended.`).waitFor()
    t.ok(await page.getByRole('button', { name: `Enable ${member}` }).isVisible())
    t.match(await page.locator('main table').textContent(), 'disabled', `${site.label}: listed as disabled`)
    await page.getByRole('button', { name: `Enable ${member}` }).press('Enter')
    await page.getByRole('button', { name: `Disable ${member}` }).waitFor()
    t.match(await page.locator('.panel dl').textContent(), 'adminStatusenabled', `${site.label}: level admin, enabled again`)
    await go('All usage')
    await page.locator('dd[data-metric="requests"]').waitFor()
    await audit(site, 'all-usage')
    await go('Upstream')
    await page.getByRole('heading', { name: 'Credentials' }).waitFor()
    await audit(site, 'upstream')
    await signOut()
  }

  const sites: Site[] = [
    { label: 'at the root', page: `${root.url}/console/`, root: root.url, audit: true },
    { label: 'under a stripped prefix', page: `${ingress.url}/console/`, root: ingress.url, audit: false },
    { label: 'under a kept prefix (CONSOLE_PATH)', page: `${kept.url}/team/console/`, root: kept.url, audit: false },
  ]
  for (const [i, site] of sites.entries()) {
    const member = `ada_${i}`
    await makeMember(site === sites[2] ? kept.url : root.url, member)
    await memberTasks(site, member)
    await adminTasks(site, member)
  }
  t.equal(await page.evaluate('localStorage.length + sessionStorage.length'), 0, 'nothing kept in web storage')
  t.same(problems, [], 'no console error and no CSP violation during the run')
})
