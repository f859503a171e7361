// Builds the web console (console/src) into console/build: one script, one stylesheet, the page. Run by
// `npm run build:console`, and before `npm start`, `npm test` and `npm pack` (docs/console.md, "Assets").
import { build } from 'esbuild'
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'

const root = fileURLToPath(new URL('..', import.meta.url))
const src = join(root, 'console/src')
const out = join(root, 'console/build')

await rm(out, { recursive: true, force: true })
await mkdir(out, { recursive: true })
await build({
  entryPoints: [join(src, 'main.tsx')],
  outfile: join(out, 'app.js'),
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2022'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'none',
  logLevel: 'warning',
})
const uplotCss = await readFile(join(root, 'node_modules/uplot/dist/uPlot.min.css'), 'utf8')
const ownCss = await readFile(join(src, 'style.css'), 'utf8')
const css = await build({ stdin: { contents: uplotCss + '\n' + ownCss, loader: 'css' }, write: false, minify: true, logLevel: 'warning' })
await writeFile(join(out, 'app.css'), css.outputFiles[0].contents)
await copyFile(join(src, 'index.html'), join(out, 'index.html'))
