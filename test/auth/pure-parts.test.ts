// Unit tests of the accounts service's pure parts, table-style: tokens, schemas, the error mapper,
// the public user view, option checks and argon2 parameter detection.
import t from 'tap'
import { createHash } from 'node:crypto'
import { hash } from '@node-rs/argon2'
import { fail, GatehouseError, createEmbeddedStore } from '../../lib/index.ts'
import { newToken, tokenDigest, isTokenShaped, newUserId } from '../../lib/auth/tokens.ts'
import { parse, parseSessionQuery, signupBody, loginBody, userUpdateBody, selfUpdateBody, accessLevelBody, adminQuery, searchQuery, listQuery, sessionQuery, usernameQuery, userStatusBody } from '../../lib/auth/schemas.ts'
import { createAuthErrorResponse } from '../../lib/auth/error-body.ts'
import { logFailure } from '../../lib/errors.ts'
import { publicUser } from '../../lib/auth/user-view.ts'
import { resolveOptions } from '../../lib/auth/options.ts'
import { createPasswordHasher, randomPassword, createGate, defaultHashConcurrency } from '../../lib/auth/passwords.ts'
import { availableParallelism } from 'node:os'
import { CHEAP_ARGON2 } from '../support/auth-harness.ts'

t.test('a session token is 256 random bits as 43 base64url characters', async t => {
  const seen = new Set<string>()
  for (let i = 0; i < 200; i++) {
    const token = newToken()
    t.match(token, /^[A-Za-z0-9_-]{43}$/)
    t.equal(Buffer.from(token, 'base64url').length, 32)
    seen.add(token)
  }
  t.equal(seen.size, 200, 'no two tokens alike')
})

t.test('the stored form of a token is its SHA-256 hex digest', async t => {
  const token = newToken()
  t.equal(tokenDigest(token), createHash('sha256').update(token).digest('hex'))
  t.match(tokenDigest(token), /^[0-9a-f]{64}$/)
  t.not(tokenDigest(token), token)
})

t.test('only token-shaped strings reach the store', async t => {
  const table: Array<[string, boolean]> = [
    [newToken(), true],
    ['a'.repeat(43), true],
    ['a'.repeat(42), false],
    ['a'.repeat(44), false],
    ['a'.repeat(42) + '=', false],
    ['a'.repeat(42) + '$', false],
    ['', false],
    ['{"$ne":null}', false],
  ]
  for (const [token, shaped] of table) t.equal(isTokenShaped(token), shaped, JSON.stringify(token.slice(0, 50)))
})

t.test('user ids are 24 lower-case hex characters', async t => {
  const ids = new Set<string>()
  for (let i = 0; i < 100; i++) {
    const id = newUserId()
    t.match(id, /^[0-9a-f]{24}$/)
    ids.add(id)
  }
  t.equal(ids.size, 100)
})

function outcome (schema: Parameters<typeof parse>[0], value: unknown): string {
  try {
    parse(schema, value)
    return 'ok'
  } catch (err) {
    if (!(err instanceof GatehouseError)) throw err
    return `${err.status} ${err.message}`
  }
}

t.test('sign-up input: username 3-32 of letters, digits, _ . -; password 8-256; email optional and valid', async t => {
  const table: Array<[unknown, RegExp]> = [
    [{ username: 'abc', password: '12345678' }, /^ok$/],
    [{ username: 'A_b.c-9', password: '12345678', email: 'A@Example.COM' }, /^ok$/],
    [{ username: 'x'.repeat(32), password: 'p'.repeat(256) }, /^ok$/],
    [{ username: 'ab', password: '12345678' }, /^400 .*username.*at least 3/],
    [{ username: 'x'.repeat(33), password: '12345678' }, /^400 .*username.*32/],
    [{ username: 'a b c', password: '12345678' }, /^400 .*username.*letters, digits/],
    [{ username: 'ålice', password: '12345678' }, /^400 .*username/],
    [{ username: 'abc', password: '1234567' }, /^400 .*password.*at least 8/],
    [{ username: 'abc', password: 'p'.repeat(257) }, /^400 .*password.*256/],
    [{ username: 'abc', password: '12345678', email: 'not-an-email' }, /^400 .*email/],
    [{ username: 'abc', password: '12345678', email: null }, /^ok$/],
    [{ username: 'abc', password: '12345678', extra: 1 }, /^400 .*extra.*not allowed/],
    [{ username: 'abc', password: '12345678', access_level: 'hush' }, /^400 .*access_level.*not allowed/],
    [{ username: { $ne: null }, password: '12345678' }, /^400 .*username.*string/],
    [{ username: 'abc', password: ['12345678'] }, /^400 .*password.*string/],
    [{ password: '12345678' }, /^400 .*username.*required/],
    [undefined, /^400 .*body.*required/],
    [[], /^400 .*body.*object/],
    ['abc', /^400 .*body.*object/],
  ]
  for (const [input, expected] of table) t.match(outcome(signupBody, input), expected, JSON.stringify(input))
})

