import t from 'tap'
import { spawn } from 'node:child_process'
import { mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { Test } from 'tap'
import { makeKey, makeSession, makeUsage, makeUser, storeConformance } from './conformance.ts'
import type { OpenStore } from './conformance.ts'
import type { EmbeddedStoreOptions, Logger, Store } from '../../lib/index.ts'
import { createEmbeddedStore } from '../../lib/index.ts'

const HOUR = 60 * 60 * 1000

/** Counts the store's "saved" debug lines: one per write of the data file. */
function recordingLogger (): { logger: Logger, lines: Array<{ obj: unknown, msg?: string }>, writes: () => number } {
  const lines: Array<{ obj: unknown, msg?: string }> = []
  const log = (obj: unknown, msg?: string): void => { lines.push({ obj, msg }) }
  return {
    logger: { debug: log, info: log, warn: log, error: log },
    lines,
    writes: () => lines.filter(l => l.msg === 'embedded store saved').length,
  }
}

async function openAt (t: Test, options: EmbeddedStoreOptions): Promise<Store> {
  const store = await createEmbeddedStore(options)
  t.teardown(() => store.close())
  return store
}

const JOURNAL_ID: Record<string, (r: any) => string> = {
  users: r => r.id,
  sessions: r => r.tokenHash,
  attempts: r => r.key,
  keys: r => r.keyId,
  limits: r => r.userId,
  owners: r => r.resource,
  usage: r => JSON.stringify([r.day, r.userId, r.keyId, r.model, r.surface]),
  counters: r => `${r.key}\n${Date.parse(r.windowStart)}`,
  retiredKeys: r => r.keyId,
}

/** What a restart loads: the data file with the changes of its journal (of the same generation) applied in order. */
async function readJson (file: string): Promise<any> {
  const top = JSON.parse(await readFile(file, 'utf8'))
  const journal = await readFile(`${file}.journal`, 'utf8').catch(() => '')
  const [head, ...lines] = journal.split('\n').filter(line => line !== '')
  if (head === undefined || JSON.parse(head).generation !== top.generation) return top
  for (const line of lines) {
    const { k, id, v } = JSON.parse(line)
    const list: any[] = top[k] ?? []
    const at = list.findIndex(r => JOURNAL_ID[k](r) === id)
    if (v === null) {
      if (at >= 0) list.splice(at, 1)
    } else if (at >= 0) list[at] = v
    else list.push(v)
    top[k] = list
  }
  return top
}

function escapeRegex (s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

t.test('embedded store in memory passes the store conformance suite', async t => {
  const open: OpenStore = async t => await openAt(t, {})
  storeConformance(t, open)
})

t.test('embedded store saved to a file passes the store conformance suite', async t => {
  // One directory for all, removed after every store in it closed (a store's close writes what is still pending).
  const dir = t.testdir()
  let n = 0
  const open: OpenStore = async t => await openAt(t, { file: join(dir, `auth-db-${++n}.json`) })
  storeConformance(t, open)
})

t.test('users, live sessions and attempt counters survive a restart', async t => {
  const file = join(t.testdir(), 'auth-db.json')
  const first = await createEmbeddedStore({ file })
  const alice = makeUser('Alice', { email: 'alice@example.com', accessLevel: 'hush' })
  const session = makeSession(alice.id, 'curl/8')
  const now = new Date()
  await first.users.insert(alice)
  await first.sessions.put(session)
  await first.attempts.hit('user:bob', 15 * 60 * 1000, now)
  const hit = await first.attempts.hit('user:bob', 15 * 60 * 1000, now)
  await first.close()

  const second = await openAt(t, { file })
  t.same(await second.users.findById(alice.id), alice)
  t.same(await second.users.findByUsernameKey('alice'), alice)
  t.same(await second.sessions.findByTokenHash(session.tokenHash), session)
  t.same(await second.attempts.get('user:bob', now), hit)
  t.equal(hit.count, 2)
  await t.rejects(second.users.insert(makeUser('ALICE')), { code: 'USERNAME_TAKEN' }, 'uniqueness holds after a restart')
  const relogin = makeSession(alice.id, 'curl/8')
  await second.sessions.put(relogin)
  t.equal(await second.sessions.findByTokenHash(session.tokenHash), null, 'per-device replacement holds after a restart')
})

t.test('the data file has a format, a version and ISO dates', async t => {
  const file = join(t.testdir(), 'auth-db.json')
  const store = await openAt(t, { file })
  const alice = makeUser('alice')
  const session = makeSession(alice.id, 'curl/8')
  await store.users.insert(alice)
  await store.sessions.put(session)
  const at = new Date('2026-02-03T04:05:06.007Z')
  await store.attempts.hit('ip:192.0.2.1', 60_000, at)
  const json = await readJson(file)
  t.equal(json.format, 'gatehouse-embedded-store')
  t.equal(json.version, 1)
  t.same(json.users, [{ ...alice, dateJoined: alice.dateJoined.toISOString() }])
  t.same(json.sessions, [{ ...session, createdAt: session.createdAt.toISOString(), expiresAt: session.expiresAt.toISOString() }])
  t.same(json.attempts, [{ key: 'ip:192.0.2.1', count: 1, resetAt: '2026-02-03T04:06:06.007Z' }])
  t.equal(((await stat(file)).mode & 0o777).toString(8), '600', 'readable by the owner only: it holds password hashes')
})

t.test('a data file written before accounts could be disabled loads, with every user enabled', async t => {
  const file = join(t.testdir(), 'auth-db.json')
  // Exactly what version 1 wrote before users had a disabled field.
  await writeFile(file, JSON.stringify({
    format: 'gatehouse-embedded-store',
    version: 1,
    users: [{ id: 'aaaaaaaaaaaaaaaaaaaaaaaa', username: 'Old', usernameKey: 'old', passwordHash: '$argon2id$x', email: null, accessLevel: 'hush', dateJoined: '2025-01-01T00:00:00.000Z' }],
    sessions: [],
    attempts: [],
  }, null, 2) + '\n')
  const store = await openAt(t, { file })
  const old = await store.users.findById('aaaaaaaaaaaaaaaaaaaaaaaa')
  t.equal(old?.username, 'Old')
  t.equal(old?.disabled, undefined, 'enabled')
  t.equal(await store.users.countByAccessLevel('hush'), 1)
  await store.users.update('aaaaaaaaaaaaaaaaaaaaaaaa', { disabled: true })
  t.equal((await readJson(file)).users[0].disabled, true, 'a disabled user is saved with the flag')
  await store.close()
  const again = await openAt(t, { file })
  t.equal((await again.users.findById('aaaaaaaaaaaaaaaaaaaaaaaa'))?.disabled, true, 'and read back disabled')
  await again.users.update('aaaaaaaaaaaaaaaaaaaaaaaa', { disabled: false })
  t.notOk('disabled' in (await readJson(file)).users[0], 'enabled again: saved as before, without the field')
})

t.test('keys, limits and usage survive a restart; rate windows and leases start afresh', async t => {
  const file = join(t.testdir(), 'auth-db.json')
  const first = await createEmbeddedStore({ file })
  const key = makeKey('u1', { models: ['gemini-*'], expiresAt: new Date('2027-01-01T00:00:00.000Z'), usdPerMonthMicros: 20_000_000 })
  const usedAt = new Date('2026-03-01T10:00:00.000Z')
  const now = new Date()
  const later = new Date(now.getTime() + 60_000)
  await first.keys.create(key)
  await first.keys.touch(key.keyId, usedAt)
  await first.limits.set('u1', { rpm: 10, tpm: null, usdPerDayMicros: 5_000_000 })
  await first.usage.record([makeUsage(), makeUsage({ keyId: key.keyId })])
  await first.counters.add('rpm:u1', now, 3, later)
  await first.leases.acquire('conc:u1', 'a', 1, now, later)
  await first.close()

  const second = await openAt(t, { file })
  t.same(await second.keys.findByDigest(key.digest), { ...key, lastUsedAt: usedAt }, 'a key\'s monthly cap too')
  t.same(await second.limits.get('u1'), { rpm: 10, tpm: null, usdPerDayMicros: 5_000_000 }, 'a dollar budget too')
  t.same(await second.usage.query({ from: '2026-03-01', to: '2026-03-01' }), [makeUsage(), makeUsage({ keyId: key.keyId })])
  t.equal(await second.counters.get('rpm:u1', now), 0, 'rate windows are memory-only')
  t.equal(await second.leases.count('conc:u1', now), 0, 'leases are memory-only: the old process holds no requests')
  await t.rejects(second.keys.create(makeKey('u2', { digest: key.digest })), 'digest uniqueness holds after a restart')
})

t.test('owners of upstream resources survive a restart; expired ones are dropped, and a file without them loads', async t => {
  const file = join(t.testdir(), 'auth-db.json')
  const first = await createEmbeddedStore({ file })
  const now = new Date(Math.floor(Date.now() / 1000) * 1000)
  const record = { resource: 'files/abc', userId: 'u1', keyId: 'k1', createdAt: now, expiresAt: new Date(now.getTime() + 48 * 3600_000) }
  await first.owners.put(record)
  await first.owners.put({ ...record, resource: 'cachedContents/gone', expiresAt: new Date(now.getTime() - 1000) })
  await first.close()
  t.same((await readJson(file)).owners.map((o: { resource: string }) => o.resource).sort(), ['cachedContents/gone', 'files/abc'])
  const second = await openAt(t, { file })
  t.same(await second.owners.get('files/abc', now), record)
  t.equal(await second.owners.get('cachedContents/gone', now), null, 'an expired record is not returned')
  await second.owners.delete('files/abc')
  t.same((await readJson(file)).owners, [], 'the sweep at start dropped the expired one; the next save writes what is left')
})

t.test('a data file written before keys, limits and usage existed loads, with none of them', async t => {
  const file = join(t.testdir(), 'auth-db.json')
  await writeFile(file, JSON.stringify({
    format: 'gatehouse-embedded-store',
    version: 1,
    users: [{ ...makeUser('old'), dateJoined: '2025-01-01T00:00:00.000Z' }],
    sessions: [],
    attempts: [],
  }))
  const store = await openAt(t, { file })
  t.equal((await store.users.findByUsernameKey('old'))?.username, 'old')
  t.same(await store.keys.listByUser('u1'), [])
  t.same(await store.usage.query({ from: '2000-01-01', to: '2999-12-31' }), [])
  await store.limits.set('u1', { rpm: 1 })
  t.same((await readJson(file)).limits, [{ userId: 'u1', limits: { rpm: 1 } }], 'the next save writes the new parts')
})

t.test('a change is on disk by the time its promise resolves', async t => {
  const file = join(t.testdir(), 'auth-db.json')
  const store = await openAt(t, { file })
  const alice = makeUser('alice')
  await store.users.insert(alice)
  t.same((await readJson(file)).users.map((u: { id: string }) => u.id), [alice.id], 'no flush or close needed')
  await store.sessions.deleteByUser(alice.id)
  await store.users.update(alice.id, { email: 'new@example.com' })
  t.equal((await readJson(file)).users[0].email, 'new@example.com')
})

t.test('every change answered before a SIGKILL is in the file afterwards', async t => {
  const dir = t.testdir()
  const file = join(dir, 'auth-db.json')
  const writer = join(import.meta.dirname, 'embedded-kill-writer.ts')
  const child = spawn(process.execPath, [writer, file], { stdio: ['ignore', 'pipe', 'inherit'] })
  const answered: string[] = []
  let buffered = ''
  const exited = new Promise<NodeJS.Signals | null>(resolve => child.on('exit', (_code, signal) => resolve(signal)))
  await new Promise<void>(resolve => {
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString()
      const lines = buffered.split('\n')
      buffered = lines.pop()!
      answered.push(...lines)
      if (answered.length >= 300) resolve()
    })
  })
  // Killed mid-stream: more inserts are in flight and a write is likely running.
  child.kill('SIGKILL')
  t.equal(await exited, 'SIGKILL')
  const store = await openAt(t, { file })
  const missing: string[] = []
  for (const id of answered) if (await store.users.findById(id) === null) missing.push(id)
  t.same(missing, [], `all ${answered.length} answered inserts survived`)
})

