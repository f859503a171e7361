// Loaded into a spawned gateway with --import, before gateway/tracing.ts: records every package under
// node_modules that the process resolves (ESM imports and require() alike), and at exit writes their names, one a
// line, to the file named by GATEHOUSE_TEST_PACKAGES_FILE, so a test can see what a configuration loads. A script
// run with it can read the names so far at any step from globalThis[Symbol.for('gatehouse.test.packages')].
import { registerHooks } from 'node:module'
import { writeFileSync } from 'node:fs'

const packages = new Set<string>()
Object.assign(globalThis, { [Symbol.for('gatehouse.test.packages')]: packages })
registerHooks({
  resolve (specifier, context, nextResolve) {
    const result = nextResolve(specifier, context)
    const at = result.url.lastIndexOf('/node_modules/')
    if (at !== -1) {
      const parts = result.url.slice(at + '/node_modules/'.length).split('/')
      packages.add(parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0])
    }
    return result
  },
})
process.on('exit', () => {
  const file = process.env.GATEHOUSE_TEST_PACKAGES_FILE
  if (file !== undefined) writeFileSync(file, [...packages].sort().join('\n') + '\n')
})
