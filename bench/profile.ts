// node bench/profile.ts [validate|chat|key|stream|paced] [connections]: the built gateway (npm run build first) under one load
// of `npm run bench` with the CPU profiler on, then its profile summed per request by bench/profile-summary.ts.
// Defaults: validate with 16 connections; chat and streams (back to back, or paced) with 64, against the fake upstream;
// key: chat at 16 with a user's key and GEMINI_LIMITS on, as bench/run.ts's row "user key with limits on".
// BENCH_SECONDS sets the load's duration (default 5); the profile is left in /tmp/gatehouse-profile.
import { execFileSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { createProcessGroup, root } from './processes.ts'
import { BENCH_LIMITS, GATEWAY_NODE_FLAGS, PACED_MODEL, accountLoads, chatLoad, gatewayEnv, userKey } from './workloads.ts'

const MODES = ['validate', 'chat', 'key', 'stream', 'paced']
const [mode = 'validate', connectionsArg] = process.argv.slice(2)
if (!MODES.includes(mode)) {
  console.error(`usage: node bench/profile.ts [${MODES.join('|')}] [connections]`)
  process.exit(2)
}
const dir = '/tmp/gatehouse-profile'
rmSync(dir, { recursive: true, force: true })
const processes = createProcessGroup()
let requests: number
try {
  const fake = await processes.start([join(root, 'bench/fake-server.ts')])
  const env = { ...gatewayEnv(fake.url, /token (\S+)/.exec(fake.line)?.[1] as string), ...(mode === 'key' ? { GEMINI_LIMITS: BENCH_LIMITS } : {}) }
  const gateway = await processes.start([...GATEWAY_NODE_FLAGS, '--cpu-prof', `--cpu-prof-dir=${dir}`, join(root, 'dist/gateway/main.js')], env)
  const connections = Number(connectionsArg ?? (mode === 'validate' || mode === 'key' ? 16 : 64))
  const load = mode === 'validate'
    ? { ...(await accountLoads(gateway.url)).validate, connections }
    : mode === 'key'
      ? chatLoad(gateway.url, false, connections, undefined, await userKey(gateway.url))
      : chatLoad(gateway.url, mode !== 'chat' && mode !== 'key', connections, mode === 'paced' ? PACED_MODEL : undefined)
  const result = await processes.load({ ...load, durationMs: Number(process.env.BENCH_SECONDS ?? 5) * 1000, warmupMs: 1000 })
  requests = result.allRequests
  console.log(`${mode}: ${result.rps.toFixed(0)} req/s, p50 ${result.p50.toFixed(2)} ms; ${requests} requests in the profile`)
  await processes.stop(gateway)
} finally {
  await processes.stopAll()
}
console.log(execFileSync(process.execPath, [join(root, 'bench/profile-summary.ts'), dir, String(requests), '30'], { encoding: 'utf8' }))
