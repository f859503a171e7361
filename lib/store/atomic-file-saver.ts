// Saves a whole file atomically and coalesces saves: a crash leaves either the old file or the new
// one, never a torn one, and many changes made while a write is running share the next write.
import { writeFileAtomically } from '../fs/atomic-write.ts'
import type { Logger } from '../logger.ts'

export interface FileSaver {
  /** Schedules a save; resolves once a write that includes every change made before the call is on disk. */
  save (): Promise<void>
  /** Resolves once the changes already scheduled are on disk (rejects if that write failed). */
  flush (): Promise<void>
}

interface Waiter {
  change: number
  resolve: () => void
  reject: (err: Error) => void
}

/**
 * `render` is called when a write starts and must return the full current content, so every change
 * made before that moment is in the write. A change is counted when `save()` is called, which must
 * happen synchronously after the in-memory change.
 */
export function createFileSaver (file: string, render: () => string, logger?: Logger): FileSaver {
  let changes = 0
  let written = 0
  let running = false
  let waiters: Waiter[] = []

  function settle (upTo: number, err: Error | undefined): void {
    const done = waiters.filter(w => w.change <= upTo)
    waiters = waiters.filter(w => w.change > upTo)
    for (const w of done) {
      if (err === undefined) w.resolve()
      else w.reject(err)
    }
  }

  async function run (): Promise<void> {
    while (written < changes) {
      const upTo = changes
      const started = performance.now()
      let error: Error | undefined
      try {
        const text = render()
        await writeFileAtomically(file, text, 0o600)
        logger?.debug({ file, changes: upTo - written, bytes: Buffer.byteLength(text), ms: Math.round(performance.now() - started) }, 'embedded store saved')
      } catch (err) {
        error = new Error(`Could not save the embedded store data file ${file}: ${(err as Error).message}`, { cause: err })
        logger?.error({ err: error, file }, 'embedded store save failed')
      }
      written = upTo
      settle(upTo, error)
    }
    running = false
  }

  function waitFor (change: number): Promise<void> {
    return new Promise((resolve, reject) => waiters.push({ change, resolve, reject }))
  }

  return {
    save () {
      const change = ++changes
      const done = waitFor(change)
      if (!running) {
        running = true
        // Starting on the next turn lets every change made in this turn join the same write.
        setImmediate(() => { void run() })
      }
      return done
    },
    flush () {
      return written >= changes ? Promise.resolve() : waitFor(changes)
    },
  }
}
