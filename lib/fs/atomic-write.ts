// Writing a whole file atomically, for the embedded store's data file and the upstream credentials file:
// a crash leaves either the old file or the new one, never a torn one.
import { open, readdir, rename, rm } from 'node:fs/promises'
import type { FileHandle } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'

let tempCounter = 0

function tempPrefix (file: string): string {
  return `${basename(file)}.tmp-`
}

/**
 * Writes `text` to a temp file beside `file` (same directory, so the rename is atomic) with `mode`, fsyncs
 * it, renames it over `file`, then fsyncs the directory. On failure the temp file is removed and the error
 * is thrown as it is (its `code` tells a read-only mount from other failures).
 */
export async function writeFileAtomically (file: string, text: string, mode: number): Promise<void> {
  const temp = join(dirname(file), `${tempPrefix(file)}${process.pid}-${++tempCounter}`)
  try {
    const handle = await open(temp, 'wx', mode)
    try {
      // open's mode is narrowed by the umask; the file gets exactly `mode`.
      await handle.chmod(mode)
      await writeText(handle, text)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(temp, file)
  } catch (err) {
    await rm(temp, { force: true }).catch(() => {})
    throw err
  }
  await syncDirectory(dirname(file))
}

/**
 * Writes the string itself rather than `handle.writeFile`'s Buffer of it: Node's copy for a string write is freed when
 * the write ends, whereas a Buffer stays until V8's next major collection, and the embedded store saves its whole file
 * many times between two (bench/README.md, "Soak (issue 20), 2026-11-27"). A short write finishes from a Buffer.
 */
async function writeText (handle: FileHandle, text: string): Promise<void> {
  const { bytesWritten } = await handle.write(text, null, 'utf8')
  const total = Buffer.byteLength(text)
  if (bytesWritten < total) await handle.writeFile(Buffer.from(text, 'utf8').subarray(bytesWritten))
}

// The rename is durable only once the directory entry is on disk; some platforms cannot fsync a directory.
async function syncDirectory (dir: string): Promise<void> {
  const handle = await open(dir, 'r').catch(() => undefined)
  await handle?.sync().catch(() => {})
  await handle?.close().catch(() => {})
}

/** Removes temp files a killed process left beside `file` (only for a file one process writes); returns their names. */
export async function removeStaleTempFiles (file: string): Promise<string[]> {
  const prefix = tempPrefix(file)
  const stale = (await readdir(dirname(file))).filter(name => name.startsWith(prefix))
  await Promise.all(stale.map(name => rm(join(dirname(file), name), { force: true })))
  return stale
}
