// The processes a benchmark starts: servers that print "listening on <url>", and one-shot scripts that
// print one JSON line. Server output goes to a file, as a log shipper would take it: a pipe drained by the
// benchmark would compete with the measured servers for CPU.
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { readFile, rm } from 'node:fs/promises'
import { openSync, closeSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { fileURLToPath } from 'node:url'
import { dirname, join } from 'node:path'
import type { LoadResult, LoadSpec } from './load.ts'
import { inMemoryLimit } from './memory-limit.ts'
import type { MemoryLimit } from './memory-limit.ts'

export const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/**
 * User plus system CPU time so far of a process and every process under it, in microseconds (Linux /proc, clock
 * ticks of 10 ms); NaN where /proc cannot tell.
 */
export function treeCpuMicros (pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    let micros = (Number(fields[11]) + Number(fields[12])) * 10_000
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(c => c !== '')
    for (const child of children) micros += treeCpuMicros(Number(child))
    return micros
  } catch {
    return NaN
  }
}

export interface Started {
  child: ChildProcess
  /** The "listening on …" line and the rest of it. */
  line: string
  url: string
}

export interface ProcessGroup {
  /** Starts `node args…` in `cwd` (default the repository), inside `memoryLimit` if given, and waits up to 30 s for its URL. */
  start (args: string[], env?: Record<string, string>, cwd?: string, memoryLimit?: MemoryLimit): Promise<Started>
  /** Runs a script with one JSON argument; resolves with the JSON line it prints. */
  runJson<T> (script: string, spec: unknown): Promise<T>
  /** Runs bench/load.ts once. */
  load (spec: LoadSpec): Promise<LoadResult>
  /** SIGTERM to one server; resolves once it exited. */
  stop (started: Started): Promise<void>
  /** SIGTERM to every server started (waiting up to 10 s for them to exit), and their log files removed. */
  stopAll (): Promise<void>
}

export function createProcessGroup (): ProcessGroup {
  const children: ChildProcess[] = []
  const logFiles: string[] = []
  const node = process.execPath

  async function runJson<T> (script: string, spec: unknown): Promise<T> {
    const child = spawn(node, [join(root, script), JSON.stringify(spec)], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (d: Buffer) => { out += d.toString() })
    await new Promise(resolve => child.once('exit', resolve))
    return JSON.parse(out) as T
  }

  return {
    async start (args, env = {}, cwd = root, memoryLimit) {
      const logFile = join(tmpdir(), `gatehouse-bench-${process.pid}-${children.length}.log`)
      const fd = openSync(logFile, 'w')
      const [command, ...rest] = inMemoryLimit(memoryLimit, [node, ...args])
      const child = spawn(command, rest, { cwd, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', fd, fd] })
      closeSync(fd)
      children.push(child)
      logFiles.push(logFile)
      let exited = false
      child.once('exit', () => { exited = true })
      const deadline = Date.now() + 30_000
      for (;;) {
        const out = await readFile(logFile, 'utf8')
        const m = /listening on (http:\/\/[^\s"]+)(.*)/.exec(out)
        if (m !== null) return { child, line: m[0], url: m[1].replace(/\/$/, '') }
        if (exited || Date.now() > deadline) throw new Error(`${args.join(' ')} did not print its URL within 30 s:\n${out}`)
        await new Promise(resolve => setTimeout(resolve, 50))
      }
    },
    runJson,
    load: async (spec) => await runJson<LoadResult>('bench/load.ts', spec),
    async stop ({ child }) {
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = new Promise(resolve => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    },
    async stopAll () {
      const running = children.filter(child => child.exitCode === null && child.signalCode === null)
      const exited = running.map(child => new Promise(resolve => child.once('exit', resolve)))
      for (const child of running) child.kill('SIGTERM')
      // Waited for, so a memory cgroup they ran in can be removed; a server that hangs is not waited on for ever.
      await Promise.race([Promise.all(exited), new Promise(resolve => setTimeout(resolve, 10_000).unref())])
      for (const file of logFiles) await rm(file, { force: true })
    },
  }
}
