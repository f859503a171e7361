// Builds the web console (console/src) into console/build: one script, one stylesheet, the page. Run by
// `npm run build:console`, and before `npm start`, `npm test` and `npm pack` (docs/console.md, "Assets").
// A build whose inputs and outputs are unchanged since the last one is skipped (`--force` rebuilds).
import { createHash } from 'node:crypto'
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { dirname, join, relative, sep } from 'node:path'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

export interface ConsoleBuildOptions {
  /** The package root, where node_modules is. Default this script's package. */
  root?: string
  /** The console's sources. Default `console/src` under root. */
  src?: string
  /** Where the build goes. Default `console/build` under root. */
  out?: string
  /** The record of the last build's inputs and outputs. Default under node_modules/.cache, outside the shipped folder. */
  stamp?: string
  /** Build even when nothing changed. */
  force?: boolean
}

/** Each file (relative to root, `/`-separated) with the SHA-256 of its bytes. */
type Digests = Record<string, string>
interface Stamp { inputs: Digests, outputs: Digests }

const OUTPUTS = ['app.js', 'app.css', 'index.html']

async function digest (file: string): Promise<string | undefined> {
  try {
    return createHash('sha256').update(await readFile(file)).digest('hex')
  } catch {
    return undefined
  }
}

async function digests (root: string, files: Iterable<string>): Promise<Digests> {
  const result: Digests = {}
  for (const file of [...new Set(files)].sort()) result[relative(root, file).split(sep).join('/')] = await digest(file) ?? 'missing'
  return result
}

/** True when every file the stamp names still has the digest it had at the last build. */
async function unchanged (root: string, stampFile: string): Promise<boolean> {
  let stamp: Stamp
  try {
    stamp = JSON.parse(await readFile(stampFile, 'utf8')) as Stamp
  } catch {
    return false
  }
  const recorded = Object.entries({ ...stamp.inputs, ...stamp.outputs })
  if (recorded.length === 0) return false
  for (const [file, hash] of recorded) if ((await digest(join(root, file)) ?? 'missing') !== hash) return false
  return true
}

/** Builds the console unless it is up to date; resolves with whether it built and the line it printed. */
export async function buildConsole (options: ConsoleBuildOptions = {}): Promise<{ built: boolean, message: string }> {
  const root = options.root ?? ROOT
  const src = options.src ?? join(root, 'console/src')
  const out = options.out ?? join(root, 'console/build')
  const stampFile = options.stamp ?? join(root, 'node_modules/.cache/gatehouse/console-build.json')
  const shown = relative(root, out) || out
  if (options.force !== true && await unchanged(root, stampFile)) {
    return { built: false, message: `${shown} is up to date: no console source changed since the last build (--force rebuilds)` }
  }
  // Loaded only to build: a start whose console is up to date does not pay for it.
  const { build } = await import('esbuild')
  await rm(out, { recursive: true, force: true })
  await mkdir(out, { recursive: true })
  const js = await build({
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
    metafile: true,
    absWorkingDir: root,
  })
  const uplotCssFile = join(root, 'node_modules/uplot/dist/uPlot.min.css')
  const ownCssFile = join(src, 'style.css')
  const css = await build({ stdin: { contents: await readFile(uplotCssFile, 'utf8') + '\n' + await readFile(ownCssFile, 'utf8'), loader: 'css' }, write: false, minify: true, logLevel: 'warning' })
  await writeFile(join(out, 'app.css'), css.outputFiles[0].contents)
  await copyFile(join(src, 'index.html'), join(out, 'index.html'))
  // Every file esbuild read (sources and the bundled packages), plus what shapes the build without being read as one.
  const inputs = [
    ...Object.keys(js.metafile.inputs).map(file => join(root, file)),
    uplotCssFile, ownCssFile, join(src, 'index.html'),
    join(src, '../tsconfig.json'),
    fileURLToPath(import.meta.url),
    join(root, 'node_modules/esbuild/package.json'),
  ]
  const stamp: Stamp = { inputs: await digests(root, inputs), outputs: await digests(root, OUTPUTS.map(name => join(out, name))) }
  await mkdir(dirname(stampFile), { recursive: true })
  await writeFile(stampFile, JSON.stringify(stamp, null, 2) + '\n')
  return { built: true, message: `${shown} built from ${relative(root, src) || src} (${Object.keys(stamp.inputs).length} input files)` }
}

if (import.meta.main) {
  const { message } = await buildConsole({ force: process.argv.includes('--force') })
  process.stdout.write(message + '\n')
}
