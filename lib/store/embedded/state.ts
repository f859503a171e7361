// The embedded store's records in memory, shared by its per-kind modules; ../embedded-store.ts creates them once.
import type { ChangeLog } from '../embedded-changes.ts'
import type { RetiredKey } from '../embedded-file-format.ts'
import type { AttemptCount, KeyRecord, OwnerRecord, SessionRecord, SettingRecord, UsageRecord, UserLimits, UserRecord } from '../types.ts'

/** One counter window: its total and when it may go (epoch ms). */
export interface CounterWindow { total: number, expiresAt: number }

export interface Tables {
  /** Notes what changed for the next save; the Maps made by log.tracked note their own sets and deletes. */
  log: ChangeLog
  users: Map<string, UserRecord>
  /** usernameKey -> user id */
  userIdByKey: Map<string, string>
  sessions: Map<string, SessionRecord>
  /** userId -> device -> tokenHash */
  sessionsByUser: Map<string, Map<string, string>>
  attempts: Map<string, AttemptCount>
  keys: Map<string, KeyRecord>
  /** digest -> keyId */
  keyIdByDigest: Map<string, string>
  retiredKeys: Map<string, RetiredKey>
  /** userId -> override */
  limits: Map<string, UserLimits>
  settings: Map<string, SettingRecord>
  /** usageRowKey -> row */
  usage: Map<string, UsageRecord>
  /** resource name -> its owner; saved with the file, dropped by the sweep once expired. */
  owners: Map<string, OwnerRecord>
  /** key -> windowStart ms -> window; only windows of KEPT_WINDOW_MS or longer are saved (./counters.ts). */
  counters: Map<string, Map<number, CounterWindow>>
  /** key -> leaseId -> expiry ms; in memory only: a restart ends every request holding a lease. */
  leases: Map<string, Map<string, number>>
}

/** What every mutation goes through; ../embedded-store.ts owns both. */
export interface Writes {
  /** Refuses once the store is closed and sweeps old records: called before anything changes. */
  beginChange: () => void
  /** Called synchronously after an in-memory change; resolves once the change is durable. */
  commit: () => Promise<void>
}

export function createTables (log: ChangeLog): Tables {
  return {
    log,
    users: log.tracked('users'),
    userIdByKey: new Map(),
    sessions: log.tracked('sessions'),
    sessionsByUser: new Map(),
    attempts: log.tracked('attempts'),
    keys: log.tracked('keys'),
    keyIdByDigest: new Map(),
    retiredKeys: log.tracked('retiredKeys'),
    limits: log.tracked('limits'),
    settings: log.tracked('settings'),
    usage: log.tracked('usage'),
    owners: log.tracked('owners'),
    counters: new Map(),
    leases: new Map(),
  }
}
