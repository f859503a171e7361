import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { posix, resolve } from 'node:path'

// lib/ has no import cycle, type-only imports included (issue 12): a module never needs, through any chain,
// the module that needs it. The graph is read from the source: every `import ... from`, `import type ... from`
// and `export ... from` with a relative specifier.
const root = resolve(import.meta.dirname, '../..')
const SPECIFIER = /^\s*(?:import|export)\b[^'";]*?\bfrom\s*['"](\.{1,2}\/[^'"]+)['"]/gm

/** Each module (path from the repository root) → the modules it imports. */
function importGraph (files: ReadonlyMap<string, string>): Map<string, string[]> {
  return new Map([...files].map(([file, text]) => [file,
    [...text.matchAll(SPECIFIER)].map(m => posix.normalize(posix.join(posix.dirname(file), m[1])))]))
}

/** Every cycle a depth-first walk meets, each as its modules with the first repeated at the end. */
function cycles (graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const found: string[][] = []
  const done = new Set<string>()
  const path: string[] = []
  const visit = (file: string): void => {
    path.push(file)
    for (const next of graph.get(file) ?? []) {
      const at = path.indexOf(next)
      if (at !== -1) found.push([...path.slice(at), next])
      else if (!done.has(next)) visit(next)
    }
    path.pop()
    done.add(file)
  }
  for (const file of [...graph.keys()].sort()) if (!done.has(file)) visit(file)
  return found
}

t.test('lib/ has no import cycle', async t => {
  const files = new Map(readdirSync(resolve(root, 'lib'), { recursive: true, encoding: 'utf8' })
    .filter(file => file.endsWith('.ts'))
    .map(file => {
      const path = posix.join('lib', file.split('\\').join('/'))
      return [path, readFileSync(resolve(root, path), 'utf8')]
    }))
  const graph = importGraph(files)
  t.ok(graph.size > 50, 'the walk reads lib/ (sub-folders included)')
  t.ok(graph.get('lib/proxy/create-proxy.ts')?.includes('lib/proxy/routes.ts'), 'relative imports are resolved')
  t.same(cycles(graph).map(cycle => cycle.join(' → ')), [], 'no module imports itself through a chain')
})

t.test('the check finds a cycle, type-only and re-exports included, and names its modules', async t => {
  const graph = importGraph(new Map([
    ['lib/a/routes.ts', "import { handler } from './chat/handler.ts'\nexport const routes = [handler]"],
    ['lib/a/chat/handler.ts', "import type { Context } from '../routes.ts'\nexport const handler = 1"],
    ['lib/b/one.ts', "export { two } from './two.ts'"],
    ['lib/b/two.ts', "import type {\n  One\n} from './one.ts'"],
    ['lib/c/leaf.ts', "import { x } from '../a/routes.ts'\nimport { readFileSync } from 'node:fs'"]
  ]))
  t.same(cycles(graph).map(cycle => cycle.join(' → ')), [
    'lib/a/chat/handler.ts → lib/a/routes.ts → lib/a/chat/handler.ts',
    'lib/b/one.ts → lib/b/two.ts → lib/b/one.ts'
  ])
})
