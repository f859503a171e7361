// `npm start` and `npm test` build the console first; scripts/build-console.ts skips a build whose sources and
// outputs are unchanged since the last one (README, "Web console"), so a start does not pay for esbuild each time.
import t from 'tap'
import { appendFile, cp, mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { buildConsole } from '../../scripts/build-console.ts'
import { ROOT } from '../support/gateway.ts'

t.test('a second build with no change does nothing and says so; a changed source or a missing output rebuilds', async t => {
  // Inside the package, so the copied sources resolve preact and uPlot from its node_modules as console/src does.
  await mkdir(join(ROOT, '.tap'), { recursive: true })
  const dir = await mkdtemp(join(ROOT, '.tap', 'console-build-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const src = join(dir, 'src')
  await cp(join(ROOT, 'console/src'), src, { recursive: true })
  const options = { root: ROOT, src, out: join(dir, 'build'), stamp: join(dir, 'stamp.json') }

  const first = await buildConsole(options)
  t.equal(first.built, true, 'the first build builds')
  const script = join(options.out, 'app.js')
  const builtAt = (await stat(script)).mtimeMs

  const second = await buildConsole(options)
  t.equal(second.built, false, 'nothing changed: no build')
  t.match(second.message, /is up to date: no console source changed since the last build/, 'and it says so')
  t.equal((await stat(script)).mtimeMs, builtAt, 'the built script is left as it was')

  await appendFile(join(src, 'style.css'), '\n.build-script-test-marker { color: red }\n')
  const afterEdit = await buildConsole(options)
  t.equal(afterEdit.built, true, 'a changed source rebuilds')
  t.match(await readFile(join(options.out, 'app.css'), 'utf8'), /build-script-test-marker/, 'with the change in the output')

  await rm(join(options.out, 'app.js'))
  t.equal((await buildConsole(options)).built, true, 'a missing output rebuilds')
  t.equal((await buildConsole({ ...options, force: true })).built, true, 'force rebuilds an up-to-date console')
  t.equal((await buildConsole(options)).built, false, 'and the next start skips again')
})