const fileWith = (fields: object): string =>
  JSON.stringify({ format: 'gatehouse-embedded-store', version: 1, users: [], sessions: [], attempts: [], ...fields })
const sessionJson = { tokenHash: 'ab', userId: 'u', device: 'd', createdAt: '2026-01-01T00:00:00.000Z', expiresAt: '2026-01-01T01:00:00.000Z' }
const keyJson = { ...makeKey('u'), createdAt: '2026-01-01T00:00:00.000Z', lastUsedAt: null }
const corruptFiles: Array<[string, string]> = [
  ['not JSON', '{"format": "gatehouse-embedded-store", "version": 1, "users": ['],
  ['a JSON array', '[]'],
  ['another format', fileWith({ format: 'something-else' })],
  ['users that is not a list', fileWith({ users: {} })],
  ['an unknown access level', fileWith({ users: [{ ...makeUser('a'), accessLevel: 'root' }] })],
  ['an id that is not hex', fileWith({ users: [{ ...makeUser('a'), id: 'zz' }] })],
  ['a session without a device', fileWith({ sessions: [{ ...sessionJson, device: undefined }] })],
  ['two sessions for one device', fileWith({ sessions: [sessionJson, { ...sessionJson, tokenHash: 'cd' }] })],
  ['an attempt count of zero', fileWith({ attempts: [{ key: 'k', count: 0, resetAt: '2026-01-01T00:00:00.000Z' }] })],
  ['a date that is not a date', JSON.stringify({ format: 'gatehouse-embedded-store', version: 1, users: [{ ...makeUser('a'), dateJoined: 'yesterday' }], sessions: [], attempts: [] })],
  ['a newer format version', JSON.stringify({ format: 'gatehouse-embedded-store', version: 2, users: [], sessions: [], attempts: [] })],
  ['two users with one username', JSON.stringify({ format: 'gatehouse-embedded-store', version: 1, users: [makeUser('a'), makeUser('A')], sessions: [], attempts: [] })],
  ['an empty file', ''],
  ['keys that is not a list', fileWith({ keys: {} })],
  ['two keys with one digest', fileWith({ keys: [keyJson, { ...keyJson, keyId: 'other' }] })],
  ['a key without a prefix', fileWith({ keys: [{ ...keyJson, prefix: undefined }] })],
  ['a limit that is not a count', fileWith({ limits: [{ userId: 'u', limits: { rpm: '60' } }] })],
  ['a negative usage count', fileWith({ usage: [{ ...makeUsage(), requests: -1 }] })],
  ['a usage day that is not a day', fileWith({ usage: [{ ...makeUsage(), day: 'today' }] })],
  ['a disabled flag that is not a boolean', fileWith({ users: [{ ...makeUser('a'), dateJoined: '2026-01-01T00:00:00.000Z', disabled: 'yes' }] })],
]
for (const [what, content] of corruptFiles) {
  t.test(`a corrupt file (${what}) stops start-up with an error naming it, and is left untouched`, async t => {
    const dir = t.testdir()
    const file = join(dir, 'auth-db.json')
    await writeFile(file, content)
    const before = await stat(file)
    await t.rejects(createEmbeddedStore({ file }), { message: new RegExp(`${escapeRegex(file)} is corrupt: .+left untouched`) })
    t.equal(await readFile(file, 'utf8'), content, 'same content')
    t.equal((await stat(file)).mtimeMs, before.mtimeMs, 'not rewritten')
    t.same(await readdir(dir), ['auth-db.json'], 'nothing else written')
  })
}

