// The four coding agents the real-agent suite runs, pinned, installed from npm outside the library's dependencies
// into a cache directory (~/.cache/gatehouse-agents/<package>@<version>, reused between runs), and how each one is
// configured (the README's agent sections, test/agents/readme-config.ts) and run non-interactively.
import { execFile, spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { readmeConfig } from './readme-config.ts'

const run = promisify(execFile)

export type AgentId = 'gemini-cli' | 'opencode' | 'codex' | 'claude-code'

export interface Agent {
  id: AgentId
  name: string
  pkg: string
  /** The pinned version: the newest published when the suite was last brought up to date. */
  pinned: string
  bin: string
  /** The gateway surface it speaks. */
  surface: string
}

export const AGENTS: Agent[] = [
  { id: 'gemini-cli', name: 'Gemini CLI', pkg: '@google/gemini-cli', pinned: '0.61.0', bin: 'gemini', surface: 'native' },
  { id: 'opencode', name: 'opencode', pkg: 'opencode-ai', pinned: '1.18.33', bin: 'opencode', surface: 'chat completions' },
  { id: 'codex', name: 'Codex CLI', pkg: '@openai/codex', pinned: '0.171.0', bin: 'codex', surface: 'responses' },
  { id: 'claude-code', name: 'Claude Code', pkg: '@anthropic-ai/claude-code', pinned: '2.1.332', bin: 'claude', surface: 'messages' },
]

/** The cache of installed agents; GATEHOUSE_AGENTS_CACHE moves it. */
export function cacheDir (): string {
  return process.env.GATEHOUSE_AGENTS_CACHE ?? path.join(os.homedir(), '.cache', 'gatehouse-agents')
}

/** The newest published version of an agent (`npm view`). */
export async function latestVersion (agent: Agent): Promise<string> {
  const { stdout } = await run('npm', ['view', agent.pkg, 'version'], { timeout: 60_000 })
  return stdout.trim()
}

/**
 * The agent's executable at `version`, installed into the cache when it is not there yet. Install scripts stay off
 * (npm's default): every agent here runs from its package as published.
 */
export async function install (agent: Agent, version: string): Promise<string> {
  const dir = path.join(cacheDir(), `${agent.pkg.replace('/', '+')}@${version}`)
  const bin = path.join(dir, 'node_modules', '.bin', agent.bin)
  const manifest = path.join(dir, 'node_modules', ...agent.pkg.split('/'), 'package.json')
  if (existsSync(bin) && existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).version === version) return bin
  mkdirSync(dir, { recursive: true })
  writeFileSync(path.join(dir, 'package.json'), '{"private":true}\n')
  await run('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--loglevel=error', `${agent.pkg}@${version}`], { cwd: dir, timeout: 600_000 })
  if (!existsSync(bin)) throw new Error(`${agent.pkg}@${version} installed without ${agent.bin}`)
  return bin
}

export interface RunContext {
  /** The executable (install's answer). */
  bin: string
  /** The gateway's base URL, as the README writes http://127.0.0.1:8888. */
  url: string
  /** A member's ghk_ key. */
  key: string
  model: string
  home: string
  cwd: string
  prompt: string
  /** A directory holding `node` (the repo's Node 24), put first on PATH. */
  nodeDir: string
  /** Codex over the Responses WebSocket transport (the README's `supports_websockets = true`). Default false. */
  websocket?: boolean
}

export interface Invocation {
  args: string[]
  env: Record<string, string>
}

