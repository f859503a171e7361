// Fail closed (issue 29): nothing a key forwards escapes ownership or metering. Google's system parameters
// (callback, fields, alt=proto, ...) never reach the upstream, an answer the gateway cannot check never reaches the
// client (docs/model-proxy.md, "Pass-through" and "Upstream resources and their owners"). The Gemini API fake
// honours those parameters as Google does (test/support/fake-system-parameters.ts), so a leak would show here.
import t from 'tap'
import { ALL_KINDS, call, createCache, setup, upload, upstreamCalls } from '../support/resource-members.ts'
import { PASSWORD } from './harness.ts'

const SYSTEM_PARAMETERS: Array<[string, string]> = [
  ['callback', 'x'], ['$callback', 'x'], ['fields', 'files(name)'], ['$fields', 'nextPageToken'], ['alt', 'proto'], ['$alt', 'proto'],
  ['alt', 'media'], ['access_token', 'ya29.other'], ['quotaUser', 'someone'], ['$.xgafv', '1'], ['prettyPrint', 'false'], ['$key', 'k'],
]

t.test('the Google fake answers JSONP, field masks and protobuf as Google does, so a leak past the gateway would show', async t => {
  const { url, fake, alice } = await setup(t)
  const file = await upload(url, alice.key, 'hers')
  const direct = async (query: string): Promise<{ type: string, text: string }> => {
    const res = await fetch(`${fake.url}/v1beta/files?${query}`, { headers: { 'x-goog-api-key': 'upstream-key' } })
    return { type: res.headers.get('content-type') ?? '', text: await res.text() }
  }
  const jsonp = await direct('callback=x')
  t.match(jsonp.type, /^text\/javascript/)
  t.match(jsonp.text, /^\/\/ API callback\nx\(\{"files":\[\{"name":"files\//, 'JSONP: not JSON, the list inside')
  t.same(JSON.parse((await direct('fields=files(name)')).text), { files: [{ name: file }] }, 'a field mask keeps only what it names')
  const proto = await direct('alt=proto')
  t.match(proto.type, /^application\/x-protobuf/)
  t.throws(() => JSON.parse(proto.text), 'protobuf is no JSON')
})

t.test("a JSONP callback, a field mask or protobuf never reaches the upstream: Bob's lists never hold Alice's files, caches or batches", async t => {
  const { url, fake, alice, bob } = await setup(t, { GEMINI_LIMITS: ALL_KINDS })
  const file = await upload(url, alice.key, 'private notes')
  const cache = (await createCache(url, alice.key)).body.name
  const batch = (await call(url, alice.key, 'POST', '/v1beta/models/gemini-2.5-flash:batchGenerateContent', { batch: { displayName: 'a', inputConfig: { requests: { requests: [] } } } })).body.name
  const before = upstreamCalls(fake)
  for (const list of ['/v1beta/files', '/v1beta/cachedContents', '/v1beta/batches']) {
    for (const [name, value] of SYSTEM_PARAMETERS) {
      const answer = await call(url, bob.key, 'GET', `${list}?${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
      t.equal(answer.status, 400, `${list} ${name}=${value}`)
      t.match(answer.body, { error: { status: 'INVALID_ARGUMENT', message: name === 'alt' ? `alt=${value} is not passed through` : `The query parameter ${name} is not passed through` } })
      for (const theirs of [file, cache, batch]) t.notMatch(JSON.stringify(answer.body), theirs)
    }
  }
  t.equal(upstreamCalls(fake), before, 'the upstream saw none of them')
  // The operator password is held to the same list: a parameter no route takes never leaves the gateway.
  t.equal((await call(url, '', 'GET', '/v1beta/files?callback=x', undefined, { 'x-goog-api-key': 'proxy-test-password' })).status, 400)
})

t.test('each route passes only the parameters it takes: pages, update masks, alt=sse on streams, alt=media on downloads, the upload protocol', async t => {
  const { url, fake, alice } = await setup(t, { GEMINI_LIMITS: ALL_KINDS })
  const file = await upload(url, alice.key, 'notes')
  const cache = (await createCache(url, alice.key)).body.name
  t.equal((await call(url, alice.key, 'GET', '/v1beta/files?pageSize=5&pageToken=MA&alt=json')).status, 200)
  t.same(fake.requests.at(-1)!.query, { pageSize: '5', pageToken: 'MA', alt: 'json' }, 'a list takes its page parameters and alt=json')
  t.equal((await call(url, alice.key, 'PATCH', `/v1beta/${cache}?updateMask=ttl`, { ttl: '60s' })).status, 200)
  t.equal((await call(url, alice.key, 'GET', `/v1beta/${file}:download?alt=media`)).body, 'notes')
  t.equal((await call(url, alice.key, 'GET', `/v1beta/${file}?alt=media`)).status, 400, 'alt=media only on a download')
  t.equal((await call(url, alice.key, 'PATCH', `/v1beta/${cache}?pageSize=1`, { ttl: '60s' })).status, 400, 'a patch takes no page size')
  t.equal((await call(url, alice.key, 'POST', '/v1beta/models/gemini-embedding-001:embedContent?pageSize=1', { content: { parts: [{ text: 'x' }] } })).status, 400)
  t.equal((await call(url, alice.key, 'POST', '/v1beta/models/gemini-embedding-001:embedContent?alt=sse', { content: { parts: [{ text: 'x' }] } })).status, 400, 'alt=sse only on a stream')
})

t.test('a field mask never reaches the upstream on a model call: its usage cannot be masked away', async t => {
  const { url, fake, alice } = await setup(t)
  const before = upstreamCalls(fake)
  for (const query of ['fields=embeddings', '$fields=embeddings', 'alt=proto', 'callback=x']) {
    const answer = await call(url, alice.key, 'POST', `/v1beta/models/gemini-embedding-001:batchEmbedContents?${query}`, { requests: [{ model: 'models/gemini-embedding-001', content: { parts: [{ text: 'x' }] } }] })
    t.equal(answer.status, 400, query)
  }
  t.equal(upstreamCalls(fake), before)
})

t.test('an answer that cannot be checked never reaches the client: a list or create that is not JSON, or not shaped as Google lists, is a 502', async t => {
  const { url, fake, alice, bob } = await setup(t, { GEMINI_LIMITS: ALL_KINDS })
  const file = await upload(url, alice.key, 'private notes')
  const listed = JSON.stringify({ files: [{ name: file }] })
  const unreadable: Array<[string, { text?: string, body?: unknown }]> = [
    ['JSONP', { text: `// API callback\nx(${listed});` }],
    ['protobuf-like bytes', { text: `\n${String.fromCharCode(listed.length)}${listed}` }],
    ['items that are no list', { body: { files: { name: file } } }],
    ['a page token that is no string', { body: { files: [], nextPageToken: { file } } }],
  ]
  for (const [what, reply] of unreadable) {
    fake.keyReplies.set('upstream-key', reply)
    const answer = await call(url, bob.key, 'GET', '/v1beta/files')
    t.equal(answer.status, 502, what)
    t.match(answer.body, { error: { code: 502, message: /could not be checked/ } }, what)
    t.notMatch(JSON.stringify(answer.body), file, `${what}: nothing of Alice's`)
  }
  // A page passes with the caller's items and its token only: no other field of the upstream's page.
  fake.keyReplies.set('upstream-key', { body: { files: [], leaked: [{ name: file }], nextPageToken: '' } })
  const page = await call(url, bob.key, 'GET', '/v1beta/files')
  t.same([page.status, page.body], [200, { files: [] }])
  fake.keyReplies.set('upstream-key', { text: `x(${JSON.stringify({ name: 'cachedContents/made' })})` })
  t.equal((await call(url, bob.key, 'POST', '/v1beta/cachedContents', { model: 'models/gemini-2.5-flash', contents: [{ parts: [{ text: 'x' }] }] })).status, 502, 'a create answer that cannot be recorded')
  fake.keyReplies.clear()
})

t.test("a batch's answer hands over only what Google's documented output fields name: a member whose batch echoes the operator's file never owns it", async t => {
  const { url, fake, alice } = await setup(t, { GEMINI_LIMITS: ALL_KINDS })
  const batch = (await call(url, alice.key, 'POST', '/v1beta/models/gemini-2.5-flash:batchGenerateContent', { batch: { displayName: 'files/operator1', inputConfig: { requests: { requests: [] } } } })).body.name
  for (const name of ['files/operator1', 'files/operator2', 'files/operator3', 'files/results1']) {
    fake.gemini.files.set(name, { name, mimeType: 'text/plain', uri: `https://generativelanguage.googleapis.com/v1beta/${name}` })
    fake.gemini.contents.set(name, name)
  }
  const done = fake.gemini.operations.get(batch)!
  fake.gemini.operations.set(batch, {
    ...done,
    done: true,
    metadata: { ...(done.metadata as object), displayName: 'files/operator1', dest: { fileName: 'files/operator2' }, output: { responsesFile: 'files/results1' } },
    response: { inlinedResponses: { inlinedResponses: [{ response: { candidates: [{ content: { parts: [{ fileData: { fileUri: 'files/operator3' } }] } }] } }] } },
  })
  t.equal((await call(url, alice.key, 'GET', `/v1beta/${batch}`)).status, 200)
  t.equal((await call(url, alice.key, 'GET', '/v1beta/files/results1:download?alt=media')).body, 'files/results1', 'her results file is hers')
  for (const name of ['files/operator1', 'files/operator2', 'files/operator3']) {
    t.equal((await call(url, alice.key, 'GET', `/v1beta/${name}`)).status, 404, `${name}: echoed or model output, still the operator's`)
    t.equal((await call(url, alice.key, 'DELETE', `/v1beta/${name}`)).status, 404)
  }
  t.ok(fake.gemini.files.has('files/operator1'))
})

t.test("what the operator makes carries the operator's record, and no answer hands over a resource another owner holds", async t => {
  const { url, fake, alice, bob, store } = await setup(t, { GEMINI_LIMITS: ALL_KINDS })
  const operatorFile = await upload(url, PASSWORD, 'the operator\'s notes')
  t.match(await store.owners.get(operatorFile, new Date()), { userId: 'operator', keyId: 'operator' }, 'an explicit operator record')
  const bobFile = await upload(url, bob.key, 'bob\'s notes')
  const batch = (await call(url, alice.key, 'POST', '/v1beta/models/gemini-2.5-flash:batchGenerateContent', { batch: { displayName: 'b', inputConfig: { requests: { requests: [] } } } })).body.name
  for (const held of [operatorFile, bobFile]) {
    // Even at the documented output path, an answer naming a held resource does not move it.
    const done = fake.gemini.operations.get(batch)!
    fake.gemini.operations.set(batch, { ...done, done: true, response: { responsesFile: held } })
    t.equal((await call(url, alice.key, 'GET', `/v1beta/${batch}`)).status, 200)
    t.equal((await call(url, alice.key, 'GET', `/v1beta/${held}`)).status, 404, `${held} stays its owner's`)
  }
  t.equal((await store.owners.get(bobFile, new Date()))?.userId, bob.userId)
  t.equal((await call(url, bob.key, 'GET', `/v1beta/${bobFile}`)).status, 200)
})

t.test("a file URI on the configured custom upstream host counts as a file reference: Bob's generate cannot read Alice's file by it", async t => {
  const { url, fake, alice, bob } = await setup(t)
  const file = await upload(url, alice.key, 'private notes')
  const before = upstreamCalls(fake)
  for (const uri of [`${fake.url}/v1beta/${file}`, `${fake.url}/v1/${file}:download?alt=media`, `http://127.0.0.1:1/upload/v1beta/${file}`]) {
    const answer = await call(url, bob.key, 'POST', '/v1beta/models/gemini-2.5-flash:generateContent', { contents: [{ role: 'user', parts: [{ text: 'read it' }, { fileData: { mimeType: 'text/plain', fileUri: uri } }] }] })
    t.equal(answer.status, 404, uri)
  }
  t.equal(upstreamCalls(fake), before, 'nothing sent upstream')
  t.equal((await call(url, alice.key, 'POST', '/v1beta/models/gemini-2.5-flash:generateContent', { contents: [{ role: 'user', parts: [{ fileData: { mimeType: 'text/plain', fileUri: `${fake.url}/v1beta/${file}` } }] }] })).status, 200, 'her own, by the same URI')
})

t.test('File Search stores and files:register URIs are references a key may not name: nothing records their owners', async t => {
  const { url, fake, alice } = await setup(t)
  const before = upstreamCalls(fake)
  const refused: Array<[string, unknown]> = [
    ['/v1beta/models/gemini-2.5-flash:generateContent', { contents: [{ role: 'user', parts: [{ text: 'search' }] }], tools: [{ fileSearch: { fileSearchStoreNames: ['fileSearchStores/operators'] } }] }],
    ['/v1beta/models/gemini-2.5-flash:generateContent', { contents: [{ role: 'user', parts: [{ text: 'search' }] }], tools: [{ file_search: { file_search_store_names: 'fileSearchStores/operators' } }] }],
    ['/v1beta/files:register', { uris: ['gs://operator-bucket/secret.pdf'] }],
  ]
  for (const [path, body] of refused) t.equal((await call(url, alice.key, 'POST', path, body)).status, 404, JSON.stringify(body))
  t.equal(upstreamCalls(fake), before, 'nothing sent upstream')
})

t.test('the 1,000-resource cap counts a create whose answer did not parse: the resource may exist upstream all the same', async t => {
  const { url, fake, store, bob } = await setup(t, { GEMINI_LIMITS: ALL_KINDS })
  const owned = async (): Promise<number> => await store.owners.countByUser(bob.userId, new Date(), 'interactions/')
  fake.keyReplies.set('upstream-key', { text: `x(${JSON.stringify({ name: 'cachedContents/made' })})` })
  t.equal((await createCache(url, bob.key)).status, 502)
  fake.keyReplies.set('upstream-key', { body: { unexpected: 'shape' } })
  t.equal((await createCache(url, bob.key)).status, 200, 'a JSON answer naming nothing passes')
  fake.keyReplies.clear()
  t.equal(await owned(), 2, 'both count against the cap, though neither named a resource')
  t.equal((await createCache(url, bob.key)).status, 200)
  t.equal(await owned(), 3, 'a create that names its resource counts once, as its own record')
  // Nothing lists or names the counting records: they are no resource.
  t.same((await call(url, bob.key, 'GET', '/v1beta/cachedContents')).body.cachedContents.length, 1)
})

t.test('a per-user upload byte quota: uploads past GEMINI_UPLOAD_BYTES_PER_DAY are a 429 before anything is sent, per user', async t => {
  const { url, fake, alice, bob } = await setup(t, { GEMINI_UPLOAD_BYTES_PER_DAY: '1000' })
  await upload(url, alice.key, 'a'.repeat(600))
  const before = upstreamCalls(fake)
  const refused = await fetch(`${url}/upload/v1beta/files`, { method: 'POST', headers: { 'x-goog-api-key': alice.key, 'x-goog-upload-protocol': 'raw', 'content-type': 'text/plain' }, body: 'b'.repeat(600) })
  t.equal(refused.status, 429)
  t.match(await refused.json(), { error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: /may upload 1000 bytes a day/ } })
  t.ok(Number(refused.headers.get('retry-after')) >= 1, 'Retry-After: the end of the UTC day')
  t.equal(upstreamCalls(fake), before, 'nothing went upstream')
  t.match(await upload(url, bob.key, 'c'.repeat(600)), /^files\//, "another user's day is their own")
  t.match(await upload(url, alice.key, 'd'.repeat(200)), /^files\//, 'what fits still passes (an upload start\'s metadata counts too)')
})
