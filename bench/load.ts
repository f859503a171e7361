// A closed-loop HTTP load generator, run as its own process so it never shares an event loop with the
// server it measures. Built on undici's keep-alive Pool (dispatch() with callbacks, the cheapest way to drive it);
// latencies timed with performance.now()
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

/** The median of figures from several rounds (the benchmarks' way of smoothing the host's drift). */
export function median (xs: number[]): number {
  return percentile([...xs].sort((a, b) => a - b), 0.5)
}

async function run (spec: LoadSpec): Promise<LoadResult> {
  const url = new URL(spec.url)
  const pool = new Pool(url.origin, { connections: spec.connections, pipelining: 1 })
  const path = url.pathname + url.search
  const method = spec.method ?? 'GET'
  const latencies: number[] = []
  const ttfbs: number[] = []
  let errors = 0
  let answered = 0
  let recording = false
  let stop = false

  /**
   * One request through undici's dispatch() with a callback handler: request() would also build a body stream
   * and promises per request, and that work, in the generator's process, competes with the measured server for
   * the same two cores (it cost about 50 µs per request, more than a bare Hapi route). Calls `done` when the
   * response ended or failed.
   */
  function one (done: () => void): void {
    const start = performance.now()
    let status = 0
    let first = 0
    let settled = false
    const finish = (failed: boolean): void => {
      if (settled) return
      settled = true
      const end = performance.now()
      if (!failed) answered++
      if (recording) {
        if (failed || status >= 400) errors++
        else {
          latencies.push(end - start)
          if (spec.stream === true) ttfbs.push(first - start)
        }
      }
      done()
    }
    pool.dispatch({ path, method: method as 'GET', headers: spec.headers, body: spec.body }, {
      onRequestStart () {},
      onResponseStart (_controller, statusCode) { status = statusCode },
      onResponseData (_controller, chunk) {
        if (first === 0 && chunk.length > 0) first = performance.now()
      },
      onResponseEnd () { finish(false) },
      onResponseError () { finish(true) },
    })
  }

  function worker (): Promise<void> {
    return new Promise(resolve => {
      const next = (): void => { if (stop) resolve(); else one(next) }
      next()
    })
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
