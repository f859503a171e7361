import t from 'tap'
import { createProxy } from '../../lib/index.ts'
import { createResourcePins, resourcesInPath, resourcesInRequest } from '../../lib/proxy/upstream/resource-pins.ts'
import { startFakePassThrough } from '../support/fake-pass-through.ts'
import { serveProxy } from '../support/serve-proxy.ts'

const PASSWORD = 'proxy-test-password'

t.test('the resource map is bounded by count: the oldest name is forgotten first', async t => {
  const pins = createResourcePins({ maxEntries: 2 })
  pins.pin('files/a', 'key#1')
  pins.pin('files/b', 'key#2')
  pins.pin('files/c', 'key#1')
  t.equal(pins.size, 2)
  t.equal(pins.credentialFor(['files/a']), undefined)
  t.equal(pins.credentialFor(['files/b']), 'key#2')
  t.equal(pins.credentialFor(['files/c']), 'key#1')
})

t.test('the resource map is bounded by age: a name older than maxAgeMs is forgotten', async t => {
  const clock = { ms: 0 }
  const pins = createResourcePins({ maxAgeMs: 1000, now: () => new Date(clock.ms) })
  pins.pin('cachedContents/x', 'key#2')
  clock.ms = 1000
  t.equal(pins.credentialFor(['cachedContents/x']), 'key#2')
  clock.ms = 1001
  t.equal(pins.credentialFor(['cachedContents/x']), undefined)
  t.equal(pins.size, 0)
})

t.test('the names a call carries: file URIs in either form, cachedContent, a path, an upload session', async t => {
  t.same(resourcesInRequest({
    cachedContent: 'cachedContents/c1',
    contents: [{ parts: [{ fileData: { fileUri: 'https://generativelanguage.googleapis.com/v1beta/files/abc' } }, { fileData: { fileUri: 'files/def' } }, { text: 'files/not-a-uri' }] }],
  }), ['cachedContents/c1', 'files/abc', 'files/def'])
  t.same(resourcesInPath('/v1beta/files/abc', ''), ['files/abc'])
  t.same(resourcesInPath('/v1beta/batches/b1:cancel', ''), ['batches/b1'])
  t.same(resourcesInPath('/upload/v1beta/files', '?upload_id=xyz&upload_protocol=resumable'), ['upload:xyz'])
})

t.test('a resumable upload goes on through the key that started it, and its file is then used through that key', async t => {
  const fake = await startFakePassThrough()
  t.teardown(() => fake.close())
  const proxy = createProxy({ password: PASSWORD, upstream: { backend: 'gemini-api', apiKey: 'k1,k2', geminiApiEndpoint: fake.url, maxRetries: 0 } })
  const url = await serveProxy(t, proxy)
  const headers = { authorization: `Bearer ${PASSWORD}` }
  const start = await fetch(url + '/upload/v1beta/files', { method: 'POST', headers: { ...headers, 'x-goog-upload-protocol': 'resumable', 'x-goog-upload-command': 'start', 'content-type': 'application/json' }, body: '{}' })
  const session = start.headers.get('x-goog-upload-url') as string
  t.match(session, /upload_id=abc/)
  await start.text()
  const finish = await fetch(session, { method: 'POST', headers: { ...headers, 'x-goog-upload-command': 'upload, finalize' }, body: 'bytes' })
  t.equal((await finish.json() as { file: { name: string } }).file.name, 'files/abc')
  const get = await fetch(url + '/v1beta/files/abc', { headers })
  await get.text()
  t.same(fake.seen.map(r => r.headers['x-goog-api-key']), ['k1', 'k1', 'k1'], 'the session and its file stay with key#1 while the pool would hand out key#2')
  const other = await fetch(url + '/v1beta/files', { headers })
  await other.text()
  t.equal(fake.seen.at(-1)!.headers['x-goog-api-key'], 'k2', 'a call naming no resource goes round the pool')
})