t.test('a path that cannot be read stops start-up with an error naming it', async t => {
  const dir = t.testdir({ 'not-a-dir': 'plain file' })
  const aDirectory = join(dir, 'auth-db.json')
  await mkdir(aDirectory)
  await t.rejects(createEmbeddedStore({ file: aDirectory }), { message: new RegExp(`Cannot read the embedded store data file ${escapeRegex(aDirectory)}`) })
  const underAFile = join(dir, 'not-a-dir', 'auth-db.json')
  await t.rejects(createEmbeddedStore({ file: underAFile }), { message: new RegExp(`Cannot create the directory of the embedded store data file ${escapeRegex(underAFile)}`) })
})

t.test('a missing parent directory is created and the file written at start', async t => {
  const file = join(t.testdir(), 'data', 'nested', 'auth-db.json')
  await openAt(t, { file })
  t.same(await readJson(file), { format: 'gatehouse-embedded-store', version: 1, generation: 1, users: [], sessions: [], attempts: [], keys: [], limits: [], settings: [], usage: [], owners: [], counters: [], retiredKeys: [] })
})

t.test('a deleted key\'s name is kept in the file for usage, and dropped 400 days after its deletion', async t => {
  const file = join(t.testdir(), 'auth-db.json')
  const clock = { at: Date.UTC(2026, 0, 1) }
  const first = await createEmbeddedStore({ file, now: () => new Date(clock.at) })
  const key = makeKey('a'.repeat(24), { keyId: 'k-gone', name: 'old laptop' })
  await first.keys.create(key)
  await first.keys.delete('k-gone')
  await first.close()
  const again = await openAt(t, { file, now: () => new Date(clock.at) })
  t.same([...await again.keys.names(['k-gone'])], [['k-gone', 'old laptop']], 'read back from the file')
  clock.at += 400 * 86_400_000
  await again.keys.create(makeKey('b'.repeat(24)))
  t.same([...await again.keys.names(['k-gone'])], [], 'swept once its retention passed')
})

