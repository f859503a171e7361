// The storage port: the only things the services need from a database.
// Adapters: embedded (memory + optional JSON file) and MongoDB. Both pass test/store/.

export const ACCESS_LEVELS = ['default', 'member', 'admin', 'dev', 'hush'] as const
export type AccessLevel = typeof ACCESS_LEVELS[number]

export interface UserRecord {
  /** 24-hex identifier (an ObjectId's hex form). */
  id: string
  /** Display form, as signed up. */
  username: string
  /** Normalised form (lower-cased); unique. */
  usernameKey: string
  passwordHash: string
  /** Lower-cased, or null when not given. */
  email: string | null
  accessLevel: AccessLevel
  dateJoined: Date
  /** true when an admin disabled the account; absent when enabled (stores return it only when true). */
  disabled?: boolean
}

export type UserPatch = Partial<Pick<UserRecord, 'username' | 'usernameKey' | 'passwordHash' | 'email' | 'accessLevel' | 'disabled'>>

export interface SessionRecord {
  /** SHA-256 hex digest of the bearer token; the token itself is never stored. */
  tokenHash: string
  userId: string
  /** The user-agent sent at login. */
  device: string
  createdAt: Date
  expiresAt: Date
}

export interface AttemptCount {
  count: number
  /** When the current window ends. */
  resetAt: Date
}

export interface UserStore {
  /** Throws GatehouseError USERNAME_TAKEN when usernameKey exists (of concurrent inserts of one key, exactly one wins). */
  insert (user: UserRecord): Promise<void>
  /** null for an unknown id, and for one that is not 24 hex digits. */
  findById (id: string): Promise<UserRecord | null>
  findByUsernameKey (usernameKey: string): Promise<UserRecord | null>
  /** Usernames (display form) whose usernameKey contains `fragment` (already lower-cased, literal), sorted by usernameKey; limit <= 0 gives []. */
  searchUsernames (fragment: string, limit: number): Promise<string[]>
  /** Users ordered by dateJoined, then id; limit <= 0 gives []. */
  list (limit: number, offset: number): Promise<UserRecord[]>
  /** Returns the updated record, or null when the id is unknown. Throws USERNAME_TAKEN on a clash. */
  update (id: string, patch: UserPatch): Promise<UserRecord | null>
  /** Enabled users at this level: a disabled user holds no level in effect. */
  countByAccessLevel (level: AccessLevel): Promise<number>
}

export interface SessionStore {
  /** Stores a session, replacing any session of the same userId and device (atomically). Rejects a tokenHash held by another userId/device. */
  put (session: SessionRecord): Promise<void>
  /** The session with this digest, or null. Expired sessions are still returned for a while (store/retention.ts): callers check expiresAt. */
  findByTokenHash (tokenHash: string): Promise<SessionRecord | null>
  /** Returns true when a session was removed. */
  delete (tokenHash: string): Promise<boolean>
  /** Removes every session of the user except the one with `keepTokenHash`; returns how many went. */
  deleteByUser (userId: string, keepTokenHash?: string): Promise<number>
  /** Every session of the user, in no particular order; expired ones may be among them (callers check expiresAt). */
  listByUser (userId: string): Promise<SessionRecord[]>
}

export interface AttemptStore {
  /** Adds one failure to `key` in a fixed window of `windowMs` starting at the first failure; returns the new count. */
  hit (key: string, windowMs: number, now: Date): Promise<AttemptCount>
  /** The live count for `key` (count 0 and resetAt = now when none or when the window has passed). */
  get (key: string, now: Date): Promise<AttemptCount>
  clear (key: string): Promise<void>
  /** Removes every key that starts with `prefix` (a literal string). */
  clearPrefix (prefix: string): Promise<void>
}

