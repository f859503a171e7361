// The soak: the gateway under a steady mix of ordinary traffic for several minutes, its RSS read every ten seconds,
// to show whether memory stays flat once warm. The mix (a team's day in small): validate 40 %, chat completions
// 40 % (half of them streamed) with a member's key under GEMINI_LIMITS, login + logout 12 %, and one sign-up a
// second; embedded store with a data file, operator password set.
// Usage: node bench/soak.ts [minutes, default 15] [--heap] [--env NAME=value] [--node-flag FLAG]   (--heap writes heap snapshots after the warm-up and at
// the end). Output: one JSON line (RSS and its breakdown every 10 s, the store's size at the end), and a table a minute on stderr.
import { mkdtemp, rm, readdir } from 'node:fs/promises'
import { readFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createProcessGroup, root } from './processes.ts'
import { BENCH_LIMITS, GATEWAY_NODE_FLAGS, gatewayEnv, userKey } from './workloads.ts'

const SAMPLE_MS = 10_000
/** Requests in flight at once: a steady load, far below what the gateway can serve, as a day's traffic is. */
const CONCURRENCY = 8

/** argon2's memory for one hash (DEFAULT_ARGON2.memoryCost, lib/auth/options.ts): glibc maps each such buffer on its own. */
const ARGON2_BUFFER_KB = 19456
/** glibc's non-main malloc arenas are reservations of 64 MiB aligned on 64 MiB (HEAP_MAX_SIZE on 64-bit). */
const ARENA_BYTES = 64 * 2 ** 20

/**
 * The process's resident memory from /proc/<pid>/smaps, in bytes: all of it, its file-backed part (code), its anonymous
 * part, and within that the argon2 buffers of hashes running at that instant, glibc's main heap (brk) and its
 * thread arenas. What is left of the anonymous part is V8's heap, thread stacks and other mappings.
 */
function memoryOf (pid: number): { rss: number, anon: number, file: number, argon2: number, argon2Hashes: number, brk: number, arenas: number } {
  const out = { rss: 0, anon: 0, file: 0, argon2: 0, argon2Hashes: 0, brk: 0, arenas: 0 }
  const maps: Array<{ start: number, end: number, perm: string, name: string, size: number, rss: number }> = []
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const header = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line)
    if (header !== null) maps.push({ start: parseInt(header[1], 16), end: parseInt(header[2], 16), perm: header[3], name: header[4], size: 0, rss: 0 })
    else if (line.startsWith('Size:')) maps[maps.length - 1].size = Number(line.split(/\s+/)[1]) * 1024
    else if (line.startsWith('Rss:')) maps[maps.length - 1].rss = Number(line.split(/\s+/)[1]) * 1024
  }
  maps.forEach((m, i) => {
    out.rss += m.rss
    if (m.name.startsWith('/')) { out.file += m.rss; return }
    out.anon += m.rss
    if (m.name === '[heap]') out.brk += m.rss
    else if (m.name === '' && m.size === ARGON2_BUFFER_KB * 1024) { out.argon2 += m.rss; out.argon2Hashes++ }
    else if (m.name === '' && m.perm === 'rw-p' && m.start % ARENA_BYTES === 0 &&
      (m.size === ARENA_BYTES || (maps[i + 1]?.start === m.end && maps[i + 1].perm === '---p' && maps[i + 1].end - m.start === ARENA_BYTES))) out.arenas += m.rss
  })
  return out
}

/** What the gateway's own /metrics (prom-client's default metrics) says of its V8 heap, in bytes. */
interface HeapFigures { heapTotal: number, heapUsed: number, external: number, spaces: Record<string, number> }

async function heapOf (metricsUrl: string): Promise<HeapFigures | undefined> {
  try {
    const text = await (await fetch(metricsUrl)).text()
    const one = (name: string): number => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? NaN)
    const spaces: Record<string, number> = {}
    for (const m of text.matchAll(/^nodejs_heap_space_size_total_bytes\{space="(\w+)"\} (\S+)/gm)) spaces[m[1]] = Number(m[2])
    return { heapTotal: one('nodejs_heap_size_total_bytes'), heapUsed: one('nodejs_heap_size_used_bytes'), external: one('nodejs_external_memory_bytes'), spaces }
  } catch {
    return undefined
  }
}

const mb = (bytes: number): number => +(bytes / 2 ** 20).toFixed(1)

function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

