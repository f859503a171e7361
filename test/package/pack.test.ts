import t from 'tap'
import { execFile, spawn } from 'node:child_process'
import { mkdtemp, writeFile, rm, readdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { once } from 'node:events'

// The published package as a consumer gets it: npm pack, install the tarball into an empty project,
// type-check a consumer against its declarations, mount it in node:http, sign up and log in.
const run = promisify(execFile)
const root = resolve(import.meta.dirname, '../..')
const bin = join(root, 'node_modules/.bin')
const env = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}`, npm_config_update_notifier: 'false' }

t.test('the packed library installs, type-checks and serves sign-up and login in node:http', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-pack-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })

  const { stdout } = await run('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: root, env, maxBuffer: 1 << 24 })
  const tarball = stdout.trim().split('\n').pop() as string
  t.match(tarball, /^gatehouse-.*\.tgz$/, 'npm pack produced a tarball')

  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }))
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(dir, tarball)], { cwd: dir, env, maxBuffer: 1 << 24 })
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
  await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', target: 'es2023', strict: true, noEmit: true, types: ['node'], typeRoots: [join(root, 'node_modules/@types')], skipLibCheck: true }, files: ['consumer.ts'] }))
  await t.resolves(run(join(bin, 'tsc'), ['-p', dir], { cwd: dir, env }), 'a consumer type-checks against the published declarations')

  await writeFile(join(dir, 'server.js'), [
    "import { createServer } from 'node:http'",
    "import { createAuthService, createEmbeddedStore, createNodeListener } from 'gatehouse'",
    'const store = await createEmbeddedStore({})',
    "const auth = createAuthService({ store, adminPassword: 'an-admin-password' })",
    'await auth.ensureSystemUser()',
    'const server = createServer(createNodeListener(auth.routes))',
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
})
