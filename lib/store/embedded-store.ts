// The embedded store: everything in memory, optionally saved to one JSON file and its journal.
// With a file, the data is loaded at start and every change is saved (./embedded-journal.ts); a change's promise
// resolves only once it is on disk, and changes made while a write runs share the next write.
// One process per file: two processes on one file would overwrite each other's saves.
// Each record kind's port is its own module in ./embedded/, over the tables of ./embedded/state.ts.
import { mkdir, readFile } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import { ConfigurationError } from '../errors.ts'
import { removeStaleTempFiles } from '../fs/atomic-write.ts'
import { decodeStoreFile, encodeStoreFile, storeFileGeneration } from './embedded-file-format.ts'
import type { EmbeddedData } from './embedded-file-format.ts'
import { createJournalSaver, readJournal } from './embedded-journal.ts'
import type { JournalSaver } from './embedded-journal.ts'
import { createChangeLog } from './embedded-changes.ts'
import type { Logger } from '../logger.ts'
import { RESPONSE_OWNER_MAX_CHARS } from './types.ts'
import type { Store } from './types.ts'
import { createAttemptStore, sweepAttempts } from './embedded/attempts.ts'
import { createCounterStore, sweepCounters } from './embedded/counters.ts'
import { changedLines, loadTables, snapshot } from './embedded/file-records.ts'
import { createKeyStore, sweepRetiredKeys } from './embedded/keys.ts'
import { createLeaseStore, sweepLeases } from './embedded/leases.ts'
import { createLimitStore } from './embedded/limits.ts'
import { createSettingStore } from './embedded/settings.ts'
import { createOwnerStore, sweepOwners } from './embedded/owners.ts'
import { createResponseStore, createResponseTable } from './embedded/responses.ts'
import { createSessionStore, sweepSessions } from './embedded/sessions.ts'
import { createTables } from './embedded/state.ts'
import type { Writes } from './embedded/state.ts'
import { createUsageStore } from './embedded/usage.ts'
import { createUserStore } from './embedded/users.ts'

export interface EmbeddedStoreOptions {
  /** JSON file loaded at start and saved on every change; its directory is created if missing. Default: none (memory only, lost on exit). */
  file?: string
  /** pino-compatible logger (saves at debug, failed saves at error). Default: none. */
  logger?: Logger
  /** Clock used to drop sessions and attempt windows long past their end (see retention.ts). Default: the system clock. */
  now?: () => Date
  /** Most characters the stored Responses answers may total in memory; past it the largest owner's oldest are dropped. Default 67108864 (64 Mi). */
  maxResponseChars?: number
  /** Most characters one owner's stored Responses answers may total; past it that owner's oldest are dropped, no one else's. Default RESPONSE_OWNER_MAX_CHARS (8 Mi). */
  maxResponseCharsPerOwner?: number
}

const SWEEP_INTERVAL_MS = 60_000
const DEFAULT_MAX_RESPONSE_CHARS = 64 * 1024 * 1024

function checkOptions (options: EmbeddedStoreOptions): void {
  if (options.file !== undefined && (typeof options.file !== 'string' || options.file === '')) {
    throw new ConfigurationError('file', `createEmbeddedStore: file must be a non-empty path (got ${JSON.stringify(options.file)})`)
  }
  if (options.now !== undefined && typeof options.now !== 'function') throw new ConfigurationError('now', 'createEmbeddedStore: now must be a function returning a Date')
  for (const name of ['maxResponseChars', 'maxResponseCharsPerOwner'] as const) {
    const value = options[name]
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 1)) {
      throw new ConfigurationError(name, `createEmbeddedStore: ${name} must be a positive integer (got ${String(value)})`)
    }
  }
}

