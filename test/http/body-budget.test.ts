import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import Hapi from '@hapi/hapi'
import type { Route } from '../../lib/index.ts'
import { createNodeListener, createFetchHandler, mountRoutes, isGatehouseError } from '../../lib/index.ts'
import { createBodyBudget, declaredBodyBytes, defaultBodyBudgetBytes } from '../../lib/http/body-budget.ts'

const settled = async (p: Promise<unknown>): Promise<boolean> => {
  let done = false
  p.then(() => { done = true }, () => { done = true })
  await new Promise(resolve => setImmediate(resolve))
  return done
}

t.test('bodies that fit are admitted at once; one that does not waits until room is given back', async t => {
  const budget = createBodyBudget({ bytes: 100, smallBytes: 0 })
  const releaseA = await budget.reserve(60)
  const b = budget.reserve(60)
  t.equal(await settled(b), false, 'the second waits while the first holds 60 of 100')
  t.equal(budget.waiting, 1)
  releaseA()
  const releaseB = await b
  t.equal(budget.reserved, 60, 'the second now holds its share')
  releaseB()
  releaseB()
  t.equal(budget.reserved, 0, 'giving back twice gives back once')
})

t.test('waiting requests are admitted first come, first served: a small one does not pass a large one that waits', async t => {
  const budget = createBodyBudget({ bytes: 100, smallBytes: 0 })
  const release = await budget.reserve(90)
  const order: string[] = []
  const large = budget.reserve(80).then(r => { order.push('large'); return r })
  const small = budget.reserve(5).then(r => { order.push('small'); return r })
  t.equal(await settled(small), false, 'the small one queues behind the large one although 5 bytes would fit')
  release()
  ;(await large)()
  ;(await small)()
  t.same(order, ['large', 'small'])
})

t.test('small bodies are neither counted nor kept waiting, so large ones cannot stall ordinary requests', async t => {
  const budget = createBodyBudget({ bytes: 100, smallBytes: 10 })
  const release = await budget.reserve(100)
  const large = budget.reserve(50)
  t.equal(await settled(budget.reserve(10)), true, 'a small body passes although the budget is full and a large one waits')
  t.equal(budget.reserved, 100, 'and is not counted')
  release()
  ;(await large)()
  t.equal(createBodyBudget({ bytes: 100 * 1024 * 1024 }).capacity, 100 * 1024 * 1024)
})

t.test('a body larger than the whole budget is admitted alone, never refused for its size', async t => {
  const budget = createBodyBudget({ bytes: 100, smallBytes: 0 })
  const release = await budget.reserve(500)
  t.equal(budget.reserved, 100, 'it takes the whole budget')
  t.equal(await settled(budget.reserve(1)), false, 'and nothing else fits beside it')
  release()
})

t.test('a request that waits too long gets a 503 with Retry-After, and the ones behind it move up', async t => {
  const budget = createBodyBudget({ bytes: 100, maxWaitMs: 20, smallBytes: 0 })
  const release = await budget.reserve(100)
  const err = await budget.reserve(50).catch(e => e)
  t.ok(isGatehouseError(err))
  t.match(err, { code: 'SERVER_BUSY', status: 503, retryAfter: 1 })
  t.equal(budget.waiting, 0, 'it left the queue')
  release()
  t.equal(budget.reserved, 0)
})

t.test('a client that leaves while waiting gives up its place (CLIENT_CLOSED_REQUEST) and frees the queue', async t => {
  const budget = createBodyBudget({ bytes: 100, smallBytes: 0 })
  const release = await budget.reserve(100)
  const controller = new AbortController()
  const gone = budget.reserve(80, controller.signal).catch(e => e)
  const next = budget.reserve(10)
  controller.abort()
  t.match(await gone, { code: 'CLIENT_CLOSED_REQUEST' })
  release()
  ;(await next)()
  t.equal(budget.reserved, 0)
  t.match(await budget.reserve(1, AbortSignal.abort()).catch(e => e), { code: 'CLIENT_CLOSED_REQUEST' }, 'an already aborted signal is refused at once')
})

