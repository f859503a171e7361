import type { SessionRecord, UserRecord } from '../store/types.ts'

/** A user as the API shows it. The password hash and the id stay out unless asked for. */
export interface PublicUser {
  username: string
  email: string | null
  access_level: string
  date_joined: string
}

export function publicUser (user: UserRecord): PublicUser {
  return {
    username: user.username,
    email: user.email,
    access_level: user.accessLevel,
    // toISOString is always UTC with a trailing Z.
    date_joined: user.dateJoined.toISOString(),
  }
}

/** A user as the admin status route shows it: the public view and whether the account is disabled. */
export function adminUser (user: UserRecord): PublicUser & { disabled: boolean } {
  return { ...publicUser(user), disabled: user.disabled === true }
}

/** A session as its owner sees it: never the token or its digest, which would let a reader act as that session. */
export interface PublicSession {
  device: string
  created_at: string
  expires_at: string
  /** The session the listing was asked through. */
  current: boolean
}

export function publicSession (session: SessionRecord, current: SessionRecord): PublicSession {
  return {
    device: session.device,
    created_at: session.createdAt.toISOString(),
    expires_at: session.expiresAt.toISOString(),
    current: session.tokenHash === current.tokenHash,
  }
}
