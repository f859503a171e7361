// docs/agents.md from a run of the real-agent suite: one row per agent and model.
import type { CaseResult } from './suite.ts'

export function agentsTable (results: CaseResult[], at: Date, command: string): string {
  const day = at.toISOString().slice(0, 10)
  const rows = results.map(r => {
    const result = r.ok ? `passes: ${r.steps.filter(s => s !== 'utility').join(', ')}; ${r.signatures.returned} of ${r.signatures.issued} signatures back` : `**fails**: ${r.problems.join('; ').replace(/\|/g, '\\|').replace(/\n/g, ' ')}`
    return `| ${r.agent.name} | ${r.version} | ${r.agent.surface}${r.websocket ? ' over WebSocket' : ''} | ${r.model} | ${result} | ${day} |`
  })
  return [
    '# Coding agents against the gateway',
    '',
    `Written by the real-agent suite (\`test/agents/\`) from its last recorded run, \`${command}\`.`,
    'Each agent, installed from npm and configured as README.md\'s agent sections say, with a member\'s key and the',
    'README\'s GEMINI_LIMITS, asks the gateway (over the Google fake playing a model, `test/agents/scripted-model.ts`)',
    'to write `notes.txt` with its own file or patch tool, read it back with its shell tool and quote it; a case',
    'passes when the file holds what the model wrote, the answer quotes it, and every thought signature the fake',
    'issued came back on its own call. Codex runs a second time over the Responses WebSocket transport (the README\'s',
    '`supports_websockets = true`); that case passes only when its turns came over the upgraded socket, none as a POST,',
    'each logged by the gateway as a request with `transport: websocket` (`overSocket`, `test/agents/suite.ts`).',
    '',
    '| agent | version | surface | model | result | date |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n')
}