/** Environment every agent gets: a private HOME, no telemetry, no update checks, no colours. */
function baseEnv (ctx: RunContext): Record<string, string> {
  return {
    PATH: `${ctx.nodeDir}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: ctx.home,
    XDG_CONFIG_HOME: path.join(ctx.home, '.config'),
    XDG_DATA_HOME: path.join(ctx.home, '.local', 'share'),
    XDG_CACHE_HOME: path.join(ctx.home, '.cache'),
    XDG_STATE_HOME: path.join(ctx.home, '.local', 'state'),
    TMPDIR: os.tmpdir(),
    TERM: 'dumb',
    NO_COLOR: '1',
    CI: '1',
    LANG: 'C.UTF-8',
  }
}

function merge (base: Record<string, any>, over: Record<string, any>): Record<string, any> {
  const out = { ...base }
  for (const [k, v] of Object.entries(over)) {
    out[k] = v !== null && typeof v === 'object' && typeof out[k] === 'object' ? merge(out[k], v) : v
  }
  return out
}

function write (file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true })
  writeFileSync(file, text)
}

/** Writes the agent's configuration into ctx.home and answers how to run it. */
export function invocation (agent: Agent, ctx: RunContext): Invocation {
  const config = readmeConfig(agent.id, { url: ctx.url, key: ctx.key, model: ctx.model, websocket: ctx.websocket })
  const env = { ...baseEnv(ctx), ...config.env }
  for (const [file, text] of Object.entries(config.files)) write(path.join(ctx.home, file), text)
  switch (agent.id) {
    case 'gemini-cli':
      // Settings only a test run needs, over the README's: no usage statistics, no update check, the folder trusted.
      write(path.join(ctx.home, '.gemini', 'settings.json'), JSON.stringify(merge(JSON.parse(config.files['.gemini/settings.json'] ?? '{}'), {
        privacy: { usageStatisticsEnabled: false },
        general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
        security: { folderTrust: { enabled: false } },
        telemetry: { enabled: false },
      }), null, 2))
      return { args: ['-m', ctx.model, '--approval-mode', 'yolo', '-p', ctx.prompt], env }
    case 'opencode':
      return {
        args: ['run', '--model', `gatehouse/${ctx.model}`, ctx.prompt],
        env: { ...env, OPENCODE_DISABLE_AUTOUPDATE: 'true', OPENCODE_DISABLE_MODELS_FETCH: 'true', OPENCODE_DISABLE_LSP_DOWNLOAD: 'true', OPENCODE_DISABLE_DEFAULT_PLUGINS: 'true', OPENCODE_PURE: 'true', OPENCODE_DISABLE_CLAUDE_CODE: 'true', OPENCODE_DISABLE_EXTERNAL_SKILLS: 'true', OPENCODE_EXPERIMENTAL_DISABLE_FILEWATCHER: 'true', OPENCODE_DISABLE_SHARE: 'true', OPENCODE_PERMISSION: '{"edit":"allow","bash":"allow","external_directory":"allow"}' },
      }
    case 'codex':
      return { args: ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', '-C', ctx.cwd, ctx.prompt], env: { ...env, CODEX_HOME: path.join(ctx.home, '.codex') } }
    case 'claude-code':
      return {
        args: ['-p', ctx.prompt, '--permission-mode', 'acceptEdits', '--allowedTools', 'Bash,Write,Read,Edit'],
        env: { ...env, DISABLE_AUTOUPDATER: '1', DISABLE_TELEMETRY: '1', DISABLE_ERROR_REPORTING: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' },
      }
  }
}

export interface AgentRun {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  timedOut: boolean
  ms: number
}

/** Runs the agent to its end, or kills it (its whole process group) after timeoutMs. */
export async function runAgent (agent: Agent, ctx: RunContext, timeoutMs = 150_000): Promise<AgentRun> {
  const { args, env } = invocation(agent, ctx)
  const started = Date.now()
  const child = spawn(ctx.bin, args, { cwd: ctx.cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d: Buffer) => { stdout += d.toString('utf8') })
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString('utf8') })
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    try { process.kill(-(child.pid as number), 'SIGKILL') } catch {}
  }, timeoutMs)
  const { code, signal } = await new Promise<{ code: number | null, signal: NodeJS.Signals | null }>(resolve => child.once('close', (c, s) => resolve({ code: c, signal: s })))
  clearTimeout(timer)
  // Whatever the agent left running in its group (a shell, an LSP) ends with it.
  try { process.kill(-(child.pid as number), 'SIGKILL') } catch {}
  return { code, signal, stdout, stderr, timedOut, ms: Date.now() - started }
}