t.test('one client cannot hold more than its share of the budget; its next large body waits without holding up other clients', async t => {
  const budget = createBodyBudget({ bytes: 100, smallBytes: 0, perClientBytes: 40 })
  t.equal(budget.perClientBytes, 40)
  const a1 = await budget.reserve(30, undefined, 'a')
  const a2 = budget.reserve(30, undefined, 'a')
  t.equal(await settled(a2), false, 'a second body of client a would take it past its 40 bytes: it waits')
  const b = budget.reserve(30, undefined, 'b')
  t.equal(await settled(b), true, 'client b, queued behind it, goes first')
  const c = budget.reserve(30, undefined, 'c')
  t.equal(await settled(c), true)
  t.equal(budget.reserved, 90)
  a1()
  const release = await a2
  t.equal(budget.reserved, 90, 'once a gave its first back, its second gets in')
  release()
  ;(await b)()
  ;(await c)()
  t.equal(budget.reserved, 0)
  const alone = await budget.reserve(90, undefined, 'a')
  t.equal(budget.reserved, 90, 'a client holding nothing may take one body larger than its share')
  alone()
  t.equal(createBodyBudget({ bytes: 100 }).perClientBytes, 25, 'the default share is a quarter')
})

t.test('the budget stays first come, first served for clients within their share', async t => {
  const budget = createBodyBudget({ bytes: 100, smallBytes: 0, perClientBytes: 100 })
  const a = await budget.reserve(90, undefined, 'a')
  const b = budget.reserve(50, undefined, 'b')
  const c = budget.reserve(5, undefined, 'c')
  t.equal(await settled(c), false, 'c does not pass b, which waits for room in the budget')
  a()
  ;(await b)()
  ;(await c)()
  t.equal(budget.reserved, 0)
})

t.test('a body read has a deadline and a minimum rate after a grace period (fake clock)', async t => {
  const { mock } = await import('node:test')
  const { PassThrough } = await import('node:stream')
  const { readBody, watchBodyRead } = await import('../../lib/http/read-body.ts')
  mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 })
  t.teardown(() => mock.timers.reset())
  const limits = { timeoutMs: 60_000, minBytesPerSecond: 1000, graceMs: 10_000 }

  let expired = 0
  const stalled = watchBodyRead(limits, () => { expired++ })
  stalled.received(10)
  mock.timers.tick(9_999)
  t.equal(expired, 0, 'any rate during the grace period')
  mock.timers.tick(1)
  t.equal(expired, 1, '10 bytes in 10 s is below 1000 bytes/s: expired when the grace period ends')

  expired = 0
  const steady = watchBodyRead(limits, () => { expired++ })
  for (let s = 0; s < 59; s++) {
    steady.received(1000)
    mock.timers.tick(1000)
  }
  t.equal(expired, 0, '1000 bytes every second keeps up for 59 s')
  steady.received(1000)
  mock.timers.tick(1000)
  t.equal(expired, 1, 'but the whole body must be in within the deadline')

  expired = 0
  const burst = watchBodyRead(limits, () => { expired++ })
  burst.received(20_000)
  mock.timers.tick(20_000)
  t.equal(expired, 0, '20 000 bytes at once keep up the average for 20 s')
  mock.timers.tick(1)
  t.equal(expired, 1, 'and no longer when nothing more comes')

  const stopped = watchBodyRead(limits, () => { expired++ })
  stopped.stop()
  mock.timers.tick(100_000)
  t.equal(expired, 1, 'a finished read is not watched')

  const payload = new PassThrough()
  const read = readBody(payload, 1000, 500, limits)
  payload.write(Buffer.from('{"a":'))
  await new Promise(resolve => setImmediate(resolve))
  mock.timers.tick(10_000)
  await t.rejects(read, { code: 'REQUEST_TIMEOUT', status: 408 }, 'readBody fails with a 408')
})

t.test('declared body size: content-length, the route limit for a chunked body, nothing for none', async t => {
  const cases: Array<[Record<string, unknown>, number | undefined]> = [
    [{ 'content-length': '1234' }, 1234],
    [{ 'content-length': '0' }, undefined],
    [{}, undefined],
    [{ 'transfer-encoding': 'chunked' }, 5000],
    [{ 'content-length': 'x', 'transfer-encoding': 'chunked' }, 5000],
  ]
  for (const [headers, expected] of cases) t.equal(declaredBodyBytes(headers, 5000), expected, JSON.stringify(headers))
})

t.test('the default budget is a sixteenth of the memory, never less than the largest body', async t => {
  const largest = 25 * 1024 * 1024
  const budget = defaultBodyBudgetBytes(largest)
  t.ok(budget >= largest)
  t.equal(defaultBodyBudgetBytes(Number.MAX_SAFE_INTEGER), Number.MAX_SAFE_INTEGER, 'the largest body always fits')
})

