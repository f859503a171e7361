// Account rules that do not depend on HTTP: sign-up, login, updates, access levels, the system user.
import type { AccessLevel, SessionRecord, UserPatch, UserRecord } from '../store/types.ts'
import type { ResolvedAuthOptions } from './options.ts'
import type { SignupInput, LoginInput, SelfUpdateInput, UserUpdateInput } from './schemas.ts'
import type { Sessions } from './sessions.ts'
import type { LoginLimiter } from './login-limiter.ts'
import type { SignupLimiter } from './signup-limiter.ts'
import type { PasswordHasher } from './passwords.ts'
import type { Keys } from './keys.ts'
import type { Settings } from './settings.ts'
import { fail, isGatehouseError } from '../errors.ts'
import { newUserId, tokenDigest } from './tokens.ts'
import { randomPassword } from './passwords.ts'
import { assertPasswordAllowed } from './password-policy.ts'

export interface SystemUserResult {
  username: string
  created: boolean
  /** The random password, present only when the user was just created without a configured one. */
  generatedPassword?: string
  /** Present (true) when the configured adminPassword differed from the stored one and replaced it; the user's sessions were ended. */
  passwordChanged?: true
}

export interface Accounts {
  /** Refuses a weak password, counts the sign-up against `address`'s limit, then creates the user. */
  signup (input: SignupInput, address: string | undefined): Promise<UserRecord>
  /** An admin's addition of a user (level default): the password policy applies, not the sign-up limits or publicSignup. */
  create (input: SignupInput): Promise<UserRecord>
  /** Checks the limiter and the password, then opens a session for `device`. */
  login (input: LoginInput, device: string, address: string | undefined): Promise<{ user: UserRecord, token: string }>
  /** Applies an update; a new password ends the user's sessions except `keepTokenHash`. */
  update (userId: string, input: UserUpdateInput, keepTokenHash?: string): Promise<UserRecord>
  /**
   * A user's update of their own account through `session`: allowed when the session is younger than
   * reauthSeconds or `current_password` is right (checked through the login limiter, from `address`).
   */
  updateSelf (session: SessionRecord, input: SelfUpdateInput, address: string | undefined): Promise<UserRecord>
  /**
   * The one rule of recent authentication (a self-update, creating an API key, the console's sensitive actions): the
   * session is younger than reauthSeconds, or `currentPassword` is right (checked through the login limiter, from
   * `address`). Returns the session's user; throws REAUTHENTICATION_REQUIRED (with `message` when given) or
   * INVALID_CURRENT_PASSWORD.
   */
  confirmOwner (session: SessionRecord, currentPassword: string | undefined, address: string | undefined, message?: string): Promise<UserRecord>
  setAccessLevel (userId: string, level: AccessLevel): Promise<UserRecord>
  /** Disables (ending every session) or enables an account; the last enabled hush user stays enabled. */
  setDisabled (userId: string, disabled: boolean): Promise<UserRecord>
  /** Clears the user's failed-login lockout. */
  clearLockout (userId: string): Promise<void>
  ensureSystemUser (): Promise<SystemUserResult>
}

export interface AccountsDeps {
  options: ResolvedAuthOptions
  passwords: PasswordHasher
  sessions: Sessions
  limiter: LoginLimiter
  signupLimiter: SignupLimiter
  /** The key cache, told of a level or status change: a lower level or a disabled owner stops the keys at once on this replica. */
  keys: Pick<Keys, 'forgetUser'>
  /** Whether public sign-up is open now (an admin's choice over publicSignup). */
  settings: Pick<Settings, 'value'>
}

const keyOf = (username: string): string => username.toLowerCase()
/** How long a replica's claim on replacing the system user's password stands (see applyConfiguredPassword). */
const PASSWORD_CLAIM_MS = 60_000
const emailOf = (email: string | null | undefined): string | null => email == null || email === '' ? null : email.toLowerCase()

