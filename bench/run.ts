// npm run bench: every figure is a ratio against a baseline measured in the same run on the same machine, in
// alternating rounds (BENCH_ROUNDS, default 5, over BENCH_SECONDS, default 5, per figure); each figure is the
// median over the rounds, each ratio the median of the rounds' ratios.
//   accounts: GET /auth/validate vs a bare Hapi route, with the gateway's own floor beside it (bench/floor-gateway.ts);
//             POST /auth/login vs raw argon2 verifications
//   proxy:    chat completions vs calling the fake upstream directly (concurrency 1, 16, 64);
//             streaming (20 chunks, back to back and paced) time to first byte and streams/s; in every proxy row a
//             bare byte relay (bench/relay.ts) beside them, the least any proxy process costs here, and a bare Hapi
//             relay (bench/bare-hapi-relay.ts), the least any Hapi gateway costs, and in the streaming rows a bare Hapi
//             translator (bench/bare-hapi-translator.ts), the least a Hapi gateway serving chat completions costs; the gateway's (and both relays')
//             idle RSS and peak RSS during the proxy part, the gateway's overall; CPU per chat request with a user's key and limits on
//             against the same request with the operator password
//   footprint: what the library and the gateway cost before their first request (bench/footprint.ts)
//   websocket: a Codex-like Responses session over one WebSocket vs a streamed POST per turn (bench/responses-websocket.ts)
//   hostile:  the longest event-loop block while a second gateway (bench/event-loop-delay.ts preloaded) answers the
//             hostile requests of bench/workloads.ts one after another, against the same count of ordinary chats
// The gateway measured is the built one (dist/), started as the container image starts it, under the chart's
// default memory limit where a cgroup can be made (bench/memory-limit.ts). Every server and the load generator
// run in their own processes. Prints a table, writes bench/results.json.
import type { ChildProcess } from 'node:child_process'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { stripTypeScriptTypes } from 'node:module'
import { existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { median } from './load.ts'
import type { LoadResult } from './load.ts'
import { benchMemoryLimit } from './memory-limit.ts'
import { footprint } from './footprint.ts'
import { soak } from './soak.ts'
import { createProcessGroup, root, treeCpuMicros } from './processes.ts'
import { BENCH_LIMITS, GATEWAY_NODE_FLAGS, PACED_CHUNK_MS, PACED_MODEL, accountLoads, chatLoad, directLoad, gatewayEnv, hostileRequests, userKey } from './workloads.ts'
import type { Started } from './processes.ts'
import type { Workload } from './workloads.ts'
import type { WebsocketBench } from './responses-websocket.ts'

const seconds = Number(process.env.BENCH_SECONDS ?? 5)
/** BENCH_ROUNDS: each figure's BENCH_SECONDS (default 5) are split into this many rounds (default 5). */
const roundCount = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5))
const roundMs = (seconds * 1000) / roundCount
/** BENCH_ONLY=accounts, proxy, hostile, footprint, websocket or soak runs one part. */
const only = process.env.BENCH_ONLY
const processes = createProcessGroup()
const startProcess = processes.start
const runJson = processes.runJson

function log (message: string): void { process.stderr.write(`bench: ${message}\n`) }


/** Runs one load for `durationMs` after `warmupMs` (each load is a fresh generator process with new connections). */
type Runner<T> = (durationMs: number, warmupMs: number) => Promise<T>
const loadRunner = (spec: Workload): Runner<LoadResult> => async (durationMs, warmupMs) => await processes.load({ ...spec, durationMs, warmupMs })
/** A load result with the CPU time `server`'s process tree spent per answered request (warm-up included), in µs. */
type CpuResult = LoadResult & { cpuUs: number }
/** loadRunner that also reads `server`'s CPU time (its process tree, /proc) before and after the load. */
const cpuRunner = (spec: Workload, server: Started): Runner<CpuResult> => async (durationMs, warmupMs) => {
  const pid = server.child.pid as number
  const before = treeCpuMicros(pid)
  const result = await processes.load({ ...spec, durationMs, warmupMs })
  return { ...result, cpuUs: (treeCpuMicros(pid) - before) / result.allRequests }
}