// Over real HTTP, on every host the library ships an adapter for: the second large body is not read, and its
// handler not run, until the first request has answered and given its share back.

function holdingRoutes (): { routes: Route[], started: number[], open: () => void, waiting: () => number } {
  const started: number[] = []
  let open!: () => void
  const gate = new Promise<void>(resolve => { open = resolve })
  const bodyBudget = createBodyBudget({ bytes: 100, smallBytes: 0 })
  const routes: Route[] = [{
    method: 'POST',
    path: '/hold',
    maxBytes: 1000,
    bodyBudget,
    errorResponse: err => ({ status: (err as { status?: number }).status ?? 500, body: { error: String(err) } }),
    handler: async req => {
      const size = (req.body as Buffer).length
      started.push(size)
      if (started.length === 1) await gate
      return { status: 200, body: { size, reservedDuring: bodyBudget.reserved } }
    },
  }]
  return { routes, started, open, waiting: () => bodyBudget.waiting }
}

const budgetHosts: Array<{ name: string, start: (routes: Route[]) => Promise<{ post: (body: string) => Promise<Response>, close: () => Promise<void> }> }> = [
  {
    name: 'node:http listener',
    start: async routes => {
      const server = createServer(createNodeListener(routes))
      await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hold`
      return { post: async body => await fetch(url, { method: 'POST', body }), close: async () => { server.closeAllConnections(); await new Promise(resolve => server.close(resolve)) } }
    },
  },
  {
    name: 'fetch handler',
    start: async routes => {
      const handler = createFetchHandler(routes)
      return { post: async body => await handler(new Request('http://x/hold', { method: 'POST', body, headers: { 'content-length': String(body.length) } })), close: async () => {} }
    },
  },
  {
    name: 'Hapi gateway mount',
    start: async routes => {
      const server = Hapi.server({ host: '127.0.0.1', port: 0 })
      mountRoutes(server, routes)
      await server.start()
      return { post: async body => await fetch(`${server.info.uri}/hold`, { method: 'POST', body }), close: async () => { await server.stop({ timeout: 100 }) } }
    },
  },
]

for (const host of budgetHosts) {
  t.test(`${host.name}: a body that does not fit the budget waits for the one before it to answer`, async t => {
    const { routes, started, open, waiting } = holdingRoutes()
    const server = await host.start(routes)
    t.teardown(server.close)
    const first = server.post('a'.repeat(80))
    while (started.length === 0) await new Promise(resolve => setTimeout(resolve, 5))
    const second = server.post('b'.repeat(70))
    // Until the second request waits in the budget (a deadline, not a fixed time); its handler must not have run.
    for (const deadline = Date.now() + 5000; waiting() === 0 && started.length === 1 && Date.now() < deadline;) await new Promise(resolve => setTimeout(resolve, 5))
    t.equal(waiting(), 1, 'the second request waits for room')
    t.same(started, [80], 'the second handler has not run while the first holds 80 of 100 bytes')
    open()
    const answers = await Promise.all([first, second])
    t.same(answers.map(r => r.status), [200, 200])
    t.same(await answers[1].json(), { size: 70, reservedDuring: 70 }, 'the second ran once the first had given its share back')
    t.same(started, [80, 70])
  })
}

t.test('readBody: a declared length is read into one buffer; any other length still comes out whole', async t => {
  const { Readable } = await import('node:stream')
  const { readBody } = await import('../../lib/http/read-body.ts')
  const parts = [Buffer.from('hello '), Buffer.from('big '), Buffer.from('world')]
  const whole = Buffer.concat(parts)
  const cases: Array<[string, number | undefined, number]> = [
    ['declared exactly', whole.length, 100],
    ['declared too short (a host that does not enforce it)', 4, 100],
    ['declared too long (cut short)', 50, 100],
    ['not declared', undefined, 100],
  ]
  for (const [name, declared, max] of cases) {
    const body = await readBody(Readable.from(parts), max, declared)
    t.equal(body?.toString(), whole.toString(), name)
  }
  await t.rejects(readBody(Readable.from(parts), 10, whole.length), { code: 'PAYLOAD_TOO_LARGE' }, 'over the limit is a 413 whatever was declared')
  t.equal(await readBody(Readable.from([]), 100, 0), undefined, 'an empty body is none')
})
