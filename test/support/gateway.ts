// Starts the gateway for tests: in-process on 127.0.0.1 port 0 (startGateway), or as a child process
// running exactly what `npm start` runs (spawnGateway) for crash, restart and shutdown tests.
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import path from 'node:path'
import { loadConfig } from '../../gateway/config.ts'
import type { GatewayConfig } from '../../gateway/config.ts'
import { createGateway } from '../../gateway/server.ts'
import { createLogger } from '../../gateway/logger.ts'
import type { Gateway, GatewayOptions } from '../../gateway/server.ts'
import type { Store } from '../../lib/index.ts'
import { createEmbeddedStore } from '../../lib/index.ts'
import { minuteStartClock } from './clock.ts'

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
/** Node 24 from the repo's own devDependency (the system node may be older). */
export const NODE = path.join(ROOT, 'node_modules/.bin/node')

export interface StartedGateway {
  url: string
  port: number
  config: GatewayConfig
  gateway: Gateway
  /** Every log line written so far, parsed. */
  logs: Array<Record<string, any>>
  close (): Promise<void>
}

export interface StartOptions extends Omit<GatewayOptions, 'logger'> {
  /** Also print log lines to stderr (debugging a test). Default false. */
  printLogs?: boolean
}

/**
 * The gateway in this process, on 127.0.0.1 and a free port. LOG_LEVEL defaults to info; lines are captured in `logs`.
 * With GEMINI_LIMITS set and no `now`, the gateway's clock is a minuteStartClock.
 */
export async function startGateway (env: Record<string, string> = {}, options: StartOptions = {}): Promise<StartedGateway> {
  // Model discovery off unless a test asks: the fakes' model list would otherwise decide the catalogue.
  const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', SHUTDOWN_TIMEOUT_SECONDS: '5', GEMINI_MODEL_DISCOVERY_HOURS: '0', ...env })
  const logs: Array<Record<string, any>> = []
  const sink = new Writable({
    write (chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim() === '') continue
        try { logs.push(JSON.parse(line)) } catch { logs.push({ raw: line }) }
        if (options.printLogs === true) process.stderr.write(line + '\n')
      }
      done()
    },
  })
  const { printLogs, ...gatewayOptions } = options
  void printLogs
  if (env.GEMINI_LIMITS !== undefined) gatewayOptions.now ??= minuteStartClock()
  const gateway = await createGateway(config, { ...gatewayOptions, logger: createLogger({ level: config.logLevel, destination: sink }) })
  const url = await gateway.start()
  return {
    url,
    port: gateway.server.info.port as number,
    config,
    gateway,
    logs,
    close: () => gateway.stop(),
  }
}

export interface SpawnedGateway {
  url: string
  child: ChildProcess
  /** Everything the process wrote so far. */
  output (): string
  /** JSON log lines from stdout so far. */
  logs (): Array<Record<string, any>>
  /** Sends `signal` (default SIGTERM) and resolves with how the process ended. */
  stop (signal?: NodeJS.Signals): Promise<{ code: number | null, signal: NodeJS.Signals | null }>
  /** Resolves when the process has ended (without signalling it). */
  exited: Promise<{ code: number | null, signal: NodeJS.Signals | null }>
}

export interface SpawnOptions {
  /** How long to wait for the URL. Default 60000 ms: a traced gateway starts slowly on a loaded 2-core machine. */
  startTimeoutMs?: number
  cwd?: string
  /** Node options before the gateway's own, e.g. ['--import', script]. */
  nodeArgs?: string[]
}

/**
 * Runs `node --import ./gateway/tracing.ts gateway/main.ts` (what `npm start` runs) with a minimal environment
 * plus `env`, and waits until it prints its URL. Rejects with the output if it exits first.
 */
export async function spawnGateway (env: Record<string, string> = {}, options: SpawnOptions = {}): Promise<SpawnedGateway> {
  const child = spawn(NODE, [...(options.nodeArgs ?? []), '--import', path.join(ROOT, 'gateway/tracing.ts'), path.join(ROOT, 'gateway/main.ts')], {
    cwd: options.cwd ?? ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', HOST: '127.0.0.1', PORT: '0', GEMINI_MODEL_DISCOVERY_HOURS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout!.on('data', (d: Buffer) => { out += d.toString('utf8') })
  child.stderr!.on('data', (d: Buffer) => { out += d.toString('utf8') })
  const exited = new Promise<{ code: number | null, signal: NodeJS.Signals | null }>(resolve => {
    child.once('exit', (code, signal) => resolve({ code, signal }))
  })
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`gateway did not start in time; output:\n${out}`)) }, options.startTimeoutMs ?? 60000)
    const onData = (): void => {
      const m = /listening on (http:\/\/[^\s"]+)/.exec(out)
      if (m !== null) { clearTimeout(timer); resolve(m[1]) }
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    void exited.then(({ code, signal }) => { clearTimeout(timer); reject(new Error(`gateway exited (code ${code}, signal ${signal}) before listening; output:\n${out}`)) })
  })
  return {
    url,
    child,
    output: () => out,
    logs: () => out.split('\n').flatMap(line => { try { return [JSON.parse(line)] } catch { return [] } }),
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      return await exited
    },
    exited,
  }
}

/**
 * An embedded in-memory store whose `ping` answers as told (readiness tests) and which records
 * flush/close calls (shutdown tests).
 */
export async function testStore (options: { ping?: () => Promise<void> } = {}): Promise<Store & { calls: string[] }> {
  const store = await createEmbeddedStore()
  const calls: string[] = []
  return {
    kind: store.kind,
    users: store.users,
    sessions: store.sessions,
    attempts: store.attempts,
    keys: store.keys,
    limits: store.limits,
    settings: store.settings,
    counters: store.counters,
    leases: store.leases,
    usage: store.usage,
    owners: store.owners,
    responses: store.responses,
    ping: options.ping ?? (() => store.ping()),
    flush: async () => { calls.push('flush'); await store.flush() },
    close: async () => { calls.push('close'); await store.close() },
    calls,
  }
}
