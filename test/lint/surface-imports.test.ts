// The pipeline's import rule (docs/model-proxy.md, "Adding a surface"): the surfaces are reached through the registry
// only, so shared proxy code (the pipeline, access, metering, models, upstreams, images, the hub) imports no surface
// folder; only the registry (lib/proxy/surfaces.ts) and createProxy's options (lib/proxy/create-proxy.ts) do.
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'

const root = resolve(import.meta.dirname, '../..')
const proxy = join(root, 'lib/proxy')
const SURFACE_FOLDERS = ['chat', 'messages', 'responses', 'interactions', 'native', 'model-list']
const REGISTRY = new Set(['lib/proxy/surfaces.ts', 'lib/proxy/create-proxy.ts'])

function files (dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap(e => e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [])
}

/** The lib/proxy folder a module path resolves into, or undefined outside lib/proxy/<folder>/. */
function folderOf (file: string): string | undefined {
  const rel = relative(proxy, file)
  const parts = rel.split('/')
  return parts.length > 1 && !rel.startsWith('..') ? parts[0] : undefined
}

t.test('shared proxy code imports no surface: a surface is reached only through the registry', async t => {
  const offending: string[] = []
  for (const file of files(proxy)) {
    const name = relative(root, file)
    const own = folderOf(file)
    if (REGISTRY.has(name) || (own !== undefined && SURFACE_FOLDERS.includes(own))) continue
    for (const m of readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)) {
      const target = folderOf(resolve(file, '..', m[1]))
      if (target !== undefined && SURFACE_FOLDERS.includes(target)) offending.push(`${name} → ${m[1]}`)
    }
  }
  t.same(offending, [], 'no import of a surface folder outside the surfaces and the registry')
})

t.test('the rule sees an import it forbids', async t => {
  t.equal(folderOf(resolve(proxy, 'call', '..', './chat/stream.ts')), 'chat')
  t.equal(folderOf(resolve(proxy, 'routes.ts')), undefined)
})