/** Warm-up of every round, not counted: new connections, and 64 streams that start at once drift apart. */
const ROUND_WARMUP_MS = 1000

/**
 * The loads of one row, measured in alternating rounds (the order reversed every round), so that the host's
 * drifting speed (up to 50 % within minutes) hits the baseline and the gateway alike. Per side, the results
 * of every round, in round order: round i of one side ran next to round i of the others.
 */
async function interleaved<T extends unknown[]> (...runners: { [K in keyof T]: Runner<T[K]> }): Promise<{ [K in keyof T]: Array<T[K]> }> {
  const results = runners.map(() => [] as unknown[])
  for (let round = 0; round < roundCount; round++) {
    const order = runners.map((_, i) => i)
    if (round % 2 === 1) order.reverse()
    for (const i of order) results[i].push(await runners[i](roundMs, ROUND_WARMUP_MS))
  }
  return results as { [K in keyof T]: Array<T[K]> }
}

/** Medians over rounds of `pick`, and of the per-round ratio measured / baseline. */
function medianOf<T> (results: T[], pick: (r: T) => number): number { return median(results.map(pick)) }
function ratioOf<A, B> (measured: A[], baseline: B[], pick: (r: A | B) => number): number {
  return median(measured.map((m, i) => pick(m) / pick(baseline[i])))
}
const errorsOf = (results: LoadResult[]): number => results.reduce((n, r) => n + r.errors, 0)

/**
 * A bench script without its types, as dist/bench/<name>.js (it resolves its packages from the repository's
 * node_modules): the relays' memory is compared with the built gateway's, which is JavaScript, and Node's type
 * stripping alone adds about 17 MB of resident memory to a process (an idle `.ts` file: 60 MB, `.mjs`: 43 MB).
 */
