// node bench/syscalls.ts [rounds] [connections]: system calls and CPU per stream of the back-to-back streaming load
// (20 chunks, default 64 connections) through the bare relay, the bare Hapi relay, the bare Hapi translator and the
// built gateway (npm run build first), each in turn for 2 s per round (default 3 rounds). Read and write calls are
// each process's `syscr` and `syscw` (/proc/<pid>/io) around the load; CPU is its process tree's user + system time.
// Nothing is traced, so the figures are those of the process as it runs.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createProcessGroup, root, treeCpuMicros } from './processes.ts'
import { GATEWAY_NODE_FLAGS, chatLoad, directLoad, gatewayEnv } from './workloads.ts'

const rounds = Number(process.argv[2] ?? 3)
const connections = Number(process.argv[3] ?? 64)

function counts (pid: number): { reads: number, writes: number, cpu: number } {
  const io = readFileSync(`/proc/${pid}/io`, 'utf8')
  const field = (name: string): number => Number(new RegExp(`${name}: (\\d+)`).exec(io)?.[1] ?? NaN)
  return { reads: field('syscr'), writes: field('syscw'), cpu: treeCpuMicros(pid) }
}

const processes = createProcessGroup()
try {
  const fake = await processes.start([join(root, 'bench/fake-server.ts')])
  const servers = [
    { name: 'bare relay', started: await processes.start([...GATEWAY_NODE_FLAGS, join(root, 'bench/relay.ts'), fake.url]), chat: false },
    { name: 'bare Hapi relay', started: await processes.start([...GATEWAY_NODE_FLAGS, join(root, 'bench/bare-hapi-relay.ts'), fake.url]), chat: false },
    { name: 'bare Hapi translator', started: await processes.start([...GATEWAY_NODE_FLAGS, join(root, 'bench/bare-hapi-translator.ts'), fake.url]), chat: true },
    { name: 'gateway', started: await processes.start([...GATEWAY_NODE_FLAGS, join(root, 'dist/gateway/main.js')], gatewayEnv(fake.url, /token (\S+)/.exec(fake.line)?.[1] as string)), chat: true },
  ]
  console.log('| round | server | streams | reads per stream | writes per stream | CPU µs per stream |\n| --- | --- | --- | --- | --- | --- |')
  for (let round = 1; round <= rounds; round++) {
    for (const { name, started, chat } of servers) {
      const pid = started.child.pid as number
      const load = chat ? chatLoad(started.url, true, connections) : directLoad(started.url, true, connections)
      const before = counts(pid)
      const { requests } = await processes.load({ ...load, durationMs: 2000, warmupMs: 0 })
      const after = counts(pid)
      const per = (n: number): string => (n / requests).toFixed(2)
      console.log(`| ${round} | ${name} | ${requests} | ${per(after.reads - before.reads)} | ${per(after.writes - before.writes)} | ${((after.cpu - before.cpu) / requests).toFixed(0)} |`)
    }
  }
} finally {
  await processes.stopAll()
}
