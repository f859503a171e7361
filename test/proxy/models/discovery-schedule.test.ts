// Discovery's schedule (lib/proxy/models/discovery.ts): the first round right after start, off the start-up path, then
// one every intervalMs until stopped. Node's mock timers stand in for six hours; this file does nothing else, since
// the mocked setTimeout is every module's while it is on.
import t from 'tap'
import { mock } from 'node:test'
import { startModelDiscovery } from '../../../lib/proxy/models/discovery.ts'
import type { Backend, ModelListing } from '../../../lib/index.ts'

t.test('discovery runs again every intervalMs, in the background, and stops when asked (fake timers)', async t => {
  mock.timers.enable({ apis: ['setTimeout', 'setInterval'] })
  t.teardown(() => mock.timers.reset())
  let rounds = 0
  const backend = { name: 'gemini-api', listModels: async (): Promise<ModelListing> => { rounds++; return { models: [], failed: [] } } } as unknown as Backend
  const changes: number[] = []
  const discovery = startModelDiscovery({ backend, specs: [], intervalMs: 6 * 3600_000, onChange: () => changes.push(rounds) })
  t.equal(rounds, 0, 'nothing on the path of start-up itself')
  mock.timers.tick(0)
  await new Promise(resolve => setImmediate(resolve))
  t.equal(rounds, 1, 'the first round right after start')
  mock.timers.tick(6 * 3600_000 - 1)
  await new Promise(resolve => setImmediate(resolve))
  t.equal(rounds, 1, 'not before the interval')
  mock.timers.tick(1)
  await new Promise(resolve => setImmediate(resolve))
  t.equal(rounds, 2, 'again six hours later')
  mock.timers.tick(6 * 3600_000)
  await new Promise(resolve => setImmediate(resolve))
  t.equal(rounds, 3)
  t.same(changes, [1, 2, 3], 'each round merged')
  discovery.stop()
  mock.timers.tick(12 * 3600_000)
  await new Promise(resolve => setImmediate(resolve))
  t.equal(rounds, 3, 'no round after stop')
})
