// The console's spend views in a real Chromium (docs/console.md; docs/prices.md, "Budgets"): a member under a
// dollar budget sees what is left on the overview, the spend in the usage page and the key's spend this month against
// its monthly cap; the admin sees the top spenders and the key's spend. Prices come from an operator file in force since 2020, so no date moves them.
import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'
import type { Page } from 'playwright-core'
import { startGateway } from '../support/gateway.ts'
import { startFakeUpstream, geminiResponse } from '../support/fake-upstream.ts'
import { ADMIN, keyUser } from '../support/gateway-keys.ts'
import { ensureConsoleBuilt } from '../support/console-build.ts'

t.setTimeout(180_000)

const CHROMIUM = '/usr/bin/chromium'
const AXE = readFileSync(fileURLToPath(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url)), 'utf8')
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22a', 'wcag22aa']
// The password keyUser gives its users (test/support/gateway-keys.ts).
const PASSWORD = 'quiet-lantern-58'
// 1,000 prompt tokens at $1 and 1,000 output tokens at $10 per 1M: $0.011 a call.
const PRICES = { prices: [{ model: 'gemini-3.5-flash', backend: 'gemini-api', from: '2020-01-01', input: '1.00', output: '10.00' }] }
const USAGE = { promptTokenCount: 1000, candidatesTokenCount: 1000, totalTokenCount: 2000 }

t.test('the console shows spend, the budget and what is left, and the admin\'s top spenders', async t => {
  ensureConsoleBuilt()
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-spend-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const pricesFile = join(dir, 'prices.json')
  writeFileSync(pricesFile, JSON.stringify(PRICES))
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  fake.setDefault('generateContent', { body: geminiResponse({ text: 'ok', finishReason: 'STOP', usage: USAGE }) })
  const gw = await startGateway({
    ...ADMIN,
    GEMINI_API_KEY: 'upstream-key',
    GEMINI_API_ENDPOINT: fake.url,
    GEMINI_PRICES_FILE: pricesFile,
    GEMINI_LIMITS: JSON.stringify({ member: { usd_per_day: 1 } }),
    LOG_LEVEL: 'silent',
  })
  t.teardown(() => gw.close())
  const user = await keyUser(gw.url, 'spender', { name: 'ci', usd_per_month: 5 })
  const call = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gemini-3.5-flash', messages: [{ role: 'user', content: 'hi' }] }),
  })
  t.equal(call.status, 200)
  await call.arrayBuffer()

  const profile = mkdtempSync(join(tmpdir(), 'gatehouse-chromium-'))
  t.teardown(() => rmSync(profile, { recursive: true, force: true }))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1200, height: 900 },
  })
  t.teardown(() => context.close())
  const page: Page = context.pages()[0] ?? await context.newPage()
  const problems: string[] = []
  page.on('console', message => { if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) problems.push(`console: ${message.text()}`) })
  page.on('pageerror', err => problems.push(`page error: ${err.message}`))
  page.setDefaultTimeout(15_000)

  const audit = async (name: string): Promise<void> => {
    await page.evaluate(`${AXE}\n;0`)
    const result = await page.evaluate(`axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(AXE_TAGS)} } })`) as { violations: Array<{ id: string, nodes: Array<{ target: unknown }> }> }
    t.same(result.violations.map(v => `${v.id}: ${JSON.stringify(v.nodes.map(n => n.target))}`), [], `axe (WCAG 2.2 AA), ${name}`)
  }
  const go = async (label: string): Promise<void> => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: label, exact: true }).press('Enter')
    await page.locator('main h1').first().waitFor()
  }
  const signIn = async (username: string, password: string): Promise<void> => {
    await page.goto(`${gw.url}/console/`)
    await page.getByLabel('Username').fill(username)
    await page.getByLabel('Password').fill(password)
    await page.getByLabel('Password').press('Enter')
    await page.getByRole('heading', { name: `Hello, ${username}` }).waitFor()
  }
  /** Asks the page again until `locator`'s text is `text` (the usage ledger writes at most once a second). */
  const showsAfterReload = async (selector: string, text: string): Promise<string | null> => {
    const cell = page.locator(selector)
    for (let deadline = Date.now() + 15_000; Date.now() < deadline;) {
      if (await cell.count() > 0 && await cell.first().textContent() === text) break
      await page.waitForTimeout(300)
      await page.getByRole('button', { name: 'Show', exact: true }).press('Enter')
      await page.waitForLoadState('networkidle')
    }
    return await cell.first().textContent()
  }

  await signIn('spender', PASSWORD)
  const budgetRow = page.getByRole('row', { name: /Spend per UTC day/ })
  t.match(await budgetRow.textContent(), /\$1\.00\$0\.011\$0\.989/, 'the overview: the day\'s budget, what the call cost, what is left')
  t.equal(await page.locator('td[data-left="usd_per_day"]').textContent(), '$0.989')
  await audit('overview with a budget')

  await go('Usage')
  t.equal(await showsAfterReload('dd[data-metric="cost_micros"]', '$0.011'), '$0.011', 'the usage page: the spend in dollars beside the tokens')
  await page.getByLabel('Show').selectOption('cost_micros')
  t.ok(await page.locator('.chart canvas').count() > 0, 'the chart draws the spend')
  t.match(await page.getByRole('region', { name: 'Totals' }).textContent(), 'gemini-3.5-flash', 'spend by model')
  t.equal(await page.getByRole('region', { name: 'Totals' }).getByRole('columnheader', { name: 'Grounded requests' }).count(), 1, 'grounded requests are a column of the tables')
  t.equal(await page.locator('dd[data-metric="grounded_requests"]').textContent(), '0', 'an ungrounded call counts no grounded request')
  await audit('usage with spend')

  await go('API keys')
  t.match(await page.getByRole('row', { name: /ci/ }).textContent(), '$5.00', 'the key\'s own monthly budget is listed')
  t.equal(await page.locator(`td[data-spent="${user.keyId}"]`).textContent(), '$0.011 of $5.00', 'the key\'s spend this UTC month against its cap')
  t.ok(await page.getByRole('columnheader', { name: 'Spent this UTC month' }).count() === 1)
  await audit('keys with their spend')
  await page.getByRole('button', { name: 'Sign out' }).press('Enter')
  await page.getByRole('heading', { name: 'Sign in to Gatehouse' }).waitFor()

  await signIn(ADMIN.AUTH_ADMIN_USERNAME, ADMIN.AUTH_ADMIN_PASSWORD)
  await go('All usage')
  t.equal(await showsAfterReload(`td[data-spend="${user.userId}"]`, '$0.011'), '$0.011', 'the admin sees the top spenders')
  t.match(await page.getByRole('region', { name: 'Users who spent the most' }).textContent(), 'spender')
  await audit('all usage with top spenders')
  await go('Users')
  await page.getByLabel('Username contains').fill('spender')
  await page.getByLabel('Username contains').press('Enter')
  await page.getByRole('button', { name: 'Manage spender' }).press('Enter')
  await page.getByRole('heading', { name: 'Manage spender' }).waitFor()
  t.equal(await page.locator(`[data-spent="${user.keyId}"]`).textContent(), '$0.011 of $5.00', 'the admin sees the key\'s spend against its cap')
  await audit('a user\'s keys with their spend')
  t.same(problems, [], 'no console error and no CSP violation')
})
