// npm run bench:ab -- <git ref> [validate|login|chat|key|stream|paced] : the gateway of this working tree (B) against the
// one at <ref> (A), under the same load, in alternating short rounds, so drifts of the host's speed hit both
// alike. Prints the medians of each side (requests/s, gateway CPU per request, p50/p99) and B/A.
// key: chat with a user's key and GEMINI_LIMITS on (bench/run.ts's row "user key with limits on"), 16 connections.
// Both run from source (.ts) as `npm start` runs them; A from a temporary git worktree of <ref>.
// Environment: AB_ROUNDS (default 7), BENCH_SECONDS per round (default 2), AB_CONNECTIONS (chat/stream, default 64),
// AB_ENV_A / AB_ENV_B: extra environment of each side, as NAME=value pairs separated by spaces (LOG_LEVEL=warn, say).
// AB_FLAGS_A / AB_FLAGS_B: Node flags of each side (default --max-semi-space-size=16, as npm start); with <ref> HEAD
// and a clean tree, that compares flags on the same code. Each side's peak RSS is printed too. Each side runs in its
// own memory cgroup of BENCH_MEMORY_LIMIT_MIB (default 512, the chart's limit; 0 for none), as run.ts does.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { median } from './load.ts'
import type { LoadResult } from './load.ts'
import { createProcessGroup, root } from './processes.ts'
import type { Started } from './processes.ts'
import { benchMemoryLimit } from './memory-limit.ts'
import { BENCH_LIMITS, GATEWAY_NODE_FLAGS, PACED_MODEL, accountLoads, chatLoad, gatewayEnv, userKey } from './workloads.ts'
import type { Workload } from './workloads.ts'

const [ref, mode = 'validate'] = process.argv.slice(2)
const MODES = ['validate', 'login', 'chat', 'key', 'stream', 'paced']
if (ref === undefined || !MODES.includes(mode)) {
  console.error(`usage: npm run bench:ab -- <git ref> [${MODES.join('|')}]`)
  process.exit(2)
}
const rounds = Number(process.env.AB_ROUNDS ?? 7)
const durationMs = Number(process.env.BENCH_SECONDS ?? 2) * 1000
const connections = Number(process.env.AB_CONNECTIONS ?? (mode === 'key' ? 16 : 64))

/** User plus system CPU time of a process so far, in microseconds (Linux /proc; clock ticks of 10 ms). */
function cpuMicros (pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10_000
}


const worktree = mkdtempSync(join(tmpdir(), 'gatehouse-ab-'))
execFileSync('git', ['worktree', 'add', '--detach', worktree, ref], { cwd: root, stdio: 'ignore' })
symlinkSync(join(root, 'node_modules'), join(worktree, 'node_modules'))
const processes = createProcessGroup()
const cleanups: Array<() => void> = []
try {
  const fake = await processes.start([join(root, 'bench/fake-server.ts')])
  const env = { ...gatewayEnv(fake.url, /token (\S+)/.exec(fake.line)?.[1] as string), ...(mode === 'key' ? { GEMINI_LIMITS: BENCH_LIMITS } : {}) }
  const flags = (side: 'A' | 'B'): string[] => process.env[`AB_FLAGS_${side}`]?.split(' ').filter(f => f !== '') ?? GATEWAY_NODE_FLAGS
  const limits = { A: benchMemoryLimit('A'), B: benchMemoryLimit('B') }
  cleanups.push(() => { limits.A.limit?.remove(); limits.B.limit?.remove() })
  process.stderr.write(`bench:ab: ${limits.A.description}\n`)
  const sideEnv = (side: 'A' | 'B'): Record<string, string> => Object.fromEntries((process.env[`AB_ENV_${side}`] ?? '').split(' ')
    .filter(pair => pair.includes('=')).map(pair => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]))
  const start = async (dir: string, side: 'A' | 'B'): Promise<Started> => await processes.start([...flags(side), join(dir, 'gateway/main.ts')], { ...env, ...sideEnv(side) }, dir, limits[side].limit)
  const sides: Record<'A' | 'B', Started> = { A: await start(worktree, 'A'), B: await start(root, 'B') }
  const workload = async (url: string): Promise<Workload> => mode === 'validate' || mode === 'login'
    ? (await accountLoads(url))[mode]
    : mode === 'key'
      ? chatLoad(url, false, connections, undefined, await userKey(url))
      : chatLoad(url, mode !== 'chat', connections, mode === 'paced' ? PACED_MODEL : undefined)
  const loads = { A: await workload(sides.A.url), B: await workload(sides.B.url) }
  const figures = { A: [] as Array<LoadResult & { cpu: number }>, B: [] as Array<LoadResult & { cpu: number }> }
  for (const side of ['A', 'B'] as const) await processes.load({ ...loads[side], durationMs: 1500, warmupMs: 0 })
  for (let round = 0; round < rounds; round++) {
    for (const side of round % 2 === 0 ? ['A', 'B'] as const : ['B', 'A'] as const) {
      const before = cpuMicros(sides[side].child.pid as number)
      const result = await processes.load({ ...loads[side], durationMs, warmupMs: 0 })
      figures[side].push({ ...result, cpu: (cpuMicros(sides[side].child.pid as number) - before) / result.requests })
    }
    process.stderr.write(`bench:ab: round ${round + 1}/${rounds}\n`)
  }
  const summary = (side: 'A' | 'B'): Record<string, number> => ({
    rps: median(figures[side].map(f => f.rps)),
    cpu_us_per_request: median(figures[side].map(f => f.cpu)),
    p50_ms: median(figures[side].map(f => f.p50)),
    p99_ms: median(figures[side].map(f => f.p99)),
    ...(mode === 'stream' || mode === 'paced' ? { ttfb_p50_ms: median(figures[side].map(f => f.ttfbP50 ?? NaN)) } : {}),
    errors: figures[side].reduce((n, f) => n + f.errors, 0),
    peak_rss_mb: Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${sides[side].child.pid as number}/status`, 'utf8'))?.[1] ?? NaN) / 1024,
  })
  const a = summary('A')
  const b = summary('B')
  const fmt = (n: number): string => n >= 100 ? n.toFixed(0) : n.toFixed(2)
  console.log(`\n${mode}, ${rounds} rounds of ${durationMs / 1000} s each, medians\n| side | ${Object.keys(a).join(' | ')} |\n| --- |${' --- |'.repeat(Object.keys(a).length)}`)
  console.log(`| A (${ref} ${[...flags('A'), process.env.AB_ENV_A ?? ''].join(' ').trim()}) | ${Object.values(a).map(fmt).join(' | ')} |`)
  console.log(`| B (working tree ${[...flags('B'), process.env.AB_ENV_B ?? ''].join(' ').trim()}) | ${Object.values(b).map(fmt).join(' | ')} |`)
  console.log(`\nB/A requests/s ${(b.rps / a.rps).toFixed(3)}, CPU per request ${(b.cpu_us_per_request / a.cpu_us_per_request).toFixed(3)}`)
} finally {
  await processes.stopAll()
  for (const cleanup of cleanups) cleanup()
  execFileSync('git', ['worktree', 'remove', '--force', worktree], { cwd: root, stdio: 'ignore' })
  rmSync(worktree, { recursive: true, force: true })
}