export interface KeyRecord {
  /** The key's public identifier (callers choose it; unique). */
  keyId: string
  /** The owner's user id. */
  userId: string
  name: string
  /** SHA-256 hex digest of the secret; the secret itself is never stored. Unique. */
  digest: string
  /** The first characters of the secret, shown so a user can tell keys apart. */
  prefix: string
  createdAt: Date
  /** null: never expires. */
  expiresAt: Date | null
  /** null: never used (set by touch, coarsely). */
  lastUsedAt: Date | null
  /** Model-name patterns that narrow the owner's policy; null: no narrowing. */
  models: string[] | null
  /** The key's own cap on model calls per UTC calendar month, in micro-dollars; absent or null: none. */
  usdPerMonthMicros?: number | null
}

/** What create takes: a key is never used before it exists. */
export type NewKeyRecord = Omit<KeyRecord, 'lastUsedAt'>

export interface KeyStore {
  /** Throws when the keyId or the digest is already held (of concurrent creates of one, exactly one wins). */
  create (key: NewKeyRecord): Promise<void>
  /** The proxy's hot path: one indexed lookup. Expired keys are returned too (callers check expiresAt). */
  findByDigest (digest: string): Promise<KeyRecord | null>
  get (keyId: string): Promise<KeyRecord | null>
  /** The user's keys ordered by createdAt, then keyId. */
  listByUser (userId: string): Promise<KeyRecord[]>
  /** Returns true when a key was removed. */
  delete (keyId: string): Promise<boolean>
  /** Removes the key only when `userId` owns it: another user's key is not found (false). */
  deleteForUser (userId: string, keyId: string): Promise<boolean>
  /** Removes every key of the user; returns how many went. */
  deleteAllForUser (userId: string): Promise<number>
  /**
   * The names of those of `keyIds` that exist or were deleted within RETIRED_KEY_RETENTION_SECONDS (usage still names
   * a revoked key); ids never seen are left out.
   */
  names (keyIds: readonly string[]): Promise<Map<string, string>>
  /** Records a use; lastUsedAt only moves forward. An unknown keyId is ignored. Each touch is a write (a file save on the embedded store): callers touch coarsely. */
  touch (keyId: string, lastUsedAt: Date): Promise<void>
}

/**
 * A user's limits, overriding their access level's: an absent field keeps the level's limit, a number
 * replaces it, null lifts it (unlimited). Numbers are non-negative safe integers.
 */
export interface UserLimits {
  /** Requests per UTC minute. */
  rpm?: number | null
  /** Tokens (input + output + thinking) per UTC minute. */
  tpm?: number | null
  /** Tokens per UTC day. */
  tokensPerDay?: number | null
  /** Calls in flight at once. */
  concurrent?: number | null
  /** Micro-dollars (1e-6 USD) of model calls per UTC day, at the price list's prices (docs/prices.md, "Budgets"). */
  usdPerDayMicros?: number | null
  /** Micro-dollars of model calls per UTC calendar month. */
  usdPerMonthMicros?: number | null
}

export interface LimitStore {
  /** The user's override, or null when none is set. */
  get (userId: string): Promise<UserLimits | null>
  /** Replaces the user's whole override. Throws TypeError for a value that is not a non-negative safe integer or null. */
  set (userId: string, limits: UserLimits): Promise<void>
  /** Returns true when an override was removed. */
  clear (userId: string): Promise<boolean>
}

/** The gateway-wide switches an admin sets in the console, over their configured defaults. */
export const SETTING_NAMES = ['publicSignup', 'publicLookup'] as const
export type SettingName = typeof SETTING_NAMES[number]

export interface SettingRecord {
  name: SettingName
  value: boolean
  /** The admin who set it (user id), and when. */
  setBy: string
  setAt: Date
}

export interface SettingStore {
  /** The setting an admin stored, or null: the configured default holds. */
  get (name: SettingName): Promise<SettingRecord | null>
  /** Stores (replaces) the setting; throws TypeError for an unknown name or a value that is not a boolean. */
  set (record: SettingRecord): Promise<void>
  /** Returns true when a stored setting was removed. */
  clear (name: SettingName): Promise<boolean>
}

