// The gateway mounts the console at CONSOLE_PATH unless CONSOLE_ENABLED=false (README, "Configuration").
import t from 'tap'
import { startGateway } from '../support/gateway.ts'
import { loadConfig } from '../../gateway/config.ts'
import { ensureConsoleBuilt } from '../support/console-build.ts'

t.test('the gateway serves the console at /console/ by default, at CONSOLE_PATH when set, and not at all when disabled', async t => {
  ensureConsoleBuilt()
  const on = await startGateway({ LOG_LEVEL: 'silent' })
  t.teardown(() => on.close())
  const page = await fetch(`${on.url}/console/`)
  t.equal(page.status, 200)
  t.match(await page.text(), /assets\/app\.js/)
  const moved = await startGateway({ LOG_LEVEL: 'silent', CONSOLE_PATH: '/team/console/' })
  t.teardown(() => moved.close())
  t.equal((await fetch(`${moved.url}/team/console/`)).status, 200)
  t.equal((await fetch(`${moved.url}/console/`)).status, 404)
  const off = await startGateway({ LOG_LEVEL: 'silent', CONSOLE_ENABLED: 'false' })
  t.teardown(() => off.close())
  t.equal((await fetch(`${off.url}/console/`)).status, 404)
  t.equal((await fetch(`${off.url}/console/api/me`)).status, 404)
})

t.test('CONSOLE_PATH and CONSOLE_ENABLED are checked at start-up, naming the variable', async t => {
  t.throws(() => loadConfig({ CONSOLE_PATH: 'console' }), { variable: 'CONSOLE_PATH', message: /CONSOLE_PATH/ })
  t.throws(() => loadConfig({ CONSOLE_PATH: '/con sole' }), { variable: 'CONSOLE_PATH', message: /CONSOLE_PATH/ })
  t.throws(() => loadConfig({ CONSOLE_ENABLED: 'maybe' }), { variable: 'CONSOLE_ENABLED', message: /CONSOLE_ENABLED/ })
  t.match(loadConfig({}), { consoleEnabled: true })
  t.equal(loadConfig({}).consolePath, undefined, 'unset: the library\'s /console')
})

t.test('the start line names the console\'s URL (CONSOLE_PATH included), and none when the console is off', async t => {
  const on = await startGateway({ CONSOLE_PATH: '/team/console' })
  t.teardown(() => on.close())
  const line = on.logs.find(l => /^Gatehouse listening on /.test(String(l.msg)))
  t.match(line, { url: on.url, consoleUrl: `${on.url}/team/console/`, msg: `Gatehouse listening on ${on.url} (backend: none, console: ${on.url}/team/console/)` })
  const off = await startGateway({ CONSOLE_ENABLED: 'false' })
  t.teardown(() => off.close())
  t.match(off.logs.find(l => /^Gatehouse listening on /.test(String(l.msg))), { consoleUrl: null, msg: `Gatehouse listening on ${off.url} (backend: none)` })
})
