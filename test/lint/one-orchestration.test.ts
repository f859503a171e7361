// The pipeline's one orchestration (docs/model-proxy.md, "One lifecycle for every model call"): runModelCall
// (lib/proxy/call/run-model-call.ts) is the only module that begins a model call or meters a forwarded answer, so
// no surface, pass-through included, can order admission, metering and settlement its own way.
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'

const root = resolve(import.meta.dirname, '../..')
const LIFECYCLE = 'lib/proxy/call/lifecycle.ts'
const ORCHESTRATION = 'lib/proxy/call/run-model-call.ts'
/** What only the orchestration may take from the lifecycle. */
const ORCHESTRATION_ONLY = ['beginModelCall', 'meteredAnswer']

function files (dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap(e => e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [])
}

/** The names `source` takes from the lifecycle (`*` for a namespace import), each with the module's path as written. */
function lifecycleImports (file: string, source: string): string[] {
  const taken: string[] = []
  for (const m of source.matchAll(/(?:import|export)\s+(?:type\s+)?(\{[^}]*\}|\*\s+as\s+\w+)\s+from\s+'([^']+)'/g)) {
    if (relative(root, resolve(file, '..', m[2])) !== LIFECYCLE) continue
    if (m[1].startsWith('*')) taken.push('*')
    else taken.push(...m[1].slice(1, -1).split(',').map(n => n.trim().split(/\s+as\s+/)[0].replace(/^type\s+/, '')).filter(n => n !== ''))
  }
  return taken
}

t.test('only runModelCall begins a model call: no other module imports beginModelCall or meteredAnswer', async t => {
  const offending: string[] = []
  for (const file of [...files(join(root, 'lib')), ...files(join(root, 'gateway'))]) {
    const name = relative(root, file)
    if (name === ORCHESTRATION || name === LIFECYCLE) continue
    for (const taken of lifecycleImports(file, readFileSync(file, 'utf8'))) {
      if (taken === '*' || ORCHESTRATION_ONLY.includes(taken)) offending.push(`${name} → ${taken}`)
    }
  }
  t.same(offending, [], 'the lifecycle\'s call beginnings reach the surfaces only through runModelCall')
})

t.test('the rule sees an import it forbids, in any form', async t => {
  const file = join(root, 'lib/proxy/native/pass-through.ts')
  t.same(lifecycleImports(file, "import { beginRequest, beginModelCall as begin } from '../call/lifecycle.ts'"), ['beginRequest', 'beginModelCall'])
  t.same(lifecycleImports(file, "import {\n  type AnswerReader,\n  meteredAnswer,\n} from '../call/lifecycle.ts'"), ['AnswerReader', 'meteredAnswer'])
  t.same(lifecycleImports(file, "import * as lifecycle from '../call/lifecycle.ts'"), ['*'])
  t.same(lifecycleImports(file, "import { beginModelCall } from './lifecycle.ts'"), [], 'another module of that name is not the lifecycle')
})