export function createAccounts ({ options, passwords, sessions, limiter, signupLimiter, keys, settings }: AccountsDeps): Accounts {
  const { users } = options.store
  const { now, logger, emit } = options

  // Access-level changes run one at a time in this process, so two admins demoting each other
  // cannot both pass the "last hush user" check.
  let levelChanges: Promise<unknown> = Promise.resolve()
  function oneAtATime<T> (task: () => Promise<T>): Promise<T> {
    const run = levelChanges.then(task, task)
    levelChanges = run.catch(() => {})
    return run
  }

  async function assertUsernameFree (usernameKey: string, exceptId?: string): Promise<void> {
    const holder = await users.findByUsernameKey(usernameKey)
    if (holder !== null && holder.id !== exceptId) throw fail('USERNAME_TAKEN')
  }

  async function createUser (username: string, password: string, email: string | null, accessLevel: AccessLevel): Promise<UserRecord> {
    const usernameKey = keyOf(username)
    // Checked before hashing so a taken name costs no argon2 work; the store's unique key settles races.
    await assertUsernameFree(usernameKey)
    const user: UserRecord = {
      id: newUserId(),
      username,
      usernameKey,
      passwordHash: await passwords.hash(password),
      email,
      accessLevel,
      dateJoined: now(),
    }
    await users.insert(user)
    return user
  }

  async function upgradeHash (user: UserRecord, password: string): Promise<void> {
    if (!passwords.isOutdated(user.passwordHash)) return
    try {
      await users.update(user.id, { passwordHash: await passwords.hash(password) })
    } catch (err) {
      logger?.warn({ err, userId: user.id }, 'could not rehash a password with the current argon2 parameters')
    }
  }

  async function matches (passwordHash: string, password: string): Promise<boolean> {
    try {
      return await passwords.verify(passwordHash, password)
    } catch {
      return false // not a hash this hasher reads: replace it
    }
  }

  /**
   * Makes the configured password the system user's when the stored hash does not match it, and ends the
   * user's sessions (they were opened with the old one). Replicas starting together all see the same stale
   * hash: each claims the change on the store's attempt counter, keyed by that hash, and only the first
   * applies it, so a later one never ends the sessions opened since under the new password.
   */
  async function applyConfiguredPassword (user: UserRecord, password: string): Promise<boolean> {
    if (await matches(user.passwordHash, password)) return false
    const claim = `system-password:${tokenDigest(user.passwordHash)}`
    if ((await options.store.attempts.hit(claim, PASSWORD_CLAIM_MS, now())).count > 1) {
      logger?.info({ username: user.username }, 'system user password: another replica is applying the configured one')
      return false
    }
    try {
      await users.update(user.id, { passwordHash: await passwords.hash(password) })
    } catch (err) {
      await options.store.attempts.clear(claim).catch(() => {}) // let the next start try again at once
      throw err
    }
    await sessions.endOthers(user.id)
    logger?.warn({ username: user.username }, 'system user password replaced by the configured one; its sessions were ended')
    return true
  }

  const accounts: Accounts = {
    async signup (input, address) {
      if (!await settings.value('publicSignup')) throw fail('SIGNUP_CLOSED')
      assertPasswordAllowed(input.password, input.username)
      await signupLimiter.admit(address)
      return await createUser(input.username, input.password, emailOf(input.email), 'default')
    },

    async create (input) {
      assertPasswordAllowed(input.password, input.username)
      return await createUser(input.username, input.password, emailOf(input.email), 'default')
    },

    async login (input, device, address) {
      const usernameKey = keyOf(input.username)
      await limiter.admit(usernameKey, address)
      const user = await users.findByUsernameKey(usernameKey)
      const valid = await passwords.verify(user?.passwordHash, input.password)
      if (user === null || !valid) {
        await limiter.failed(usernameKey, address)
        emit('login_failure')
        throw fail('INVALID_CREDENTIALS')
      }
      // Said only to the holder of the right password: to anyone else a disabled account looks like any other.
      if (user.disabled === true) throw fail('ACCOUNT_DISABLED')
      await limiter.succeeded(usernameKey, address)
      await upgradeHash(user, input.password)
      const token = await sessions.open(user.id, device)
      emit('login_success')
      return { user, token }
    },

    async update (userId, input, keepTokenHash) {
      const current = await users.findById(userId)
      if (current === null) throw fail('USER_NOT_FOUND')
      if (input.password !== undefined) assertPasswordAllowed(input.password, input.username ?? current.username)
      const patch: UserPatch = {}
      if (input.username !== undefined) {
        patch.username = input.username
        patch.usernameKey = keyOf(input.username)
        await assertUsernameFree(patch.usernameKey, userId)
      }
      if (input.email !== undefined) patch.email = emailOf(input.email)
      if (input.password !== undefined) patch.passwordHash = await passwords.hash(input.password)
      const updated = await users.update(userId, patch)
      if (updated === null) throw fail('USER_NOT_FOUND')
      if (patch.passwordHash !== undefined) await sessions.endOthers(userId, keepTokenHash)
      return updated
    },

    async updateSelf (session, input, address) {
      const { current_password: currentPassword, revoke_keys: _keys, ...changes } = input
      // Every field a user can change here (password, email, username) can take the account over, so a stolen
      // token must not change them.
      const user = await accounts.confirmOwner(session, currentPassword, address)
      return await accounts.update(user.id, changes, session.tokenHash)
    },

    async confirmOwner (session, currentPassword, address, message) {
      const user = await users.findById(session.userId)
      if (user === null) throw fail('SESSION_NOT_FOUND')
      // Only a recent login or the current password shows the owner is present, not a token that may be stolen.
      if (currentPassword !== undefined) {
        await limiter.admit(user.usernameKey, address)
        if (!await passwords.verify(user.passwordHash, currentPassword)) {
          await limiter.failed(user.usernameKey, address)
          throw fail('INVALID_CURRENT_PASSWORD')
        }
        await limiter.succeeded(user.usernameKey, address)
      } else if (now().getTime() - session.createdAt.getTime() >= options.reauthMs) {
        throw message === undefined ? fail('REAUTHENTICATION_REQUIRED') : fail('REAUTHENTICATION_REQUIRED', message)
      }
      return user
    },

    setAccessLevel: (userId, level) => oneAtATime(async () => {
      const target = await users.findById(userId)
      if (target === null) throw fail('USER_NOT_FOUND')
      if (target.accessLevel === level) return target
      // A disabled hush user holds no level in effect, so demoting one leaves the enabled ones as they are.
      const demotesHush = target.accessLevel === 'hush' && target.disabled !== true
      if (demotesHush && await users.countByAccessLevel('hush') <= 1) throw fail('LAST_HUSH_USER')
      const updated = await users.update(userId, { accessLevel: level })
      if (updated === null) throw fail('USER_NOT_FOUND')
      if (demotesHush && await users.countByAccessLevel('hush') === 0) {
        // Another replica demoted the other hush user at the same moment: undo ours.
        await users.update(userId, { accessLevel: 'hush' })
        throw fail('LAST_HUSH_USER')
      }
      keys.forgetUser(userId)
      return updated
    }),

    setDisabled: (userId, disabled) => oneAtATime(async () => {
      const target = await users.findById(userId)
      if (target === null) throw fail('USER_NOT_FOUND')
      const disablesHush = disabled && target.accessLevel === 'hush' && target.disabled !== true
      if (disablesHush && await users.countByAccessLevel('hush') <= 1) throw fail('LAST_ENABLED_HUSH_USER')
      const updated = await users.update(userId, { disabled })
      if (updated === null) throw fail('USER_NOT_FOUND')
      if (disablesHush && await users.countByAccessLevel('hush') === 0) {
        // Another replica disabled or demoted the other hush user at the same moment: undo ours.
        await users.update(userId, { disabled: false })
        throw fail('LAST_ENABLED_HUSH_USER')
      }
      // Also when it was disabled already: a session opened by a login racing an earlier disable goes too.
      if (disabled) await sessions.endOthers(userId)
      keys.forgetUser(userId)
      return updated
    }),

    async clearLockout (userId) {
      const user = await users.findById(userId)
      if (user === null) throw fail('USER_NOT_FOUND')
      await limiter.clearUser(user.usernameKey)
    },

    async ensureSystemUser () {
      const username = options.adminUsername
      for (let attempt = 0; ; attempt++) {
        const existing = await users.findByUsernameKey(keyOf(username))
        if (existing !== null) {
          if (existing.accessLevel !== 'hush') {
            await users.update(existing.id, { accessLevel: 'hush' })
            logger?.warn({ username: existing.username, was: existing.accessLevel }, 'system user level restored to hush')
          }
          if (options.adminPassword !== undefined && await applyConfiguredPassword(existing, options.adminPassword)) {
            return { username: existing.username, created: false, passwordChanged: true }
          }
          return { username: existing.username, created: false }
        }
        const password = options.adminPassword ?? randomPassword()
        try {
          await createUser(username, password, null, 'hush')
        } catch (err) {
          // Another replica created it first: take the existing-user path once.
          if (isGatehouseError(err) && err.code === 'USERNAME_TAKEN' && attempt === 0) continue
          throw err
        }
        logger?.info({ username }, 'system user created')
        return options.adminPassword === undefined
          ? { username, created: true, generatedPassword: password }
          : { username, created: true }
      }
    },
  }
  return accounts
}
