// A closed-loop HTTP load generator, run as its own process so it never shares an event loop with the
// server it measures. Built on undici's keep-alive Pool; latencies timed with performance.now()
// (autocannon records whole milliseconds, too coarse for sub-millisecond overheads).
// Input: one JSON LoadSpec as argv[2]. Output: one JSON LoadResult line on stdout.
import { Pool } from 'undici'

export interface LoadSpec {
  url: string
  method?: string
  headers?: Record<string, string>
  body?: string
  connections: number
  durationMs: number
  warmupMs?: number
  /** Read the response as a stream and time the first body chunk too. */
  stream?: boolean
}

export interface LoadResult {
  requests: number
  /** Every request answered, warm-up included: for sums over the server's whole run (CPU, profiles). */
  allRequests: number
  errors: number
  rps: number
  p50: number
  p99: number
  /** Time to first body chunk (streams only), ms. */
  ttfbP50?: number
  ttfbP99?: number
}

function percentile (sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]
}

async function run (spec: LoadSpec): Promise<LoadResult> {
  const url = new URL(spec.url)
  const pool = new Pool(url.origin, { connections: spec.connections, pipelining: 1 })
  const path = url.pathname + url.search
  const latencies: number[] = []
  const ttfbs: number[] = []
  let errors = 0
  let answered = 0
  let recording = false
  let stop = false

  async function one (): Promise<void> {
    const start = performance.now()
    try {
      const { statusCode, body } = await pool.request({ path, method: (spec.method ?? 'GET') as 'GET', headers: spec.headers, body: spec.body })
      let first = 0
      for await (const chunk of body) {
        if (first === 0 && (chunk as Buffer).length > 0) first = performance.now()
      }
      const end = performance.now()
      answered++
      if (!recording) return
      if (statusCode >= 400) { errors++; return }
      latencies.push(end - start)
      if (spec.stream === true) ttfbs.push(first - start)
    } catch {
      if (recording) errors++
    }
  }

  async function worker (): Promise<void> {
    while (!stop) await one()
  }

  const workers = Array.from({ length: spec.connections }, worker)
  await new Promise(resolve => setTimeout(resolve, spec.warmupMs ?? 500))
  recording = true
  const began = performance.now()
  await new Promise(resolve => setTimeout(resolve, spec.durationMs))
  recording = false
  const elapsed = performance.now() - began
  stop = true
  await Promise.all(workers)
  await pool.close()

  latencies.sort((a, b) => a - b)
  ttfbs.sort((a, b) => a - b)
  const result: LoadResult = {
    requests: latencies.length,
    allRequests: answered,
    errors,
    rps: latencies.length / (elapsed / 1000),
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99)
  }
  if (spec.stream === true) {
    result.ttfbP50 = percentile(ttfbs, 0.5)
    result.ttfbP99 = percentile(ttfbs, 0.99)
  }
  return result
}

if (import.meta.main) {
  const spec = JSON.parse(process.argv[2]) as LoadSpec
  process.stdout.write(JSON.stringify(await run(spec)) + '\n')
}