/** One counter window of a CounterStore.batch: an add when `amount` is given (with `expiresAt`), a read otherwise. */
export interface CounterOp {
  key: string
  windowStart: Date
  /** A safe integer to add, as add() adds it; absent: the window is only read, as get() reads it. */
  amount?: number
  /** With `amount`: as add()'s expiresAt. */
  expiresAt?: Date
}

export interface CounterStore {
  /**
   * Adds `amount` (a safe integer) to the fixed window of `key` starting at `windowStart` and returns the
   * window's new total, atomically (concurrent adds from any number of store instances all count).
   * The window may be dropped once `expiresAt` has passed (the latest expiresAt given wins).
   */
  add (key: string, windowStart: Date, amount: number, expiresAt: Date): Promise<number>
  /** The window's total; 0 when none. */
  get (key: string, windowStart: Date): Promise<number>
  /**
   * Several add()s and get()s in one call (the rate limiter's one store call per admission and per settlement):
   * each window's total in the order given, after its add for an add. Each add is atomic as add()'s is; reads are
   * not ordered with the adds of other windows. Every op is checked first: a malformed one throws TypeError and
   * nothing of the batch is written.
   */
  batch (ops: readonly CounterOp[]): Promise<number[]>
}

export interface LeaseStore {
  /**
   * Takes one of `limit` concurrency slots of `key` for `leaseId` until `expiresAt`; false when `limit` leases
   * live at `now` are held by others. Leases past their expiry never count, so a crashed holder leaks nothing.
   * Acquiring a lease already held renews it. Atomic across store instances.
   */
  acquire (key: string, leaseId: string, limit: number, now: Date, expiresAt: Date): Promise<boolean>
  /** Extends a lease live at `now`; false when it is unknown, released or expired. */
  renew (key: string, leaseId: string, now: Date, expiresAt: Date): Promise<boolean>
  /** Frees the slot; an unknown lease is ignored. */
  release (key: string, leaseId: string): Promise<void>
  /** Leases of `key` live at `now`. */
  count (key: string, now: Date): Promise<number>
}

export interface UsageRecord {
  /** UTC day, YYYY-MM-DD. */
  day: string
  userId: string
  /** null: the call was not made with a user key. */
  keyId: string | null
  /** The model's base name. */
  model: string
  /** The proxy surface: 'chat' (chat completions, embeddings), 'native' (generate-content), 'messages' (Anthropic Messages) or 'responses' (OpenAI Responses). */
  surface: string
  requests: number
  inputTokens: number
  outputTokens: number
  thinkingTokens: number
  cachedTokens: number
  errors4xx: number
  errors5xx: number
  /** What the calls cost, in whole micro-dollars (docs/prices.md, "Cost per call"); 0 in rows written before it existed. */
  costMicros: number
  /** Calls that used tokens of a model with no price in force: their cost is not in costMicros. */
  unpricedRequests: number
  /** Calls whose answer ran Google Search queries (billed searches, docs/prices.md); 0 in rows written before it existed. */
  groundedRequests: number
  /** The part of inputTokens that was tool results fed back to the model (toolUsePromptTokenCount); 0 in older rows. */
  toolUseTokens: number
}

export interface UsageQuery {
  /** First UTC day, YYYY-MM-DD, inclusive. */
  from: string
  /** Last UTC day, YYYY-MM-DD, inclusive. */
  to: string
  /** Only this user's rows; absent: everyone's. */
  userId?: string
  /** At most this many rows (a positive safe integer), the first in the order `query` answers in; absent: every row. */
  limit?: number
}

export interface UsageStore {
  /**
   * Adds each record's counts to the row of its (day, userId, keyId, model, surface), creating it when new.
   * Counts are non-negative safe integers; a malformed record throws TypeError and nothing of the batch is written.
   */
  record (batch: UsageRecord[]): Promise<void>
  /** Rows in the day range, ordered by day, userId, keyId (null first), model, surface. */
  query (query: UsageQuery): Promise<UsageRecord[]>
}