t.test('saves leave no temp files, and ones left by a killed process are removed at start', async t => {
  const dir = t.testdir({ 'auth-db.json.tmp-999999-7': '{"half": ' })
  const file = join(dir, 'auth-db.json')
  const { logger, lines } = recordingLogger()
  const store = await openAt(t, { file, logger })
  t.ok(lines.some(l => l.msg?.includes('removed temp files')), 'the removal is logged')
  for (let i = 0; i < 20; i++) await store.users.insert(makeUser(`user${i}`))
  await Promise.all(Array.from({ length: 20 }, (_, i) => store.attempts.hit(`ip:${i}`, 60_000, new Date())))
  t.same(await readdir(dir), ['auth-db.json', 'auth-db.json.journal'])
})

t.test('a burst of 200 concurrent sign-ups shares a few writes, and all are on disk when they resolve', async t => {
  const file = join(t.testdir(), 'auth-db.json')
  const { logger, writes } = recordingLogger()
  const store = await openAt(t, { file, logger })
  const before = writes()
  const burst = Array.from({ length: 200 }, (_, i) => makeUser(`burst${i}`))
  await Promise.all(burst.map(u => store.users.insert(u)))
  const used = writes() - before
  t.comment(`200 concurrent inserts in one turn: ${used} write(s) of the data file`)
  t.ok(used <= 3, `${used} writes for 200 inserts`)
  t.equal((await readJson(file)).users.length, 200, 'all 200 on disk')

  const spread = Array.from({ length: 200 }, (_, i) => makeUser(`spread${i}`))
  const start = writes()
  const pending: Array<Promise<void>> = []
  for (const u of spread) {
    pending.push(store.users.insert(u))
    await nextTurn()
  }
  await Promise.all(pending)
  const spreadWrites = writes() - start
  t.comment(`200 inserts spread over 200 event-loop turns: ${spreadWrites} write(s) of the data file`)
  t.ok(spreadWrites < 100, `${spreadWrites} writes for 200 inserts arriving one per turn`)
  t.equal((await readJson(file)).users.length, 400, 'all 400 on disk')
})