t.test('validation messages never echo the value sent', async t => {
  const secret = 'hunter2-' + 'x'.repeat(300)
  for (const input of [{ username: secret, password: secret }, { username: 'abc', password: secret }, { username: 'abc', password: '12345678', email: secret }]) {
    t.notMatch(outcome(signupBody, input), /hunter2/)
  }
  const hugeKey = { ['k'.repeat(60000)]: 1, username: 'abc', password: '12345678' }
  t.ok(outcome(signupBody, hugeKey).length < 300, 'an unknown 60 KB key is cut short')
})

t.test('login input: two strings, nothing else', async t => {
  const table: Array<[unknown, RegExp]> = [
    [{ username: 'a', password: 'p' }, /^ok$/],
    [{ username: '', password: 'p' }, /^400/],
    [{ username: 'abc', password: { $gt: '' } }, /^400 .*password.*string/],
    [{ username: 'abc', password: 'p', remember: true }, /^400 .*not allowed/],
    [{ username: 'x'.repeat(33), password: 'p' }, /^400/],
  ]
  for (const [input, expected] of table) t.match(outcome(loginBody, input), expected, JSON.stringify(input))
})

t.test('update input: at least one of username, password, email', async t => {
  t.match(outcome(userUpdateBody, {}), /^400 Nothing to update/)
  t.match(outcome(userUpdateBody, { email: 'a@b.co' }), /^ok$/)
  t.match(outcome(userUpdateBody, { access_level: 'hush' }), /^400 .*not allowed/)
  t.match(outcome(userUpdateBody, { username: 'a' }), /^400/)
  t.match(outcome(userUpdateBody, { email: 'a@b.co', current_password: 'x' }), /^400 .*current_password.*not allowed/, 'the admin update takes no current_password')
})

t.test('self-update input: the seed\'s fields, plus an optional current_password that alone updates nothing', async t => {
  t.match(outcome(selfUpdateBody, {}), /^400 Nothing to update/)
  t.match(outcome(selfUpdateBody, { current_password: 'old-password' }), /^400 Nothing to update/)
  t.match(outcome(selfUpdateBody, { email: null }), /^ok$/)
  t.match(outcome(selfUpdateBody, { password: 'new-password', current_password: 'x' }), /^ok$/, 'any current password length: it is only compared')
  t.match(outcome(selfUpdateBody, { password: 'new-password', current_password: '' }), /^400 .*current_password/)
  t.match(outcome(selfUpdateBody, { password: 'new-password', current_password: 'x'.repeat(257) }), /^400 .*current_password/)
  t.match(outcome(selfUpdateBody, { email: 'a@b.co', current_password: { $ne: null } }), /^400 .*current_password/)
  t.match(outcome(selfUpdateBody, { access_level: 'hush' }), /^400 .*not allowed/)
})

t.test('status input: disabled is true or false, nothing else', async t => {
  t.equal(outcome(userStatusBody, { disabled: true }), 'ok')
  t.equal(outcome(userStatusBody, { disabled: false }), 'ok')
  for (const input of [{}, { disabled: 'true' }, { disabled: 1 }, { disabled: null }, { disabled: true, access_level: 'hush' }]) {
    t.match(outcome(userStatusBody, input), /^400/, JSON.stringify(input))
  }
})

t.test('access level input accepts exactly the five levels', async t => {
  for (const level of ['default', 'member', 'admin', 'dev', 'hush']) t.equal(outcome(accessLevelBody, { access_level: level }), 'ok', level)
  for (const level of ['root', 'HUSH', '', 'Admin', 5, null, { $ne: 'x' }]) t.match(outcome(accessLevelBody, { access_level: level }), /^400/, JSON.stringify(level))
})

