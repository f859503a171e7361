// The usage ledger (lib/metering/usage-ledger.ts): aggregation, batched writes on a fake timer, retries, bounds.
import t from 'tap'
import { createEmbeddedStore, createUsageLedger } from '../../lib/index.ts'
import type { Logger, SetTimer, UsageEntry, UsageRecord, UsageStore } from '../../lib/index.ts'

/** A timer the test fires by hand: `due` holds the scheduled runs not yet fired or cleared. */
function fakeTimer (): { setTimer: SetTimer, due: Array<{ ms: number, run: () => void }>, fire (): void } {
  const due: Array<{ ms: number, run: () => void }> = []
  return {
    due,
    setTimer (run, ms) {
      const item = { ms, run }
      due.push(item)
      return { clear () { const i = due.indexOf(item); if (i >= 0) due.splice(i, 1) } }
    },
    fire () {
      const item = due.shift()
      if (item === undefined) throw new Error('no timer is due')
      item.run()
    },
  }
}

/** A usage store that records every batch, and fails while `failing` is set. */
function recordingUsage (): UsageStore & { batches: UsageRecord[][], failing: boolean } {
  const batches: UsageRecord[][] = []
  return {
    batches,
    failing: false,
    async record (batch) {
      if (this.failing) throw new Error('database down')
      batches.push(structuredClone(batch))
    },
    async query () { return [] },
  }
}

function logs (): Logger & { lines: Array<{ level: string, msg?: string, obj: unknown }> } {
  const lines: Array<{ level: string, msg?: string, obj: unknown }> = []
  const at = (level: string) => (obj: unknown, msg?: string) => { lines.push({ level, obj, msg }) }
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }
}

const AT = new Date('2026-03-04T23:59:59.000Z')
const call = (over: Partial<UsageEntry> = {}): UsageEntry => ({
  at: AT,
  userId: 'a'.repeat(24),
  keyId: 'k'.repeat(24),
  model: 'gemini-2.5-pro',
  surface: 'chat',
  status: 200,
  usage: { inputTokens: 10, outputTokens: 20, thinkingTokens: 5, cachedTokens: 2 },
  ...over,
})
const settle = (): Promise<void> => new Promise(resolve => setImmediate(resolve))

t.test('calls add up per UTC day, user, key, model and surface, with errors by status class, their cost and unpriced calls', async t => {
  const store = await createEmbeddedStore()
  t.teardown(() => store.close())
  const timer = fakeTimer()
  const ledger = createUsageLedger({ store, setTimer: timer.setTimer })
  ledger.record(call({ costMicros: 400 }))
  ledger.record(call({ status: 429, usage: undefined }))
  ledger.record(call({ status: 502, usage: { inputTokens: 1, outputTokens: 0, thinkingTokens: 0, cachedTokens: 0 } }))
  ledger.record(call({ at: new Date('2026-03-05T00:00:00.000Z') }))
  ledger.record(call({ surface: 'native', unpriced: true }))
  ledger.record(call({ keyId: null, userId: 'operator', costMicros: 7 }))
  await ledger.flush()
  const rows = await store.usage.query({ from: '2026-03-01', to: '2026-03-31' })
  const base = { userId: 'a'.repeat(24), keyId: 'k'.repeat(24), model: 'gemini-2.5-pro' }
  t.same(rows, [
    { day: '2026-03-04', ...base, surface: 'chat', requests: 3, inputTokens: 11, outputTokens: 20, thinkingTokens: 5, cachedTokens: 2, errors4xx: 1, errors5xx: 1, costMicros: 400, unpricedRequests: 0, groundedRequests: 0, toolUseTokens: 0 },
    { day: '2026-03-04', ...base, surface: 'native', requests: 1, inputTokens: 10, outputTokens: 20, thinkingTokens: 5, cachedTokens: 2, errors4xx: 0, errors5xx: 0, costMicros: 0, unpricedRequests: 1, groundedRequests: 0, toolUseTokens: 0 },
    { day: '2026-03-04', userId: 'operator', keyId: null, model: 'gemini-2.5-pro', surface: 'chat', requests: 1, inputTokens: 10, outputTokens: 20, thinkingTokens: 5, cachedTokens: 2, errors4xx: 0, errors5xx: 0, costMicros: 7, unpricedRequests: 0, groundedRequests: 0, toolUseTokens: 0 },
    { day: '2026-03-05', ...base, surface: 'chat', requests: 1, inputTokens: 10, outputTokens: 20, thinkingTokens: 5, cachedTokens: 2, errors4xx: 0, errors5xx: 0, costMicros: 0, unpricedRequests: 0, groundedRequests: 0, toolUseTokens: 0 },
  ])
})