t.test('a failed save rejects the change, and the next save writes the file again', async t => {
  const dir = t.testdir()
  const file = join(dir, 'data', 'auth-db.json')
  const store = await openAt(t, { file })
  await rm(join(dir, 'data'), { recursive: true })
  await t.rejects(store.users.insert(makeUser('alice')), { message: new RegExp(`Could not save the embedded store data file ${escapeRegex(file)}`) })
  await mkdir(join(dir, 'data'))
  const bob = makeUser('bob')
  await store.users.insert(bob)
  t.ok((await readJson(file)).users.some((u: { id: string }) => u.id === bob.id), 'the later change is on disk')
  t.same(await readdir(join(dir, 'data')), ['auth-db.json', 'auth-db.json.journal'], 'no temp file left by the failed save')
})

t.test('close waits for pending writes; changes after close are refused', async t => {
  const file = join(t.testdir(), 'auth-db.json')
  const store = await createEmbeddedStore({ file })
  const alice = makeUser('alice')
  const inserted = store.users.insert(alice)
  await store.close()
  await inserted
  t.same((await readJson(file)).users.map((u: { id: string }) => u.id), [alice.id])
  await t.rejects(store.users.insert(makeUser('bob')), { message: 'The embedded store is closed' })
  await t.rejects(store.ping(), { message: 'The embedded store is closed' })
})

