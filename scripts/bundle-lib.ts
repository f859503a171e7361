// Bundles the compiled library (dist/lib, from tsc) into one ES module, dist/lib/index.js, the file the package's
// exports name: Node's loader compiling and linking the library's hundred-odd modules one by one cost about 10 MB of
// RSS and most of `import('gatehouse')`'s time (bench/README.md, "Footprint (issue 24)"). Run by `npm run build`
// after tsc; the declarations (.d.ts) stay one per module, and the packages stay outside the bundle, loaded from
// node_modules as before (lib/load-package.ts loads most of them on first use).
import { build } from 'esbuild'
import { copyFile, readdir, rm, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'

const root = fileURLToPath(new URL('..', import.meta.url))
const out = join(root, 'dist/lib')
const entry = join(out, 'index.js')

// Bundled in memory first, so the per-module files can go before the bundle takes the entry's name.
const result = await build({
  entryPoints: [entry],
  bundle: true,
  write: false,
  outfile: entry,
  platform: 'node',
  format: 'esm',
  target: ['node22'],
  packages: 'external',
  // No keepNames: it wraps every function expression, those made per request too, in a call that sets its name.
  // Classes keep their names (each is assigned to a variable of its name); only a few private helpers with clashing
  // names are renamed (refuse2), which shows in stack traces only.
  // tsc's source maps of the inputs are followed, so the bundle's map points at lib/*.ts.
  sourcemap: 'linked',
  legalComments: 'none',
  logLevel: 'warning',
})
for (const entryName of await readdir(out, { recursive: true, withFileTypes: true })) {
  if (entryName.isFile() && /\.js(\.map)?$/.test(entryName.name)) await rm(join(entryName.parentPath, entryName.name))
}
for (const file of result.outputFiles) await writeFile(file.path, file.contents)
// The data files sit next to the modules that read them (lib/proxy/models/data.ts, DEFAULT_MODELS_FILE;
// lib/auth/password-policy.ts): in the bundle, those modules are dist/lib/index.js.
await copyFile(join(root, 'lib/proxy/models/models.json'), join(out, 'models.json'))
await copyFile(join(root, 'lib/proxy/models/prices.json'), join(out, 'prices.json'))
await copyFile(join(root, 'lib/auth/common-passwords.txt'), join(out, 'common-passwords.txt'))
