// Tenant isolation of upstream resources (docs/model-proxy.md, "Upstream resources and their owners"): two members
// with their own keys behind one gateway on the Gemini API (the fake's files, caches, batches and operations), each
// seeing and touching only their own; the operator password sees everything.
import t from 'tap'
import { GoogleGenAI } from '@google/genai'
import { PASSWORD } from './harness.ts'
import { ALL_KINDS, call, createCache, generateBody, isGoogleNotFound, setup, upload, upstreamCalls } from '../support/resource-members.ts'

t.test("a member's lists show only their own files, caches, batches and operations, page by page", async t => {
  const { url, fake, alice, bob } = await setup(t, { GEMINI_LIMITS: ALL_KINDS })
  const aliceFiles = [await upload(url, alice.key, 'a1'), await upload(url, alice.key, 'a2'), await upload(url, alice.key, 'a3')]
  const bobFiles = [await upload(url, bob.key, 'b1'), await upload(url, bob.key, 'b2')]
  const aliceCache = (await createCache(url, alice.key)).body.name
  const bobCache = (await createCache(url, bob.key)).body.name
  const aliceBatch = (await call(url, alice.key, 'POST', '/v1beta/models/gemini-2.5-flash:batchGenerateContent', { batch: { displayName: 'a', inputConfig: { requests: { requests: [{ request: generateBody({}) }] } } } })).body.name
  const bobBatch = (await call(url, bob.key, 'POST', '/v1beta/models/gemini-2.5-flash:batchGenerateContent', { batch: { displayName: 'b', inputConfig: { requests: { requests: [{ request: generateBody({}) }] } } } })).body.name
  const aliceOp = (await call(url, alice.key, 'POST', '/v1beta/models/gemini-2.5-flash:predictLongRunning', { instances: [{ prompt: 'a cat' }] })).body.name
  t.match(aliceBatch, /^batches\//)
  t.match(aliceOp, /^models\/gemini-2\.5-flash\/operations\//)

  // Pages of two: the upstream's pages hold everyone's; the gateway keeps the caller's and the page token.
  const listAll = async (key: string, path: string, field: string): Promise<string[]> => {
    const names: string[] = []
    let token: string | undefined
    for (let i = 0; i < 20; i++) {
      const page = await call(url, key, 'GET', `${path}?pageSize=2${token === undefined ? '' : `&pageToken=${encodeURIComponent(token)}`}`)
      t.equal(page.status, 200, path)
      names.push(...(page.body[field] ?? []).map((item: { name: string }) => item.name))
      token = page.body.nextPageToken
      if (token === undefined) break
    }
    return names.sort()
  }
  t.same(await listAll(alice.key, '/v1beta/files', 'files'), [...aliceFiles].sort(), 'Alice sees her three files')
  t.same(await listAll(bob.key, '/v1beta/files', 'files'), [...bobFiles].sort(), 'Bob sees his two')
  t.same(await listAll(alice.key, '/v1beta/cachedContents', 'cachedContents'), [aliceCache])
  t.same(await listAll(bob.key, '/v1beta/cachedContents', 'cachedContents'), [bobCache])
  t.same(await listAll(alice.key, '/v1beta/batches', 'operations'), [aliceBatch])
  t.same(await listAll(bob.key, '/v1beta/batches', 'operations'), [bobBatch])
  t.same(await listAll(alice.key, '/v1beta/models/gemini-2.5-flash/operations', 'operations'), [aliceOp])
  t.same(await listAll(bob.key, '/v1beta/models/gemini-2.5-flash/operations', 'operations'), [])
  t.equal(fake.gemini.files.size, 5, 'the upstream holds all five files')
})

t.test("Bob cannot get, patch, delete or download Alice's files, caches, batches or operations: 404, and nothing is sent upstream", async t => {
  const { url, fake, alice, bob } = await setup(t, { GEMINI_LIMITS: ALL_KINDS })
  const file = await upload(url, alice.key, 'private notes')
  const cache = (await createCache(url, alice.key)).body.name
  const batch = (await call(url, alice.key, 'POST', '/v1beta/models/gemini-2.5-flash:batchGenerateContent', { batch: { displayName: 'a', inputConfig: { requests: { requests: [] } } } })).body.name
  const op = (await call(url, alice.key, 'POST', '/v1beta/models/gemini-2.5-flash:predictLongRunning', { instances: [{ prompt: 'x' }] })).body.name
  const before = upstreamCalls(fake)
  const attempts: Array<[string, string, unknown?]> = [
    ['GET', `/v1beta/${file}`],
    ['GET', `/v1beta/${file}:download?alt=media`],
    ['DELETE', `/v1beta/${file}`],
    ['GET', `/v1beta/${cache}`],
    ['PATCH', `/v1beta/${cache}?updateMask=ttl`, { ttl: '60s' }],
    ['DELETE', `/v1beta/${cache}`],
    ['GET', `/v1beta/${batch}`],
    ['POST', `/v1beta/${batch}:cancel`, {}],
    ['DELETE', `/v1beta/${batch}`],
    ['GET', `/v1beta/${op}`],
    // Case variants name the same resource to a lenient upstream: they are judged, not waved through.
    ['GET', `/v1beta/FILES/${file.slice('files/'.length)}`],
    ['DELETE', `/v1beta/CachedContents/${cache.slice('cachedContents/'.length)}`],
  ]
  for (const [method, path, body] of attempts) isGoogleNotFound(t, await call(url, bob.key, method, path, body), `${method} ${path}`)
  t.equal(upstreamCalls(fake), before, 'the upstream saw none of it')
  t.ok(fake.gemini.files.has(file) && fake.gemini.caches.has(cache) && fake.gemini.operations.has(batch), 'all still there')
  // Alice herself may.
  t.equal((await call(url, alice.key, 'GET', `/v1beta/${file}`)).status, 200)
  t.equal((await call(url, alice.key, 'GET', `/v1beta/${file}:download?alt=media`)).body, 'private notes')
  t.equal((await call(url, alice.key, 'GET', `/v1beta/${op}`)).status, 200)
  t.equal((await call(url, alice.key, 'DELETE', `/v1beta/${cache}`)).status, 200)
  t.notOk(fake.gemini.caches.has(cache))
  isGoogleNotFound(t, await call(url, alice.key, 'GET', `/v1beta/${cache}`), 'a deleted cache is no longer hers')
})

t.test("Bob's generate, stream, countTokens or batch naming Alice's cache or file is 404 before anything is sent upstream", async t => {
  const { url, fake, alice, bob } = await setup(t, { GEMINI_LIMITS: ALL_KINDS })
  const file = await upload(url, alice.key, 'private notes')
  const id = file.slice('files/'.length)
  const cache = (await createCache(url, alice.key)).body.name
  const fileForms = [file, `https://generativelanguage.googleapis.com/v1beta/${file}`, `HTTPS://GENERATIVELANGUAGE.GOOGLEAPIS.COM/v1/files/${id}`,
    `https://generativelanguage.googleapis.com/v1beta/files/mine/../${id}`, `https://generativelanguage.googleapis.com/v1beta/files/%${id.charCodeAt(0).toString(16)}${id.slice(1)}`]
  const filePart = (uri: string): Record<string, unknown> => generateBody({ contents: [{ role: 'user', parts: [{ text: 'summarise' }, { fileData: { mimeType: 'text/plain', fileUri: uri } }] }] })
  const before = upstreamCalls(fake)
  const bodies: Array<[string, string, unknown]> = [
    ['generate, cachedContent', '/v1beta/models/gemini-2.5-flash:generateContent', generateBody({ cachedContent: cache })],
    ['generate, cached_content', '/v1beta/models/gemini-2.5-flash:generateContent', generateBody({ cached_content: cache })],
    ['stream, cachedContent', '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', generateBody({ cachedContent: cache })],
    ['countTokens, generateContentRequest', '/v1beta/models/gemini-2.5-flash:countTokens', { generateContentRequest: { model: 'models/gemini-2.5-flash', ...generateBody({ cachedContent: cache }) } }],
    ...fileForms.map((uri): [string, string, unknown] => [`generate, fileUri ${uri}`, '/v1beta/models/gemini-2.5-flash:generateContent', filePart(uri)]),
    ['stream, file_data.file_uri', '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', generateBody({ contents: [{ parts: [{ file_data: { file_uri: file } }] }] })],
    ['batch, an inline request naming the cache', '/v1beta/models/gemini-2.5-flash:batchGenerateContent', { batch: { displayName: 'x', inputConfig: { requests: { requests: [{ request: generateBody({ cachedContent: cache }) }] } } } }],
    ['batch, the input file', '/v1beta/models/gemini-2.5-flash:batchGenerateContent', { batch: { displayName: 'x', inputConfig: { fileName: file } } }],
    ['embedContent, a file part', '/v1beta/models/gemini-embedding-001:embedContent', { content: { parts: [{ fileData: { fileUri: file } }] } }],
    ['a cache made of her file', '/v1beta/cachedContents', { model: 'models/gemini-2.5-flash', contents: [{ parts: [{ fileData: { fileUri: file } }] }] }],
  ]
  for (const [what, path, body] of bodies) isGoogleNotFound(t, await call(url, bob.key, 'POST', path, body), what)
  t.equal(upstreamCalls(fake), before, 'the upstream saw none of them')
  // Her own references, and a public URL nobody owns, go through.
  t.equal((await call(url, alice.key, 'POST', '/v1beta/models/gemini-2.5-flash:generateContent', filePart(file))).status, 200)
  t.equal((await call(url, alice.key, 'POST', '/v1beta/models/gemini-2.5-flash:generateContent', generateBody({ cachedContent: cache }))).status, 200)
  t.equal(fake.last('generateContent')!.body.cachedContent, cache)
  t.equal((await call(url, bob.key, 'POST', '/v1beta/models/gemini-2.5-flash:generateContent', filePart('https://www.youtube.com/watch?v=abc'))).status, 200)
  // A function call's arguments are the model's words, not references.
  t.equal((await call(url, bob.key, 'POST', '/v1beta/models/gemini-2.5-flash:generateContent', generateBody({ contents: [{ role: 'model', parts: [{ functionCall: { name: 'open', args: { fileUri: file, cachedContent: cache } } }] }, { role: 'user', parts: [{ text: 'go on' }] }] }))).status, 200)
})

t.test("what a member's batch or operation produced is theirs: its results file, its video; its input stays whose it was", async t => {
  const { url, fake, alice, bob } = await setup(t, { GEMINI_LIMITS: ALL_KINDS })
  const input = await upload(url, alice.key, '{"request": {}}')
  const batch = (await call(url, alice.key, 'POST', '/v1beta/models/gemini-2.5-flash:batchGenerateContent', { batch: { displayName: 'a', inputConfig: { fileName: input } } })).body.name
  const op = (await call(url, alice.key, 'POST', '/v1beta/models/gemini-2.5-flash:predictLongRunning', { instances: [{ prompt: 'a cat' }] })).body.name
  // The upstream finishes both, as Google does: a results file for the batch, a video file for the operation.
  for (const name of ['files/batch-results1', 'files/video1']) {
    fake.gemini.files.set(name, { name, mimeType: 'application/octet-stream', uri: `https://generativelanguage.googleapis.com/v1beta/${name}` })
    fake.gemini.contents.set(name, 'produced')
  }
  const done = fake.gemini.operations.get(batch)!
  fake.gemini.operations.set(batch, { ...done, done: true, metadata: { ...(done.metadata as object), state: 'BATCH_STATE_SUCCEEDED', inputConfig: { fileName: 'files/legacy-input' }, output: { responsesFile: 'files/batch-results1' } } })
  fake.gemini.operations.set(op, { name: op, done: true, response: { generateVideoResponse: { generatedSamples: [{ video: { uri: 'https://generativelanguage.googleapis.com/v1beta/files/video1:download?alt=media' } }] } } })
  isGoogleNotFound(t, await call(url, alice.key, 'GET', '/v1beta/files/batch-results1:download?alt=media'), 'not hers before she looks at her batch')
  t.equal((await call(url, alice.key, 'GET', `/v1beta/${batch}`)).status, 200)
  const polled = await call(url, alice.key, 'GET', `/v1beta/${op}`)
  t.equal(polled.status, 200, JSON.stringify(polled.body))
  t.equal((await call(url, alice.key, 'GET', '/v1beta/files/batch-results1:download?alt=media')).body, 'produced', 'the results file is hers')
  t.equal((await call(url, alice.key, 'GET', '/v1beta/files/video1:download?alt=media')).body, 'produced', 'the video is hers')
  isGoogleNotFound(t, await call(url, bob.key, 'GET', '/v1beta/files/video1:download?alt=media'), 'and not Bob\'s')
  isGoogleNotFound(t, await call(url, alice.key, 'GET', '/v1beta/files/legacy-input'), 'an input the answer echoes is not handed over')
})

t.test('the operator password sees and may use everything; resources made before the upgrade are the operator\'s', async t => {
  const { url, fake, alice, bob } = await setup(t, { GEMINI_LIMITS: ALL_KINDS })
  const file = await upload(url, alice.key, 'alice')
  // Made upstream with no gateway record: as a file made before the upgrade.
  fake.gemini.files.set('files/legacy1', { name: 'files/legacy1', mimeType: 'text/plain', uri: 'https://generativelanguage.googleapis.com/v1beta/files/legacy1' })
  fake.gemini.contents.set('files/legacy1', 'old')
  const operatorList = await call(url, PASSWORD, 'GET', '/v1beta/files?pageSize=100')
  t.same(operatorList.body.files.map((f: { name: string }) => f.name).sort(), [file, 'files/legacy1'].sort(), 'the operator sees every file')
  t.equal((await call(url, PASSWORD, 'GET', `/v1beta/${file}`)).status, 200, 'and gets a member\'s')
  t.equal((await call(url, PASSWORD, 'POST', '/v1beta/models/gemini-2.5-flash:generateContent', generateBody({ contents: [{ parts: [{ fileData: { fileUri: file } }] }] }))).status, 200, 'and may name it')
  for (const member of [alice, bob]) {
    const list = await call(url, member.key, 'GET', '/v1beta/files?pageSize=100')
    t.notOk(list.body.files.some((f: { name: string }) => f.name === 'files/legacy1'), 'a member does not see the pre-upgrade file')
    isGoogleNotFound(t, await call(url, member.key, 'GET', '/v1beta/files/legacy1'), 'nor get it')
    isGoogleNotFound(t, await call(url, member.key, 'POST', '/v1beta/models/gemini-2.5-flash:generateContent', generateBody({ contents: [{ parts: [{ fileData: { fileUri: 'files/legacy1' } }] }] })), 'nor name it')
  }
  t.equal((await call(url, PASSWORD, 'DELETE', `/v1beta/${file}`)).status, 200, 'the operator may delete a member\'s file')
  isGoogleNotFound(t, await call(url, alice.key, 'GET', `/v1beta/${file}`), 'which is then gone for her too')
})

t.test('a resource kind the access level is not allowed is a 403 naming what to ask for; by default batches are the operator\'s only', async t => {
  const { url, fake, alice } = await setup(t)
  const before = upstreamCalls(fake)
  for (const [method, path, body] of [
    ['POST', '/v1beta/models/gemini-2.5-flash:batchGenerateContent', { batch: { displayName: 'x', inputConfig: { requests: { requests: [] } } } }],
    ['POST', '/v1beta/models/gemini-2.5-flash:asyncBatchEmbedContent', { batch: { displayName: 'x' } }],
    ['POST', '/v1beta/models/veo-3.0-generate-001:predictLongRunning', { instances: [{ prompt: 'x' }] }],
    ['GET', '/v1beta/batches'],
    ['GET', '/v1beta/batches/abc'],
  ] as Array<[string, string, unknown?]>) {
    const refused = await call(url, alice.key, method, path, body)
    t.equal(refused.status, 403, path)
    t.match(refused.body, { error: { code: 403, status: 'PERMISSION_DENIED', message: /may not use batches.*ask the operator to allow "batches"/ } }, path)
  }
  const other = await call(url, alice.key, 'GET', '/v1beta/tunedModels')
  t.equal(other.status, 403, 'a resource the gateway keeps no owners of is refused to keys')
  t.match(other.body, { error: { status: 'PERMISSION_DENIED', message: /not available to keys/ } })
  t.equal(upstreamCalls(fake), before, 'nothing was sent upstream')
  t.equal((await createCache(url, alice.key)).status, 200, 'caches are allowed by default')
  await upload(url, alice.key, 'files are allowed by default')
  t.equal((await call(url, PASSWORD, 'POST', '/v1beta/models/gemini-2.5-flash:batchGenerateContent', { batch: { displayName: 'x', inputConfig: { requests: { requests: [] } } } })).status, 200, 'the operator may make batches')

  const narrowed = await setup(t, { GEMINI_LIMITS: JSON.stringify({ member: { rpm: 100, allow: ['files'] } }) })
  const cache = await createCache(narrowed.url, narrowed.alice.key)
  t.equal(cache.status, 403, 'a level allowed files only may not make caches')
  t.match(cache.body, { error: { message: /may not use cached contents; ask the operator to allow "caches"/ } })
  t.equal((await call(narrowed.url, narrowed.alice.key, 'GET', '/v1beta/cachedContents')).status, 403)
})

t.test('a cache TTL above GEMINI_MAX_CACHE_TTL_SECONDS is refused on create and on patch', async t => {
  const { url, fake, alice } = await setup(t, { GEMINI_MAX_CACHE_TTL_SECONDS: '900' })
  const before = upstreamCalls(fake)
  for (const fields of [{ ttl: '901s' }, { ttl: '86400000s' }, { ttl: undefined }, { ttl: undefined, expireTime: new Date(Date.now() + 3600_000).toISOString() }, { ttl: 'forever' }]) {
    const refused = await createCache(url, alice.key, fields)
    t.equal(refused.status, 400, JSON.stringify(fields))
    t.match(refused.body, { error: { code: 400, status: 'INVALID_ARGUMENT' } })
  }
  t.equal(upstreamCalls(fake), before, 'nothing was sent upstream')
  const made = await createCache(url, alice.key, { ttl: '900s' })
  t.equal(made.status, 200, 'at the maximum')
  const longer = await call(url, alice.key, 'PATCH', `/v1beta/${made.body.name}?updateMask=ttl`, { ttl: '3600s' })
  t.equal(longer.status, 400, 'a patch past it')
  t.match(longer.body, { error: { message: /at most 900 seconds/ } })
  t.equal((await call(url, alice.key, 'PATCH', `/v1beta/${made.body.name}?updateMask=ttl`, { ttl: '300s' })).status, 200, 'a shorter one')
  t.equal((await call(url, PASSWORD, 'PATCH', `/v1beta/${made.body.name}?updateMask=ttl`, { ttl: '7200s' })).status, 200, 'the operator is not held to it')
})

t.test('every create and delete is logged with the user and key id, never the key', async t => {
  const { url, gateway, alice } = await setup(t)
  const file = await upload(url, alice.key, 'x')
  const cache = (await createCache(url, alice.key)).body.name
  await call(url, alice.key, 'DELETE', `/v1beta/${cache}`)
  const lines = gateway.logs.filter(l => /^upstream resource (created|deleted)$/.test(l.msg))
  t.match(lines, [
    { msg: 'upstream resource created', resource: /^uploads\//, userId: alice.userId, keyId: alice.keyId },
    { msg: 'upstream resource created', resource: file, userId: alice.userId, keyId: alice.keyId },
    { msg: 'upstream resource created', resource: cache, userId: alice.userId, keyId: alice.keyId },
    { msg: 'upstream resource deleted', resource: cache, userId: alice.userId, keyId: alice.keyId },
  ])
  t.notOk(JSON.stringify(gateway.logs).includes(alice.key), 'the key itself is never logged')
})

t.test("a member's list page the filter would leave empty is filled from the upstream's next pages, so the SDK's pager sees no gaps", async t => {
  const { url, fake, alice, bob } = await setup(t)
  for (let i = 0; i < 5; i++) await upload(url, alice.key, `a${i}`)
  const bobs = await upload(url, bob.key, 'b')
  const before = fake.calls('resources').length
  const first = await call(url, bob.key, 'GET', '/v1beta/files?pageSize=2')
  t.same(first.body.files.map((f: { name: string }) => f.name), [bobs], 'the first page holds his file, found three upstream pages on')
  t.equal(fake.calls('resources').length - before, 3)
  const ai = new GoogleGenAI({ apiKey: bob.key, httpOptions: { baseUrl: url, apiVersion: 'v1beta', timeout: 10000 } })
  const seen: unknown[] = []
  for await (const f of await ai.files.list({ config: { pageSize: 2 } })) seen.push(f?.name)
  t.same(seen, [bobs], 'no undefined items from empty pages')
})

t.test('a user owns at most 1000 live upstream resources: the next create is refused', async t => {
  const { url, fake, alice, bob, store } = await setup(t)
  const now = new Date()
  for (let i = 0; i < 1000; i++) await store.owners.put({ resource: `files/seed${i}`, userId: alice.userId, keyId: alice.keyId, createdAt: now, expiresAt: new Date(now.getTime() + 3600_000) })
  const before = upstreamCalls(fake)
  const refused = await createCache(url, alice.key)
  t.equal(refused.status, 429)
  t.match(refused.body, { error: { status: 'RESOURCE_EXHAUSTED', message: /owns 1000 upstream resources/ } })
  t.equal(upstreamCalls(fake), before)
  t.equal((await createCache(url, bob.key)).status, 200, 'another user is not held to her count')
})

t.test('interactions do not count towards the 1000 live resources: an agent\'s many turns never stop a member\'s files and caches', async t => {
  const { url, alice, store } = await setup(t)
  const now = new Date()
  for (let i = 0; i < 1000; i++) await store.owners.put({ resource: `interactions/seed${i}`, userId: alice.userId, keyId: alice.keyId, createdAt: now, expiresAt: new Date(now.getTime() + 3600_000) })
  t.equal((await createCache(url, alice.key)).status, 200)
})

t.test('@google/genai with members\' keys: files and caches made by the SDK are their maker\'s alone', async t => {
  const { url, alice, bob } = await setup(t)
  // The gateway serves files and caches under /v1beta (the SDK's default version is v1).
  const sdk = (key: string): GoogleGenAI => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: url, apiVersion: 'v1beta', timeout: 10000, retryOptions: { attempts: 1 } } })
  const ai = sdk(alice.key)
  const other = sdk(bob.key)
  const file = await ai.files.upload({ file: new Blob(['meeting notes'], { type: 'text/plain' }), config: { displayName: 'notes' } })
  t.match(file.name, /^files\//)
  t.equal((await ai.files.get({ name: file.name! })).name, file.name)
  const cache = await ai.caches.create({ model: 'gemini-2.5-flash', config: { contents: [{ role: 'user', parts: [{ fileData: { fileUri: file.uri!, mimeType: 'text/plain' } }] }], ttl: '600s' } })
  t.match(cache.name, /^cachedContents\//)

  const mine: string[] = []
  for await (const f of await ai.files.list({ config: { pageSize: 10 } })) mine.push(f.name!)
  t.same(mine, [file.name])
  const theirs: string[] = []
  for await (const f of await other.files.list({ config: { pageSize: 10 } })) theirs.push(f.name!)
  t.same(theirs, [], 'Bob\'s SDK lists none of Alice\'s files')
  const caches: string[] = []
  for await (const c of await other.caches.list()) caches.push(c.name!)
  t.same(caches, [], 'nor her caches')

  // Each attempt made only when its turn comes, so no rejection waits unhandled.
  for (const attempt of [
    async () => await other.files.get({ name: file.name! }),
    async () => await other.files.delete({ name: file.name! }),
    async () => await other.caches.get({ name: cache.name! }),
    async () => await other.caches.update({ name: cache.name!, config: { ttl: '60s' } }),
    async () => await other.caches.delete({ name: cache.name! }),
    async () => await other.models.generateContent({ model: 'gemini-2.5-flash', contents: 'What did we decide?', config: { cachedContent: cache.name } }),
    async () => await other.models.generateContent({ model: 'gemini-2.5-flash', contents: [{ role: 'user', parts: [{ fileData: { fileUri: file.uri!, mimeType: 'text/plain' } }] }] }),
  ] as Array<() => Promise<unknown>>) {
    const err = await attempt().then(() => undefined, (e: unknown) => e as { status?: number, message?: string })
    t.equal(err?.status, 404, err?.message ?? 'refused')
  }
  const answer = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'What did we decide?', config: { cachedContent: cache.name } })
  t.equal(answer.text, 'Hello from the fake upstream.', 'Alice uses her own cache')
  await ai.caches.delete({ name: cache.name! })
  await ai.files.delete({ name: file.name! })
})