t.test('query input: ids are 24-hex, limits bounded, search fragments 1-32 characters', async t => {
  const id = 'a'.repeat(24)
  const table: Array<[Parameters<typeof parse>[0], unknown, RegExp]> = [
    [sessionQuery, { user_id: id, token: 't' }, /^ok$/],
    [sessionQuery, { user_id: 'A'.repeat(24) }, /^ok$/],
    [sessionQuery, { user_id: 'g'.repeat(24) }, /^ok$/],
    [sessionQuery, { user_id: '' }, /^ok$/],
    [sessionQuery, {}, /^400 .*user_id.*required/],
    [adminQuery, { admin_id: 'g'.repeat(24) }, /^400 .*admin_id.*24-character/],
    [sessionQuery, { user_id: id, extra: '1' }, /^400 .*not allowed/],
    [listQuery, { user_id: id, limit: '1000', offset: '5' }, /^ok$/],
    [listQuery, { user_id: id, limit: '1001' }, /^400 .*limit/],
    [listQuery, { user_id: id, limit: '0' }, /^400 .*limit/],
    [listQuery, { user_id: id, offset: '-1' }, /^400 .*offset/],
    [searchQuery, { query: 'a' }, /^ok$/],
    [searchQuery, { query: '' }, /^400 .*query.*empty/],
    [searchQuery, { query: 'x'.repeat(33) }, /^400 .*query/],
    [searchQuery, { query: 'a', limit: '101' }, /^400 .*limit/],
    [searchQuery, { query: 'a', limit: 'ten' }, /^400 .*limit/],
    [usernameQuery, { username: 'abc' }, /^ok$/],
    [usernameQuery, { username: '$where' }, /^400/],
  ]
  for (const [schema, input, expected] of table) t.match(outcome(schema, input), expected, JSON.stringify(input))
  t.same(parse(listQuery, { user_id: id }), { user_id: id, limit: 100, offset: 0 }, 'list defaults: limit 100, offset 0')
  t.same(parse(sessionQuery, { user_id: 'A'.repeat(24) }), { user_id: 'a'.repeat(24) }, 'a session query id is lower-cased')
  t.same(parse(searchQuery, { query: 'a' }), { query: 'a', limit: 20 }, 'search default limit 20')
})

t.test('the session query without joi answers exactly what joi answers', async t => {
  const id = '0123456789abcdef01234567'
  const inputs: Array<Record<string, unknown>> = [
    { user_id: id, token: 't' },
    { user_id: id },
    { user_id: id, token: '' },
    { user_id: id, token: 'x'.repeat(256) },
    { user_id: id, token: 'x'.repeat(257) },
    { user_id: id.toUpperCase(), token: 't' },
    { user_id: id.slice(1), token: 't' },
    { user_id: id + '0', token: 't' },
    { user_id: 'g'.repeat(24) },
    { user_id: id, token: 't', extra: '1' },
    { user_id: id, extra: '1' },
    { token: 't' },
    {},
    { user_id: { $ne: null }, token: 't' },
    { user_id: id, token: { $ne: null } },
    { user_id: id, token: 5 },
    { user_id: id, token: undefined },
    { user_id: [id], token: 't' },
    JSON.parse(`{"user_id":"${id}","__proto__":"x"}`),
  ]
  const answer = (run: () => unknown): unknown => {
    try { return { value: run() } } catch (err) { return { status: (err as { status?: number }).status, message: (err as Error).message } }
  }
  for (const input of inputs) {
    t.strictSame(answer(() => parseSessionQuery(input)), answer(() => parse(sessionQuery, input)), JSON.stringify(input))
  }
})

t.test('the auth error mapper answers {detail} with the catalogue status', async t => {
  const logged: unknown[] = []
  const logger = { debug () {}, info () {}, warn () {}, error: (obj: unknown) => { logged.push(obj) } }
  const map = createAuthErrorResponse()
  const table: Array<[unknown, number, string, Record<string, string> | undefined]> = [
    [fail('USERNAME_TAKEN'), 400, 'Username already exists', undefined],
    [fail('INVALID_CREDENTIALS'), 401, 'Invalid credentials', undefined],
    [fail('INSUFFICIENT_PERMISSIONS'), 403, 'Insufficient permissions', undefined],
    [fail('USER_NOT_FOUND'), 404, 'User not found', undefined],
    [fail('TOO_MANY_ATTEMPTS', undefined, { retryAfter: 42 }), 429, 'Too many failed login attempts; try again later', { 'retry-after': '42' }],
    [fail('PAYLOAD_TOO_LARGE'), 413, 'Request body too large', undefined],
    [{ isBoom: true, output: { statusCode: 413 }, message: 'Payload content length greater than maximum allowed: 65536' }, 413, 'Request body too large', undefined],
    [{ isBoom: true, output: { statusCode: 415 }, message: 'Unsupported Media Type' }, 415, 'Content-Type must be application/json', undefined],
    [Object.assign(new Error('Unexpected token } in JSON at position 3'), { status: 400, type: 'entity.parse.failed' }), 400, 'Invalid JSON in request body', undefined],
    [Object.assign(new Error('request entity too large'), { statusCode: 413 }), 413, 'Request body too large', undefined],
  ]
  for (const [err, status, detail, headers] of table) {
    const res = map(err)
    t.equal(res.status, status, detail)
    t.same(res.body, { detail })
    if (headers !== undefined) t.same(res.headers, headers)
    // Failures are logged where they end (lib/errors.ts logFailure), the serving path for these.
    logFailure(logger, err, {}, 'handler failed')
  }
  t.equal(logged.length, 0, 'client errors are not logged as failures')
})