t.test('sessions and attempt windows long past their end are dropped', async t => {
  const file = join(t.testdir(), 'auth-db.json')
  let now = Date.parse('2026-05-01T00:00:00.000Z')
  const store = await openAt(t, { file, now: () => new Date(now) })
  const alice = makeUser('alice')
  await store.users.insert(alice)
  const old = makeSession(alice.id, 'curl/8', { createdAt: new Date(now), expiresAt: new Date(now + HOUR) })
  await store.sessions.put(old)
  await store.attempts.hit('user:alice', 15 * 60 * 1000, new Date(now))
  now += 23 * HOUR
  await store.users.update(alice.id, { email: 'a@example.com' })
  t.ok(await store.sessions.findByTokenHash(old.tokenHash), 'a session expired 22 hours ago is kept')
  t.equal((await readJson(file)).attempts.length, 0, 'an attempt window over for more than an hour is gone')
  now += 2 * HOUR
  await store.users.update(alice.id, { email: 'b@example.com' })
  t.equal(await store.sessions.findByTokenHash(old.tokenHash), null, 'a session expired over a day ago is gone')
  const json = await readJson(file)
  t.same([json.sessions.length, json.users.length], [0, 1], 'and gone from the file; users stay')
})

t.test('rate windows past their expiry and expired leases are dropped from memory', async t => {
  let now = Date.parse('2026-05-01T00:00:00.000Z')
  const store = await openAt(t, { now: () => new Date(now) })
  const minute = new Date(now)
  await store.counters.add('rpm:u1', minute, 4, new Date(now + 2 * 60_000))
  await store.counters.add('rpm:u1', new Date(now + 60_000), 1, new Date(now + 3 * 60_000))
  await store.leases.acquire('conc:u1', 'a', 1, minute, new Date(now + 30_000))
  now += 2 * 60_000 + 1
  await store.limits.set('u1', { rpm: 1 })
  t.equal(await store.counters.get('rpm:u1', minute), 0, 'the expired window is gone')
  t.equal(await store.counters.get('rpm:u1', new Date(minute.getTime() + 60_000)), 1, 'the live one stays')
  t.equal(await store.leases.count('conc:u1', minute), 0, 'the expired lease is gone, even counted at an earlier time')
  now += 2 * 60_000
  await store.limits.clear('u1')
  t.equal(await store.counters.get('rpm:u1', new Date(minute.getTime() + 60_000)), 0)
})

t.test("stored responses have a per-owner budget: past maxResponseCharsPerOwner an owner's oldest go, never another owner's", async t => {
  const store = await createEmbeddedStore({ maxResponseChars: 16, maxResponseCharsPerOwner: 8 })
  t.teardown(() => store.close())
  const now = new Date(Date.UTC(2026, 0, 5))
  const later = new Date(now.getTime() + 60_000)
  const put = (id: string, ownerId: string): Promise<void> => store.responses.put({ id, ownerId, data: '1234', createdAt: now, expiresAt: later })
  const held = async (id: string, ownerId: string): Promise<boolean> => await store.responses.get(id, ownerId, now) !== null
  await put('bob1', 'bob')
  for (const id of ['ann1', 'ann2', 'ann3']) await put(id, 'ann')
  t.same([await held('ann1', 'ann'), await held('ann2', 'ann'), await held('ann3', 'ann')], [false, true, true], "ann's oldest went past her 8")
  t.ok(await held('bob1', 'bob'), "bob's answer is not ann's to push out")
  // The whole is bounded too: past it the largest owner's oldest go.
  await put('cat1', 'cat')
  await put('cat2', 'cat')
  t.ok(await held('bob1', 'bob'), 'the smallest owner keeps his')
  t.equal([await held('ann2', 'ann'), await held('cat1', 'cat')].filter(Boolean).length, 1, 'one of the two largest owners lost its oldest')
  t.match(await createEmbeddedStore({ maxResponseCharsPerOwner: 0 }).catch(e => e), { option: 'maxResponseCharsPerOwner', message: /must be a positive integer/ })
})

