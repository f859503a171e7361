// The upload byte quota (lib/proxy/access/upload-quota.ts; docs/model-proxy.md, "Upstream resources and their
// owners"): counted per user and UTC day in the store's counters, checked before an upload goes on and as it streams.
import t from 'tap'
import { createEmbeddedStore } from '../../lib/index.ts'
import { createUploadQuota } from '../../lib/proxy/access/upload-quota.ts'
import type { KeyCaller } from '../../lib/index.ts'

const ada: KeyCaller = { kind: 'key', userId: 'a'.repeat(24), keyId: 'b'.repeat(24), accessLevel: 'member', models: null }
const START = Date.UTC(2026, 0, 5, 23, 0, 0)

async function * chunks (sizes: number[]): AsyncGenerator<Uint8Array> {
  for (const n of sizes) yield new Uint8Array(n)
}

async function drain (body: AsyncIterable<Uint8Array> | undefined): Promise<number> {
  let n = 0
  for await (const chunk of body ?? []) n += chunk.length
  return n
}

t.test('an upload without a length is cut off before the chunk that would pass the quota; what went on counts', async t => {
  const clock = { at: START }
  const store = await createEmbeddedStore({ now: () => new Date(clock.at) })
  t.teardown(() => store.close())
  const quota = createUploadQuota({ counters: store.counters, bytesPerDay: 1000, now: () => new Date(clock.at) })
  const sent: number[] = []
  const body = await quota.meter(ada, undefined, chunks([400, 400, 400]))
  await t.rejects((async () => { for await (const chunk of body!) sent.push(chunk.length) })(), { code: 'UPLOAD_QUOTA_EXCEEDED', status: 429, retryAfter: 3600 })
  t.same(sent, [400, 400], 'the third chunk never went on')
  await t.rejects(quota.meter(ada, 201, chunks([201])), { code: 'UPLOAD_QUOTA_EXCEEDED' }, '800 counted: a declared 201 does not fit')
  t.equal(await drain(await quota.meter(ada, 200, chunks([200]))), 200, 'a declared 200 fits')
  await t.rejects(quota.meter(ada, undefined, chunks([1])), { code: 'UPLOAD_QUOTA_EXCEEDED' }, 'the day is spent')
  clock.at += 3600_000
  t.equal(await drain(await quota.meter(ada, 1000, chunks([1000]))), 1000, 'a new UTC day starts again')
})

t.test('without a counter store uploads are not counted', async t => {
  const quota = createUploadQuota({ bytesPerDay: 1, now: () => new Date(START) })
  t.equal(await drain(await quota.meter(ada, 5000, chunks([5000]))), 5000)
})