function storeSize (file: string): StoreSize | undefined {
  try {
    const text = readFileSync(file, 'utf8')
    const data = JSON.parse(text) as Record<string, unknown[] | undefined>
    const n = (name: string): number => data[name]?.length ?? 0
    // The journal's lines are the changes since the file was last written whole (lib/store/embedded-journal.ts).
    const journal = existsSync(`${file}.journal`) ? readFileSync(`${file}.journal`, 'utf8') : ''
    return { users: n('users'), sessions: n('sessions'), keys: n('keys'), usage: n('usage'), attempts: n('attempts'), owners: n('owners'), fileBytes: Buffer.byteLength(text), journalBytes: Buffer.byteLength(journal) }
  } catch {
    return undefined
  }
}

/** The 99th percentile of `values` (ms), or NaN when there are none. */
function p99 (values: number[]): number {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  return +sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)].toFixed(1)
}

/** One sample, in MB: RSS and its parts, the V8 heap as the gateway reports it, and what is neither. */
export interface SoakSample {
  s: number
  rss: number
  /** RSS less the argon2 buffers of the hashes running at that instant (0-3 of 19 MiB each, defaultHashConcurrency in lib/auth/passwords.ts): what stays between hashes. */
  rssBetweenHashes: number
  anon: number
  file: number
  argon2: number
  argon2Hashes: number
  /** glibc's main heap (brk) and its thread arenas. */
  brk: number
  arenas: number
  heapTotal: number
  heapUsed: number
  external: number
  /** Anonymous resident memory outside V8's committed heap, the running hashes' buffers, glibc's heaps: stacks, other mappings. */
  rest: number
  spaces: Record<string, number>
}

/** The embedded store's records at the end, read from its data file, and the file's size. */
export interface StoreSize { users: number, sessions: number, keys: number, usage: number, attempts: number, owners: number, fileBytes: number, journalBytes: number }

const SERIES = ['s', 'rss', 'rssBetweenHashes', 'file', 'argon2', 'brk', 'arenas', 'heapTotal', 'heapUsed', 'external', 'rest'] as const

export interface SoakResult {
  minutes: number
  requests: number
  errors: number
  refusals: Record<string, number>
  signups: number
  rssAfterWarmUpMB: number
  rssEndMB: number
  rssPeakMB: number
  growthPercent: number
  /** Median RSS of each stretch after the warm-up (3 minutes in runs of 9 minutes or more, else 1). */
  rssMedianByStretchMB: number[]
  /** The same medians of RSS less the running hashes' buffers. */
  rssBetweenHashesMedianByStretchMB: number[]
  /** Growth from the first stretch's median to the last's: of RSS, and of RSS less the running hashes' buffers. */
  growthOfMediansPercent: number
  growthBetweenHashesPercent: number
  /** The p99 latency (ms) of each kind of request in each stretch after the warm-up: flat if nothing grows with the data. */
  p99ByStretchMs: Record<string, number[]>
  stretchMinutes: number
  samplesMB: number[]
  /** The first sample after the warm-up and the last, with their breakdown. */
  warmUp?: SoakSample
  end?: SoakSample
  /** Every sample's breakdown, one array per figure (MB), in sample order. */
  series: Record<typeof SERIES[number], number[]>
  store?: StoreSize
  snapshots: string[]
}

/**
 * Runs the soak for `minutes`; `heap` writes heap snapshots after the warm-up and at the end; `extraEnv` is added to
 * the gateway's environment (to measure a setting's effect, e.g. MALLOC_ARENA_MAX=2); `extraFlags` are Node flags put after
 * GATEWAY_NODE_FLAGS (the later of two V8 flags wins, e.g. --max-semi-space-size=4).
 */
