// Per-user API keys (docs/accounts.md, "API keys"): created, listed and deleted by their owner or an admin, and
// resolved by the proxy on every call. Only a key's SHA-256 digest is stored; the secret is shown once, at creation.
import { randomBytes, timingSafeEqual } from 'node:crypto'
import type { AccessLevel, KeyRecord, Store } from '../store/types.ts'
import type { Logger } from '../logger.ts'
import { KEY_PREFIX } from '../proxy/access/caller.ts'
import type { KeyCaller } from '../proxy/access/caller.ts'
import { ACCESS_LEVELS } from '../store/types.ts'
import { fail } from '../errors.ts'
import { newUserId, tokenDigest } from './tokens.ts'
import { parseDollars } from '../metering/prices.ts'
import type { ModelPolicy } from '../proxy/access/model-policy.ts'

/** The secret (anything else is no key, answered without a store lookup): KEY_PREFIX and 32 random bytes as 43 base64url characters. */
const KEY_SECRET_PATTERN = new RegExp(`^${KEY_PREFIX}[A-Za-z0-9_-]{43}$`)
/** How many characters of the secret are kept and shown, so a user can tell keys apart. */
const PREFIX_LENGTH = 12
/** How stale a resolved answer may be: a revocation holds on every replica within 5 s. */
export const KEY_CACHE_MS = 4000
/** Most cached answers; the oldest goes first beyond it. */
export const KEY_CACHE_MAX = 10_000
/** A key's lastUsedAt is written at most this often (each write is a file save on the embedded store). */
export const KEY_TOUCH_MS = 60_000
/** Most keys one user holds. */
export const MAX_KEYS_PER_USER = 100

/** `usd_per_month`: the key's own monthly cap in US dollars (a number or decimal string, lib/metering/budgets.ts). */
export interface NewKeyInput { name: string, expires_in_days?: number, models?: string[], usd_per_month?: number | string }
/** The body of POST /auth/keys: a key's fields, and the current password when the session is not recent. */
export type KeyCreateInput = NewKeyInput & { current_password?: string }

/** A key as its owner and admins see it: never the secret or its digest. */
export interface PublicKey {
  key_id: string
  name: string
  prefix: string
  created_at: string
  expires_at: string | null
  last_used_at: string | null
  models: string[] | null
  /** The key's own monthly cap in US dollars; null: none. */
  usd_per_month: number | null
}

export function publicKey (key: KeyRecord): PublicKey {
  return {
    key_id: key.keyId,
    name: key.name,
    prefix: key.prefix,
    created_at: key.createdAt.toISOString(),
    expires_at: key.expiresAt?.toISOString() ?? null,
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
    models: key.models,
    usd_per_month: key.usdPerMonthMicros == null ? null : key.usdPerMonthMicros / 1_000_000,
  }
}

/** The 201 answer of a key's creation: the only place its secret (`key`) ever appears. */
export type CreatedKey = Omit<PublicKey, 'last_used_at'> & { key: string }

/** True when `level` is `min` or above it (ACCESS_LEVELS runs from lowest to highest). */
export function levelAtLeast (level: AccessLevel, min: AccessLevel): boolean {
  return ACCESS_LEVELS.indexOf(level) >= ACCESS_LEVELS.indexOf(min)
}

export interface Keys {
  /** Creates a key for `userId` (403 below the minimum level, 400 beyond MAX_KEYS_PER_USER); the answer holds the secret. */
  create (userId: string, input: NewKeyInput): Promise<CreatedKey>
  list (userId: string): Promise<PublicKey[]>
  /** Deletes the key only when `userId` owns it; 404 KEY_NOT_FOUND otherwise. */
  deleteOwn (userId: string, keyId: string): Promise<void>
  /** Deletes any key; 404 KEY_NOT_FOUND when there is none. */
  delete (keyId: string): Promise<void>
  /** Deletes every key of the user, at once on this replica; returns how many went. */
  revokeAll (userId: string): Promise<number>
  /** Drops cached answers about this user's keys, so a change made on this replica holds here at once. */
  forgetUser (userId: string): void
  resolve (secret: string): Promise<KeyCaller | undefined>
}

export interface KeysDeps {
  store: Store
  minLevel: AccessLevel
  /** The model policy: a key's `models` must fit its owner's level (ModelPolicy.unfit). */
  modelPolicy: Pick<ModelPolicy, 'unfit'>
  /** Days a key lives when its creator gives no expires_in_days; 0: forever. */
  defaultDays: number
  now: () => Date
  logger: Logger | undefined
}

interface CacheEntry {
  caller: KeyCaller | undefined
  /** The key's owner, also when the answer is negative (a disabled owner's key), so forgetUser finds it. */
  userId: string | undefined
  /** When this answer must be asked again (ms). */
  until: number
  /** The key's expiry (ms), checked on every hit; Infinity when none. */
  expiresAt: number
  /** When lastUsedAt was last written (ms), known from the store or from this replica's own touch. */
  touchedAt: number
}

