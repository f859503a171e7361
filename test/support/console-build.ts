// The built console (console/build), made once if a test runs without `npm test`'s pretest step having built it.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { NODE, ROOT } from './gateway.ts'

export const CONSOLE_BUILD = path.join(ROOT, 'console/build')

export function ensureConsoleBuilt (): string {
  if (!existsSync(path.join(CONSOLE_BUILD, 'app.js'))) execFileSync(NODE, [path.join(ROOT, 'scripts/build-console.ts')], { stdio: 'inherit' })
  return CONSOLE_BUILD
}
