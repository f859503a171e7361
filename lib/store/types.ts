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

export interface Store {
  /** 'embedded' or 'mongodb': used as a metrics label. */
  readonly kind: string
  users: UserStore
  sessions: SessionStore
  attempts: AttemptStore
  /** Resolves when the backing database answers; rejects otherwise (readiness). */
  ping (): Promise<void>
  /** Waits for pending writes (embedded: the file is saved). Every mutation already resolves only once it is durable. */
  flush (): Promise<void>
  close (): Promise<void>
}
