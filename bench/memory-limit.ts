// The memory limit the gateway is benchmarked under: the Helm chart's default `resources.limits.memory`
// (512 MiB), applied the way Kubernetes applies it, through a memory cgroup. It matters beyond the limit
// itself: Node sizes V8's heap from the cgroup's limit (in a 512 MiB cgroup the heap limit is 259 MB instead
// of 4 GB on a 24 GiB host), and V8 then collects its old space far sooner. A gateway measured without it
// would show a peak RSS no deployed pod shows.
// Needs a writable cgroup hierarchy (root in a container, or a delegated cgroup); without one the gateway
// runs unconstrained and the runner says so.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** The chart's default resources.limits.memory, in MiB. */
export const CHART_MEMORY_LIMIT_MIB = 512

export interface MemoryLimit {
  mib: number
  /** The file a process writes its pid to, to enter the cgroup. */
  procsFile: string
  /** Removes the cgroup; call once every process in it has exited. */
  remove (): void
}

/** A fresh memory cgroup limited to `mib`, or the reason none could be made. */
export function createMemoryLimit (mib: number, name = `gatehouse-bench-${process.pid}`): MemoryLimit | { reason: string } {
  const bytes = String(mib * 1024 * 1024)
  // cgroup v2 where its memory controller is available, else the v1 memory hierarchy.
  const candidates = [
    { root: '/sys/fs/cgroup', limitFile: 'memory.max', usable: () => readFileSync('/sys/fs/cgroup/cgroup.subtree_control', 'utf8').includes('memory') },
    { root: '/sys/fs/cgroup/memory', limitFile: 'memory.limit_in_bytes', usable: () => existsSync('/sys/fs/cgroup/memory/memory.limit_in_bytes') },
  ]
  const problems: string[] = []
  for (const candidate of candidates) {
    try {
      if (!candidate.usable()) continue
      const dir = join(candidate.root, name)
      mkdirSync(dir, { recursive: true })
      writeFileSync(join(dir, candidate.limitFile), bytes)
      return { mib, procsFile: join(dir, 'cgroup.procs'), remove: () => { try { rmdirSync(dir) } catch {} } }
    } catch (err) {
      problems.push(`${candidate.root}: ${(err as Error).message}`)
    }
  }
  return { reason: problems.length > 0 ? problems.join('; ') : 'no cgroup memory controller found' }
}

/** `command` wrapped so that it enters the cgroup before it starts (the heap is sized at start). */
export function inMemoryLimit (limit: MemoryLimit | undefined, command: string[]): string[] {
  if (limit === undefined) return command
  return ['/bin/sh', '-c', 'echo $$ > "$0" && exec "$@"', limit.procsFile, ...command]
}

/**
 * The limit the benchmarks run the gateway under: BENCH_MEMORY_LIMIT_MIB (default the chart's 512; 0 for none),
 * with a line saying what was applied.
 */
export function benchMemoryLimit (suffix = ''): { limit?: MemoryLimit, description: string } {
  const mib = Number(process.env.BENCH_MEMORY_LIMIT_MIB ?? CHART_MEMORY_LIMIT_MIB)
  if (!(mib > 0)) return { description: 'gateway memory limit: none (BENCH_MEMORY_LIMIT_MIB=0)' }
  const made = createMemoryLimit(mib, `gatehouse-bench-${process.pid}${suffix}`)
  if ('reason' in made) return { description: `gateway memory limit: none, no cgroup could be made (${made.reason})` }
  return { limit: made, description: `gateway memory limit: ${mib} MiB (a memory cgroup, like the chart's resources.limits.memory)` }
}
