// One Node story (README, "The two commands"): package.json's `engines` is what the strictest installed dependency
// asks, the README names it, and the Node the repository pins (the `node` devDependency) and the image satisfy it.
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import semver from 'semver'
import { NODE, ROOT } from '../support/gateway.ts'

interface Manifest { engines?: { node?: string }, version?: string, devDependencies?: Record<string, string> }
const read = (file: string): unknown => JSON.parse(readFileSync(join(ROOT, file), 'utf8'))
const pkg = read('package.json') as Manifest
const lock = read('package-lock.json') as { packages: Record<string, Manifest> }
const engines = pkg.engines?.node ?? ''
// What `npm ci` installs, on every platform the lock serves (each entry carries its package's `engines`).
const dependencies = Object.entries(lock.packages).filter(([path, entry]) => path !== '' && entry.engines?.node !== undefined)
  .map(([path, entry]) => ({ name: path.replace(/^.*node_modules\//, ''), range: entry.engines!.node! }))

t.test('every installed dependency accepts every Node that engines admits, so npm install warns of none', async t => {
  t.ok(semver.validRange(engines), `engines.node is a range (${engines})`)
  t.ok(dependencies.length > 100, 'the lock gives the dependencies\' engines')
  const refused = dependencies.filter(d => !semver.subset(engines, d.range)).map(d => `${d.name} wants ${d.range}`)
  t.same(refused, [], 'no dependency refuses a Node that engines admits')
  t.equal((lock.packages[''] as Manifest).engines?.node, engines, 'the lock records the same engines')
})

t.test('engines asks no more than the strictest dependency: its lowest Node is theirs', async t => {
  const strictest = dependencies.map(d => semver.minVersion(d.range)!).reduce((a, b) => semver.gt(a, b) ? a : b)
  t.equal(semver.minVersion(engines)?.version, strictest.version, `the lowest Node engines admits is ${strictest.version}`)
})

t.test('the README names the engines range and its lowest Node', async t => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const lowest = semver.minVersion(engines)!
  t.ok(readme.includes(`\`engines\`: \`${engines}\``), 'the range, verbatim')
  t.match(readme, new RegExp(`Node\\.js ${lowest.major}\\.${lowest.minor} or newer on PATH`), 'the lowest Node, as the install\'s requirement')
  t.notMatch(readme, /Node\.js 20 or newer/, 'not the Node 20 it used to name')
})

t.test('the pinned Node (the node devDependency that runs the scripts) and the image\'s Node satisfy engines', async t => {
  const pinned = pkg.devDependencies?.node ?? ''
  const installed = (lock.packages['node_modules/node'] as Manifest).version ?? ''
  t.ok(semver.subset(pinned, engines), `the devDependency's range (${pinned}) is inside engines`)
  t.ok(semver.satisfies(installed, pinned), `the locked node (${installed}) is the devDependency's`)
  const running = execFileSync(NODE, ['--version'], { encoding: 'utf8' }).trim()
  t.equal(running, `v${installed}`, 'node_modules/.bin/node is the locked one')
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  t.ok(readme.includes(`pins Node ${semver.major(installed)} LTS as a devDependency`), 'the README names its major')
  const image = /ARG NODE_IMAGE=node:(\d+)-/.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))
  t.equal(Number(image?.[1]), semver.major(installed), 'the Dockerfile\'s image runs the same major')
})

t.test('allowScripts reviews every dependency\'s install script, and the README says why for each', async t => {
  const allow = (read('package.json') as { allowScripts?: Record<string, boolean> }).allowScripts ?? {}
  const withScripts = Object.entries(lock.packages as Record<string, { hasInstallScript?: boolean }>)
    .filter(([, entry]) => entry.hasInstallScript === true).map(([path]) => path.replace(/^.*node_modules\//, ''))
  t.same(withScripts.filter(name => typeof allow[name] !== 'boolean'), [], 'npm lists no install script as unreviewed')
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  for (const name of Object.keys(allow)) t.ok(readme.includes(`\`${name}\`'s`) || readme.includes(`${name}'s (`), `the README explains ${name}'s entry`)
})