/**
 * Who created an upstream resource through the gateway (a file, an upload, a cached content, a batch, an operation;
 * any resource the proxy hands out by name). The proxy's rules on it: lib/proxy/access/ownership.ts.
 */
export interface OwnerRecord {
  /** The resource's name as clients see it (`files/abc`, `cachedContents/x`, `batches/b`, `models/m/operations/o`, `uploads/u`). Unique. */
  resource: string
  userId: string
  /** The key it was created with. */
  keyId: string
  createdAt: Date
  /** When the record may go: the resource's own expiry (ownership.ts says how long each kind lives). */
  expiresAt: Date
  /** The input tokens a request naming the resource brings in (a file's size ÷ 4, a cache's totalTokenCount); absent: unknown. */
  inputTokens?: number
}

export interface OwnerStore {
  /** Records the owner, replacing any record of the same resource. Throws TypeError for a malformed record. */
  put (record: OwnerRecord): Promise<void>
  /** The record, or null when there is none or it expired at `now`. */
  get (resource: string, now: Date): Promise<OwnerRecord | null>
  /** The records of those of `resources` that have one live at `now`, in no particular order (a list page's names). */
  getMany (resources: readonly string[], now: Date): Promise<OwnerRecord[]>
  /** Returns true when a record was removed. */
  delete (resource: string): Promise<boolean>
  /** How many records of the user are live at `now`, those whose resource name starts with `exceptPrefix` left out. */
  countByUser (userId: string, now: Date, exceptPrefix?: string): Promise<number>
}

/** The most characters a ResponseRecord's data may hold (put refuses more): even at 3 bytes a character, within one MongoDB document (16 MiB). */
export const RESPONSE_RECORD_MAX_CHARS = 4 * 1024 * 1024

/** Both stores' default for one owner's stored Responses: two of the largest records, so no tenant crowds out the rest. */
export const RESPONSE_OWNER_MAX_CHARS = 2 * RESPONSE_RECORD_MAX_CHARS

/** One stored OpenAI Responses answer (docs/responses.md, "Stored responses"). */
export interface ResponseRecord {
  /** The response id (`resp_...`); unique. */
  id: string
  /** Whose it is: a user id, or "operator" for the operator password. */
  ownerId: string
  /** What is kept, as JSON text (the response and the input items it answered); at most RESPONSE_RECORD_MAX_CHARS. */
  data: string
  createdAt: Date
  /** It may be dropped from then on; get never returns it after. */
  expiresAt: Date
}

export interface ResponseStore {
  /**
   * Stores the record, replacing the one with its id when the same owner holds it; throws when another owner does, and
   * TypeError for a malformed record or data over RESPONSE_RECORD_MAX_CHARS. Past the owner's budget (default
   * RESPONSE_OWNER_MAX_CHARS) that owner's oldest records go, never another owner's.
   */
  put (record: ResponseRecord): Promise<void>
  /** The record when `ownerId` holds it and it has not expired at `now`; null otherwise (another owner's id is not found). */
  get (id: string, ownerId: string, now: Date): Promise<ResponseRecord | null>
  /** Removes the record when `ownerId` holds it; returns whether one went. */
  delete (id: string, ownerId: string): Promise<boolean>
}

export interface Store {
  /** 'embedded' or 'mongodb': used as a metrics label. */
  readonly kind: string
  users: UserStore
  sessions: SessionStore
  attempts: AttemptStore
  keys: KeyStore
  limits: LimitStore
  settings: SettingStore
  counters: CounterStore
  leases: LeaseStore
  usage: UsageStore
  owners: OwnerStore
  responses: ResponseStore
  /** Resolves when the backing database answers; rejects otherwise (readiness). */
  ping (): Promise<void>
  /** Waits for pending writes (embedded: the file is saved). Every mutation already resolves only once it is durable. */
  flush (): Promise<void>
  close (): Promise<void>
}