export async function soak (minutes: number, heap = false, extraEnv: Record<string, string> = {}, extraFlags: string[] = []): Promise<SoakResult> {
  /** RSS is compared from here on: start-up, JIT and the first caches settle in the first two minutes. */
  const WARM_UP_MS = Math.min(120_000, minutes * 60_000 / 4)
  const group = createProcessGroup()
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-soak-'))
  try {
    const fake = await group.start([join(root, 'bench/fake-server.ts')])
    const tokenUri = /token (\S+)/.exec(fake.line)?.[1] as string
    const built = join(root, 'dist/gateway/main.js')
    const entry = existsSync(built) ? built : join(root, 'gateway/main.ts')
    const flags = [...GATEWAY_NODE_FLAGS, ...extraFlags, ...(heap ? [`--heapsnapshot-signal=SIGUSR2`, `--diagnostic-dir=${dir}`] : [])]
    const gateway = await group.start([...flags, entry], {
      ...gatewayEnv(fake.url, tokenUri),
      LOG_LEVEL: 'warn',
      GEMINI_LIMITS: BENCH_LIMITS,
      AUTH_DATA_FILE: join(dir, 'auth-db.json'),
      // Every client of the soak is on 127.0.0.1: without this the sign-up limiter (10 an hour per address) would
      // refuse all but the first ten of the mix's sign-ups, and the store would not grow as a team's does.
      AUTH_SIGNUPS_PER_ADDRESS: '1000000',
      ...extraEnv,
    })
    const pid = gateway.child.pid as number
    const api = `${gateway.url}/v1/api`
    const key = await userKey(gateway.url)
    const post = (body: unknown, headers: Record<string, string> = {}): RequestInit =>
      ({ method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': 'soak', ...headers }, body: JSON.stringify(body) })
    const regular = { username: 'soakuser', password: 'soak user password 1' }
    await fetch(`${api}/auth/signup`, post(regular))
    const session = await (await fetch(`${api}/auth/login`, post(regular))).json() as { user_id: string, access_token: string }

    let signups = 0
    let requests = 0
    let errors = 0
    /** Refusals by route and status: the sign-up limiter's 429s are expected at one sign-up a second. */
    const refusals: Record<string, number> = {}
    /** Each request's time (ms) by kind, with when it ended (ms after the start). */
    const timings: Record<string, Array<[number, number]>> = {}
    const count = async (res: Promise<Response>, what: string): Promise<{ ok: boolean, text: string } | undefined> => {
      const began = performance.now()
      try {
        const r = await res
        const text = await r.text()
        ;(timings[what] ??= []).push([Date.now() - started, performance.now() - began])
        requests++
        if (r.status >= 400) {
          errors++
          refusals[`${what} ${r.status}`] = (refusals[`${what} ${r.status}`] ?? 0) + 1
        }
        return { ok: r.ok, text }
      } catch {
        errors++
        return undefined
      }
    }
    const chat = async (stream: boolean): Promise<unknown> => await count(fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: 'gemini-2.5-flash', stream, messages: [{ role: 'user', content: 'Hello there' }] }),
    }), 'chat')
    /** `worker`: each loop logs in from a device of its own, so one loop's login never ends another's session. */
    async function one (worker: number): Promise<void> {
      const r = Math.random()
      if (r < 0.4) {
        await count(fetch(`${api}/auth/validate?user_id=${session.user_id}&token=${session.access_token}`, { headers: { 'user-agent': 'soak' } }), 'validate')
      } else if (r < 0.8) {
        await chat(r < 0.6)
      } else if (r < 0.92) {
        const login = await count(fetch(`${api}/auth/login`, post(regular, { 'user-agent': `soak device ${worker}` })), 'login')
        if (login?.ok === true) {
          const s = JSON.parse(login.text) as { user_id: string, access_token: string }
          await count(fetch(`${api}/auth/logout?user_id=${s.user_id}`, { method: 'POST', headers: { 'user-agent': `soak device ${worker}`, token: s.access_token } }), 'logout')
        }
      } else {
        await count(fetch(`${api}/auth/validate?user_id=${session.user_id}&token=${session.access_token}`, { headers: { 'user-agent': 'soak' } }), 'validate')
      }
    }
    const started = Date.now()
    const end = started + minutes * 60_000
    const signupTimer = setInterval(() => {
      signups++
      void count(fetch(`${api}/auth/signup`, post({ username: `soak_${process.pid}_${signups}`, password: 'soak user password 1' })), 'signup')
    }, 1000)
    const samples: SoakSample[] = []
    const sample = async (): Promise<void> => {
      const s = Math.round((Date.now() - started) / 1000)
      const mem = memoryOf(pid)
      const v8 = await heapOf(`${gateway.url}/metrics`)
      const heapTotal = v8?.heapTotal ?? NaN
      samples.push({
        s,
        rss: mb(mem.rss),
        rssBetweenHashes: mb(mem.rss - mem.argon2),
        anon: mb(mem.anon),
        file: mb(mem.file),
        argon2: mb(mem.argon2),
        argon2Hashes: mem.argon2Hashes,
        brk: mb(mem.brk),
        arenas: mb(mem.arenas),
        heapTotal: mb(heapTotal),
        heapUsed: mb(v8?.heapUsed ?? NaN),
        external: mb(v8?.external ?? NaN),
        rest: mb(mem.anon - mem.argon2 - mem.brk - mem.arenas - heapTotal),
        spaces: Object.fromEntries(Object.entries(v8?.spaces ?? {}).map(([k, v]) => [k, mb(v)])),
      })
    }
    const sampler = setInterval(() => { void sample() }, SAMPLE_MS)
    let snapshotted = false
    await Promise.all(Array.from({ length: CONCURRENCY }, async (_, worker) => {
      while (Date.now() < end) {
        if (heap && !snapshotted && Date.now() - started >= WARM_UP_MS) {
          snapshotted = true
          process.kill(pid, 'SIGUSR2')
        }
        await one(worker)
      }
    }))
    clearInterval(signupTimer)
    clearInterval(sampler)
    if (heap) {
      process.kill(pid, 'SIGUSR2')
      await new Promise(resolve => setTimeout(resolve, 15_000))
    }
    const store = storeSize(join(dir, 'auth-db.json'))
    const warm = samples.filter(s => s.s * 1000 >= WARM_UP_MS)
    const first = warm[0]?.rss ?? NaN
    const last = warm.at(-1)?.rss ?? NaN
    const stretchMinutes = minutes >= 9 ? 3 : 1
    const byStretch = (figure: (w: SoakSample) => number): number[] => {
      const stretches = new Map<number, number[]>()
      for (const w of warm) {
        const i = Math.floor((w.s * 1000 - WARM_UP_MS) / (stretchMinutes * 60_000))
        const list = stretches.get(i)
        if (list === undefined) stretches.set(i, [figure(w)])
        else list.push(figure(w))
      }
      return [...stretches.values()].map(median)
    }
    const p99ByStretchMs: Record<string, number[]> = {}
    for (const [what, list] of Object.entries(timings)) {
      const stretches = new Map<number, number[]>()
      for (const [at, ms] of list) {
        if (at < WARM_UP_MS) continue
        const i = Math.floor((at - WARM_UP_MS) / (stretchMinutes * 60_000))
        // Pushed, not copied: a 30-minute soak holds a million timings.
        const held = stretches.get(i)
        if (held === undefined) stretches.set(i, [ms])
        else held.push(ms)
      }
      p99ByStretchMs[what] = [...stretches.keys()].sort((a, b) => a - b).map(i => p99(stretches.get(i) as number[]))
    }
    const rssMedians = byStretch(w => w.rss)
    const betweenMedians = byStretch(w => w.rssBetweenHashes)
    const growth = (series: number[]): number => +(((series.at(-1) ?? NaN) / series[0] - 1) * 100).toFixed(1)
    return {
      minutes,
      requests,
      errors,
      refusals,
      signups,
      rssAfterWarmUpMB: first,
      rssEndMB: last,
      rssPeakMB: Math.max(...warm.map(s => s.rss)),
      growthPercent: +((last / first - 1) * 100).toFixed(1),
      rssMedianByStretchMB: rssMedians,
      rssBetweenHashesMedianByStretchMB: betweenMedians,
      growthOfMediansPercent: growth(rssMedians),
      growthBetweenHashesPercent: growth(betweenMedians),
      p99ByStretchMs,
      stretchMinutes,
      samplesMB: samples.map(s => s.rss),
      warmUp: warm[0],
      end: warm.at(-1),
      series: Object.fromEntries(SERIES.map(f => [f, samples.map(s => s[f])])) as SoakResult['series'],
      store,
      snapshots: heap ? (await readdir(dir)).filter(f => f.endsWith('.heapsnapshot')).map(f => join(dir, f)) : [],
    }
  } finally {
    await group.stopAll()
    if (!heap) await rm(dir, { recursive: true, force: true })
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const minutes = Number(process.argv.find(a => /^\d+(\.\d+)?$/.test(a)) ?? 15)
  // `--env NAME=value` (repeatable): set in the gateway's environment.
  const extraEnv = Object.fromEntries(process.argv.flatMap((a, i) => process.argv[i - 1] === '--env' ? [a.split(/=(.*)/s).slice(0, 2)] : []))
  // `--node-flag FLAG` (repeatable): a Node flag for the gateway, after GATEWAY_NODE_FLAGS.
  const extraFlags = process.argv.flatMap((a, i) => process.argv[i - 1] === '--node-flag' ? [a] : [])
  const result = await soak(minutes, process.argv.includes('--heap'), extraEnv, extraFlags)
  console.log(JSON.stringify(result))
  // A compact table on stderr, one row a minute, so stdout stays one JSON line.
  const { series } = result
  const columns = SERIES.slice(1)
  console.error(['min', ...columns].map(c => c.padStart(12)).join(''))
  series.s.forEach((s, i) => {
    if (i % 6 === 5 || i === series.s.length - 1) console.error([(s / 60).toFixed(1), ...columns.map(c => series[c][i].toFixed(1))].map(c => c.padStart(12)).join(''))
  })
  console.error(`p99 ms by stretch of ${result.stretchMinutes} min after the warm-up:`)
  for (const [what, list] of Object.entries(result.p99ByStretchMs)) console.error(`${what.padStart(12)} ${list.join(' → ')}`)
}
