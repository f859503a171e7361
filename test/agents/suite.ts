// One real-agent case: an agent, at a version, on a model, runs the task against the stage (test/agents/stage.ts) in a
// temp HOME and working directory; the case passes when the file on disk holds what the model wrote, the agent's
// final answer quotes it, and every signature it sent back was one the fake issued.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import { NODE } from '../support/gateway.ts'
import { runAgent } from './agents.ts'
import type { Agent, AgentRun } from './agents.ts'
import { scriptedModel } from './scripted-model.ts'
import type { Stage, Exchange } from './stage.ts'

/** The models every agent runs on: the README's Gemini 3 flash and one Gemini 4 model. */
export const MODELS = ['gemini-3.8-flash', 'gemini-4-argon']

export interface CaseResult {
  agent: Agent
  version: string
  model: string
  /** Codex over the Responses WebSocket transport. */
  websocket: boolean
  ok: boolean
  /** Why it failed, one line each. */
  problems: string[]
  steps: string[]
  run: AgentRun
  exchanges: Exchange[]
  /** What the gateway sent the Google fake for this case: path and body of each call. */
  upstream: Array<{ path: string, body: any }>
  /** What the gateway refused (status >= 400), one line each: the agent may have gone on without it. */
  refused: string[]
  signatures: { issued: number, returned: number, foreign: number }
}

const PROMPT = 'Create a file named notes.txt in the current directory, read it back with a shell command, and tell me exactly what it says.'

let nodeDir: string | undefined
/** A directory holding only `node` (the repo's Node 24), for the agents' PATH. */
function nodeOnly (): string {
  if (nodeDir !== undefined && existsSync(nodeDir)) return nodeDir
  nodeDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-agents-node-'))
  symlinkSync(NODE, path.join(nodeDir, 'node'))
  return nodeDir
}

export async function runCase (stage: Stage, agent: Agent, bin: string, version: string, model: string, options: { timeoutMs?: number, keep?: boolean, websocket?: boolean } = {}): Promise<CaseResult> {
  const websocket = options.websocket === true
  const root = mkdtempSync(path.join(os.tmpdir(), `gatehouse-${agent.id}-`))
  const home = path.join(root, 'home')
  const cwd = path.join(root, 'work')
  mkdirSync(home, { recursive: true })
  mkdirSync(cwd, { recursive: true })
  const content = `gatehouse-${agent.id}-${randomBytes(4).toString('hex')}`
  const file = path.join(cwd, 'notes.txt')
  const scripted = scriptedModel({ file, content })
  stage.fake.script = scripted.script
  stage.take()
  const key = await stage.memberKey(`${agent.id.replace(/-/g, '_')}_${randomBytes(4).toString('hex')}`)
  stage.take()
  const upstreamFrom = stage.fake.requests.length
  const logsFrom = stage.gateway.logs.length
  const run = await runAgent(agent, { bin, url: stage.url, key, model, home, cwd, prompt: PROMPT, nodeDir: nodeOnly(), websocket }, options.timeoutMs)
  stage.fake.script = undefined
  const exchanges = stage.take()
  const upstream = stage.fake.requests.slice(upstreamFrom).map(r => ({ path: r.path, body: r.body }))
  const refused = exchanges.filter(e => e.status >= 400).map(e => `${e.method} ${e.path} → ${e.status} ${JSON.stringify(e.error).slice(0, 300)}`)
  const problems: string[] = []
  if (run.timedOut) problems.push(`timed out after ${run.ms} ms`)
  else if (run.code !== 0) problems.push(`exited with code ${run.code ?? run.signal}`)
  const written = existsSync(file) ? readFileSync(file, 'utf8') : undefined
  if (written === undefined) problems.push('notes.txt was not written')
  else if (written.trim() !== content) problems.push(`notes.txt holds ${JSON.stringify(written.slice(0, 100))}`)
  if (!run.stdout.includes(`It says: "${content}"`)) problems.push('the final answer does not quote the file')
  if (!scripted.steps.includes('answer')) problems.push(`the model never answered (steps: ${scripted.steps.join(', ') || 'none'})`)
  if (scripted.foreign.size > 0) problems.push(`sent back ${scripted.foreign.size} signature(s) the fake never issued`)
  if (scripted.returned.size < scripted.issued.size) problems.push(`sent back ${scripted.returned.size} of ${scripted.issued.size} signatures`)
  problems.push(...agentRules(agent, scripted.steps, upstream))
  if (websocket) problems.push(...overSocket(exchanges, stage.gateway.logs.slice(logsFrom)))
  if (options.keep !== true) rmSync(root, { recursive: true, force: true })
  return {
    agent,
    version,
    model,
    websocket,
    ok: problems.length === 0,
    problems,
    steps: scripted.steps,
    run,
    exchanges,
    upstream,
    refused,
    signatures: { issued: scripted.issued.size, returned: scripted.returned.size, foreign: scripted.foreign.size },
  }
}

