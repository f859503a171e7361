import t from 'tap'
import { loadConfig } from '../../gateway/config.ts'
import { backticked, readRepoFile, tableUnder } from './markdown.ts'

// The library's environment reader (through gateway/config.ts) is the only reader of the environment and the README's "Configuration" table the one list of
// variables (docs/configuration.md): the two must name the same variables.

/** Every variable loadConfig looks at, recorded by handing it an environment that notes each read. */
function variablesRead (): string[] {
  const read = new Set<string>()
  const env = new Proxy({}, {
    get (_target, name) {
      if (typeof name === 'string') read.add(name)
      return undefined
    },
  })
  loadConfig(env)
  return [...read].filter(name => /^[A-Z][A-Z0-9_]*$/.test(name)).sort()
}

/** The variables in the first column of the table; a name ending in `_*` stands for a family. */
function variablesDocumented (): { names: Set<string>, families: string[] } {
  const names = new Set<string>()
  const families: string[] = []
  for (const row of tableUnder(readRepoFile('README.md'), '## Configuration')) {
    for (const name of backticked(row[0])) {
      if (/^[A-Z][A-Z0-9_]*_\*$/.test(name)) families.push(name.slice(0, -1))
      else if (/^[A-Z][A-Z0-9_]*$/.test(name)) names.add(name)
    }
  }
  return { names, families }
}

t.test('every environment variable the gateway reads has a row in the README configuration table, and no other', async t => {
  const read = variablesRead()
  t.ok(read.length >= 20, `the recorder sees what loadConfig reads (${read.length} variables)`)
  const { names, families } = variablesDocumented()
  const missing = read.filter(name => !names.has(name) && !families.some(prefix => name.startsWith(prefix)))
  t.same(missing, [], `variables gateway/config.ts reads that the README's "Configuration" table lacks: ${missing.join(', ') || 'none'}`)
  const unread = [...names].filter(name => !read.includes(name))
  t.same(unread, [], `variables in the README's "Configuration" table that gateway/config.ts does not read: ${unread.join(', ') || 'none'}`)
})
