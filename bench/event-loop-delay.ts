// Loaded into a measured gateway with --import: on each SIGUSR2 it writes the longest event-loop delay seen
// since the previous one (perf_hooks monitorEventLoopDelay, sampled every millisecond) to $EVENT_LOOP_FILE as
// {"seq", "max_ms", "p99_ms"}, and starts afresh. The first signal only starts the measurement (start-up, with its
// module loading, is not what is measured).
import { writeFileSync } from 'node:fs'
import { monitorEventLoopDelay } from 'node:perf_hooks'

const file = process.env.EVENT_LOOP_FILE ?? '/tmp/gatehouse-event-loop.json'
const delay = monitorEventLoopDelay({ resolution: 1 })
let seq = 0
process.on('SIGUSR2', () => {
  if (seq > 0) {
    // The histogram counts the 1 ms sampling interval in every delay: what remains is the time the loop was held.
    const held = (ns: number): number => Math.max(0, ns / 1e6 - 1)
    writeFileSync(file, JSON.stringify({ seq, max_ms: held(delay.max), p99_ms: held(delay.percentile(99)) }) + '\n')
  }
  seq++
  delay.reset()
  delay.enable()
})
