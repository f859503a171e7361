import t from 'tap'
import { execFile, spawn } from 'node:child_process'
import { mkdtemp, writeFile, rm, readdir, mkdir, copyFile, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { once } from 'node:events'

// The published package as a consumer gets it: npm pack, lint the tarball (publint, and attw for the types
// under every module resolution), install it into an empty project, type-check a consumer and the type tests
// of test/types against its declarations, mount it in node:http, sign up and log in. All offline after `npm ci`.
const run = promisify(execFile)
const root = resolve(import.meta.dirname, '../..')
const bin = join(root, 'node_modules/.bin')
const env = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}`, npm_config_update_notifier: 'false' }

// Build, install and two type-checks take a minute alone and up to three on a loaded 2-core machine.
t.setTimeout(300_000)

// One tarball for every test below (npm pack builds dist/ through prepack), installed into `dir` once.
const dir = await mkdtemp(join(tmpdir(), 'gatehouse-pack-'))
t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
const packed = run('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: root, env, maxBuffer: 1 << 24 })
  .then(({ stdout }) => stdout.trim().split('\n').pop() as string)
let installing: Promise<void> | undefined
async function installed (): Promise<void> {
  installing ??= (async () => {
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }))
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(dir, await packed)], { cwd: dir, env, maxBuffer: 1 << 24 })
  })()
  await installing
}

/** Runs a checker and gives its exit code and output, so a failure shows what it found. */
async function check (command: string, args: string[], cwd = dir): Promise<{ code: number, output: string }> {
  try {
    const { stdout, stderr } = await run(join(bin, command), args, { cwd, env: { ...env, NO_COLOR: '1', FORCE_COLOR: '0' }, maxBuffer: 1 << 24 })
    return { code: 0, output: stdout + stderr }
  } catch (err) {
    const { code, stdout, stderr } = err as { code: number, stdout: string, stderr: string }
    return { code, output: `${stdout}${stderr}` }
  }
}

t.test('publint finds nothing to fix in the packed package (warnings count as errors)', async t => {
  const { code, output } = await check('publint', ['run', '--strict', await packed])
  t.equal(code, 0, 'publint exits 0', { output })
})

t.test('attw: the packed types resolve for node10, node16 (from ESM and CJS) and bundlers, without fetching anything', async t => {
  // The package is ESM only (engines: Node 22.19 or 24+, where require() loads ES modules), so a require()
  // resolving to ESM is expected; every other problem fails. No @types lookup: that would need the registry.
  const { code, output } = await check('attw', ['--no-definitely-typed', '--ignore-rules', 'cjs-resolves-to-esm', '--format', 'ascii', '--no-emoji', await packed])
  t.equal(code, 0, 'attw exits 0', { output })
  t.match(output, /No problems found/)
})

t.test('installing the library brings its own dependencies only, none of the gateway\'s (docs/configuration.md, "What each piece costs")', async t => {
  await installed()
  const installedNames: string[] = []
  for (const name of await readdir(join(dir, 'node_modules'))) {
    if (name.startsWith('.')) continue
    if (name.startsWith('@')) for (const inner of await readdir(join(dir, 'node_modules', name))) installedNames.push(`${name}/${inner}`)
    else installedNames.push(name)
  }
  t.ok(installedNames.includes('joi') && installedNames.includes('undici') && installedNames.includes('@node-rs/argon2'), 'the library\'s dependencies are installed')
  const gatewayOnly = installedNames.filter(name => /^(@hapi\/hapi|@opentelemetry\/.*|pino|prom-client|mongodb|bson|google-auth-library|gaxios)$/.test(name))
  t.same(gatewayOnly, [], 'no Hapi, OpenTelemetry, pino, prom-client, MongoDB driver or Google auth library')
})

t.test('the type tests of the published API pass against the packed declarations', async t => {
  await installed()
  const tests = join(dir, 'typetests')
  await mkdir(tests, { recursive: true })
  const files = (await readdir(join(root, 'test/types'))).filter(f => f.endsWith('.tst.ts'))
  for (const file of files) await copyFile(join(root, 'test/types', file), join(tests, file))
  await symlink(join(root, 'node_modules/tstyche'), join(dir, 'node_modules/tstyche'), 'dir')
  // hapiPlugin's types are Hapi's: a user who mounts the library in Hapi has installed it (an optional peer dependency).
  await mkdir(join(dir, 'node_modules/@hapi'), { recursive: true })
  await symlink(join(root, 'node_modules/@hapi/hapi'), join(dir, 'node_modules/@hapi/hapi'), 'dir')
  await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', target: 'es2023', strict: true, noEmit: true, resolveJsonModule: true, types: ['node'], typeRoots: [join(root, 'node_modules/@types')], skipLibCheck: true }, include: ['typetests'] }))
  const { code, output } = await check('tstyche', [])
  t.equal(code, 0, 'tstyche exits 0', { output })
  t.match(output, new RegExp(`Test files:\\s+${files.length} passed`))
})

t.test('the packed library installs, type-checks and serves sign-up and login in node:http', async t => {
  t.match(await packed, /^gatehouse-.*\.tgz$/, 'npm pack produced a tarball')
  await installed()
  const files = await readdir(join(dir, 'node_modules/gatehouse/dist/lib'))
  t.ok(files.includes('index.js') && files.includes('index.d.ts'), 'the package ships JS and type declarations')
  t.ok((await readdir(join(dir, 'node_modules/gatehouse/docs'))).includes('errors.md'), 'the package ships docs/, which its README links to')

  // A consumer's TypeScript sees the public API with its types.
  await writeFile(join(dir, 'consumer.ts'), [
    "import { createAuthService, createEmbeddedStore, createNodeListener, createFetchHandler, createProxy, createMongoStore, GatehouseError } from 'gatehouse'",
    "import type { Route, HandlerRequest, Store } from 'gatehouse'",
    'const store: Store = await createEmbeddedStore({})',
    'const auth = createAuthService({ store })',
    'const routes: Route[] = auth.routes',
    'const listener: (req: any, res: any) => void = createNodeListener(routes)',
    'const handler: (r: Request) => Promise<Response> = createFetchHandler(routes)',
    "const req: HandlerRequest = { method: 'GET', path: '/', params: {}, query: {}, headers: {} }",
    'void [listener, handler, req, createProxy, createMongoStore, GatehouseError]',
    '// @ts-expect-error store is required',
    'createAuthService({})',
    ''
  ].join('\n'))
  await writeFile(join(dir, 'tsconfig.consumer.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', target: 'es2023', strict: true, noEmit: true, types: ['node'], typeRoots: [join(root, 'node_modules/@types')], skipLibCheck: true }, files: ['consumer.ts'] }))
  await t.resolves(run(join(bin, 'tsc'), ['-p', join(dir, 'tsconfig.consumer.json')], { cwd: dir, env }), 'a consumer type-checks against the published declarations')

  await writeFile(join(dir, 'server.js'), [
    "import { createServer } from 'node:http'",
    "import { createAuthService, createConsole, createEmbeddedStore, createNodeListener } from 'gatehouse'",
    'const store = await createEmbeddedStore({})',
    "const auth = createAuthService({ store, adminPassword: 'an-admin-password' })",
    'await auth.ensureSystemUser()',
    'const server = createServer(createNodeListener([auth.routeTable, createConsole({ auth }).routeTable]))',
    "server.listen(0, '127.0.0.1', () => console.log('PORT ' + server.address().port))",
    "process.on('SIGTERM', () => { server.close(); process.exit(0) })",
    ''
  ].join('\n'))
  const child = spawn(join(bin, 'node'), ['server.js'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => { child.kill('SIGKILL') })
  let out = ''
  child.stdout.setEncoding('utf8')
  while (!/PORT \d+/.test(out)) {
    const [chunk] = await once(child.stdout, 'data') as [string]
    out += chunk
  }
  const base = `http://127.0.0.1:${/PORT (\d+)/.exec(out)?.[1] ?? ''}/v1/api`

  const signup = await fetch(`${base}/auth/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'packaged', password: 'correct horse battery' }) })
  t.equal(signup.status, 201, 'sign-up through the installed package answers 201')
  const login = await fetch(`${base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': 'pack-test' }, body: JSON.stringify({ username: 'packaged', password: 'correct horse battery' }) })
  t.equal(login.status, 200, 'login answers 200')
  const session = await login.json() as Record<string, unknown>
  t.equal(session.token_type, 'bearer')
  t.match(session.access_token, /^\S{20,}$/)
  // The console's built files ship in the package and are found from dist/lib (docs/console.md, "Assets").
  const page = await fetch(base.replace('/v1/api', '/console/'))
  t.equal(page.status, 200, 'the installed package serves the console page')
  t.equal((await fetch(base.replace('/v1/api', '/console/assets/app.js'))).status, 200, 'and its script')
})

t.test('the packed library is one bundled module: importing it loads no other JavaScript file of the package (scripts/bundle-lib.ts)', async t => {
  await installed()
  // Every module Node loads while importing the package, recorded by a load hook; the model file is data, read once.
  const script = [
    "import { registerHooks } from 'node:module'",
    'const loaded = []',
    "registerHooks({ load (url, context, next) { if (url.includes('/node_modules/gatehouse/')) loaded.push(url.slice(url.indexOf('/node_modules/gatehouse/') + 24)); return next(url, context) } })",
    "await import('gatehouse')",
    'console.log(JSON.stringify(loaded))',
  ].join('\n')
  const { stdout } = await run(join(bin, 'node'), ['--input-type=module', '-e', script], { cwd: dir, env })
  t.same(JSON.parse(stdout), ['dist/lib/index.js'], 'one module of the package is loaded')
})