async function asJavaScript (script: string): Promise<string> {
  const out = join(root, 'dist/bench', script.replace(/^bench\//, '').replace(/\.ts$/, '.js'))
  await mkdir(join(root, 'dist/bench'), { recursive: true })
  await writeFile(out, stripTypeScriptTypes(await readFile(join(root, script), 'utf8')))
  return out
}

/** The process's peak RSS so far, in MB (Linux /proc). */
async function peakRssMb (child: ChildProcess): Promise<number> {
  const status = await readFile(`/proc/${child.pid}/status`, 'utf8')
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? NaN)
  return kb / 1024
}

/** The process's resident memory now, in MB (Linux /proc). */
async function rssMb (child: ChildProcess): Promise<number> {
  const status = await readFile(`/proc/${child.pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024
}

/** Starts the peak RSS afresh from the current RSS (Linux clear_refs); false where the kernel does not allow it. */
async function resetPeakRss (child: ChildProcess): Promise<boolean> {
  try {
    await writeFile(`/proc/${child.pid}/clear_refs`, '5')
    return true
  } catch {
    return false
  }
}

interface LoopBlocks {
  /** The longest block a request caused, as the median of its rounds (a hiccup of a busy host does not recur). */
  max_ms: number
  /** The longest block seen at all, in any round. */
  worst_ms: number
}

/**
 * The longest event-loop block in `gateway` (started with bench/event-loop-delay.ts writing to `file`) while it
 * answers each hostile request, one at a time, in three rounds: those it takes and those it refuses apart; and, as
 * the baseline, while it answers an ordinary chat request as often. Throws when a request is not answered as expected.
 */
async function eventLoopBlocks (gateway: Started, file: string): Promise<{ accepted: LoopBlocks, refused: LoopBlocks, ordinary: LoopBlocks, requests: number }> {
  let seq = 0
  /** The longest block since the previous call. */
  const longest = async (): Promise<number> => {
    gateway.child.kill('SIGUSR2')
    const expected = seq++
    for (let waited = 0; waited < 5000; waited += 10) {
      await new Promise(resolve => setTimeout(resolve, 10))
      if (expected === 0) return NaN
      try {
        const figures = JSON.parse(await readFile(file, 'utf8'))
        if (figures.seq === expected) return figures.max_ms
      } catch {}
    }
    throw new Error(`the gateway wrote no event-loop figures to ${file}`)
  }
  const send = async (path: string, headers: Record<string, string>, body: string): Promise<number> => {
    const res = await fetch(gateway.url + path, { method: 'POST', headers, body })
    await res.arrayBuffer()
    return res.status
  }
  const ordinary = chatLoad(gateway.url, false, 1)
  const hostile = hostileRequests()
  const requests = [...hostile, ...hostile.map(() => ({ name: 'ordinary', path: '/v1/chat/completions', headers: ordinary.headers ?? {}, body: ordinary.body ?? '', accepted: true }))]
  for (const r of requests) await send(r.path, r.headers, r.body) // warm-up: the first call of each path compiles code
  await longest()
  const blocks: number[][] = requests.map(() => [])
  for (let round = 0; round < 3; round++) {
    for (const [i, r] of requests.entries()) {
      const status = await send(r.path, r.headers, r.body)
      if ((status < 300) !== r.accepted) throw new Error(`${r.name}: answered ${status}`)
      blocks[i].push(await longest())
    }
  }
  const summary = (pick: (i: number) => boolean): LoopBlocks => {
    const picked = blocks.filter((_, i) => pick(i))
    return { max_ms: Math.max(...picked.map(median)), worst_ms: Math.max(...picked.flat()) }
  }
  return {
    accepted: summary(i => i < hostile.length && hostile[i].accepted),
    refused: summary(i => i < hostile.length && !hostile[i].accepted),
    ordinary: summary(i => i >= hostile.length),
    requests: 3 * hostile.length,
  }
}

const rows: Array<{ name: string, baseline: string, figures: Record<string, number>, ratios: Record<string, number>, targets: Record<string, string> }> = []
function row (name: string, baseline: string, figures: Record<string, number>, ratios: Record<string, number>, targets: Record<string, string> = {}): void {
  rows.push({ name, baseline, figures, ratios, targets })
}

let memory: ReturnType<typeof benchMemoryLimit> | undefined
let hapiRelayMemory: ReturnType<typeof benchMemoryLimit> | undefined
let hapiTranslatorMemory: ReturnType<typeof benchMemoryLimit> | undefined
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
  memory = benchMemoryLimit()
  log(memory.description)
  const proxyPart = only === undefined || only === 'proxy'
  // The proxy rows' references (bench/relay.ts, bench/bare-hapi-relay.ts), started before the gateway so that each
  // has been idle at least as long as it when the idle RSS is read. Same Node flags as the gateway; the bare Hapi
  // relay, the floor of a Hapi gateway as deployed, also in a memory cgroup of the gateway's size, the bare relay
  // without one (as in every earlier run). Both run as JavaScript, as the built gateway does (asJavaScript).
  hapiRelayMemory = proxyPart ? benchMemoryLimit('-hapi-relay') : undefined
  const relay = proxyPart ? await startProcess([...GATEWAY_NODE_FLAGS, await asJavaScript('bench/relay.ts'), fakeUrl]) : undefined
  const hapiRelay = proxyPart ? await startProcess([...GATEWAY_NODE_FLAGS, await asJavaScript('bench/bare-hapi-relay.ts'), fakeUrl], {}, root, hapiRelayMemory?.limit) : undefined
  // The streaming rows' third reference: the bare Hapi relay plus the least translation the chat surface needs
  // (bench/bare-hapi-translator.ts), in a cgroup of the same size. Its memory is not compared: it only serves streams.
  hapiTranslatorMemory = proxyPart ? benchMemoryLimit('-hapi-translator') : undefined
  const hapiTranslator = proxyPart ? await startProcess([...GATEWAY_NODE_FLAGS, await asJavaScript('bench/bare-hapi-translator.ts'), fakeUrl], {}, root, hapiTranslatorMemory?.limit) : undefined
  const gateway = await startProcess([...GATEWAY_NODE_FLAGS, '--import', join(root, 'dist/gateway/tracing.js'), built],
    { ...gatewayEnv(fakeUrl, tokenUri), GEMINI_LIMITS: BENCH_LIMITS, ...(nodeOptions !== undefined ? { NODE_OPTIONS: nodeOptions } : {}) }, root, memory.limit)
  const gatewayUrl = gateway.url
  // Idle: started, no request yet; a second for start-up's garbage to be collected (what a quiet pod holds).
  await new Promise(resolve => setTimeout(resolve, 1000))
  const floorsIdle: Record<string, number> = relay !== undefined && hapiRelay !== undefined
    ? { relay_rss_mb: await rssMb(relay.child), hapi_relay_rss_mb: await rssMb(hapiRelay.child) }
    : {}
  row('gateway idle RSS', `${memory.description}; 1 s after it listens, before any request${relay !== undefined ? '; the bare relay (no memory limit) and the bare Hapi relay (the same limit) idle as long, for reference' : ''}`,
    { rss_mb: await rssMb(gateway.child), ...floorsIdle }, {}, { rss_mb: '< 80' })

  // Accounts: one user, one session.
  const accounts = await accountLoads(gatewayUrl)

  if (only === undefined || only === 'accounts') {
  log(`accounts: validate vs bare Hapi route, and the gateway's floor (${seconds}s each in ${roundCount} alternating rounds, 16 connections)`)
  // The gateway's per-request layer alone (bench/floor-gateway.ts), in a cgroup of its own like the gateway's.
  const floorMemory = benchMemoryLimit('-floor')
  const floor = await startProcess([...GATEWAY_NODE_FLAGS, join(root, 'bench/floor-gateway.ts')], gatewayEnv(fakeUrl, tokenUri), root, floorMemory.limit)
  const [bare, floored, validate] = await interleaved<[LoadResult, LoadResult, LoadResult]>(
    loadRunner({ url: `${bareUrl}/bare`, connections: 16 }), loadRunner({ ...accounts.validate, url: `${floor.url}/floor` }), loadRunner(accounts.validate))
  await processes.stop(floor)
  floorMemory.limit?.remove()
  row('GET /v1/api/auth/validate', 'bare Hapi route, constant JSON; the gateway answering the same JSON with no handler work, for reference',
    { rps: medianOf(validate, r => r.rps), p50_ms: medianOf(validate, r => r.p50), p99_ms: medianOf(validate, r => r.p99), baseline_rps: medianOf(bare, r => r.rps), baseline_p50_ms: medianOf(bare, r => r.p50), baseline_p99_ms: medianOf(bare, r => r.p99), floor_rps: medianOf(floored, r => r.rps), errors: errorsOf(validate) },
    { rps: ratioOf(validate, bare, r => r.rps), floor_rps: ratioOf(floored, bare, r => r.rps) }, { rps: '>= 0.6' })

  log('accounts: login vs raw argon2 verifications (8 concurrent)')
  const argonRunner: Runner<{ rps: number }> = async (durationMs) => await runJson<{ rps: number }>('bench/argon2-rate.ts', { connections: 8, durationMs })
  const [argon, login] = await interleaved<[{ rps: number }, LoadResult]>(argonRunner, loadRunner(accounts.login))
  row('POST /v1/api/auth/login', 'raw @node-rs/argon2 verify, same parameters',
    { rps: medianOf(login, r => r.rps), p50_ms: medianOf(login, r => r.p50), p99_ms: medianOf(login, r => r.p99), baseline_rps: medianOf(argon, r => r.rps), errors: errorsOf(login) },
    { rps: ratioOf(login, argon, r => r.rps) }, { rps: '>= 0.85' })
  }

  const wholeRunPeak = await peakRssMb(gateway.child)
  // The proxy part's own peak: the accounts part's logins (argon2, 19 MiB per hash in flight) are not its doing.
  const proxyPeakMeasurable = proxyPart && await resetPeakRss(gateway.child)
  /** Both relays' peak RSS over the proxy loads, read before they stop. */
  let floorsPeak: Record<string, number> = {}

  if (relay !== undefined && hapiRelay !== undefined && hapiTranslator !== undefined) {
  // The least any proxy process costs on this machine, measured beside each proxy row: see bench/relay.ts. Beside
  // it, the least a proxy built on Hapi and undici costs: see bench/bare-hapi-relay.ts.
  if (proxyPeakMeasurable) {
    await resetPeakRss(relay.child)
    await resetPeakRss(hapiRelay.child)
  }
  const viaRelay = (load: Workload): Workload => ({ ...load, url: load.url.replace(fakeUrl, relay.url) })
  const viaHapiRelay = (load: Workload): Workload => ({ ...load, url: load.url.replace(fakeUrl, hapiRelay.url) })
  const p50 = (r: LoadResult): number => r.p50
  const ttfb = (r: LoadResult): number => r.ttfbP50 ?? NaN
  const cpu = (r: CpuResult): number => r.cpuUs
  /** The fake's streams have 20 chunks. */
  const STREAM_CHUNKS = 20
  /** Median over rounds of what `pick` adds to the direct figure of the same round. */
  const added = (measured: LoadResult[], direct: LoadResult[], pick: (r: LoadResult) => number): number => median(measured.map((r, i) => pick(r) - pick(direct[i])))

  for (const connections of [1, 16, 64]) {
    log(`proxy: chat completions vs direct fake, concurrency ${connections} (and through a bare relay and a bare Hapi relay)`)
    const direct = directLoad(fakeUrl, false, connections)
    const [directs, relayed, hapiRelayed, proxied] = await interleaved<[LoadResult, CpuResult, CpuResult, CpuResult]>(loadRunner(direct), cpuRunner(viaRelay(direct), relay), cpuRunner(viaHapiRelay(direct), hapiRelay), cpuRunner(chatLoad(gatewayUrl, false, connections), gateway))
    // CPU per request against the relay's (issue 12 item 5): at 16 and 64, where the processes are busy enough for /proc's 10 ms ticks.
    const cpuTarget: Record<string, string> = connections === 1 ? {} : { cpu_per_request_vs_relay: '<= 2' }
    const targets: Record<string, string> = connections === 1 ? { added_p50_ms: '<= 0.5' } : connections === 64 ? { rps: '>= 0.15', p99_ms: '< 20', ...cpuTarget } : cpuTarget
    row(`POST /v1/chat/completions c=${connections}`, 'POST fake v1internal:generateContent directly; a bare relay and a bare Hapi relay for reference',
      { rps: medianOf(proxied, r => r.rps), p50_ms: medianOf(proxied, p50), p99_ms: medianOf(proxied, r => r.p99), baseline_rps: medianOf(directs, r => r.rps), baseline_p50_ms: medianOf(directs, p50), baseline_p99_ms: medianOf(directs, r => r.p99), added_p50_ms: added(proxied, directs, p50), relay_rps: medianOf(relayed, r => r.rps), relay_p99_ms: medianOf(relayed, r => r.p99), relay_added_p50_ms: added(relayed, directs, p50), hapi_relay_rps: medianOf(hapiRelayed, r => r.rps), hapi_relay_p99_ms: medianOf(hapiRelayed, r => r.p99), hapi_relay_added_p50_ms: added(hapiRelayed, directs, p50), cpu_us_per_request: medianOf(proxied, cpu), relay_cpu_us_per_request: medianOf(relayed, cpu), hapi_relay_cpu_us_per_request: medianOf(hapiRelayed, cpu), errors: errorsOf(proxied) + errorsOf(hapiRelayed) },
      { rps: ratioOf(proxied, directs, r => r.rps), relay_rps: ratioOf(relayed, directs, r => r.rps), hapi_relay_rps: ratioOf(hapiRelayed, directs, r => r.rps), cpu_per_request_vs_relay: ratioOf(proxied, relayed, cpu), hapi_relay_cpu_per_request_vs_relay: ratioOf(hapiRelayed, relayed, cpu), cpu_per_request_vs_hapi_relay: ratioOf(proxied, hapiRelayed, cpu) }, targets)
  }

  for (const paced of [false, true]) {
    const model = paced ? PACED_MODEL : undefined
    const name = paced ? `chunks ${PACED_CHUNK_MS} ms apart` : 'chunks back to back'
    log(`proxy: streaming, 20 ${name}, concurrency 64: direct, through a bare relay, a bare Hapi relay, the gateway`)
    const direct = directLoad(fakeUrl, true, 64, model)
    const [directs, relayed, hapiRelayed, translated, proxied] = await interleaved<[LoadResult, CpuResult, CpuResult, CpuResult, CpuResult]>(loadRunner(direct), cpuRunner(viaRelay(direct), relay), cpuRunner(viaHapiRelay(direct), hapiRelay), cpuRunner(chatLoad(hapiTranslator.url, true, 64, model), hapiTranslator), cpuRunner(chatLoad(gatewayUrl, true, 64, model), gateway))
    const chunkCpu = (r: CpuResult): number => r.cpuUs / STREAM_CHUNKS
    row(`streaming chat completions c=64, ${name}`, 'streamGenerateContent on the fake directly; a bare relay, a bare Hapi relay and a bare Hapi translator for reference',
      { streams_per_s: medianOf(proxied, r => r.rps), ttfb_p50_ms: medianOf(proxied, ttfb), p50_ms: medianOf(proxied, p50), baseline_streams_per_s: medianOf(directs, r => r.rps), baseline_ttfb_p50_ms: medianOf(directs, ttfb), added_ttfb_p50_ms: added(proxied, directs, ttfb), relay_streams_per_s: medianOf(relayed, r => r.rps), relay_added_ttfb_p50_ms: added(relayed, directs, ttfb), hapi_relay_streams_per_s: medianOf(hapiRelayed, r => r.rps), hapi_relay_added_ttfb_p50_ms: added(hapiRelayed, directs, ttfb), cpu_us_per_chunk: medianOf(proxied, chunkCpu), relay_cpu_us_per_chunk: medianOf(relayed, chunkCpu), hapi_relay_cpu_us_per_chunk: medianOf(hapiRelayed, chunkCpu), hapi_translator_cpu_us_per_chunk: medianOf(translated, chunkCpu), errors: errorsOf(proxied) + errorsOf(hapiRelayed) + errorsOf(translated) },
      { streams_per_s: ratioOf(proxied, directs, r => r.rps), relay_streams_per_s: ratioOf(relayed, directs, r => r.rps), hapi_relay_streams_per_s: ratioOf(hapiRelayed, directs, r => r.rps), cpu_per_chunk_vs_relay: ratioOf(proxied, relayed, chunkCpu), hapi_relay_cpu_per_chunk_vs_relay: ratioOf(hapiRelayed, relayed, chunkCpu), cpu_per_chunk_vs_hapi_relay: ratioOf(proxied, hapiRelayed, chunkCpu), hapi_translator_cpu_per_chunk_vs_relay: ratioOf(translated, relayed, chunkCpu), cpu_per_chunk_vs_hapi_translator: ratioOf(proxied, translated, chunkCpu) },
      { streams_per_s: '>= 0.9', added_ttfb_p50_ms: '<= 1', ...(paced ? {} : { cpu_per_chunk_vs_relay: '<= 1.5' }) })
  }

  // Issue 13: what a user's key costs per call (key lookup, model policy, the limiter's checks and charges, the
  // usage record) against the operator password, which skips all of them; same gateway, alternating rounds.
  log('proxy: chat completions c=16 with a user key and limits on vs the operator password')
  {
    const key = await userKey(gatewayUrl)
    const [withPassword, withKey] = await interleaved<[CpuResult, CpuResult]>(cpuRunner(chatLoad(gatewayUrl, false, 16), gateway), cpuRunner(chatLoad(gatewayUrl, false, 16, undefined, key), gateway))
    row('POST /v1/chat/completions c=16, user key with limits on', 'the same request with the operator password (GEMINI_AUTH_PASSWORD), same gateway',
      { rps: medianOf(withKey, r => r.rps), p50_ms: medianOf(withKey, p50), p99_ms: medianOf(withKey, r => r.p99), cpu_us_per_request: medianOf(withKey, cpu), baseline_rps: medianOf(withPassword, r => r.rps), baseline_cpu_us_per_request: medianOf(withPassword, cpu), errors: errorsOf(withKey) + errorsOf(withPassword) },
      { cpu_per_request_vs_password: ratioOf(withKey, withPassword, cpu), rps: ratioOf(withKey, withPassword, r => r.rps) }, { cpu_per_request_vs_password: '<= 1.2' })
  }

  log('proxy: streaming, 20 chunks back to back, concurrency 16: time to first byte through the gateway against the bare relay and the bare Hapi relay')
  {
    const direct = directLoad(fakeUrl, true, 16)
    const [relayed, hapiRelayed, translated, proxied] = await interleaved<[LoadResult, LoadResult, LoadResult, LoadResult]>(loadRunner(viaRelay(direct)), loadRunner(viaHapiRelay(direct)), loadRunner(chatLoad(hapiTranslator.url, true, 16)), loadRunner(chatLoad(gatewayUrl, true, 16)))
    row('streaming chat completions c=16, chunks back to back: time to first byte', 'the same streams through the bare relay; through the bare Hapi relay and the bare Hapi translator for reference',
      { ttfb_p50_ms: medianOf(proxied, ttfb), relay_ttfb_p50_ms: medianOf(relayed, ttfb), hapi_relay_ttfb_p50_ms: medianOf(hapiRelayed, ttfb), streams_per_s: medianOf(proxied, r => r.rps), relay_streams_per_s: medianOf(relayed, r => r.rps), hapi_relay_streams_per_s: medianOf(hapiRelayed, r => r.rps), ttfb_vs_relay_ms: added(proxied, relayed, ttfb), hapi_relay_ttfb_vs_relay_ms: added(hapiRelayed, relayed, ttfb), ttfb_vs_hapi_relay_ms: added(proxied, hapiRelayed, ttfb), hapi_translator_ttfb_vs_relay_ms: added(translated, relayed, ttfb), ttfb_vs_hapi_translator_ms: added(proxied, translated, ttfb), errors: errorsOf(proxied) + errorsOf(hapiRelayed) + errorsOf(translated) },
      {}, { ttfb_vs_relay_ms: '<= 1' })
  }
  if (proxyPeakMeasurable) floorsPeak = { relay_peak_rss_mb: await peakRssMb(relay.child), hapi_relay_peak_rss_mb: await peakRssMb(hapiRelay.child) }
  await processes.stop(relay)
  await processes.stop(hapiRelay)
  await processes.stop(hapiTranslator)
  hapiRelayMemory?.limit?.remove()
  hapiTranslatorMemory?.limit?.remove()
  }

  if (only === undefined || only === 'proxy' || only === 'hostile') {
  log('proxy: the longest event-loop block while a second gateway answers hostile requests (bench/event-loop-delay.ts)')
  const loopMemory = benchMemoryLimit('-loop')
  const loopFile = join(tmpdir(), `gatehouse-event-loop-${process.pid}.json`)
  const watched = await startProcess([...GATEWAY_NODE_FLAGS, '--import', join(root, 'dist/gateway/tracing.js'), '--import', join(root, 'bench/event-loop-delay.ts'), built],
    { ...gatewayEnv(fakeUrl, tokenUri), EVENT_LOOP_FILE: loopFile }, root, loopMemory.limit)
  const blocks = await eventLoopBlocks(watched, loopFile)
  await processes.stop(watched)
  loopMemory.limit?.remove()
  await rm(loopFile, { force: true })
  row('event loop, hostile requests', `the same gateway answering an ordinary chat request as often; ${blocks.requests} hostile requests (bench/workloads.ts), one at a time, in 3 rounds: the longest block of a request is the median of its rounds`,
    { max_block_ms: blocks.accepted.max_ms, worst_block_ms: blocks.accepted.worst_ms, refused_max_block_ms: blocks.refused.max_ms, refused_worst_block_ms: blocks.refused.worst_ms, baseline_max_block_ms: blocks.ordinary.max_ms, baseline_worst_block_ms: blocks.ordinary.worst_ms },
    {}, { max_block_ms: '< 100' })
  }

  if (only === undefined || only === 'footprint') {
    log('footprint: the packed library installed into an empty project, its import, and the gateway\'s start-up and idle RSS against the bare relay (bench/footprint.ts)')
    for (const r of await footprint()) row(r.name, r.baseline, r.figures, r.ratios, r.targets)
  }

  if (only === undefined || only === 'websocket') {
    log('websocket: a 20-turn Responses session over one WebSocket against a streamed POST per turn (bench/responses-websocket.ts)')
    const r = await runJson<WebsocketBench>('bench/responses-websocket.ts', { turns: 20, rounds: roundCount })
    row('Responses over WebSocket', `the same ${r.turns}-turn session as one streamed POST /v1/responses per turn (SSE, the whole history each time); client, proxy (the library from source, node:http host) and fake upstream in one process of their own, ${r.rounds} alternating rounds, medians`,
      { ms_per_turn: r.ws.ms, cpu_ms_per_turn: r.ws.cpuMs, request_kib: r.ws.bytes / 1024, sse_ms_per_turn: r.sse.ms, sse_cpu_ms_per_turn: r.sse.cpuMs, sse_request_kib: r.sse.bytes / 1024 },
      { ms_per_turn: r.ws.ms / r.sse.ms, cpu_ms_per_turn: r.ws.cpuMs / r.sse.cpuMs, request_bytes: r.ws.bytes / r.sse.bytes })
  }

  if (only === undefined || only === 'soak') {
    // BENCH_SOAK_MINUTES shortens it for a quick look; the target is stated over 15 minutes.
    const minutes = Number(process.env.BENCH_SOAK_MINUTES ?? 15)
    log(`soak: ${minutes} minutes of validate, chat with a member's key under limits, login and logout, a sign-up a second (bench/soak.ts)`)
    const r = await soak(minutes)
    row('gateway RSS under a steady mix (soak)', `its own gateway (embedded store with a data file, keys and limits on), ${minutes} minutes, RSS every 10 s; growth from the end of the warm-up to the end, sample to sample and between the medians of the first and last ${r.stretchMinutes}-minute stretches (of RSS, and of RSS less the buffers of the argon2 hashes running at each sample); the store's users and data file at the end`,
      {
        rss_after_warm_up_mb: r.rssAfterWarmUpMB,
        rss_end_mb: r.rssEndMB,
        rss_peak_mb: r.rssPeakMB,
        growth_percent: r.growthPercent,
        rss_median_first_stretch_mb: r.rssMedianByStretchMB[0],
        rss_median_last_stretch_mb: r.rssMedianByStretchMB.at(-1) ?? NaN,
        growth_of_medians_percent: r.growthOfMediansPercent,
        growth_between_hashes_percent: r.growthBetweenHashesPercent,
        store_users: r.store?.users ?? NaN,
        data_file_kb: Math.round((r.store?.fileBytes ?? NaN) / 1024),
        requests: r.requests,
      }, {}, { growth_of_medians_percent: '<= 10' })
  }

  const memoryNote = memory.limit !== undefined ? `in a ${memory.limit.mib} MiB memory cgroup, as the chart's default limit` : 'no memory limit'
  if (proxyPeakMeasurable) {
    row('gateway peak RSS, proxy part', `${memoryNote}; counted from the start of the proxy loads; the bare relay's (no memory limit) and the bare Hapi relay's (the same limit) over the same loads, for reference`,
      { peak_rss_mb: await peakRssMb(gateway.child), ...floorsPeak }, {}, { peak_rss_mb: '< 150' })
  }
  row('gateway peak RSS, whole run', `${memoryNote}; start-up, the accounts part (four argon2 hashes of 19 MiB at once) and what came before the reset`,
    { peak_rss_mb: proxyPeakMeasurable ? Math.max(wholeRunPeak, await peakRssMb(gateway.child)) : await peakRssMb(gateway.child) }, {}, proxyPeakMeasurable ? {} : { peak_rss_mb: '< 150' })

  const results = { date: new Date().toISOString(), node: process.version, cpus: (await import('node:os')).cpus().length, seconds_per_figure: seconds, rounds: roundCount, gateway_memory_limit_mib: memory.limit?.mib ?? null, rows }
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
  memory?.limit?.remove()
  hapiRelayMemory?.limit?.remove()
  hapiTranslatorMemory?.limit?.remove()
}