export async function createEmbeddedStore (options: EmbeddedStoreOptions = {}): Promise<Store> {
  checkOptions(options)
  const clock = options.now ?? (() => new Date())
  // The lists the file saves note what changed, so a save writes only that (./embedded-changes.ts).
  const log = createChangeLog()
  const tables = createTables(log)
  const responses = createResponseTable(options.maxResponseChars ?? DEFAULT_MAX_RESPONSE_CHARS, options.maxResponseCharsPerOwner ?? RESPONSE_OWNER_MAX_CHARS)
  let lastSweep = 0
  let closed = false
  let saver: JournalSaver | undefined

  /** Drops records long past their end, at most once a minute; the next save carries the removals. */
  function sweep (): void {
    const now = clock().getTime()
    if (Math.abs(now - lastSweep) < SWEEP_INTERVAL_MS) return
    lastSweep = now
    sweepSessions(tables, now)
    sweepAttempts(tables.attempts, now)
    sweepCounters(tables, now)
    sweepLeases(tables.leases, now)
    sweepOwners(tables.owners, now)
    sweepRetiredKeys(tables.retiredKeys, now)
    responses.sweep(now)
  }

  const writes: Writes = {
    // Every mutation starts here: refuse once closed, and sweep old records along the way.
    beginChange () {
      if (closed) throw new Error('The embedded store is closed')
      sweep()
    },
    commit: () => saver === undefined ? Promise.resolve() : saver.save(),
  }

  if (options.file !== undefined) {
    const file = resolve(options.file)
    const { data, generation } = await loadDataFile(file, options.logger)
    if (data !== undefined) loadTables(tables, data)
    log.start()
    sweep()
    saver = createJournalSaver(file, generation, { snapshot: next => encodeStoreFile(snapshot(tables), next), changes: () => changedLines(tables) }, options.logger)
    // A new file is written now, so a path that cannot be written fails at start, not at the first sign-up.
    if (data === undefined) await saver.save()
  }

  return {
    kind: 'embedded',
    users: createUserStore(tables, writes),
    sessions: createSessionStore(tables, writes),
    attempts: createAttemptStore(tables.attempts, writes),
    keys: createKeyStore(tables, writes, clock),
    limits: createLimitStore(tables.limits, writes),
    settings: createSettingStore(tables.settings, writes),
    counters: createCounterStore(tables, writes),
    leases: createLeaseStore(tables.leases, writes),
    usage: createUsageStore(tables, writes),
    owners: createOwnerStore(tables.owners, writes),
    responses: createResponseStore(responses, writes),

    async ping () {
      if (closed) throw new Error('The embedded store is closed')
    },

    async flush () {
      await saver?.flush()
    },

    async close () {
      closed = true
      // Kept counter windows ride on the next save; at close that is this one.
      if (saver !== undefined && log.pending()) await writes.commit()
      await saver?.flush()
      await saver?.close()
    },
  }
}

/**
 * The file's data with its journal applied and its generation, or no data when there is no file yet. Anything else
 * wrong stops start-up, file and journal untouched.
 */
async function loadDataFile (file: string, logger: Logger | undefined): Promise<{ data: EmbeddedData | undefined, generation: number }> {
  try {
    await mkdir(dirname(file), { recursive: true })
  } catch (err) {
    throw new Error(`Cannot create the directory of the embedded store data file ${file}: ${(err as Error).message}`, { cause: err })
  }
  const stale = await removeStaleTempFiles(file).catch(() => [])
  if (stale.length > 0) logger?.warn({ file, removed: stale }, 'embedded store: removed temp files left by an interrupted save')
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new Error(`Cannot read the embedded store data file ${file}: ${(err as Error).message}`, { cause: err })
    }
    logger?.info({ file }, 'embedded store: no data file yet, starting empty')
    return { data: undefined, generation: 0 }
  }
  const generation = storeFileGeneration(text)
  let data: EmbeddedData
  try {
    data = decodeStoreFile(text, await readJournal(file, generation, logger))
  } catch (err) {
    throw new Error(`The embedded store data file ${file} is corrupt: ${(err as Error).message}. ` +
      'It was left untouched: repair it, or move it away to start empty.', { cause: err })
  }
  logger?.info({ file, users: data.users.length, sessions: data.sessions.length }, 'embedded store: data file loaded')
  return { data, generation }
}