t.test('stored responses in memory are bounded by maxResponseChars: the oldest go first', async t => {
  const store = await createEmbeddedStore({ maxResponseChars: 10 })
  t.teardown(() => store.close())
  const now = new Date()
  const later = new Date(now.getTime() + 60_000)
  for (const id of ['a', 'b', 'c']) await store.responses.put({ id, ownerId: 'u', data: '1234', createdAt: now, expiresAt: later })
  t.equal(await store.responses.get('a', 'u', now), null, 'the oldest went past the bound')
  t.ok(await store.responses.get('b', 'u', now))
  t.ok(await store.responses.get('c', 'u', now))
  t.match(await createEmbeddedStore({ maxResponseChars: 0 }).catch(e => e), { option: 'maxResponseChars', message: /must be a positive integer/ })
})

t.test('a save writes only what changed: a change after many others appends one journal line and leaves the data file as it was', async t => {
  const file = join(t.testdir(), 'auth-db.json')
  const store = await openAt(t, { file })
  await Promise.all(Array.from({ length: 500 }, (_, i) => store.users.insert(makeUser(`user${i}`))))
  const before = await readFile(file, 'utf8')
  const journalBefore = (await readFile(`${file}.journal`, 'utf8')).split('\n').length
  const alice = makeUser('alice')
  await store.users.insert(alice)
  t.equal(await readFile(file, 'utf8'), before, 'the data file is not rewritten')
  const lines = (await readFile(`${file}.journal`, 'utf8')).split('\n')
  t.equal(lines.length, journalBefore + 1, 'one line more')
  t.match(JSON.parse(lines.at(-2)!), { k: 'users', id: alice.id, v: { username: 'alice', dateJoined: alice.dateJoined.toISOString() } })
  await store.users.update(alice.id, { email: 'a@example.com' })
  t.same((await readJson(file)).users.find((u: { id: string }) => u.id === alice.id).email, 'a@example.com', 'an update is the record as it now is')
})

t.test('the journal is folded into a new data file once it outgrows it, and a restart loads either form', async t => {
  const file = join(t.testdir(), 'auth-db.json')
  const store = await openAt(t, { file })
  await store.users.insert(makeUser('alice'))
  const generation = (await readJson(file)).generation
  // About 1.3 MB of attempt windows in one write, then one more change: the journal passed the data file's size.
  await Promise.all(Array.from({ length: 12_000 }, (_, i) => store.attempts.hit(`login:address-${i}`, 3_600_000, new Date())))
  await store.users.insert(makeUser('bob'))
  const after = JSON.parse(await readFile(file, 'utf8'))
  t.equal(after.generation, generation + 1, 'a new generation')
  t.equal(after.attempts.length, 12_000, 'the journal\'s changes are in the data file')
  t.same((await readFile(`${file}.journal`, 'utf8')).trim(), JSON.stringify({ generation: generation + 1 }), 'the new journal starts empty')
  await store.users.insert(makeUser('carol'))
  await store.close()
  const again = await openAt(t, { file })
  t.ok(await again.users.findByUsernameKey('carol'), 'a change in the new journal')
  t.ok(await again.users.findByUsernameKey('bob'), 'a change folded in')
  t.equal((await again.attempts.get('login:address-11999', new Date())).count, 1)
})

