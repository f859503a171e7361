// node bench/large-bodies.ts [N] [MB] [gateway dir]: the built gateway (dist/ of the given checkout, default this
// one) under the chart's default memory limit (a 512 MiB cgroup, bench/memory-limit.ts), sent N (default 8)
// concurrent chat completions that each carry a PNG of MB megabytes (default 18: a 24 MB body) as a data URL.
// Prints each answer's status, how long the batch took, the gateway's peak RSS, and whether it survived.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { CHART_MEMORY_LIMIT_MIB, benchMemoryLimit } from './memory-limit.ts'
import { createProcessGroup, root } from './processes.ts'
import { GATEWAY_NODE_FLAGS, PROXY_PASSWORD, gatewayEnv } from './workloads.ts'

const count = Number(process.argv[2] ?? 8)
const megabytes = Number(process.argv[3] ?? 18)
const dir = process.argv[4] ?? root

const processes = createProcessGroup()
const memory = benchMemoryLimit()
try {
  console.log(memory.description)
  if (memory.limit === undefined) console.log(`(the figures below are meaningful only under a limit such as the chart's ${CHART_MEMORY_LIMIT_MIB} MiB)`)
  const fake = await processes.start([join(root, 'bench/fake-server.ts')])
  const gateway = await processes.start([...GATEWAY_NODE_FLAGS, join(dir, 'dist/gateway/main.js')],
    gatewayEnv(fake.url, /token (\S+)/.exec(fake.line)?.[1] as string), dir, memory.limit)
  const image = Buffer.alloc(Math.round(megabytes * 1024 * 1024), 7)
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(image)
  const body = JSON.stringify({
    model: 'gemini-2.5-flash',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'What is in this picture?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${image.toString('base64')}` } }] }],
  })
  console.log(`${count} concurrent requests of ${(body.length / 1048576).toFixed(1)} MB each`)
  const began = performance.now()
  const answers = await Promise.allSettled(Array.from({ length: count }, async () => {
    const res = await fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${PROXY_PASSWORD}` }, body })
    await res.arrayBuffer()
    return res.status
  }))
  const seconds = (performance.now() - began) / 1000
  const outcomes = new Map<string, number>()
  for (const a of answers) {
    const key = a.status === 'fulfilled' ? `HTTP ${a.value}` : `failed: ${String((a.reason as Error & { cause?: Error }).cause?.message ?? a.reason)}`
    outcomes.set(key, (outcomes.get(key) ?? 0) + 1)
  }
  for (const [outcome, n] of outcomes) console.log(`  ${n} × ${outcome}`)
  // A process the kernel's OOM killer took may not have been reaped yet: give its exit a moment to arrive.
  await new Promise(resolve => setTimeout(resolve, 500))
  let status = ''
  try { status = readFileSync(`/proc/${gateway.child.pid}/status`, 'utf8') } catch {}
  const alive = gateway.child.exitCode === null && gateway.child.signalCode === null && status !== ''
  const peak = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024
  console.log(`in ${seconds.toFixed(1)} s; gateway ${alive ? `alive, peak RSS ${peak.toFixed(0)} MB` : `dead (${gateway.child.signalCode ?? `exit ${gateway.child.exitCode}`})`}`)
} finally {
  await processes.stopAll()
  memory.limit?.remove()
}
