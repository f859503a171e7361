// What Gatehouse costs before its first request (issue 24), beside bare Node and the bare relay (bench/relay.ts)
// measured in the same run, in alternating rounds:
//   install: the packed library (npm pack) installed into an empty project: packages and MB on disk
//   import:  `await import('gatehouse')` from that project: milliseconds and RSS, against a bare Node process
//   gateway: the built gateway (dist/, as the image's CMD starts it) on the embedded store with no trace
//            exporter: time from spawn to its first 2xx /health, and RSS 1 s later; the relay and a bare node:http
//            server the same way (the relay's first 2xx is one request relayed to a stub upstream)
// Runs alone (`npm run build && node bench/footprint.ts`, prints a table and one JSON line) or inside
// `npm run bench` (bench/run.ts), which adds its rows to bench/results.json. FOOTPRINT_ROUNDS (default 5).
import { execFile, spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { stripTypeScriptTypes } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { median } from './load.ts'
import { GATEWAY_NODE_FLAGS, gatewayEnv } from './workloads.ts'

const run = promisify(execFile)
const root = join(import.meta.dirname, '..')
const node = process.execPath

export interface FootprintRow { name: string, baseline: string, figures: Record<string, number>, ratios: Record<string, number>, targets: Record<string, string> }

/** Packages (folders with a package.json) and bytes under a node_modules folder, nested ones included. */
async function treeSize (dir: string): Promise<{ packages: number, bytes: number }> {
  let packages = 0
  let bytes = 0
  async function walk (path: string, inModules: boolean): Promise<void> {
    for (const entry of await readdir(path, { withFileTypes: true })) {
      const full = join(path, entry.name)
      if (entry.isSymbolicLink()) continue
      if (entry.isDirectory()) {
        if (inModules && !entry.name.startsWith('.')) {
          if (entry.name.startsWith('@')) { await walk(full, true); continue }
          packages++
        }
        await walk(full, entry.name === 'node_modules')
      } else {
        bytes += (await lstat(full)).size
      }
    }
  }
  await walk(dir, true)
  return { packages, bytes }
}

/** npm pack of the built tree (dist/ must exist), installed into an empty project; its folder. */
async function installPacked (dir: string): Promise<{ packages: number, mb: number }> {
  const env = { ...process.env, PATH: `${join(root, 'node_modules/.bin')}:${process.env.PATH ?? ''}`, npm_config_update_notifier: 'false' }
  const { stdout } = await run('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', dir], { cwd: root, env, maxBuffer: 1 << 24 })
  const tarball = join(dir, stdout.trim().split('\n').pop() as string)
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }))
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], { cwd: dir, env, maxBuffer: 1 << 24 })
  const { packages, bytes } = await treeSize(join(dir, 'node_modules'))
  return { packages, mb: bytes / 1048576 }
}

/** One fresh process importing `specifier` (or nothing) from `cwd`: the import's milliseconds and the RSS after it. */
async function importOnce (cwd: string, specifier: string | undefined): Promise<{ ms: number, rssMb: number }> {
  const script = [
    'const t = performance.now()',
    specifier === undefined ? '' : `await import(${JSON.stringify(specifier)})`,
    'const ms = performance.now() - t',
    'console.log(JSON.stringify({ ms, rssMb: process.memoryUsage().rss / 1048576 }))',
  ].join('\n')
  const { stdout } = await run(node, ['--input-type=module', '-e', script], { cwd })
  return JSON.parse(stdout) as { ms: number, rssMb: number }
}

/** A port free right now on 127.0.0.1, for a server whose start-up is timed by polling it. */
async function freePort (): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  await new Promise(resolve => server.close(resolve))
  return port
}

async function rssMb (child: ChildProcess): Promise<number> {
  const status = await readFile(`/proc/${child.pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024
}

/**
 * Spawns `node args` listening on `port`, polls `path` every 2 ms until it answers 2xx: the milliseconds since the
 * spawn; then the RSS after `idleMs` with no request, and the process stopped.
 */
async function startOnce (args: string[], env: Record<string, string>, port: number, path: string, idleMs = 1000): Promise<{ startMs: number, rssMb: number }> {
  const started = performance.now()
  const child = spawn(node, args, { cwd: root, env: { PATH: process.env.PATH ?? '', ...env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'inherit'] })
  try {
    let exited = false
    child.once('exit', () => { exited = true })
    for (;;) {
      if (exited) throw new Error(`${args.join(' ')} exited before it answered`)
      if (performance.now() - started > 30_000) throw new Error(`${args.join(' ')} did not answer ${path} in 30 s`)
      const ok = await fetch(`http://127.0.0.1:${port}${path}`).then(async r => { await r.arrayBuffer(); return r.ok }, () => false)
      if (ok) break
      await new Promise(resolve => setTimeout(resolve, 2))
    }
    const startMs = performance.now() - started
    await new Promise(resolve => setTimeout(resolve, idleMs))
    return { startMs, rssMb: await rssMb(child) }
  } finally {
    child.kill('SIGKILL')
    if (child.exitCode === null && child.signalCode === null) await once(child, 'exit')
  }
}

