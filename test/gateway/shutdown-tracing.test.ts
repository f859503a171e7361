import t from 'tap'
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { spawnGateway } from '../support/gateway.ts'

t.test('a trace collector that is down does not turn SIGTERM into a crash: the last lines are logged and the exit code is 0', async t => {
  // A port nobody listens on: every export is refused. A traced gateway starts slowly on a loaded machine.
  const closed = createServer()
  await new Promise<void>(resolve => closed.listen(0, '127.0.0.1', resolve))
  const { port } = closed.address() as AddressInfo
  await new Promise(resolve => closed.close(resolve))
  const gw = await spawnGateway({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_EXPORTER_OTLP_TIMEOUT: '1000', OTEL_BSP_SCHEDULE_DELAY: '60000', LOG_LEVEL: 'info', AUTH_ADMIN_PASSWORD: 'admin-password' }, { startTimeoutMs: 60_000 })
  t.teardown(() => gw.stop('SIGKILL'))
  await (await fetch(gw.url + '/v1/api/auth/get-user-id?username=system')).text()
  t.same(await gw.stop('SIGTERM'), { code: 0, signal: null }, 'exit code 0')
  const logs = gw.logs()
  t.notOk(logs.some(l => l.level === 'fatal'), 'no crash logged')
  t.ok(logs.some(l => l.msg === 'stopped'), 'the shutdown was logged')
  t.ok(logs.some(l => l.level === 'warn' && l.msg === 'tracing: the last spans could not be exported' && l.err?.code === 'ECONNREFUSED'), 'the failed export is a warning')
})
