// node bench/profile-validate.ts: the built gateway (npm run build first) under the validate load of
// `npm run bench` with the CPU profiler on, then its profile summed per request by bench/profile-summary.ts.
// BENCH_SECONDS sets the load's duration (default 5); the profile is left in /tmp/gatehouse-profile.
import { execFileSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { createProcessGroup, root } from './processes.ts'
import { GATEWAY_NODE_FLAGS, accountLoads } from './workloads.ts'

const dir = '/tmp/gatehouse-profile'
rmSync(dir, { recursive: true, force: true })
const processes = createProcessGroup()
let requests = 0
try {
  const gateway = await processes.start([...GATEWAY_NODE_FLAGS, '--cpu-prof', `--cpu-prof-dir=${dir}`, join(root, 'dist/gateway/main.js')],
    { HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', AUTH_ADMIN_PASSWORD: 'bench-admin-password' })
  const { validate } = await accountLoads(gateway.url)
  const result = await processes.load({ ...validate, durationMs: Number(process.env.BENCH_SECONDS ?? 5) * 1000, warmupMs: 1000 })
  requests = result.allRequests
  console.log(`validate: ${result.rps.toFixed(0)} req/s, p50 ${result.p50.toFixed(2)} ms; ${requests} requests in the profile`)
  await processes.stop(gateway)
} finally {
  await processes.stopAll()
}
console.log(execFileSync(process.execPath, [join(root, 'bench/profile-summary.ts'), dir, String(requests), '25'], { encoding: 'utf8' }))
