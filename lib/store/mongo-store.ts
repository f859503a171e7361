// The MongoDB store, on the official driver. Collections: users, sessions, login_attempts, api_keys,
// user_limits, settings, rate_counters, leases, usage, resource_owners, responses, retired_keys. Every query has an index; usernames are unique on their
// lower-cased key; sessions, attempt windows, rate windows, lease sets, resource owners and stored responses carry TTL indexes (deletion
// is lazy, so callers still check expiry on every read). Counters, leases and usage change only by
// single atomic updates, never read-modify-write, so any number of replicas can share them.
// User-supplied values only ever reach a query as plain strings: each one is checked to be a
// string, and the search fragment is regex-escaped.
// Each record kind's port, with its collections and their indexes, is its own module in ./mongo/.
import type { Db, MongoClient } from 'mongodb'
import { ConfigurationError } from '../errors.ts'
import type { Logger } from '../logger.ts'
import { RESPONSE_OWNER_MAX_CHARS } from './types.ts'
import type { Store } from './types.ts'
import { ATTEMPT_INDEXES, createAttemptStore } from './mongo/attempts.ts'
import { COUNTER_INDEXES, createCounterStore } from './mongo/counters.ts'
import { loadDriver } from './mongo/driver.ts'
import { createKeyStore, KEY_INDEXES } from './mongo/keys.ts'
import { createLeaseStore, LEASE_INDEXES } from './mongo/leases.ts'
import { createLimitStore } from './mongo/limits.ts'
import { createSettingStore } from './mongo/settings.ts'
import { createOwnerStore, OWNER_INDEXES } from './mongo/owners.ts'
import { createResponseStore, RESPONSE_INDEXES } from './mongo/responses.ts'
import { createSessionStore, SESSION_INDEXES } from './mongo/sessions.ts'
import { createUsageStore, USAGE_INDEXES } from './mongo/usage.ts'
import { createUserStore, USER_INDEXES } from './mongo/users.ts'

export interface MongoStoreOptions {
  /** Connection string; used when `client` is not given. */
  url?: string
  /** An existing client to use instead of `url`; the store leaves it open on close. */
  client?: MongoClient
  /** Database name. */
  dbName: string
  /** pino-compatible logger. Default: none. */
  logger?: Logger
  /** Most characters one owner's stored Responses answers may total; past it that owner's oldest go, no one else's. Default RESPONSE_OWNER_MAX_CHARS (8 Mi). */
  maxResponseCharsPerOwner?: number
}

/** Every collection with indexes (user_limits and settings have none: they are read and written by _id only). */
const INDEXES = { ...USER_INDEXES, ...SESSION_INDEXES, ...ATTEMPT_INDEXES, ...KEY_INDEXES, ...COUNTER_INDEXES, ...LEASE_INDEXES, ...OWNER_INDEXES, ...USAGE_INDEXES, ...RESPONSE_INDEXES }

async function createIndexes (db: Db): Promise<void> {
  await Promise.all(Object.entries(INDEXES).map(([name, indexes]) => db.collection(name).createIndexes(indexes)))
}

export async function createMongoStore (options: MongoStoreOptions): Promise<Store> {
  if (options.client === undefined && options.url === undefined) throw new ConfigurationError('url', 'createMongoStore needs `url` or `client`')
  if (typeof options.dbName !== 'string' || options.dbName === '') throw new ConfigurationError('dbName', 'createMongoStore needs `dbName`')
  const perOwner = options.maxResponseCharsPerOwner ?? RESPONSE_OWNER_MAX_CHARS
  if (!Number.isSafeInteger(perOwner) || perOwner < 1) {
    throw new ConfigurationError('maxResponseCharsPerOwner', `createMongoStore: maxResponseCharsPerOwner must be a positive integer (got ${String(options.maxResponseCharsPerOwner)})`)
  }
  const driver = await loadDriver()
  const ownClient = options.client === undefined
  const client = options.client ?? new driver.MongoClient(options.url!, { appName: 'gatehouse' })
  const db = client.db(options.dbName)
  try {
    if (ownClient) await client.connect()
    await createIndexes(db)
  } catch (err) {
    if (ownClient) await client.close().catch(() => {})
    throw new Error(`Cannot start the MongoDB store (database "${options.dbName}"): ${(err as Error).message}`, { cause: err })
  }
  options.logger?.debug({ db: options.dbName }, 'mongodb store: indexes ready')
  let closed = false

  return {
    kind: 'mongodb',
    users: createUserStore(db),
    sessions: createSessionStore(db),
    attempts: createAttemptStore(db),
    keys: createKeyStore(db),
    limits: createLimitStore(db),
    settings: createSettingStore(db),
    counters: createCounterStore(db),
    leases: createLeaseStore(db),
    usage: createUsageStore(db),
    owners: createOwnerStore(db),
    responses: createResponseStore(db, perOwner),

    async ping () {
      await db.command({ ping: 1 })
    },

    async flush () {},

    async close () {
      if (closed) return
      closed = true
      if (ownClient) await client.close()
    },
  }
}
