import t from 'tap'
import { readdir, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { removeStaleTempFiles, writeFileAtomically } from '../../lib/fs/atomic-write.ts'

// The one temp-then-rename writer the embedded store and the credentials write-back share (lib/fs/atomic-write.ts).
t.test('an atomic write replaces the whole file with exactly the given mode and leaves no temp file', async t => {
  const dir = t.testdir({ 'data.json': 'old' })
  const file = join(dir, 'data.json')
  const umask = process.umask(0o077)
  t.teardown(() => { process.umask(umask) })
  await writeFileAtomically(file, 'new', 0o644)
  t.equal(await readFile(file, 'utf8'), 'new')
  t.equal((await stat(file)).mode & 0o777, 0o644, 'the umask does not narrow the mode')
  await writeFileAtomically(join(dir, 'fresh.json'), 'x', 0o600)
  t.equal((await stat(join(dir, 'fresh.json'))).mode & 0o777, 0o600)
  t.same((await readdir(dir)).sort(), ['data.json', 'fresh.json'])
})

t.test('an atomic write keeps no copy of its text once written (the embedded store saves its whole file on every change)', async t => {
  const dir = t.testdir({})
  const file = join(dir, 'data.json')
  const text = `${'é'.repeat(2 * 2 ** 20)}end`
  await writeFileAtomically(file, 'warm', 0o600)
  const before = process.memoryUsage().arrayBuffers
  await writeFileAtomically(file, text, 0o600)
  const held = process.memoryUsage().arrayBuffers - before
  t.ok(held < 2 ** 20, `${held} bytes of ArrayBuffers still held after writing ${Buffer.byteLength(text)} bytes`)
  t.equal(await readFile(file, 'utf8'), text, 'the whole text, multi-byte characters included')
})

t.test('a failed atomic write throws the error with its code, removes its temp file and keeps the old file', async t => {
  const dir = t.testdir({ 'data.json': { 'inside.txt': 'a directory where the file should be' } })
  const target = join(dir, 'data.json')
  const err = await writeFileAtomically(target, 'new', 0o600).catch(e => e)
  t.ok(err instanceof Error)
  t.match(err.code, /^E[A-Z]+$/)
  t.same(await readdir(dir), ['data.json'], 'no temp file left')
  t.equal(await readFile(join(target, 'inside.txt'), 'utf8'), 'a directory where the file should be')
  const missing = await writeFileAtomically(join(dir, 'no-such-dir', 'f.json'), 'x', 0o600).catch(e => e)
  t.equal(missing.code, 'ENOENT')
})

t.test('temp files a killed writer left are removed, other files are not', async t => {
  const dir = t.testdir({ 'data.json': '{}', 'data.json.tmp-123-1': '{"half": ', 'other.json.tmp-1-1': 'x' })
  t.same(await removeStaleTempFiles(join(dir, 'data.json')), ['data.json.tmp-123-1'])
  t.same((await readdir(dir)).sort(), ['data.json', 'other.json.tmp-1-1'])
})