t.test('a call whose answer ran search queries counts one grounded request; one that ran none counts 0', async t => {
  const store = await createEmbeddedStore()
  t.teardown(() => store.close())
  const ledger = createUsageLedger({ store, setTimer: fakeTimer().setTimer })
  const used = { inputTokens: 10, outputTokens: 20, thinkingTokens: 5, cachedTokens: 2 }
  ledger.record(call({ usage: { ...used, searchQueries: 3 } }))
  ledger.record(call({ usage: { ...used, searchQueries: 1 } }))
  ledger.record(call({ usage: { ...used, searchQueries: 0 } }))
  ledger.record(call())
  ledger.record(call({ surface: 'native' }))
  await ledger.flush()
  const rows = await store.usage.query({ from: '2026-03-01', to: '2026-03-31' })
  t.same(rows.map(r => [r.surface, r.requests, r.groundedRequests]), [['chat', 4, 2], ['native', 1, 0]], 'per call, not per query')
})

t.test('a call\'s tool-use prompt tokens add up in its row\'s toolUseTokens, apart from and within its input', async t => {
  const store = await createEmbeddedStore()
  t.teardown(() => store.close())
  const ledger = createUsageLedger({ store, setTimer: fakeTimer().setTimer })
  const used = { inputTokens: 10, outputTokens: 20, thinkingTokens: 5, cachedTokens: 2 }
  ledger.record(call({ usage: { ...used, inputTokens: 1_010, toolUseTokens: 1_000 } }))
  ledger.record(call({ usage: used }))
  await ledger.flush()
  const rows = await store.usage.query({ from: '2026-03-01', to: '2026-03-31' })
  t.same(rows.map(r => [r.inputTokens, r.toolUseTokens]), [[1_020, 1_000]])
})

t.test('usage reaches the store in one write per flush interval, not one per call', async t => {
  const usage = recordingUsage()
  const timer = fakeTimer()
  const ledger = createUsageLedger({ store: { usage }, flushIntervalMs: 1000, setTimer: timer.setTimer })
  for (let i = 0; i < 50; i++) ledger.record(call({ model: i % 2 === 0 ? 'gemini-2.5-pro' : 'gemini-2.5-flash' }))
  t.equal(timer.due.length, 1, 'one write is scheduled for all the calls')
  t.equal(timer.due[0].ms, 1000)
  t.equal(usage.batches.length, 0, 'nothing is written before the interval ends')
  timer.fire()
  await settle()
  t.equal(usage.batches.length, 1)
  t.same(usage.batches[0].map(r => [r.model, r.requests]), [['gemini-2.5-pro', 25], ['gemini-2.5-flash', 25]])
  t.equal(timer.due.length, 0, 'no timer runs while nothing is pending')
  ledger.record(call())
  t.equal(timer.due.length, 1, 'the next call schedules the next write')
  timer.fire()
  await settle()
  t.equal(usage.batches.length, 2)
  await ledger.flush()
  t.equal(usage.batches.length, 2, 'a flush with nothing pending writes nothing')
})

t.test('writes never overlap: calls made while one is in flight go in the next, after it', async t => {
  const batches: string[][] = []
  let inFlight = 0
  let release: () => void = () => {}
  let failNext = true
  const usage: UsageStore = {
    async record (batch) {
      inFlight++
      t.equal(inFlight, 1, 'one write at a time')
      await new Promise<void>(resolve => { release = resolve })
      inFlight--
      if (failNext) { failNext = false; throw new Error('database down') }
      batches.push(batch.map(r => `${r.model}:${r.requests}`))
    },
    async query () { return [] },
  }
  const timer = fakeTimer()
  const ledger = createUsageLedger({ store: { usage }, setTimer: timer.setTimer })
  ledger.record(call({ model: 'm1' }))
  const first = ledger.flush()
  await settle()
  ledger.record(call({ model: 'm1' }))
  ledger.record(call({ model: 'm2' }))
  const second = ledger.flush()
  release()
  await t.rejects(first, /database down/)
  await settle()
  release()
  await second
  t.same(batches, [['m1:2', 'm2:1']], 'the failed row kept its place before the newer ones and merged with them')
})

