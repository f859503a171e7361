// Where a process's memory goes at its peak: loaded into the measured gateway with
//   GATEWAY_NODE_OPTIONS="--import ./bench/memory-peaks.ts" BENCH_ONLY=proxy npm run bench
// it samples process.memoryUsage() and V8's heap spaces every 50 ms and, on exit, writes the highest value of
// each, in MiB, to $MEMORY_PEAKS_FILE (default /tmp/gatehouse-memory-peaks.json).
import { readFileSync, writeFileSync } from 'node:fs'
import { getHeapSpaceStatistics } from 'node:v8'

const peaks: Record<string, number> = {}
function sample (): void {
  const usage = process.memoryUsage()
  if (usage.rss > (peaks.rss ?? 0)) {
    // At the RSS peak, how much of it is file pages (the node binary's code and data) and how much anonymous
    // memory (V8's heap, buffers, malloc): Linux only.
    try {
      const status = readFileSync('/proc/self/status', 'utf8')
      for (const field of ['RssFile', 'RssAnon']) peaks[`at rss peak: ${field}`] = Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) * 1024
    } catch {}
  }
  for (const [name, bytes] of Object.entries(usage)) peaks[name] = Math.max(peaks[name] ?? 0, bytes)
  for (const space of getHeapSpaceStatistics()) {
    const name = `heap ${space.space_name}`
    peaks[name] = Math.max(peaks[name] ?? 0, space.space_size)
  }
}
setInterval(sample, 50).unref()
process.once('exit', () => {
  sample()
  const mib = Object.fromEntries(Object.entries(peaks).filter(([, bytes]) => bytes > 0).map(([name, bytes]) => [name, Math.round(bytes / 1048576)]))
  writeFileSync(process.env.MEMORY_PEAKS_FILE ?? '/tmp/gatehouse-memory-peaks.json', JSON.stringify(mib, null, 2) + '\n')
})
