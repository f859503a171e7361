// The embedded store's saves (README.md, "Storage"): each change appends the records it touched to a journal beside
// the data file (`<file>.journal`, one JSON line each, fsynced before the
// change resolves), so a save costs what changed, not the whole data set; once the journal outgrows the data file
// the snapshot is written whole (atomically) and a new journal begins. Saves that overlap coalesce into one write.
// The journal's first line names its generation; the snapshot records the generation it folds in, so a journal
// left by a crash between the two writes is recognised as already folded in and skipped.
import { open, readFile, stat } from 'node:fs/promises'
import type { FileHandle } from 'node:fs/promises'
import { writeFileAtomically } from '../fs/atomic-write.ts'
import type { Logger } from '../logger.ts'
import type { JournalEntry } from './embedded-file-format.ts'

/** A journal this much larger than the data file (and at least MIN_COMPACT_BYTES) is folded into a new snapshot. */
const COMPACT_RATIO = 1
const MIN_COMPACT_BYTES = 1024 * 1024

export interface JournalSaver {
  /** Schedules a save; resolves once a write that holds every change made before the call is on disk. */
  save (): Promise<void>
  /** Resolves once the changes already scheduled are on disk (rejects if that write failed). */
  flush (): Promise<void>
  /** Waits for the writes scheduled, then closes the journal. */
  close (): Promise<void>
}

export interface JournalSources {
  /** The whole data file for `generation`, rendered when a snapshot is written. */
  snapshot: (generation: number) => string
  /** The lines (JSON, no newline) of the records changed since the last call, taken when a journal write starts. */
  changes: () => string[]
}

interface Waiter { change: number, resolve: () => void, reject: (err: Error) => void }

export function journalFile (file: string): string {
  return `${file}.journal`
}

/** One journal line for the record of `kind` named `id`: its encoded value, or null once removed. */
export function journalLine (entry: JournalEntry): string {
  return JSON.stringify({ k: entry.kind, id: entry.id, v: entry.value })
}

/**
 * The entries of the journal beside `file` that the snapshot of `generation` does not hold yet: none when there is
 * no journal or it is of an older generation. A torn last line (a crash during its append) is dropped with a
 * warning; any other line that does not parse stops start-up.
 */
export async function readJournal (file: string, generation: number, logger?: Logger): Promise<JournalEntry[]> {
  let text: string
  try {
    text = await readFile(journalFile(file), 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw new Error(`Cannot read the embedded store journal ${journalFile(file)}: ${(err as Error).message}`, { cause: err })
  }
  const lines = text.split('\n')
  const torn = !text.endsWith('\n') ? lines.pop() : (lines.pop(), undefined)
  if (torn !== undefined && torn !== '') logger?.warn({ file: journalFile(file), bytes: torn.length }, 'embedded store: dropped the journal\'s last line, cut short by a crash')
  const head = parseLine(lines[0] ?? '', 1)
  if (typeof head.generation !== 'number') throw new Error(`the journal ${journalFile(file)} does not start with its generation`)
  if (head.generation < generation) return []
  if (head.generation > generation) throw new Error(`the journal ${journalFile(file)} is of generation ${String(head.generation)}, newer than the data file's ${generation}`)
  return lines.slice(1).map((line, i) => {
    const o = parseLine(line, i + 2)
    if (typeof o.k !== 'string' || typeof o.id !== 'string' || !('v' in o)) throw new Error(`line ${i + 2} of the journal is not a change`)
    return { kind: o.k as JournalEntry['kind'], id: o.id, value: o.v }
  })
}

function parseLine (line: string, n: number): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(line)
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>
  } catch {}
  throw new Error(`line ${n} of the journal is not a JSON object`)
}

/** The data file and its journal as written so far: a whole snapshot (compact) or the changes appended. */
interface JournalFiles {
  /** No journal is open, or it outgrew the data file: the next write is a snapshot. */
  due: () => boolean
  compact: () => Promise<void>
  append: () => Promise<void>
  /** Closes the journal; `quietly`: after a failed write, whose next save starts again from a snapshot. */
  close: (quietly?: boolean) => Promise<void>
}

function journalFiles (file: string, from: number, sources: JournalSources): JournalFiles {
  let generation = from
  let journal: FileHandle | undefined
  let snapshotBytes = 0
  let journalBytes = Infinity
  return {
    due: () => journal === undefined || journalBytes > Math.max(MIN_COMPACT_BYTES, snapshotBytes * COMPACT_RATIO),

    async compact () {
      sources.changes()
      const next = generation + 1
      const text = sources.snapshot(next)
      await writeFileAtomically(file, text, 0o600)
      generation = next
      snapshotBytes = Buffer.byteLength(text)
      await journal?.close()
      journal = undefined
      const head = `${JSON.stringify({ generation })}\n`
      await writeFileAtomically(journalFile(file), head, 0o600)
      journal = await open(journalFile(file), 'a', 0o600)
      journalBytes = head.length
    },

    async append () {
      const lines = sources.changes()
      if (lines.length === 0 || journal === undefined) return
      // Appending to a journal someone removed or replaced would lose the change with no error: refuse, so it is told.
      const [named, held] = await Promise.all([stat(journalFile(file)).catch(() => undefined), journal.stat()])
      if (named?.ino !== held.ino) throw new Error(`the journal ${journalFile(file)} was removed or replaced`)
      const text = `${lines.join('\n')}\n`
      await journal.write(text, null, 'utf8')
      await journal.datasync()
      journalBytes += Buffer.byteLength(text)
    },

    async close (quietly = false) {
      const closing = journal?.close()
      journal = undefined
      await (quietly ? closing?.catch(() => {}) : closing)
    },
  }
}

/**
 * The saver of the data file `file` and its journal, from `generation` (the data file's). The first save after start
 * writes a snapshot, so a journal always starts from the data file beside it.
 */
export function createJournalSaver (file: string, generation: number, sources: JournalSources, logger?: Logger): JournalSaver {
  const files = journalFiles(file, generation, sources)
  let changes = 0
  let written = 0
  let running: Promise<void> | undefined
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
        const whole = files.due()
        await (whole ? files.compact() : files.append())
        logger?.debug({ file, changes: upTo - written, whole, ms: Math.round(performance.now() - started) }, 'embedded store saved')
      } catch (err) {
        error = new Error(`Could not save the embedded store data file ${file}: ${(err as Error).message}`, { cause: err })
        logger?.error({ err: error, file }, 'embedded store save failed')
        // The next save starts again from a whole snapshot: the journal may have missed these changes.
        await files.close(true)
      }
      written = upTo
      settle(upTo, error)
    }
    running = undefined
  }

  function waitFor (change: number): Promise<void> {
    return new Promise((resolve, reject) => waiters.push({ change, resolve, reject }))
  }

  return {
    save () {
      const change = ++changes
      const done = waitFor(change)
      // Starting on the next turn lets every change made in this turn join the same write.
      running ??= new Promise<void>(resolve => setImmediate(resolve)).then(run)
      return done
    },
    flush () {
      return written >= changes ? Promise.resolve() : waitFor(changes)
    },
    async close () {
      await running
      await files.close()
    },
  }
}
