// npm run bench: every figure is a ratio against a baseline measured in the same run on the same machine.
//   accounts: GET /auth/validate vs a bare Hapi route; POST /auth/login vs raw argon2 verifications
//   proxy:    chat completions vs calling the fake upstream directly (concurrency 1, 16, 64);
//             streaming (20 chunks, back to back and paced) time to first byte and streams/s, with a bare byte
//             relay as a reference for the first; the gateway's peak RSS
// The gateway measured is the built one (dist/), started as the container image starts it. Every server and
// the load generator run in their own processes. Prints a table, writes bench/results.json.
import type { ChildProcess } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { LoadResult } from './load.ts'
import { createProcessGroup, root } from './processes.ts'
import { GATEWAY_NODE_FLAGS, PACED_CHUNK_MS, PACED_MODEL, accountLoads, chatLoad, directLoad, gatewayEnv } from './workloads.ts'
import type { Workload } from './workloads.ts'

const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const durationMs = seconds * 1000
/** BENCH_ONLY=accounts or proxy runs one part; BENCH_SECONDS sets each figure's duration (default 5). */
const only = process.env.BENCH_ONLY
const processes = createProcessGroup()
const startProcess = processes.start
const runJson = processes.runJson

function log (message: string): void { process.stderr.write(`bench: ${message}\n`) }

async function load (spec: Workload): Promise<LoadResult> {
  return await processes.load({ warmupMs: 1000, ...spec, durationMs })
}

async function peakRssMb (child: ChildProcess): Promise<number> {
  const status = await readFile(`/proc/${child.pid}/status`, 'utf8')
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? NaN)
  return kb / 1024
}

const rows: Array<{ name: string, baseline: string, figures: Record<string, number>, ratios: Record<string, number>, targets: Record<string, string> }> = []
function row (name: string, baseline: string, figures: Record<string, number>, ratios: Record<string, number>, targets: Record<string, string> = {}): void {
  rows.push({ name, baseline, figures, ratios, targets })
}