/** What issue 28 asks of one agent beyond the task: Codex patches with apply_patch, Claude Code thinks. */
function agentRules (agent: Agent, steps: string[], upstream: Array<{ path: string, body: any }>): string[] {
  if (agent.id === 'codex' && !steps.includes('write apply_patch')) return ['Codex offered no apply_patch (is model_catalog_url in its provider block?)']
  const thinking = upstream.filter(u => Array.isArray(u.body?.tools)).every(u => u.body?.generationConfig?.thinkingConfig?.includeThoughts === true)
  if (agent.id === 'claude-code' && !thinking) return ['Claude Code\'s calls reached Gemini without thinking']
  return []
}

/**
 * Codex over the WebSocket: its turns came over an upgraded GET /v1/responses, none as a POST, and the gateway logged
 * each as a request served over the socket (gateway/socket-log.ts).
 */
export function overSocket (exchanges: Exchange[], logs: Array<Record<string, any>>): string[] {
  const problems: string[] = []
  const upgraded = exchanges.filter(e => e.method === 'GET' && e.path.split('?')[0] === '/v1/responses' && e.status === 101)
  const posted = exchanges.filter(e => e.method === 'POST' && e.path.split('?')[0] === '/v1/responses')
  const turns = logs.filter(l => l.msg === 'request' && l.transport === 'websocket' && l.method === 'POST' && l.route === '/v1/responses')
  if (upgraded.length === 0) problems.push('Codex opened no WebSocket (is supports_websockets in its provider block?)')
  if (posted.length > 0) problems.push(`${posted.length} turn(s) came as POST /v1/responses, not over the socket`)
  if (turns.filter(l => l.status === 200).length < 3) problems.push(`the gateway logged ${turns.length} turn(s) over the socket, fewer than the task's 3`)
  return problems
}

/** Writes a case's requests, one JSON file each, under dir/<agent>@<version>/<model>/. */
export function recordCase (dir: string, result: CaseResult): string {
  const out = path.join(dir, `${result.agent.id}@${result.version}${result.websocket ? '-websocket' : ''}`, result.model)
  rmSync(out, { recursive: true, force: true })
  mkdirSync(out, { recursive: true })
  result.exchanges.forEach((e, i) => {
    const name = `${String(i + 1).padStart(3, '0')}-${e.method}-${e.path.split('?')[0].replace(/[^a-zA-Z0-9.]+/g, '_').replace(/^_|_$/g, '')}.json`
    writeFileSync(path.join(out, name), JSON.stringify(e, null, 2) + '\n')
  })
  writeFileSync(path.join(out, 'upstream.json'), JSON.stringify(result.upstream, null, 2) + '\n')
  writeFileSync(path.join(out, 'run.json'), JSON.stringify({ ok: result.ok, problems: result.problems, refused: result.refused, steps: result.steps, signatures: result.signatures, code: result.run.code, ms: result.run.ms, stdout: result.run.stdout.slice(-4000), stderr: result.run.stderr.slice(-4000) }, null, 2) + '\n')
  return out
}
