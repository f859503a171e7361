import type { UserRecord } from '../store/types.ts'

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
