// Each agent's configuration as the README's agent section writes it: the `export` lines of its sh blocks become the
// environment, each other block the file the text before it names (`~/...`), with the README's gateway URL, key and
// model replaced by the run's. The suite runs agents only this way, so a wrong README section fails it.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { AgentId } from './agents.ts'

const README = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../README.md')
const README_URL = 'http://127.0.0.1:8888'
const README_KEY = 'ghk_...'

/** Where each agent's section starts and ends in the README. */
const SECTIONS: Record<AgentId, { from: string, to: string }> = {
  'gemini-cli': { from: '### Gemini CLI and opencode', to: '\nopencode speaks' },
  opencode: { from: '\nopencode speaks', to: '\n### ' },
  codex: { from: '**OpenAI Responses and Codex CLI**', to: '\n**Password**' },
  'claude-code': { from: '### Claude Code and the Anthropic SDK', to: '\n### ' },
}

export interface AgentConfig {
  env: Record<string, string>
  /** Files by path relative to HOME. */
  files: Record<string, string>
}

function section (readme: string, id: AgentId): string {
  const { from, to } = SECTIONS[id]
  const start = readme.indexOf(from)
  if (start < 0) throw new Error(`README.md has no section starting "${from.trim()}" (${id})`)
  const end = readme.indexOf(to, start + from.length)
  return readme.slice(start, end < 0 ? undefined : end)
}

export function readmeConfig (id: AgentId, run: { url: string, key: string, model: string, websocket?: boolean }, readme = readFileSync(README, 'utf8')): AgentConfig {
  const text = section(readme, id)
  const config: AgentConfig = { env: {}, files: {} }
  const fence = /```(\w+)\n([\s\S]*?)```/g
  let last = 0
  for (let m = fence.exec(text); m !== null; m = fence.exec(text)) {
    const [whole, lang, body] = m
    const before = text.slice(last, m.index)
    last = m.index + whole.length
    const filled = body.replaceAll(README_URL, run.url).replaceAll(README_KEY, run.key)
    if (lang === 'sh') {
      for (const line of filled.split('\n')) {
        const exported = /^export ([A-Z_][A-Z0-9_]*)=(\S*)/.exec(line.trim())
        if (exported !== null) config.env[exported[1]] = exported[2]
      }
      continue
    }
    const file = [...before.matchAll(/`~\/([^`]+)`/g)].at(-1)?.[1]
    if (file === undefined) continue
    config.files[file] = filled
  }
  const configured = withModel(id, config, run.model)
  return run.websocket === true ? withWebsocket(id, configured, text) : configured
}

/** Codex's provider block with the line the README's Codex section names for the WebSocket transport. */
function withWebsocket (id: AgentId, config: AgentConfig, section: string): AgentConfig {
  const LINE = 'supports_websockets = true'
  if (id !== 'codex') throw new Error(`only Codex has a WebSocket transport here, not ${id}`)
  if (!section.includes(`\`${LINE}\``)) throw new Error(`README.md: the Codex section does not name \`${LINE}\``)
  const file = '.codex/config.toml'
  config.files[file] = config.files[file].replace(/^wire_api = "responses".*$/m, line => `${line}\n${LINE}`)
  if (!config.files[file].includes(LINE)) throw new Error('README.md: the Codex provider block has no wire_api line to add supports_websockets after')
  return config
}

/** The README's example model replaced by the run's, where each agent takes it. */
function withModel (id: AgentId, config: AgentConfig, model: string): AgentConfig {
  if (id === 'claude-code') {
    if (config.env.ANTHROPIC_MODEL === undefined) throw new Error('README.md: the Claude Code section sets no ANTHROPIC_MODEL')
    config.env.ANTHROPIC_MODEL = model
  }
  if (id === 'codex') {
    const file = '.codex/config.toml'
    if (config.files[file] === undefined) throw new Error('README.md: the Codex section has no ~/.codex/config.toml block')
    config.files[file] = config.files[file].replace(/^model = ".*"$/m, `model = "${model}"`)
  }
  if (id === 'opencode') {
    const file = '.config/opencode/opencode.json'
    const json = config.files[file]
    if (json === undefined) throw new Error('README.md: the opencode section has no ~/.config/opencode/opencode.json block')
    if (JSON.parse(json).provider?.gatehouse?.models?.[model] === undefined) throw new Error(`README.md: the opencode section does not declare ${model}`)
  }
  return config
}
