// GET /auth/search-users and GET /auth/get-user-id over HTTP.
import t from 'tap'
import { startAuthHarness } from '../support/auth-harness.ts'

const NAMES = ['Charlie', 'alice', 'ALINA', 'bob', 'mal.colm', 'a_b', 'aXb', 'dot.ted', 'x-y']

async function withUsers () {
  const h = await startAuthHarness()
  for (const name of NAMES) await h.signup(name, 'velvet-harbor-93')
  return h
}

t.test('search-users: case-insensitive substring match on username, sorted, display forms', async t => {
  const h = await withUsers()
  t.teardown(h.close)
  const search = async (query: string) => (await h.call('GET', '/auth/search-users', { query: { query } }))
  const res = await search('AL')
  t.equal(res.status, 200)
  t.same(res.body, ['alice', 'ALINA', 'mal.colm'], 'substring anywhere, any case, sorted case-insensitively')
  t.same((await search('li')).body, ['alice', 'ALINA', 'Charlie'])
  t.same((await search('system')).body, ['system'])
  t.same((await search('zzz')).body, [], 'no match: an empty array')
})

t.test('search-users matches regex characters literally', async t => {
  const h = await withUsers()
  t.teardown(h.close)
  const search = async (query: string) => (await h.call('GET', '/auth/search-users', { query: { query } }))
  t.same((await search('.')).body, ['dot.ted', 'mal.colm'], '"." is a dot, not any character')
  t.same((await search('a.b')).body, [], 'not a regex: a.b does not match a_b or aXb')
  t.same((await search('_')).body, ['a_b'])
  t.same((await search('-')).body, ['x-y'])
  for (const meta of ['.*', '^a', 'b$', '(', ')', '[a-z]', '\\', 'a+', '?', '{1,3}', '|', '(?=a)', '$where', '{"$ne":null}']) {
    const res = await search(meta)
    t.equal(res.status, 200, meta)
    t.same(res.body, [], `${meta} matches nothing literally`)
  }
})

t.test('search-users limit: default 20, at most 100', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  for (let i = 0; i < 25; i++) await h.signup(`many_${String(i).padStart(2, '0')}`, 'velvet-harbor-93')
  const byDefault = await h.call('GET', '/auth/search-users', { query: { query: 'many' } })
  t.equal(byDefault.body.length, 20)
  t.equal(byDefault.body[0], 'many_00')
  t.equal((await h.call('GET', '/auth/search-users', { query: { query: 'many', limit: 3 } })).body.length, 3)
  t.equal((await h.call('GET', '/auth/search-users', { query: { query: 'many', limit: 100 } })).body.length, 25)
  for (const limit of ['101', '0', '-1', 'abc', '1.5']) {
    const res = await h.call('GET', '/auth/search-users', { query: { query: 'many', limit } })
    t.equal(res.status, 400, `limit=${limit}`)
  }
})

t.test('search-users: an empty, missing or over-long query is a 400', async t => {
  const h = await withUsers()
  t.teardown(h.close)
  for (const query of [{ query: '' }, {}, { query: 'x'.repeat(33) }, { query: 'a'.repeat(10 * 1024) }]) {
    const res = await h.call('GET', '/auth/search-users', { query })
    t.equal(res.status, 400, JSON.stringify(query).slice(0, 40))
    t.type(res.body.detail, 'string')
  }
})

t.test('get-user-id: an exact, case-insensitive match answers the id as a bare JSON string', async t => {
  const h = await withUsers()
  t.teardown(h.close)
  const login = await h.login('Charlie', 'velvet-harbor-93')
  for (const username of ['Charlie', 'charlie', 'CHARLIE']) {
    const res = await h.call('GET', '/auth/get-user-id', { query: { username } })
    t.equal(res.status, 200, username)
    t.equal(res.text, JSON.stringify(login.body.user_id), 'a JSON string, not an object')
    t.match(res.headers['content-type'], /application\/json/)
  }
})

t.test('get-user-id: an unknown username answers 404 Username not found; no partial matches', async t => {
  const h = await withUsers()
  t.teardown(h.close)
  for (const username of ['nobody', 'Charli', 'harlie', 'Charlie_']) {
    const res = await h.call('GET', '/auth/get-user-id', { query: { username } })
    t.equal(res.status, 404, username)
    t.same(res.body, { detail: 'Username not found' })
  }
  t.equal((await h.call('GET', '/auth/get-user-id', { query: {} })).status, 400, 'missing username: 400')
})

t.test('user lookups stay open as the seed has them, counted per address: past 120 a minute a 429 TOO_MANY_LOOKUPS with Retry-After', async t => {
  const h = await startAuthHarness()
  t.teardown(h.close)
  for (let i = 0; i < 120; i++) {
    const res = await h.call('GET', i % 2 === 0 ? '/auth/search-users' : '/auth/get-user-id', { query: i % 2 === 0 ? { query: 'sys' } : { username: 'system' } })
    if (res.status !== 200) t.fail(`lookup ${i + 1} answered ${res.status}`)
  }
  const refused = await h.call('GET', '/auth/get-user-id', { query: { username: 'system' } })
  t.equal(refused.status, 429)
  t.same(refused.body, { detail: 'Too many user lookups from this address; try again later' })
  t.ok(Number(refused.headers['retry-after']) >= 1, 'Retry-After')
  h.advance(60)
  t.equal((await h.call('GET', '/auth/search-users', { query: { query: 'sys' } })).status, 200, 'a new window')
})

t.test('publicLookup false: search-users and get-user-id answer only a signed-in caller (user_id and session token)', async t => {
  const h = await startAuthHarness({ publicLookup: false })
  t.teardown(h.close)
  const user = await h.newUser({ username: 'looker' })
  for (const [path, query] of [['/auth/search-users', { query: 'look' }], ['/auth/get-user-id', { username: 'looker' }]] as const) {
    const anonymous = await h.call('GET', path, { query })
    t.equal(anonymous.status, 401, `${path}: anyone`)
    t.match(anonymous.body.detail, /Sign in to look users up/)
    const forged = await h.call('GET', path, { query: { ...query, user_id: user.userId, token: 'x'.repeat(43) }, headers: { 'user-agent': user.device } })
    t.equal(forged.status, 401, `${path}: a token that is no session`)
    const signedIn = await h.call('GET', path, { query: { ...query, user_id: user.userId }, headers: { 'user-agent': user.device, authorization: `Bearer ${user.token}` } })
    t.equal(signedIn.status, 200, `${path}: signed in`)
  }
})
