// The console's page sources type-check with their own settings (console/tsconfig.json: the DOM, Preact's JSX),
// which the repository's tsc run, for Node, leaves out.
import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import path from 'node:path'
import { NODE, ROOT } from '../support/gateway.ts'

t.test('console/src type-checks', async t => {
  const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc')
  const result = await promisify(execFile)(NODE, [tsc, '--noEmit', '-p', path.join(ROOT, 'console/tsconfig.json')], { cwd: ROOT }).then(() => ({ code: 0, output: '' }), (err: { code: number, stdout: string }) => ({ code: err.code, output: err.stdout }))
  t.equal(result.code, 0, 'tsc -p console/tsconfig.json exits 0', { output: result.output })
})
