// `npm run lint` (part of `npm test`). Rules that catch bugs, not style: the code keeps its own (no semicolons,
// a space before function parentheses) and no formatting rule is on. Type-aware rules read tsconfig.json.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import { defineConfig } from 'eslint/config'

// lib/index.ts is the whole public API (see its header); these are the names it exports.
const entry = readFileSync(join(import.meta.dirname, 'lib/index.ts'), 'utf8')
if (/export\s+\*/.test(entry)) throw new Error('eslint.config.js reads the public names from lib/index.ts, which must export them by name')
const PUBLIC_NAMES = [...entry.matchAll(/^export\s+(?:type\s+)?\{([^}]*)\}/gm)]
  .flatMap(m => m[1].split(',').map(name => name.trim().split(/\s+as\s+/).pop()).filter(name => name !== ''))

// Relative specifiers into lib/ other than the entry itself.
const LIB_INTERNAL = String.raw`^(?:\.\./)+lib/(?!index\.ts$)`
const EXAMPLES_ENTRY_ONLY = 'examples use the package as its users do: import from \'gatehouse\' (lib/index.ts); the rest of lib/ is internal'
const GATEWAY_ENTRY_ONLY = 'the gateway uses lib through its public entry: import from \'../lib/index.ts\''

// Tests take public API names from the entry, as users do. Internal modules' other names (translation tables,
// parsers and other pure parts the entry does not export) stay importable, for the unit tests of those modules
// (test/ mirrors lib/).

// `import('...')` is not covered by no-restricted-imports; esquery regexes cannot hold a slash, hence \x2F.
const dynamicImportOf = (regex, message) => ({
  selector: `ImportExpression[source.value=/${regex.replaceAll('/', '\\x2F')}/]`,
  message
})
// The gateway is the first consumer of the public API: it imports lib only through the entry, with no exceptions.
const gatewayInternal = LIB_INTERNAL

export default defineConfig(
  { ignores: ['node_modules/', 'dist/', 'coverage/', '.tap/', '.tools/', 'data/', 'console/build/'] },
  { files: ['**/*.js'], extends: [js.configs.recommended] },
  {
    files: ['**/*.ts', '**/*.tsx'],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Bugs: a promise nobody awaits loses its error (tap's t.test promises are tracked by tap itself).
      '@typescript-eslint/no-floating-promises': ['error', {
        allowForKnownSafePromises: [{ from: 'package', name: 'PromiseWithSubtest', package: '@tapjs/core' }]
      }],
      // `return promise` inside try skips its catch and finally.
      '@typescript-eslint/return-await': ['error', 'error-handling-correctness-only'],
      '@typescript-eslint/consistent-type-imports': ['error', { disallowTypeAnnotations: false }],
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true, argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Rejections pass on caught errors as they are (typed unknown), which is fine.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      'no-empty': ['error', { allowEmptyCatch: true }],
      // Noise for this code base: it parses JSON into unknown/any on purpose, builds objects of closures (no
      // `this`, so passing `store.close` is safe), and tsc already checks assertions and async signatures.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unnecessary-type-assertion': 'off'
    }
  },
  {
    files: ['examples/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { regex: String.raw`^(?:\.\./)+(?:lib|dist)(?:/|$)`, message: EXAMPLES_ENTRY_ONLY },
          { regex: '^gatehouse/(?!package\\.json$)', message: EXAMPLES_ENTRY_ONLY }
        ]
      }],
      'no-restricted-syntax': ['error', dynamicImportOf(String.raw`^(?:\.\./)+(?:lib|dist)/`, EXAMPLES_ENTRY_ONLY), dynamicImportOf('^gatehouse/', EXAMPLES_ENTRY_ONLY)]
    }
  },
  {
    files: ['gateway/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: gatewayInternal, message: GATEWAY_ENTRY_ONLY }] }],
      'no-restricted-syntax': ['error', dynamicImportOf(gatewayInternal, GATEWAY_ENTRY_ONLY)]
    }
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{ regex: LIB_INTERNAL, importNames: PUBLIC_NAMES, message: 'part of the public API: import it from lib/index.ts (the package entry)' }]
      }]
    }
  }
)
