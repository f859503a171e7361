// npm run bench: every figure is a ratio against a baseline measured in the same run on the same machine.
//   accounts: GET /auth/validate vs a bare Hapi route; POST /auth/login vs raw argon2 verifications
//   proxy:    chat completions vs calling the fake upstream directly (concurrency 1, 16, 64);
//             streaming (20 chunks) time to first byte and streams/s; the gateway's peak RSS
// The gateway measured is the built one (dist/), started as the container image starts it. Every server and
// the load generator run in their own processes. Prints a table, writes bench/results.json.
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { readFile, writeFile, rm } from 'node:fs/promises'
import { openSync, closeSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { fileURLToPath } from 'node:url'
import { dirname, join } from 'node:path'
import type { LoadResult, LoadSpec } from './load.ts'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const node = process.execPath
const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const durationMs = seconds * 1000
const password = 'bench-proxy-password'
const children: ChildProcess[] = []
const logFiles: string[] = []
/** BENCH_ONLY=accounts or proxy runs one part. */
const only = process.env.BENCH_ONLY

function log (message: string): void { process.stderr.write(`bench: ${message}\n`) }

/**
 * Starts a server process and waits for its "listening on <url>" line. Output goes to a file, as a log
 * shipper would take it: a pipe drained by this process would compete with the measured servers for CPU.
 */
async function startProcess (args: string[], env: Record<string, string> = {}): Promise<{ child: ChildProcess, line: string }> {
  const logFile = join(tmpdir(), `gatehouse-bench-${process.pid}-${children.length}.log`)
  const fd = openSync(logFile, 'w')
  const child = spawn(node, args, { cwd: root, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', fd, fd] })
  closeSync(fd)
  children.push(child)
  logFiles.push(logFile)
  let exited = false
  child.once('exit', () => { exited = true })
  const deadline = Date.now() + 30_000
  for (;;) {
    const out = await readFile(logFile, 'utf8')
    const m = /listening on (http:\/\/\S+)(.*)/.exec(out)
    if (m !== null) return { child, line: m[0] }
    if (exited || Date.now() > deadline) throw new Error(`${args.join(' ')} did not print its URL within 30 s:\n${out}`)
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}

async function runJson<T> (script: string, spec: unknown): Promise<T> {
  const child = spawn(node, [join(root, script), JSON.stringify(spec)], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (d: Buffer) => { out += d.toString() })
  await new Promise(resolve => child.once('exit', resolve))
  return JSON.parse(out) as T
}

async function load (spec: Omit<LoadSpec, 'durationMs'>): Promise<LoadResult> {
  return await runJson<LoadResult>('bench/load.ts', { warmupMs: 1000, ...spec, durationMs })
}

async function peakRssMb (child: ChildProcess): Promise<number> {
  const status = await readFile(`/proc/${child.pid}/status`, 'utf8')
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? NaN)
  return kb / 1024
}

async function json (url: string, init: RequestInit = {}): Promise<any> {
  const res = await fetch(url, init)
  const body = await res.json()
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${JSON.stringify(body)}`)
  return body
}

const rows: Array<{ name: string, baseline: string, figures: Record<string, number>, ratios: Record<string, number>, targets: Record<string, string> }> = []
function row (name: string, baseline: string, figures: Record<string, number>, ratios: Record<string, number>, targets: Record<string, string> = {}): void {
  rows.push({ name, baseline, figures, ratios, targets })
}

try {
  log('starting the fake upstream, a bare Hapi server and the gateway')
  const fake = await startProcess([join(root, 'bench/fake-server.ts')])
  const fakeUrl = /listening on (\S+)/.exec(fake.line)?.[1] as string
  const tokenUri = /token (\S+)/.exec(fake.line)?.[1] as string
  const bare = await startProcess([join(root, 'bench/bare-hapi.ts')])
  const bareUrl = /listening on (\S+)/.exec(bare.line)?.[1] as string
  const credentials = { client_id: 'bench-client', client_secret: 'bench-secret', refresh_token: 'bench-refresh', token_uri: tokenUri, type: 'authorized_user' }
  // The built gateway, started as the container image starts it (Dockerfile CMD): what users deploy.
  const built = join(root, 'dist/gateway/main.js')
  if (!existsSync(built)) throw new Error(`${built} is missing: npm run bench builds it first (npm run build)`)
  const gateway = await startProcess(['--max-semi-space-size=16', '--import', join(root, 'dist/gateway/tracing.js'), built], {
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
    AUTH_ADMIN_PASSWORD: 'bench-admin-password',
    GEMINI_AUTH_PASSWORD: password,
    GEMINI_CREDENTIALS: JSON.stringify(credentials),
    GOOGLE_CLOUD_PROJECT: 'bench-project',
    CODE_ASSIST_ENDPOINT: fakeUrl
  })
  const gatewayUrl = (/listening on (http:\/\/[^\s"]+)/.exec(gateway.line)?.[1] as string).replace(/\/$/, '')

  // Accounts: one user, one session.
  const api = `${gatewayUrl}/v1/api`
  const credentialsBody = JSON.stringify({ username: 'benchuser', password: 'bench password 1' })
  await json(`${api}/auth/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: credentialsBody })
  const session = await json(`${api}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': 'bench' }, body: credentialsBody })

  if (only === undefined || only === 'accounts') {
  log(`accounts: validate vs bare Hapi route (${seconds}s each, 16 connections)`)
  const bareResult = await load({ url: `${bareUrl}/bare`, connections: 16 })
  const validate = await load({ url: `${api}/auth/validate?user_id=${session.user_id as string}&token=${session.access_token as string}`, headers: { 'user-agent': 'bench' }, connections: 16 })
  row('GET /v1/api/auth/validate', 'bare Hapi route, constant JSON', { rps: validate.rps, p50_ms: validate.p50, p99_ms: validate.p99, baseline_rps: bareResult.rps, baseline_p50_ms: bareResult.p50, baseline_p99_ms: bareResult.p99, errors: validate.errors },
    { rps: validate.rps / bareResult.rps }, { rps: '>= 0.6' })

  log('accounts: login vs raw argon2 verifications (8 concurrent)')
  const argon = await runJson<{ rps: number }>('bench/argon2-rate.ts', { connections: 8, durationMs })
  const login = await load({ url: `${api}/auth/login`, method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': 'bench' }, body: credentialsBody, connections: 8 })
  row('POST /v1/api/auth/login', 'raw @node-rs/argon2 verify, same parameters', { rps: login.rps, p50_ms: login.p50, p99_ms: login.p99, baseline_rps: argon.rps, errors: login.errors },
    { rps: login.rps / argon.rps }, { rps: '>= 0.85' })
  }

  const chatHeaders = { 'content-type': 'application/json', authorization: `Bearer ${password}` }
  const chatBody = (stream: boolean): string => JSON.stringify({ model: 'gemini-2.5-flash', stream, messages: [{ role: 'user', content: 'Hello there' }] })
  const envelope = JSON.stringify({ model: 'gemini-2.5-flash', project: 'bench-project', user_prompt_id: 'bench', request: { contents: [{ role: 'user', parts: [{ text: 'Hello there' }] }] } })
  const directHeaders = { 'content-type': 'application/json', authorization: 'Bearer fake-access-1' }

  if (only === undefined || only === 'proxy') {
  for (const connections of [1, 16, 64]) {
    log(`proxy: chat completions vs direct fake, concurrency ${connections}`)
    const direct = await load({ url: `${fakeUrl}/v1internal:generateContent`, method: 'POST', headers: directHeaders, body: envelope, connections })
    const proxied = await load({ url: `${gatewayUrl}/v1/chat/completions`, method: 'POST', headers: chatHeaders, body: chatBody(false), connections })
    const targets: Record<string, string> = connections === 1 ? { added_p50_ms: '<= 0.5' } : connections === 64 ? { rps: '>= 0.15', p99_ms: '< 20' } : {}
    row(`POST /v1/chat/completions c=${connections}`, 'POST fake v1internal:generateContent directly',
      { rps: proxied.rps, p50_ms: proxied.p50, p99_ms: proxied.p99, baseline_rps: direct.rps, baseline_p50_ms: direct.p50, baseline_p99_ms: direct.p99, added_p50_ms: proxied.p50 - direct.p50, errors: proxied.errors },
      { rps: proxied.rps / direct.rps }, targets)
  }

  log('proxy: streaming, 20 chunks, concurrency 64')
  const directStream = await load({ url: `${fakeUrl}/v1internal:streamGenerateContent?alt=sse`, method: 'POST', headers: directHeaders, body: envelope, connections: 64, stream: true })
  const proxiedStream = await load({ url: `${gatewayUrl}/v1/chat/completions`, method: 'POST', headers: chatHeaders, body: chatBody(true), connections: 64, stream: true })
  row('streaming chat completions c=64', 'streamGenerateContent on the fake directly',
    { streams_per_s: proxiedStream.rps, ttfb_p50_ms: proxiedStream.ttfbP50 ?? NaN, baseline_streams_per_s: directStream.rps, baseline_ttfb_p50_ms: directStream.ttfbP50 ?? NaN, added_ttfb_p50_ms: (proxiedStream.ttfbP50 ?? NaN) - (directStream.ttfbP50 ?? NaN), errors: proxiedStream.errors },
    { streams_per_s: proxiedStream.rps / directStream.rps }, { streams_per_s: '>= 0.9', added_ttfb_p50_ms: '<= 1' })
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
  for (const child of children) child.kill('SIGTERM')
  for (const file of logFiles) await rm(file, { force: true })
}