export function createKeys ({ store, minLevel, modelPolicy, defaultDays, now, logger }: KeysDeps): Keys {
  const { keys, users } = store
  // Insertion order is age: a refreshed answer is re-inserted, so the first entry is the oldest.
  const cache = new Map<string, CacheEntry>()
  // Lookups under way, so calls with one key arriving together on a cold cache cost one store round trip.
  const pending = new Map<string, Promise<CacheEntry>>()
  // Moves on every eviction: a lookup that started before one is answered but not cached, so a deletion or a
  // disable on this replica holds here at once even when a lookup was under way.
  let generation = 0

  function remember (digest: string, entry: CacheEntry): void {
    cache.delete(digest)
    if (cache.size >= KEY_CACHE_MAX) cache.delete(cache.keys().next().value as string)
    cache.set(digest, entry)
  }

  function touch (entry: CacheEntry, at: number): void {
    if (entry.caller === undefined || at - entry.touchedAt < KEY_TOUCH_MS) return
    entry.touchedAt = at
    keys.touch(entry.caller.keyId, new Date(at)).catch((err: unknown) => logger?.warn({ err, keyId: entry.caller?.keyId }, 'could not record an API key\'s last use'))
  }

  async function lookup (digest: string, at: number, previous: CacheEntry | undefined): Promise<CacheEntry> {
    const record = await keys.findByDigest(digest)
    const entry: CacheEntry = { caller: undefined, userId: undefined, until: at + KEY_CACHE_MS, expiresAt: Infinity, touchedAt: previous?.touchedAt ?? -Infinity }
    if (record === null) return entry
    // The store found it by digest; comparing again in constant time keeps a lax store index from deciding alone.
    if (record.digest.length !== digest.length || !timingSafeEqual(Buffer.from(record.digest), Buffer.from(digest))) return entry
    entry.userId = record.userId
    entry.expiresAt = record.expiresAt?.getTime() ?? Infinity
    entry.touchedAt = Math.max(entry.touchedAt, record.lastUsedAt?.getTime() ?? -Infinity)
    const user = await users.findById(record.userId)
    if (user === null || user.disabled === true || !levelAtLeast(user.accessLevel, minLevel)) return entry
    entry.caller = Object.freeze({ kind: 'key', userId: user.id, keyId: record.keyId, accessLevel: user.accessLevel, models: record.models === null ? null : Object.freeze([...record.models]), ...(record.usdPerMonthMicros == null ? {} : { usdPerMonthMicros: record.usdPerMonthMicros }) })
    return entry
  }

  function forgetUser (userId: string): void {
    for (const [digest, entry] of cache) if (entry.userId === userId) cache.delete(digest)
    generation++
    pending.clear()
  }

  async function evict (keyId: string): Promise<KeyRecord | null> {
    const record = await keys.get(keyId)
    if (record !== null) cache.delete(record.digest)
    generation++
    pending.clear()
    return record
  }

  return {
    async create (userId, input) {
      const user = await users.findById(userId)
      if (user === null) throw fail('SESSION_NOT_FOUND')
      if (!levelAtLeast(user.accessLevel, minLevel)) throw fail('INSUFFICIENT_PERMISSIONS', `Only users at level ${minLevel} or above may create API keys`)
      const unfit = input.models === undefined ? undefined : modelPolicy.unfit(user.accessLevel, input.models)
      if (unfit !== undefined) throw fail('INVALID_INPUT', `Access level ${user.accessLevel} may not use the model \`${unfit}\` (GEMINI_MODEL_ACCESS), so a key for it could make no call`, { param: 'models' })
      // Concurrent creates may pass this check together and end a few keys over: the cap bounds storage, not access.
      if ((await keys.listByUser(userId)).length >= MAX_KEYS_PER_USER) throw fail('TOO_MANY_KEYS')
      const secret = KEY_PREFIX + randomBytes(32).toString('base64url')
      const createdAt = now()
      const days = input.expires_in_days ?? defaultDays
      const record = {
        keyId: newUserId(),
        userId,
        name: input.name,
        digest: tokenDigest(secret),
        prefix: secret.slice(0, PREFIX_LENGTH),
        createdAt,
        expiresAt: days === 0 ? null : new Date(createdAt.getTime() + days * 86_400_000),
        models: input.models ?? null,
        ...(input.usd_per_month === undefined ? {} : { usdPerMonthMicros: parseDollars(input.usd_per_month) }),
      }
      await keys.create(record)
      const { last_used_at: _neverUsed, ...shown } = publicKey({ ...record, lastUsedAt: null })
      return { ...shown, key: secret }
    },

    async list (userId) {
      return (await keys.listByUser(userId)).map(publicKey)
    },

    async deleteOwn (userId, keyId) {
      const record = await evict(keyId)
      if (record === null || record.userId !== userId || !await keys.deleteForUser(userId, keyId)) throw fail('KEY_NOT_FOUND')
    },

    async delete (keyId) {
      await evict(keyId)
      if (!await keys.delete(keyId)) throw fail('KEY_NOT_FOUND')
    },

    async revokeAll (userId) {
      const revoked = await keys.deleteAllForUser(userId)
      forgetUser(userId)
      logger?.info({ userId, revoked }, 'API keys revoked')
      return revoked
    },

    forgetUser,

    async resolve (secret) {
      if (typeof secret !== 'string' || !secret.startsWith(KEY_PREFIX) || !KEY_SECRET_PATTERN.test(secret)) return undefined
      const digest = tokenDigest(secret)
      const at = now().getTime()
      let entry = cache.get(digest)
      if (entry === undefined || entry.until <= at) {
        let asked = pending.get(digest)
        if (asked === undefined) {
          const started = generation
          const lookingUp: Promise<CacheEntry> = lookup(digest, at, entry).then(fresh => {
            if (generation === started) remember(digest, fresh)
            return fresh
          }).finally(() => { if (pending.get(digest) === lookingUp) pending.delete(digest) })
          asked = lookingUp
          pending.set(digest, asked)
        }
        entry = await asked
      }
      if (entry.caller === undefined || entry.expiresAt <= at) return undefined
      touch(entry, at)
      return entry.caller
    },
  }
}
