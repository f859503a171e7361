// Writing a credentials file back: atomically (temp file, fsync, rename) so a crash never leaves a
// torn file, one write at a time, only when the content changed, and never failing the request that
// caused it (a read-only mount just turns write-back off).
import { writeFileAtomically } from '../../fs/atomic-write.ts'
import type { Logger } from '../../logger.ts'

export interface CredentialsFileWriter {
  /** Queues a write of this object; resolves once it is on disk (or was skipped or failed, which is logged). */
  write (data: Record<string, unknown>): Promise<void>
  /** Resolves when every queued write has finished. */
  idle (): Promise<void>
}

export interface CredentialsFileWriterOptions {
  /** The file's current text: kept as the baseline for "changed" and for its indentation style. */
  original: string
  /** File mode for the new file (the original's). */
  mode: number
  logger: Logger
}

const READ_ONLY = new Set(['EROFS', 'EACCES', 'EPERM'])

export function createCredentialsFileWriter (file: string, options: CredentialsFileWriterOptions): CredentialsFileWriter {
  const { logger, mode } = options
  const pretty = options.original.includes('\n')
  let onDisk = options.original
  let disabled = false
  let queue: Promise<void> = Promise.resolve()

  function serialise (data: Record<string, unknown>): string {
    return pretty ? JSON.stringify(data, null, 2) + '\n' : JSON.stringify(data)
  }

  async function writeNow (text: string): Promise<void> {
    if (disabled || text === onDisk) return
    if (safeParse(text) === safeParse(onDisk)) return
    try {
      await writeFileAtomically(file, text, mode)
      onDisk = text
      logger.debug({ file }, 'Saved refreshed upstream credentials')
    } catch (err) {
      const code = (err as { code?: string }).code ?? 'unknown'
      if (READ_ONLY.has(code)) {
        disabled = true
        logger.warn({ file, code }, 'The credentials file is not writable: refreshed tokens are kept in memory only')
      } else {
        logger.warn({ file, code, err: (err as Error).message }, 'Could not save refreshed upstream credentials')
      }
    }
  }

  return {
    write (data) {
      const text = serialise(data)
      queue = queue.then(() => writeNow(text))
      return queue
    },
    idle () {
      return queue
    },
  }
}

/** Canonical JSON of a text, so a re-indented but identical file counts as unchanged. */
function safeParse (text: string): string | undefined {
  try {
    return JSON.stringify(JSON.parse(text))
  } catch {
    return undefined
  }
}
