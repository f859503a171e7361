// node bench/bare-overhead.ts [µs,…]: how much of a bare Hapi route's rate a route keeps when each request costs it
// n more microseconds of CPU (default 0,5,10,15,30), under the validate row's load (16 connections; rounds
// alternate with the bare route, as npm run bench does). It shows what the validate target (0.6 of the bare
// route) leaves for the gateway's own work: on two shared cores every microsecond also makes the kernel's socket
// write dearer (the load generator is more often asleep and must be woken), so the rate falls faster than the
// CPU time alone says.
import { join } from 'node:path'
import { median } from './load.ts'
import { createProcessGroup, root } from './processes.ts'

const spins = (process.argv[2] ?? '0,5,10,15,30').split(',').map(Number)
const rounds = 3
const processes = createProcessGroup()
try {
  const bare = await processes.start([join(root, 'bench/bare-hapi.ts')])
  console.log('| added work per request | req/s | of the bare route |\n| --- | --- | --- |')
  for (const spin of spins) {
    const slow = await processes.start([join(root, 'bench/bare-hapi.ts')], { BARE_SPIN_US: String(spin) })
    const ratios: number[] = []
    const rates: number[] = []
    for (let round = 0; round < rounds; round++) {
      const load = async (url: string): Promise<number> => (await processes.load({ url: `${url}/bare`, connections: 16, durationMs: 1000, warmupMs: 1000 })).rps
      // The order alternates, as in npm run bench, so a drift of the host's speed hits both alike.
      let base: number
      let measured: number
      if (round % 2 === 0) {
        base = await load(bare.url)
        measured = await load(slow.url)
      } else {
        measured = await load(slow.url)
        base = await load(bare.url)
      }
      ratios.push(measured / base)
      rates.push(measured)
    }
    console.log(`| ${spin} µs | ${median(rates).toFixed(0)} | ${median(ratios).toFixed(2)} |`)
    await processes.stop(slow)
  }
} finally {
  await processes.stopAll()
}
