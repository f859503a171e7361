import t from 'tap'
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'

// bench/README.md measures what a piece of the gateway's work costs by applying bench/what-if.patch for one
// comparison: the patch must still apply to the code it switches off, or those figures lose their command.
const root = resolve(import.meta.dirname, '../..')

t.test('bench/what-if.patch applies to this tree, so the README\'s work-removal measurements can be repeated', { skip: existsSync(resolve(root, '.git')) ? false : 'not a git checkout' }, async t => {
  t.doesNotThrow(() => execFileSync('git', ['apply', '--check', 'bench/what-if.patch'], { cwd: root, stdio: 'pipe' }))
})
