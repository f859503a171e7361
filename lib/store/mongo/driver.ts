// The MongoDB driver as the collection modules use it: loaded on first use, its duplicate-key errors, literal
// regexes. Loading on first use spares users of the embedded store its 28 MB, though the library exports both.
import type { IndexDescription, MongoServerError } from 'mongodb'
import { optionalPackage } from '../../load-package.ts'

type Driver = typeof import('mongodb')

/** A module's collections by name, each with the indexes createMongoStore makes at start. */
export type CollectionIndexes = Readonly<Record<string, IndexDescription[]>>

export const DUPLICATE_KEY = 11000
export const UPSERT_TRIES = 3

let loaded: Driver | undefined

/** Loads the driver (once); createMongoStore awaits it before any collection module runs. */
export async function loadDriver (): Promise<Driver> {
  return (loaded ??= await optionalPackage('mongodb', 'createMongoStore', async () => await import('mongodb')))
}

/** The driver loadDriver loaded. */
export function driver (): Driver {
  if (loaded === undefined) throw new Error('the mongodb driver is used before createMongoStore loaded it')
  return loaded
}

export function escapeRegex (s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

export function isDuplicateKey (err: unknown): err is MongoServerError {
  return err instanceof driver().MongoServerError && err.code === DUPLICATE_KEY
}

/** Concurrent upserts of one key can race to insert; the losers fail with E11000 and succeed on retry. */
export async function retryDuplicateUpsert<T> (run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run()
    } catch (err) {
      if (!isDuplicateKey(err) || attempt >= UPSERT_TRIES) throw err
    }
  }
}
