// The console's built files (console/build, made by scripts/build-console.ts), read from disk the first time the
// console is served, so a process that never serves it never loads them (docs/console.md, "Assets").
import { readdir, readFile } from 'node:fs/promises'
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { HandlerResponse, StreamBody } from '../http/contract.ts'
import { fail } from '../errors.ts'
import { SECURITY_HEADERS } from './security-headers.ts'

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
}

interface Asset { bytes: Buffer, type: string, etag: string }

/**
 * Where the built files are: console/build at the package root, two folders up both from lib/console (the sources)
 * and from dist/lib, where the built package's one bundled module is (scripts/bundle-lib.ts).
 */
export function defaultAssetsDir (): string {
  return join(fileURLToPath(new URL('.', import.meta.url)), '../../console/build')
}

async function load (dir: string): Promise<Map<string, Asset>> {
  const files = new Map<string, Asset>()
  let names: string[]
  try {
    names = await readdir(dir)
  } catch {
    return files
  }
  for (const name of names) {
    const type = TYPES[name.slice(name.lastIndexOf('.'))]
    if (type === undefined) continue
    const bytes = await readFile(join(dir, name))
    files.set(name, { bytes, type, etag: `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 22)}"` })
  }
  return files
}

async function * once (bytes: Buffer): AsyncGenerator<Uint8Array> {
  yield bytes
}

export interface StaticAssets {
  /** The named built file (index.html for the page), 304 when `ifNoneMatch` names its version; 404 for any other name, 503 when the console was not built. */
  serve (name: string, ifNoneMatch: string | undefined): Promise<HandlerResponse>
}

export function createStaticAssets (dir: string): StaticAssets {
  let loading: Promise<Map<string, Asset>> | undefined
  return {
    async serve (name, ifNoneMatch) {
      loading ??= load(dir)
      const files = await loading
      if (files.size === 0) {
        loading = undefined // built later (npm run build:console): found on the next request
        throw fail('CONSOLE_NOT_BUILT')
      }
      const asset = files.get(name)
      if (asset === undefined) throw fail('NOT_FOUND')
      // Revalidated on every load: file names carry no hash, and a new version must show at once.
      const headers = { ...SECURITY_HEADERS, 'content-type': asset.type, 'cache-control': 'no-cache', etag: asset.etag }
      if (ifNoneMatch === asset.etag) return { status: 304, headers }
      const body: StreamBody = once(asset.bytes)
      return { status: 200, headers: { ...headers, 'content-length': String(asset.bytes.length) }, body }
    },
  }
}
