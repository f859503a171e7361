import t from 'tap'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Linter } from 'eslint'
import tseslint from 'typescript-eslint'

// The import rule of eslint.config.js (run by `npm run lint` in `npm test`), checked on code written for the
// purpose: its import sections alone, with the TypeScript parser and no type information, so this stays fast.
const root = resolve(import.meta.dirname, '../..')
const { default: config } = await import(pathToFileURL(join(root, 'eslint.config.js')).href) as { default: Linter.Config[] }
const importSections = config.filter(c => c.rules?.['no-restricted-imports'] !== undefined)
const linter = new Linter({ cwd: root })

function lint (file: string, code: string): string[] {
  const configs: Linter.Config[] = [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser as Linter.Parser } }, ...importSections]
  return linter.verify(code, configs, { filename: join(root, file) }).map(m => `${m.line}: ${m.message}`)
}

t.test('examples/ import only the package entry: lib internals, dist/ and package subpaths are lint errors', async t => {
  const errors = lint('examples/new-example.ts', [
    "import { createAuthService } from 'gatehouse'",
    "import { fail } from '../lib/errors.ts'",
    "import type { Store } from '../lib/store/types.ts'",
    "import { createNodeListener } from '../dist/lib/index.js'",
    "import { isStreamBody } from 'gatehouse/lib/http/contract.ts'",
    "export { fail as f } from '../lib/errors.ts'",
    "const mongo = await import('../lib/store/mongo-store.ts')",
    'void [createAuthService, fail, createNodeListener, isStreamBody, mongo]',
    'export type S = Store'
  ].join('\n'))
  t.same(errors.map(e => Number(e.split(':')[0])), [2, 3, 4, 5, 6, 7], 'every import but the entry is an error')
  t.match(errors[0], /examples use the package as its users do: import from 'gatehouse'/)
})

t.test('gateway/ imports lib only through the package entry: every other lib module is a lint error', async t => {
  t.same(lint('gateway/new-part.ts', [
    "import { createAuthService, OPTION_RULES } from '../lib/index.ts'",
    "import type { TrustedProxies } from '../lib/index.ts'",
    "const lib = await import('../lib/index.ts')",
    'void [createAuthService, OPTION_RULES, lib]',
    'export type R = TrustedProxies'
  ].join('\n')), [], 'the entry passes, statically, as a type and dynamically')
  const errors = lint('gateway/new-part.ts', [
    "import { createChatRequestValidator } from '../lib/proxy/chat/request-schema.ts'",
    "const sse = await import('../lib/proxy/upstream/sse.ts')",
    "import { OPTION_RULES } from '../lib/option-rules.ts'",
    "import type { TrustedProxies } from '../lib/http/client-address.ts'",
    "import { PROXY_PASSWORD_MIN_LENGTH } from '../lib/proxy/access/client-auth.ts'",
    "export { createMongoStore } from '../lib/store/mongo-store.ts'",
    'void [createChatRequestValidator, sse, OPTION_RULES, PROXY_PASSWORD_MIN_LENGTH]',
    'export type R = TrustedProxies'
  ].join('\n'))
  t.same(errors.map(e => Number(e.split(':')[0])), [1, 2, 3, 4, 5, 6], 'any other lib module is an error, imported statically, dynamically, as a type or re-exported')
  t.match(errors[1], /the gateway uses lib through its public entry: import from '..\/lib\/index.ts'/)
})

t.test('tests take public API names from the entry; internals the entry does not export stay importable', async t => {
  const errors = lint('test/new-area/new.test.ts', [
    "import { createEmbeddedStore } from '../../lib/store/embedded-store.ts'",
    "import type { Route } from '../../lib/http/contract.ts'",
    "import { isStreamBody } from '../../lib/http/contract.ts'",
    "import { createChatRequestValidator } from '../../lib/proxy/chat/request-schema.ts'",
    "import { fail } from '../../lib/index.ts'",
    'void [createEmbeddedStore, isStreamBody, createChatRequestValidator, fail]',
    'export type R = Route'
  ].join('\n'))
  t.same(errors.map(e => Number(e.split(':')[0])), [1, 2], 'only the public names imported from internal modules')
  t.match(errors[0], /'createEmbeddedStore' import from '..\/..\/lib\/store\/embedded-store.ts' is restricted.*import it from lib\/index.ts/)
})

t.test('gateway/ names no lib module but the entry, in imports or comments: it knows the library as its users do', async t => {
  const { readdirSync, readFileSync } = await import('node:fs')
  const dir = join(root, 'gateway')
  const found: string[] = []
  for (const file of readdirSync(dir).filter(f => f.endsWith('.ts'))) {
    readFileSync(join(dir, file), 'utf8').split('\n').forEach((line, i) => {
      if (/lib\//.test(line) && !/lib\/index\.ts/.test(line)) found.push(`gateway/${file}:${i + 1}`)
    })
  }
  t.same(found, [], 'the lines naming another lib path')
})