/** Each runner once per round, the order reversed every other round; every runner's results in round order. */
async function alternating<T> (rounds: number, runners: Array<() => Promise<T>>): Promise<T[][]> {
  const results = runners.map(() => [] as T[])
  for (let round = 0; round < rounds; round++) {
    const order = runners.map((_, i) => i)
    if (round % 2 === 1) order.reverse()
    for (const i of order) results[i].push(await runners[i]())
  }
  return results
}

const BARE_SERVER = "require('node:http').createServer((q, s) => s.end('ok')).listen(Number(process.env.PORT), '127.0.0.1')"

/** Every footprint row; dist/ must be built (`npm run build`). */
export async function footprint (rounds = Math.max(1, Number(process.env.FOOTPRINT_ROUNDS ?? 5))): Promise<FootprintRow[]> {
  const rows: FootprintRow[] = []
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-footprint-'))
  // A stub upstream for the relay: every request answered 200 at once.
  const upstream = createServer((req, res) => { req.resume(); req.on('end', () => res.end('{}')) }).listen(0, '127.0.0.1')
  await once(upstream, 'listening')
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`
  try {
    const install = await installPacked(dir)
    rows.push({ name: 'library install', baseline: 'npm pack, then npm install of the tarball into an empty project', figures: { packages: install.packages, mb: install.mb }, ratios: {}, targets: { mb: '<= 15' } })

    const [bare, imported] = await alternating(rounds, [async () => await importOnce(dir, undefined), async () => await importOnce(dir, 'gatehouse')])
    const importRss = median(imported.map(r => r.rssMb))
    const bareRss = median(bare.map(r => r.rssMb))
    rows.push({
      name: "import('gatehouse')",
      baseline: 'a bare Node process, same script without the import',
      figures: { import_ms: median(imported.map(r => r.ms)), rss_mb: importRss, bare_rss_mb: bareRss, rss_over_bare_mb: median(imported.map((r, i) => r.rssMb - bare[i].rssMb)) },
      ratios: {},
      targets: { import_ms: '<= 150', rss_over_bare_mb: '<= 20' },
    })

    // The relay as JavaScript, as the built gateway is (bench/run.ts, asJavaScript says why).
    const relayJs = join(root, 'dist/bench/relay.js')
    await mkdir(join(root, 'dist/bench'), { recursive: true })
    await writeFile(relayJs, stripTypeScriptTypes(await readFile(join(root, 'bench/relay.ts'), 'utf8')))
    const gatewayVars = { ...gatewayEnv(upstreamUrl, `${upstreamUrl}/token`), LOG_LEVEL: 'warn' }
    const [plain, relayed, gateway] = await alternating(rounds, [
      async () => await startOnce([...GATEWAY_NODE_FLAGS, '-e', BARE_SERVER], {}, await freePort(), '/'),
      async () => await startOnce([...GATEWAY_NODE_FLAGS, relayJs, upstreamUrl], {}, await freePort(), '/health'),
      async () => await startOnce([...GATEWAY_NODE_FLAGS, '--import', join(root, 'dist/gateway/tracing.js'), join(root, 'dist/gateway/main.js')], gatewayVars, await freePort(), '/health'),
    ])
    const startOf = (r: { startMs: number }): number => r.startMs
    const rssOf = (r: { rssMb: number }): number => r.rssMb
    rows.push({
      name: 'gateway start-up to first 2xx /health',
      baseline: 'the bare relay (its first relayed 2xx) in the same rounds; a bare node:http server for reference; embedded store, no trace exporter',
      figures: { start_ms: median(gateway.map(startOf)), relay_start_ms: median(relayed.map(startOf)), bare_node_start_ms: median(plain.map(startOf)) },
      ratios: { start_vs_relay: median(gateway.map((g, i) => g.startMs / relayed[i].startMs)) },
      targets: { start_vs_relay: '<= 2.5' },
    })
    rows.push({
      name: 'gateway idle RSS after start',
      baseline: 'the bare relay 1 s after its first 2xx, in the same rounds; a bare node:http server for reference; embedded store, no trace exporter',
      figures: { rss_mb: median(gateway.map(rssOf)), relay_rss_mb: median(relayed.map(rssOf)), bare_node_rss_mb: median(plain.map(rssOf)), rss_over_relay_mb: median(gateway.map((g, i) => g.rssMb - relayed[i].rssMb)) },
      ratios: {},
      targets: { rss_over_relay_mb: '<= 20' },
    })
    return rows
  } finally {
    upstream.close()
    await rm(dir, { recursive: true, force: true })
  }
}

if (import.meta.main) {
  const rows = await footprint()
  const fmt = (n: number): string => Number.isFinite(n) ? (Math.abs(n) >= 100 ? n.toFixed(0) : n.toFixed(1)) : '-'
  console.log('| footprint | figures | ratio | target |\n| --- | --- | --- | --- |')
  for (const r of rows) {
    const figures = Object.entries(r.figures).map(([k, v]) => `${k} ${fmt(v)}`).join(', ')
    const ratios = Object.entries(r.ratios).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ') || '-'
    const targets = Object.entries(r.targets).map(([k, v]) => `${k} ${v}`).join(', ') || '-'
    console.log(`| ${r.name} | ${figures} | ${ratios} | ${targets} |`)
  }
  console.log(JSON.stringify({ date: new Date().toISOString(), node: process.version, rows }))
}
