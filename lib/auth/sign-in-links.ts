// One-time sign-in links: an admin adds or resets a user, who opens the link and chooses their own password.
// A link is the user's id, its expiry and an HMAC keyed by the stored password hash, so nothing new is stored:
// the link's use changes the hash, which ends that link and every earlier one, on every replica.
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { UserRecord } from '../store/types.ts'
import type { ResolvedAuthOptions } from './options.ts'
import type { Accounts } from './accounts.ts'
import type { LoginLimiter } from './login-limiter.ts'
import type { Sessions } from './sessions.ts'
import { fail } from '../errors.ts'
import { randomPassword } from './passwords.ts'
import { assertPasswordAllowed } from './password-policy.ts'
import { tokenDigest } from './tokens.ts'

/** How long a sign-in link works after an admin makes it. */
export const SIGN_IN_LINK_TTL_MS = 72 * 3_600_000
/** The link's shape: user id, expiry in epoch seconds (base 36), and the HMAC-SHA-256 as base64url. */
const LINK_SHAPE = /^([0-9a-f]{24})\.([0-9a-z]{1,10})\.([A-Za-z0-9_-]{43})$/

export interface SignInLink {
  /** What goes after the console's `#/welcome/`; it signs its holder in once. */
  token: string
  expiresAt: Date
}

export interface SignInLinks {
  /** A new link for a user: their password becomes a random one, so the old one and earlier links stop working and their sessions end. */
  issue (userId: string): Promise<SignInLink>
  /** Sets the user's password from a live link (once) and opens a session for `device`. */
  redeem (token: string, password: string, device: string, address: string | undefined): Promise<{ user: UserRecord, token: string }>
}

export interface SignInLinkDeps {
  options: ResolvedAuthOptions
  accounts: Accounts
  sessions: Sessions
  limiter: LoginLimiter
}

function linkMac (passwordHash: string, userId: string, expires: string): Buffer {
  return createHmac('sha256', passwordHash).update(`gatehouse sign-in link\n${userId}\n${expires}`).digest()
}

export function createSignInLinks ({ options, accounts, sessions, limiter }: SignInLinkDeps): SignInLinks {
  const { store: { users, attempts }, now, emit } = options

  /** The link's user when its MAC is right for their current password; a wrong one counts as a failed login. */
  async function linkUser (token: string, address: string | undefined): Promise<{ user: UserRecord, expiresMs: number }> {
    const shape = LINK_SHAPE.exec(token)
    const user = shape === null ? null : await users.findById(shape[1]!)
    if (shape === null || user === null) throw fail('SIGN_IN_LINK_INVALID')
    await limiter.admit(user.usernameKey, address)
    const given = Buffer.from(shape[3]!, 'base64url')
    if (!timingSafeEqual(given, linkMac(user.passwordHash, user.id, shape[2]!))) {
      await limiter.failed(user.usernameKey, address)
      throw fail('SIGN_IN_LINK_INVALID')
    }
    return { user, expiresMs: parseInt(shape[2]!, 36) * 1000 }
  }

  return {
    async issue (userId) {
      const user = await accounts.update(userId, { password: randomPassword() })
      const expires = Math.floor((now().getTime() + SIGN_IN_LINK_TTL_MS) / 1000).toString(36)
      const mac = linkMac(user.passwordHash, user.id, expires).toString('base64url')
      return { token: `${user.id}.${expires}.${mac}`, expiresAt: new Date(parseInt(expires, 36) * 1000) }
    },

    async redeem (token, password, device, address) {
      const { user, expiresMs } = await linkUser(token, address)
      if (expiresMs <= now().getTime()) throw fail('SIGN_IN_LINK_EXPIRED')
      if (user.disabled === true) throw fail('ACCOUNT_DISABLED')
      // Checked before the link is spent, so a refused password leaves the link usable.
      assertPasswordAllowed(password, user.username)
      // Two tabs redeeming one link at once: the store's counter lets exactly one through.
      if ((await attempts.hit(`sign-in-link:${tokenDigest(token)}`, SIGN_IN_LINK_TTL_MS, now())).count > 1) throw fail('SIGN_IN_LINK_INVALID')
      const updated = await accounts.update(user.id, { password })
      await limiter.succeeded(user.usernameKey, address)
      const session = await sessions.open(user.id, device)
      emit('login_success')
      return { user: updated, token: session }
    },
  }
}
