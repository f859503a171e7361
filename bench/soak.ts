// The soak: the gateway under a steady mix of ordinary traffic for several minutes, its RSS read every ten seconds,
// to show whether memory stays flat once warm. The mix (a team's day in small): validate 40 %, chat completions
// 40 % (half of them streamed) with a member's key under GEMINI_LIMITS, login + logout 12 %, and one sign-up a
// second; embedded store with a data file, operator password set.
// Usage: node bench/soak.ts [minutes, default 15] [--heap] [--env NAME=value]   (--heap writes heap snapshots after the warm-up and at
// the end). Output: one JSON line.
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

function rssOf (pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) * 1024
}

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
  samplesMB: number[]
  snapshots: string[]
}

/**
 * Runs the soak for `minutes`; `heap` writes heap snapshots after the warm-up and at the end; `extraEnv` is added to
 * the gateway's environment (to measure a setting's effect, e.g. MALLOC_ARENA_MAX=2).
 */
export async function soak (minutes: number, heap = false, extraEnv: Record<string, string> = {}): Promise<SoakResult> {
  /** RSS is compared from here on: start-up, JIT and the first caches settle in the first two minutes. */
  const WARM_UP_MS = Math.min(120_000, minutes * 60_000 / 4)
  const group = createProcessGroup()
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-soak-'))
  try {
    const fake = await group.start([join(root, 'bench/fake-server.ts')])
    const tokenUri = /token (\S+)/.exec(fake.line)?.[1] as string
    const built = join(root, 'dist/gateway/main.js')
    const entry = existsSync(built) ? built : join(root, 'gateway/main.ts')
    const flags = [...GATEWAY_NODE_FLAGS, ...(heap ? [`--heapsnapshot-signal=SIGUSR2`, `--diagnostic-dir=${dir}`] : [])]
    const gateway = await group.start([...flags, entry], {
      ...gatewayEnv(fake.url, tokenUri),
      LOG_LEVEL: 'warn',
      GEMINI_LIMITS: BENCH_LIMITS,
      AUTH_DATA_FILE: join(dir, 'auth-db.json'),
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
    const count = async (res: Promise<Response>, what: string): Promise<{ ok: boolean, text: string } | undefined> => {
      try {
        const r = await res
        const text = await r.text()
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
    const samples: Array<{ s: number, rss: number }> = []
    const sampler = setInterval(() => { samples.push({ s: Math.round((Date.now() - started) / 1000), rss: rssOf(pid) }) }, SAMPLE_MS)
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
    const warm = samples.filter(s => s.s * 1000 >= WARM_UP_MS)
    const first = warm[0]?.rss ?? NaN
    const last = warm.at(-1)?.rss ?? NaN
    const peak = Math.max(...warm.map(s => s.rss))
    return {
      minutes,
      requests,
      errors,
      refusals,
      signups,
      rssAfterWarmUpMB: +(first / 2 ** 20).toFixed(1),
      rssEndMB: +(last / 2 ** 20).toFixed(1),
      rssPeakMB: +(peak / 2 ** 20).toFixed(1),
      growthPercent: +((last / first - 1) * 100).toFixed(1),
      samplesMB: samples.map(s => +(s.rss / 2 ** 20).toFixed(1)),
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
  console.log(JSON.stringify(await soak(minutes, process.argv.includes('--heap'), extraEnv)))
}
