import type { SessionRecord, SessionStore, UserRecord, UserStore } from '../store/types.ts'
import type { AuthEvent } from './options.ts'
import { fail } from '../errors.ts'
import { isTokenShaped, newToken, tokenDigest } from './tokens.ts'

export interface Sessions {
  /** Starts a session for this user and device, replacing that device's previous one; returns the token. */
  open (userId: string, device: string): Promise<string>
  /** The live session named by user id and token, used from `device`, of an enabled user; 401 otherwise. */
  authenticate (userId: string, token: string | undefined, device: string): Promise<SessionRecord>
  /**
   * The live console session behind `token` alone (the cookie names no user), opened from `userAgent` (its device
   * is consoleDevice(userAgent)), of an enabled user; 401 otherwise.
   */
  authenticateConsole (token: string | undefined, userAgent: string): Promise<SessionRecord>
  /** Ends the user's session with this digest; false when the user holds none such. */
  endByDigest (userId: string, tokenHash: string): Promise<boolean>
  /** Ends the named session only; 400 "No active sessions" when it is not live. */
  end (userId: string, token: string): Promise<void>
  /** Ends every session of the user except `keepTokenHash`; returns how many ended. */
  endOthers (userId: string, keepTokenHash?: string): Promise<number>
  /** The user's live sessions, newest first. */
  list (userId: string): Promise<SessionRecord[]>
}

/** Marks a console session's device, so the session is accepted on the console's routes only (docs/console.md, "Security"). */
const CONSOLE_DEVICE_PREFIX = 'console: '

/** The device of a console session opened from `userAgent`. */
export function consoleDevice (userAgent: string): string {
  return CONSOLE_DEVICE_PREFIX + userAgent
}

export interface SessionsOptions {
  sessions: SessionStore
  /** Read on every session check: a disabled user's session answers 401. */
  users: UserStore
  ttlMs: number
  now: () => Date
  emit: (event: AuthEvent) => void
}

export function createSessions ({ sessions, users, ttlMs, now, emit }: SessionsOptions): Sessions {
  /** The session behind a token, if it is still live; an expired one is removed as it is found. */
  async function live (token: string): Promise<SessionRecord | 'expired' | null> {
    if (!isTokenShaped(token)) return null
    const session = await sessions.findByTokenHash(tokenDigest(token))
    if (session === null) return null
    // The store may return an expired session (MongoDB's TTL deletion is lazy): check on every read.
    if (session.expiresAt.getTime() <= now().getTime()) {
      if (await sessions.delete(session.tokenHash)) emit('session_expired')
      return 'expired'
    }
    return session
  }

  /** The session when it is `device`'s and its user is enabled (read now unless given). */
  async function checked (session: SessionRecord, device: string, known?: UserRecord | null): Promise<SessionRecord> {
    if (session.device !== device) throw fail('DEVICE_MISMATCH')
    const user = known === undefined ? await users.findById(session.userId) : known
    // Disabling a user ends their sessions; this also covers one opened by a login racing the disable.
    if (user === null) throw fail('SESSION_NOT_FOUND')
    if (user.disabled === true) throw fail('ACCOUNT_DISABLED')
    return session
  }

  return {
    async open (userId, device) {
      const token = newToken()
      const createdAt = now()
      await sessions.put({
        tokenHash: tokenDigest(token),
        userId,
        device,
        createdAt,
        expiresAt: new Date(createdAt.getTime() + ttlMs),
      })
      emit('session_created')
      return token
    },

    async authenticate (userId, token, device) {
      if (token === undefined || token === '') throw fail('INVALID_TOKEN', 'A session token is required')
      // Both lookups at once, so a database store pays one round trip, not two.
      const [session, user] = await Promise.all([live(token), users.findById(userId)])
      if (session === 'expired') throw fail('SESSION_EXPIRED')
      if (session === null) throw fail('SESSION_NOT_FOUND')
      if (session.userId !== userId) throw fail('INVALID_TOKEN')
      // A console session's token is the cookie's: the token forms of the JSON routes never take it.
      if (session.device.startsWith(CONSOLE_DEVICE_PREFIX)) throw fail('INVALID_TOKEN')
      return checked(session, device, user)
    },

    async authenticateConsole (token, userAgent) {
      const session = token === undefined || token === '' ? null : await live(token)
      if (session === 'expired') throw fail('SESSION_EXPIRED')
      if (session === null) throw fail('SESSION_NOT_FOUND')
      return await checked(session, consoleDevice(userAgent))
    },

    async endByDigest (userId, tokenHash) {
      const session = await sessions.findByTokenHash(tokenHash)
      if (session === null || session.userId !== userId || !await sessions.delete(tokenHash)) return false
      emit('session_ended')
      return true
    },

    async end (userId, token) {
      const session = await live(token)
      if (session === null || session === 'expired' || session.userId !== userId) throw fail('NO_ACTIVE_SESSION')
      // A concurrent logout of the same session may win; only one of them ends it.
      if (!await sessions.delete(session.tokenHash)) throw fail('NO_ACTIVE_SESSION')
      emit('session_ended')
    },

    async endOthers (userId, keepTokenHash) {
      const ended = await sessions.deleteByUser(userId, keepTokenHash)
      for (let i = 0; i < ended; i++) emit('session_ended')
      return ended
    },

    async list (userId) {
      const at = now().getTime()
      return (await sessions.listByUser(userId))
        .filter(s => s.expiresAt.getTime() > at)
        .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.device < b.device ? -1 : a.device > b.device ? 1 : 0))
    },
  }
}
