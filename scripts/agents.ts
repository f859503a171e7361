// The real-agent suite from the command line: installs the agents (pinned, or the newest published with --latest)
// into the cache, runs each on each model against the gateway over the Google fake, prints one line per case, and
// with --table writes docs/agents.md from the run. Exit code 1 when a case failed.
//
//   node scripts/agents.ts [--latest] [--agents gemini-cli,opencode,codex,claude-code] [--models a,b]
//                          [--record DIR] [--table] [--keep] [--logs] [--no-websocket]
//
// Codex runs twice on each model: over POST, then over the Responses WebSocket (--no-websocket skips the second).
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { AGENTS, install, latestVersion } from '../test/agents/agents.ts'
import type { AgentId } from '../test/agents/agents.ts'
import { startStage } from '../test/agents/stage.ts'
import { MODELS, recordCase, runCase } from '../test/agents/suite.ts'
import type { CaseResult } from '../test/agents/suite.ts'
import { agentsTable } from '../test/agents/table.ts'
import { ROOT } from '../test/support/gateway.ts'

const { values } = parseArgs({
  options: {
    latest: { type: 'boolean', default: false },
    agents: { type: 'string' },
    models: { type: 'string' },
    record: { type: 'string' },
    table: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    logs: { type: 'boolean', default: false },
    'no-websocket': { type: 'boolean', default: false },
  },
})

const ids = values.agents?.split(',') ?? AGENTS.map(a => a.id)
const unknown = ids.filter(id => !AGENTS.some(a => a.id === id))
if (unknown.length > 0) throw new Error(`--agents: unknown ${unknown.join(', ')}; known: ${AGENTS.map(a => a.id).join(', ')}`)
const agents = AGENTS.filter(a => ids.includes(a.id as AgentId))
const models = values.models?.split(',') ?? MODELS

const installed = await Promise.all(agents.map(async agent => {
  const version = values.latest ? await latestVersion(agent) : agent.pinned
  return { agent, version, bin: await install(agent, version) }
}))

// The whole run ends within its budget: each case gets what is left of it, at most runAgent's own limit.
const BUDGET_MS = 15 * 60_000
const started = Date.now()
const stage = await startStage({ printLogs: values.logs })
const results: CaseResult[] = []
try {
  const cases = installed.flatMap(({ agent, version, bin }) => models.flatMap(model => [
    { agent, version, bin, model, websocket: false },
    ...(agent.id === 'codex' && !values['no-websocket'] ? [{ agent, version, bin, model, websocket: true }] : []),
  ]))
  for (const { agent, version, bin, model, websocket } of cases) {
    {
      const left = BUDGET_MS - (Date.now() - started)
      if (left <= 0) throw new Error(`the suite's ${BUDGET_MS / 60_000}-minute budget ran out before ${agent.id} on ${model}`)
      const result = await runCase(stage, agent, bin, version, model, { keep: values.keep, timeoutMs: Math.min(left, 150_000), websocket })
      results.push(result)
      const where = values.record === undefined ? '' : `  (requests: ${path.relative(process.cwd(), recordCase(values.record, result))})`
      console.log(`${result.ok ? 'ok  ' : 'FAIL'} ${agent.id}@${version}${websocket ? ' (WebSocket)' : ''} ${model} ${(result.run.ms / 1000).toFixed(1)} s, ${result.steps.join(' → ')}${where}`)
      for (const problem of result.problems) console.log(`       ${problem}`)
      for (const refused of result.refused) console.log(`       refused: ${refused}`)
      if (!result.ok) console.log(`       stdout: ${result.run.stdout.slice(-800)}\n       stderr: ${result.run.stderr.slice(-1500)}`)
    }
  }
} finally {
  await stage.close()
}
if (values.table) {
  writeFileSync(path.join(ROOT, 'docs', 'agents.md'), agentsTable(results, new Date(), values.latest ? 'node scripts/agents.ts --latest --table' : 'node scripts/agents.ts --table'))
  console.log('wrote docs/agents.md')
}
process.exitCode = results.every(r => r.ok) ? 0 : 1