t.test('a journal cut short by a crash loads all but its torn last line, with a warning', async t => {
  const file = join(t.testdir(), 'auth-db.json')
  const store = await openAt(t, { file })
  await store.users.insert(makeUser('alice'))
  await store.users.insert(makeUser('bob'))
  await store.close()
  const journal = await readFile(`${file}.journal`, 'utf8')
  await writeFile(`${file}.journal`, journal.slice(0, -20))
  const { logger, lines } = recordingLogger()
  const again = await openAt(t, { file, logger })
  t.ok(await again.users.findByUsernameKey('alice'), 'the whole lines before it')
  t.equal(await again.users.findByUsernameKey('bob'), null, 'the torn one is dropped')
  t.ok(lines.some(l => l.msg?.includes('cut short by a crash')), 'and the drop is logged')
})

t.test('a journal of an older generation (a crash between a new data file and its journal) is skipped as folded in', async t => {
  const file = join(t.testdir(), 'auth-db.json')
  const store = await openAt(t, { file })
  await store.users.insert(makeUser('alice'))
  await store.close()
  const top = JSON.parse(await readFile(file, 'utf8'))
  // The data file of the next generation was written with alice removed; the old journal still adds her.
  await writeFile(file, JSON.stringify({ ...top, generation: top.generation + 1, users: [] }))
  const again = await openAt(t, { file })
  t.equal(await again.users.findByUsernameKey('alice'), null, 'the old journal is not replayed')
})

t.test('a journal line that is not a change stops start-up naming the line, and leaves both files untouched', async t => {
  const file = join(t.testdir(), 'auth-db.json')
  const store = await openAt(t, { file })
  await store.users.insert(makeUser('alice'))
  await store.close()
  const lines = (await readFile(`${file}.journal`, 'utf8')).split('\n')
  const broken = [lines[0], '{"nonsense": true}', ...lines.slice(1)].join('\n')
  await writeFile(`${file}.journal`, broken)
  await t.rejects(createEmbeddedStore({ file }), { message: /is corrupt: line 2 of the journal is not a change/ })
  t.equal(await readFile(`${file}.journal`, 'utf8'), broken, 'the journal as it was')
})

t.test('a day\'s and a month\'s counter windows survive a restart (budgets and daily tokens); a minute\'s start afresh', async t => {
  const file = join(t.testdir(), 'auth-db.json')
  const now = Date.parse('2026-12-02T10:00:00.000Z')
  const day = new Date(Date.parse('2026-12-02T00:00:00.000Z'))
  const month = new Date(Date.parse('2026-12-01T00:00:00.000Z'))
  const minute = new Date(now)
  const store = await openAt(t, { file, now: () => new Date(now) })
  await store.counters.add('tokens_per_day:u1', day, 1200, new Date(day.getTime() + 86_400_000))
  await store.counters.add('usd_per_month:u1', month, 3_500_000, new Date(Date.parse('2027-01-01T00:00:00.000Z')))
  await store.counters.add('tokens_per_minute:u1', minute, 50, new Date(now + 60_000))
  // Counter windows ride on the next save: a sign-up here, then close.
  await store.users.insert(makeUser('alice'))
  await store.counters.add('tokens_per_day:u1', day, 300, new Date(day.getTime() + 86_400_000))
  await store.close()
  const again = await openAt(t, { file, now: () => new Date(now) })
  t.equal(await again.counters.get('tokens_per_day:u1', day), 1500, 'the day\'s tokens, the change after the last save included (written at close)')
  t.equal(await again.counters.get('usd_per_month:u1', month), 3_500_000, 'the month\'s dollars')
  t.equal(await again.counters.get('tokens_per_minute:u1', minute), 0, 'a minute\'s window starts afresh')
})

t.test('an expired kept window leaves the file at the sweep', async t => {
  const file = join(t.testdir(), 'auth-db.json')
  let now = Date.parse('2026-12-02T10:00:00.000Z')
  const day = new Date(Date.parse('2026-12-02T00:00:00.000Z'))
  const store = await openAt(t, { file, now: () => new Date(now) })
  await store.counters.add('tokens_per_day:u1', day, 10, new Date(day.getTime() + 86_400_000))
  await store.users.insert(makeUser('alice'))
  t.equal((await readJson(file)).counters.length, 1)
  now += 2 * 86_400_000
  await store.users.insert(makeUser('bob'))
  t.same((await readJson(file)).counters, [], 'gone once expired')
})