t.test('anything unknown is a 500 "Internal error", logged, with no stack in the body', async t => {
  const logged: unknown[] = []
  const map = createAuthErrorResponse()
  const logger = { debug () {}, info () {}, warn: (obj: unknown) => { logged.push(obj) }, error: (obj: unknown) => { logged.push(obj) } }
  for (const err of [new Error('db exploded at /srv/secret/path'), new TypeError('x is undefined'), 'a string', null, fail('INTERNAL')]) {
    const res = map(err)
    t.equal(res.status, 500)
    t.same(res.body, { detail: 'Internal error' })
    logFailure(logger, err, {}, 'handler failed')
  }
  t.equal(logged.length, 5, 'each one logged')
})

t.test('the public view of a user has no hash and a UTC ISO-8601 date', async t => {
  const view = publicUser({
    id: 'a'.repeat(24),
    username: 'Alice',
    usernameKey: 'alice',
    passwordHash: '$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA',
    email: null,
    accessLevel: 'member',
    dateJoined: new Date(Date.UTC(2025, 0, 2, 3, 4, 5, 6)),
  })
  t.same(view, { username: 'Alice', email: null, access_level: 'member', date_joined: '2025-01-02T03:04:05.006Z' })
})

t.test('options default as documented and bad ones fail at start-up with a fix', async t => {
  const store = await createEmbeddedStore()
  const resolved = resolveOptions({ store })
  t.equal(resolved.basePath, '/v1/api')
  t.equal(resolved.sessionTtlMs, 3600 * 1000)
  t.equal(resolved.reauthMs, 600 * 1000)
  t.equal(resolved.queryTokens, true)
  t.equal(resolveOptions({ store, reauthSeconds: 0 }).reauthMs, 0, 'reauthSeconds 0: always ask for the current password')
  t.equal(resolved.adminUsername, 'system')
  t.equal(resolved.adminPassword, undefined)
  t.same(resolved.argon2, { memoryCost: 19456, timeCost: 2, parallelism: 1 })
  t.same(resolved.loginLimits, { perUsername: 5, perAddress: 30, windowSeconds: 900, delayAfter: 5, maxDelaySeconds: 4 })
  t.same(resolved.signupLimits, { perAddress: 10, windowSeconds: 3600 })
  t.equal(resolved.maxBodyBytes, 65536)
  t.equal(resolved.argon2Concurrency, Math.min(availableParallelism() + 1, 3), 'one more hash in flight than cores, at most 3')
  t.equal(defaultHashConcurrency(), resolved.argon2Concurrency)
  t.throws(() => resolveOptions({} as never), /options\.store is required/)
  t.throws(() => resolveOptions({ store, adminUsername: 'no spaces' }), /adminUsername/)
  t.throws(() => resolveOptions({ store, adminPassword: 'short' }), /adminPassword must be 8-256/)
  t.throws(() => resolveOptions({ store, sessionTtlSeconds: 0 }), /sessionTtlSeconds must be a positive integer/)
  t.throws(() => resolveOptions({ store, argon2: { memoryCost: 4 } }), /memoryCost/)
  t.throws(() => resolveOptions({ store, basePath: 'v1' }), /basePath/)
  t.throws(() => resolveOptions({ store, loginLimits: { perUsername: 1.5 } }), /perUsername/)
  t.throws(() => resolveOptions({ store, argon2Concurrency: 0 }), /argon2Concurrency/)
  t.throws(() => resolveOptions({ store, reauthSeconds: -1 }), /reauthSeconds must be a whole number of seconds, 0 or more/)
  t.throws(() => resolveOptions({ store, reauthSeconds: 0.5 }), /reauthSeconds/)
  t.throws(() => resolveOptions({ store, queryTokens: 'no' as never }), /queryTokens must be true or false/)
  t.throws(() => resolveOptions({ store, loginLimits: { delayAfter: 0 } }), /loginLimits\.delayAfter must be a positive integer/)
  t.throws(() => resolveOptions({ store, loginLimits: { maxDelaySeconds: 11 } }), /loginLimits\.maxDelaySeconds must be a number from 0 to 10/)
  t.throws(() => resolveOptions({ store, signupLimits: { perAddress: 0 } }), /signupLimits\.perAddress must be a positive integer/)
  t.throws(() => resolveOptions({ store, signupLimits: { windowSeconds: -1 } }), /signupLimits\.windowSeconds/)
  t.same(resolveOptions({ store, signupLimits: { perAddress: undefined, windowSeconds: 60 } }).signupLimits, { perAddress: 10, windowSeconds: 60 }, 'an unset setting keeps its default')
})