try {
  log('starting the fake upstream, a bare Hapi server and the gateway')
  const fake = await startProcess([join(root, 'bench/fake-server.ts')])
  const fakeUrl = fake.url
  const tokenUri = /token (\S+)/.exec(fake.line)?.[1] as string
  const bare = await startProcess([join(root, 'bench/bare-hapi.ts')])
  const bareUrl = bare.url
  // The built gateway, started as the container image starts it (Dockerfile CMD): what users deploy.
  const built = join(root, 'dist/gateway/main.js')
  if (!existsSync(built)) throw new Error(`${built} is missing: npm run bench builds it first (npm run build)`)
  // GATEWAY_NODE_OPTIONS: extra Node flags for the gateway only (e.g. --max-old-space-size=96), to measure their effect.
  const nodeOptions = process.env.GATEWAY_NODE_OPTIONS
  const gateway = await startProcess([...GATEWAY_NODE_FLAGS, '--import', join(root, 'dist/gateway/tracing.js'), built],
    { ...gatewayEnv(fakeUrl, tokenUri), ...(nodeOptions !== undefined ? { NODE_OPTIONS: nodeOptions } : {}) })
  const gatewayUrl = gateway.url

  // Accounts: one user, one session.
  const accounts = await accountLoads(gatewayUrl)

  if (only === undefined || only === 'accounts') {
  log(`accounts: validate vs bare Hapi route (${seconds}s each, 16 connections)`)
  const bareResult = await load({ url: `${bareUrl}/bare`, connections: 16 })
  const validate = await load(accounts.validate)
  row('GET /v1/api/auth/validate', 'bare Hapi route, constant JSON', { rps: validate.rps, p50_ms: validate.p50, p99_ms: validate.p99, baseline_rps: bareResult.rps, baseline_p50_ms: bareResult.p50, baseline_p99_ms: bareResult.p99, errors: validate.errors },
    { rps: validate.rps / bareResult.rps }, { rps: '>= 0.6' })

  log('accounts: login vs raw argon2 verifications (8 concurrent)')
  const argon = await runJson<{ rps: number }>('bench/argon2-rate.ts', { connections: 8, durationMs })
  const login = await load(accounts.login)
  row('POST /v1/api/auth/login', 'raw @node-rs/argon2 verify, same parameters', { rps: login.rps, p50_ms: login.p50, p99_ms: login.p99, baseline_rps: argon.rps, errors: login.errors },
    { rps: login.rps / argon.rps }, { rps: '>= 0.85' })
  }

  if (only === undefined || only === 'proxy') {
  for (const connections of [1, 16, 64]) {
    log(`proxy: chat completions vs direct fake, concurrency ${connections}`)
    const direct = await load(directLoad(fakeUrl, false, connections))
    const proxied = await load(chatLoad(gatewayUrl, false, connections))
    const targets: Record<string, string> = connections === 1 ? { added_p50_ms: '<= 0.5' } : connections === 64 ? { rps: '>= 0.15', p99_ms: '< 20' } : {}
    row(`POST /v1/chat/completions c=${connections}`, 'POST fake v1internal:generateContent directly',
      { rps: proxied.rps, p50_ms: proxied.p50, p99_ms: proxied.p99, baseline_rps: direct.rps, baseline_p50_ms: direct.p50, baseline_p99_ms: direct.p99, added_p50_ms: proxied.p50 - direct.p50, errors: proxied.errors },
      { rps: proxied.rps / direct.rps }, targets)
  }

  log('proxy: streaming, 20 chunks back to back, concurrency 64: direct, through a bare byte relay, through the gateway')
  const directStream = await load(directLoad(fakeUrl, true, 64))
  const relay = await startProcess([join(root, 'bench/relay.ts'), fakeUrl])
  const relayed = await load({ ...directLoad(fakeUrl, true, 64), url: `${relay.url}/relay` })
  await processes.stop(relay)
  const proxiedStream = await load(chatLoad(gatewayUrl, true, 64))
  row('streaming chat completions c=64, chunks back to back', 'streamGenerateContent on the fake directly; a bare byte relay for reference',
    { streams_per_s: proxiedStream.rps, ttfb_p50_ms: proxiedStream.ttfbP50 ?? NaN, baseline_streams_per_s: directStream.rps, baseline_ttfb_p50_ms: directStream.ttfbP50 ?? NaN, added_ttfb_p50_ms: (proxiedStream.ttfbP50 ?? NaN) - (directStream.ttfbP50 ?? NaN), relay_streams_per_s: relayed.rps, errors: proxiedStream.errors },
    { streams_per_s: proxiedStream.rps / directStream.rps, relay_streams_per_s: relayed.rps / directStream.rps }, { streams_per_s: '>= 0.9', added_ttfb_p50_ms: '<= 1' })

  log(`proxy: streaming, 20 chunks ${PACED_CHUNK_MS} ms apart, concurrency 64`)
  const directPaced = await load(directLoad(fakeUrl, true, 64, PACED_MODEL))
  const proxiedPaced = await load(chatLoad(gatewayUrl, true, 64, PACED_MODEL))
  row(`streaming chat completions c=64, chunks ${PACED_CHUNK_MS} ms apart`, 'streamGenerateContent on the fake directly',
    { streams_per_s: proxiedPaced.rps, ttfb_p50_ms: proxiedPaced.ttfbP50 ?? NaN, p50_ms: proxiedPaced.p50, baseline_streams_per_s: directPaced.rps, baseline_ttfb_p50_ms: directPaced.ttfbP50 ?? NaN, baseline_p50_ms: directPaced.p50, added_ttfb_p50_ms: (proxiedPaced.ttfbP50 ?? NaN) - (directPaced.ttfbP50 ?? NaN), errors: proxiedPaced.errors },
    { streams_per_s: proxiedPaced.rps / directPaced.rps }, { streams_per_s: '>= 0.9', added_ttfb_p50_ms: '<= 1' })
  }

  const rss = await peakRssMb(gateway.child)
  row('gateway peak RSS', 'none', { peak_rss_mb: rss }, {}, { peak_rss_mb: '< 150' })

  const results = { date: new Date().toISOString(), node: process.version, cpus: (await import('node:os')).cpus().length, seconds_per_run: seconds, rows }
  await writeFile(join(root, 'bench/results.json'), JSON.stringify(results, null, 2) + '\n')
  const fmt = (n: number): string => Number.isFinite(n) ? (Math.abs(n) >= 100 ? n.toFixed(0) : n.toFixed(3)) : '-'
  console.log('\n| benchmark | figures | ratio to baseline | target |\n| --- | --- | --- | --- |')
  for (const r of rows) {
    const figures = Object.entries(r.figures).map(([k, v]) => `${k} ${fmt(v)}`).join(', ')
    const ratios = Object.entries(r.ratios).map(([k, v]) => `${k} ${v.toFixed(3)}`).join(', ') || '-'
    const targets = Object.entries(r.targets).map(([k, v]) => `${k} ${v}`).join(', ') || '-'
    console.log(`| ${r.name} | ${figures} | ${ratios} | ${targets} |`)
  }
  console.log('\nbaselines: ' + rows.map(r => `${r.name} ← ${r.baseline}`).join('; '))
  console.log('written: bench/results.json')
} finally {
  await processes.stopAll()
}