t.test('close writes what is pending, stops the timer and ignores later calls', async t => {
  const usage = recordingUsage()
  const timer = fakeTimer()
  const ledger = createUsageLedger({ store: { usage }, setTimer: timer.setTimer })
  ledger.record(call())
  await ledger.close()
  t.equal(usage.batches.length, 1)
  t.equal(timer.due.length, 0)
  ledger.record(call())
  t.equal(timer.due.length, 0)
  await ledger.close()
  await ledger.flush()
  t.equal(usage.batches.length, 1)
})

t.test('a failed write keeps its rows for the next one, merged with the calls since', async t => {
  const usage = recordingUsage()
  const timer = fakeTimer()
  const log = logs()
  const ledger = createUsageLedger({ store: { usage }, setTimer: timer.setTimer, logger: log })
  ledger.record(call())
  usage.failing = true
  timer.fire()
  await settle()
  t.equal(usage.batches.length, 0)
  t.match(log.lines, [{ level: 'warn', msg: /writing usage failed/ }])
  t.equal(timer.due.length, 1, 'a retry is scheduled')
  ledger.record(call())
  ledger.record(call({ model: 'gemini-2.5-flash' }))
  await t.rejects(ledger.flush(), /database down/, 'an explicit flush reports the failure')
  usage.failing = false
  timer.fire()
  await settle()
  t.same(usage.batches.map(b => b.map(r => [r.model, r.requests])), [[['gemini-2.5-pro', 2], ['gemini-2.5-flash', 1]]])
})

t.test('close reports usage it could not write', async t => {
  const usage = recordingUsage()
  usage.failing = true
  const log = logs()
  const ledger = createUsageLedger({ store: { usage }, setTimer: fakeTimer().setTimer, logger: log })
  ledger.record(call())
  await t.rejects(ledger.close(), /database down/)
  t.match(log.lines.at(-1), { level: 'error', msg: /could not be written and is lost/, obj: { rows: 1 } })
})

t.test('memory is bounded: past maxRows distinct rows the oldest are dropped, with a warning', async t => {
  const usage = recordingUsage()
  const log = logs()
  const ledger = createUsageLedger({ store: { usage }, maxRows: 3, setTimer: fakeTimer().setTimer, logger: log })
  for (const model of ['m1', 'm2', 'm3', 'm4', 'm5']) ledger.record(call({ model }))
  ledger.record(call({ model: 'm5' }))
  t.equal(log.lines.filter(l => l.level === 'warn').length, 1, 'warned once, not per dropped row')
  await ledger.flush()
  t.same(usage.batches[0].map(r => [r.model, r.requests]), [['m3', 1], ['m4', 1], ['m5', 2]])
  t.match(log.lines.at(-1), { level: 'warn', obj: { dropped: 2, maxRows: 3 } })

  // Rows kept across failed writes count against the same bound.
  usage.failing = true
  for (const model of ['r1', 'r2', 'r3']) ledger.record(call({ model }))
  await t.rejects(ledger.flush())
  ledger.record(call({ model: 'r4' }))
  usage.failing = false
  await ledger.flush()
  t.same(usage.batches[1].map(r => r.model), ['r2', 'r3', 'r4'])
})

t.test('a bad token count or date never poisons a batch', async t => {
  const store = await createEmbeddedStore()
  t.teardown(() => store.close())
  const ledger = createUsageLedger({ store, setTimer: fakeTimer().setTimer })
  ledger.record(call({ usage: { inputTokens: -5, outputTokens: Number.NaN, thinkingTokens: 2.7, cachedTokens: Infinity } }))
  ledger.record(call({ at: new Date('not a date') }))
  await ledger.flush()
  const rows = await store.usage.query({ from: '2026-03-04', to: '2026-03-04' })
  t.match(rows, [{ requests: 1, inputTokens: 0, outputTokens: 0, thinkingTokens: 2, cachedTokens: 0 }])
})

t.test('with the default timer, close writes at once and leaves no timer keeping the process alive', async t => {
  const usage = recordingUsage()
  const ledger = createUsageLedger({ store: { usage }, flushIntervalMs: 60_000 })
  ledger.record(call())
  await ledger.close()
  t.equal(usage.batches.length, 1)
})

t.test('options are checked at construction, naming the option', async t => {
  const usage = recordingUsage()
  t.throws(() => createUsageLedger({} as never), { name: 'TypeError', option: 'store' })
  t.throws(() => createUsageLedger({ store: { usage }, flushIntervalMs: 0 }), { name: 'TypeError', option: 'flushIntervalMs' })
  t.throws(() => createUsageLedger({ store: { usage }, maxRows: 1.5 }), { name: 'TypeError', option: 'maxRows' })
})