t.test('an onEvent hook that throws does not break the service', async t => {
  const warned: unknown[] = []
  const resolved = resolveOptions({
    store: await createEmbeddedStore(),
    onEvent: () => { throw new Error('metrics down') },
    logger: { debug () {}, info () {}, warn: (o: unknown) => { warned.push(o) }, error () {} },
  })
  t.doesNotThrow(() => resolved.emit('login_success'))
  t.equal(warned.length, 1)
})

t.test('hashes made with other argon2 parameters are recognised as outdated', async t => {
  const hasher = createPasswordHasher(CHEAP_ARGON2)
  const current = await hasher.hash('velvet-harbor-93')
  t.match(current, /^\$argon2id\$v=19\$m=64,t=1,p=1\$/)
  t.equal(hasher.isOutdated(current), false)
  t.equal(hasher.isOutdated(await hash('velvet-harbor-93', { memoryCost: 128, timeCost: 1, parallelism: 1 })), true)
  t.equal(hasher.isOutdated('not a hash'), false, 'an unparseable hash is left for verify to reject')
  t.equal(await hasher.verify(current, 'velvet-harbor-93'), true)
  t.equal(await hasher.verify(current, 'password124'), false)
  t.equal(await hasher.verify(undefined, 'velvet-harbor-93'), false, 'an unknown user never verifies')
})

t.test('generated system passwords are 24 random base64url characters', async t => {
  const a = randomPassword()
  t.match(a, /^[A-Za-z0-9_-]{24}$/)
  t.not(a, randomPassword())
})

t.test('at most argon2Concurrency hashes run at once, the rest in arrival order', async t => {
  const gate = createGate(2)
  let running = 0
  let peak = 0
  const finished: number[] = []
  const task = (i: number) => gate(async () => {
    running++
    peak = Math.max(peak, running)
    // The work takes a turn of the event loop (no wall-clock time): the others queue meanwhile.
    await new Promise(resolve => setImmediate(resolve))
    running--
    finished.push(i)
    if (i === 3) throw new Error('a failing task frees its slot too')
    return i
  })
  const results = await Promise.allSettled([0, 1, 2, 3, 4, 5, 6].map(task))
  t.equal(peak, 2)
  t.same(finished, [0, 1, 2, 3, 4, 5, 6])
  t.equal(results.filter(r => r.status === 'rejected').length, 1)
  t.equal(await gate(async () => 'free'), 'free', 'every slot was given back')
})

t.test('logins are served ahead of sign-ups when password hashing is the bottleneck', async t => {
  // The gate: with its one slot taken, an urgent task queued last starts next.
  const gate = createGate(1)
  const started: string[] = []
  let release!: () => void
  const first = gate(() => new Promise<void>(resolve => { started.push('first'); release = resolve }))
  const queued = ['signup-1', 'signup-2', 'login', 'signup-3'].map(name =>
    gate(async () => { started.push(name) }, name === 'login'))
  release()
  await Promise.all([first, ...queued])
  t.same(started, ['first', 'login', 'signup-1', 'signup-2', 'signup-3'])

  // The hasher: verify() waits ahead of queued hash() calls, with real argon2 work and one slot.
  const hasher = createPasswordHasher(CHEAP_ARGON2, 1)
  const stored = await hasher.hash('velvet-harbor-93')
  const done: string[] = []
  const signups = [1, 2, 3, 4].map(i => hasher.hash(`new-user-password-${i}`).then(() => { done.push(`signup-${i}`) }))
  const login = hasher.verify(stored, 'velvet-harbor-93').then(ok => { done.push(`login ${ok}`) })
  await Promise.all([...signups, login])
  t.same(done, ['signup-1', 'login true', 'signup-2', 'signup-3', 'signup-4'], 'the login waited for the hash in progress only')
})
