// The queue between the upstream socket's data callbacks and the stream's reader (lib/proxy/upstream/push-queue.ts).
import t from 'tap'
import { createPushQueue } from '../../lib/proxy/upstream/push-queue.ts'

function recordingFlow (): { calls: string[], flow: { pause: () => void, resume: () => void, cancel: () => void } } {
  const calls: string[] = []
  return { calls, flow: { pause: () => calls.push('pause'), resume: () => calls.push('resume'), cancel: () => calls.push('cancel') } }
}

async function drain<T> (iterable: AsyncIterable<T>): Promise<{ items: T[], error?: unknown }> {
  const items: T[] = []
  try {
    for await (const item of iterable) items.push(item)
  } catch (error) {
    return { items, error }
  }
  return { items }
}

t.test('items pushed before and while the reader waits arrive in order, then the end', async t => {
  const { flow, calls } = recordingFlow()
  const queue = createPushQueue<number>(flow)
  queue.push(1)
  const reading = drain(queue)
  queue.push(2)
  setImmediate(() => { queue.push(3); queue.end(); queue.push(4) })
  t.same(await reading, { items: [1, 2, 3] }, 'nothing after the end')
  t.same(calls, [], 'a reader that keeps up never pauses the producer')
})

t.test('the producer is paused once highWater items wait, and resumed when the reader has taken them', async t => {
  const { flow, calls } = recordingFlow()
  const queue = createPushQueue<number>(flow, 3)
  for (const n of [1, 2, 3, 4]) queue.push(n)
  t.same(calls, ['pause'], 'paused at the third waiting item, once')
  const it = queue[Symbol.asyncIterator]()
  for (const expected of [1, 2, 3]) t.same(await it.next(), { value: expected, done: false })
  t.same(calls, ['pause'], 'still paused while one item waits')
  t.same(await it.next(), { value: 4, done: false })
  t.same(calls, ['pause', 'resume'])
})

const cases: Array<{ rule: string, run: (q: ReturnType<typeof createPushQueue<number>>) => void }> = [
  { rule: 'a failure reaches the reader after the items pushed before it', run: q => { q.push(1); q.fail(new Error('cut')); q.push(2) } },
  { rule: 'a failure while the reader waits rejects that read', run: q => { setImmediate(() => { q.push(1); setImmediate(() => q.fail(new Error('cut'))) }) } },
]
for (const { rule, run } of cases) {
  t.test(rule, async t => {
    const queue = createPushQueue<number>(recordingFlow().flow)
    run(queue)
    const { items, error } = await drain(queue)
    t.same(items, [1])
    t.equal((error as Error).message, 'cut')
    t.same(await queue[Symbol.asyncIterator]().next(), { value: undefined, done: true }, 'read once; later reads are done')
  })
}

t.test('a reader that stops early cancels the producer, and later pushes are dropped', async t => {
  const { flow, calls } = recordingFlow()
  const queue = createPushQueue<number>(flow)
  queue.push(1)
  queue.push(2)
  for await (const item of queue) {
    t.equal(item, 1)
    break
  }
  t.same(calls, ['cancel'])
  t.ok(queue.closed)
  queue.push(3)
  t.same(await queue[Symbol.asyncIterator]().next(), { value: undefined, done: true })
})

t.test('reads in flight are settled whatever ends the queue: items in order, then done', async t => {
  const queue = createPushQueue<number>(recordingFlow().flow)
  const it = queue[Symbol.asyncIterator]()
  const [a, b, c] = [it.next(), it.next(), it.next()]
  queue.push(1)
  queue.push(2)
  queue.end()
  t.same(await Promise.all([a, b, c]), [{ value: 1, done: false }, { value: 2, done: false }, { value: undefined, done: true }])
  const stopped = createPushQueue<number>(recordingFlow().flow)
  const sit = stopped[Symbol.asyncIterator]()
  const waiting = sit.next()
  await sit.return?.()
  t.same(await waiting, { value: undefined, done: true }, 'a read waiting when the reader stops is done, not left hanging')
})

t.test('an attached sink gets the waiting items, then every later one and the end, and the producer is resumed', async t => {
  const { flow, calls } = recordingFlow()
  const queue = createPushQueue<number>(flow, 2)
  queue.push(1)
  queue.push(2)
  const seen: unknown[] = []
  const returned = queue.attach({ push: n => seen.push(n), end: () => seen.push('end'), fail: err => seen.push(err) })
  t.equal(returned, flow, 'the sink drives the producer itself')
  t.same(calls, ['pause', 'resume'], 'paused at highWater, resumed once the sink took the waiting items')
  queue.push(3)
  queue.end()
  queue.push(4)
  t.same(seen, [1, 2, 3, 'end'])
})

t.test('a sink attached after a failure gets the items before it, then the failure', async t => {
  const queue = createPushQueue<number>(recordingFlow().flow)
  const cut = new Error('cut')
  queue.push(1)
  queue.fail(cut)
  const seen: unknown[] = []
  queue.attach({ push: n => seen.push(n), end: () => seen.push('end'), fail: err => seen.push(err) })
  t.same(seen, [1, cut])
})
