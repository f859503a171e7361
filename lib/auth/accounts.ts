// Account rules that do not depend on HTTP: sign-up, login, updates, access levels, the system user.
import type { AccessLevel, UserPatch, UserRecord } from '../store/types.ts'
import type { ResolvedAuthOptions } from './options.ts'
import type { SignupInput, LoginInput, UserUpdateInput } from './schemas.ts'
import type { Sessions } from './sessions.ts'
import type { LoginLimiter } from './login-limiter.ts'
import type { SignupLimiter } from './signup-limiter.ts'
import type { PasswordHasher } from './passwords.ts'
import { fail, isGatehouseError } from '../errors.ts'
import { newUserId } from './tokens.ts'
import { randomPassword } from './passwords.ts'
import { assertPasswordAllowed } from './password-policy.ts'

export interface SystemUserResult {
  username: string
  created: boolean
  /** The random password, present only when the user was just created without a configured one. */
  generatedPassword?: string
}

export interface Accounts {
  /** Refuses a weak password, counts the sign-up against `address`'s limit, then creates the user. */
  signup (input: SignupInput, address: string | undefined): Promise<UserRecord>
  /** Checks the limiter and the password, then opens a session for `device`. */
  login (input: LoginInput, device: string, address: string | undefined): Promise<{ user: UserRecord, token: string }>
  /** Applies an update; a new password ends the user's sessions except `keepTokenHash`. */
  update (userId: string, input: UserUpdateInput, keepTokenHash?: string): Promise<UserRecord>
  setAccessLevel (userId: string, level: AccessLevel): Promise<UserRecord>
  ensureSystemUser (): Promise<SystemUserResult>
}

export interface AccountsDeps {
  options: ResolvedAuthOptions
  passwords: PasswordHasher
  sessions: Sessions
  limiter: LoginLimiter
  signupLimiter: SignupLimiter
}

const keyOf = (username: string): string => username.toLowerCase()
const emailOf = (email: string | null | undefined): string | null => email == null || email === '' ? null : email.toLowerCase()

export function createAccounts ({ options, passwords, sessions, limiter, signupLimiter }: AccountsDeps): Accounts {
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

  return {
    async signup (input, address) {
      assertPasswordAllowed(input.password, input.username)
      await signupLimiter.admit(address)
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

    setAccessLevel: (userId, level) => oneAtATime(async () => {
      const target = await users.findById(userId)
      if (target === null) throw fail('USER_NOT_FOUND')
      if (target.accessLevel === level) return target
      const demotesHush = target.accessLevel === 'hush'
      if (demotesHush && await users.countByAccessLevel('hush') <= 1) throw fail('LAST_HUSH_USER')
      const updated = await users.update(userId, { accessLevel: level })
      if (updated === null) throw fail('USER_NOT_FOUND')
      if (demotesHush && await users.countByAccessLevel('hush') === 0) {
        // Another replica demoted the other hush user at the same moment: undo ours.
        await users.update(userId, { accessLevel: 'hush' })
        throw fail('LAST_HUSH_USER')
      }
      return updated
    }),

    async ensureSystemUser () {
      const username = options.adminUsername
      for (let attempt = 0; ; attempt++) {
        const existing = await users.findByUsernameKey(keyOf(username))
        if (existing !== null) {
          if (existing.accessLevel !== 'hush') {
            await users.update(existing.id, { accessLevel: 'hush' })
            logger?.warn({ username: existing.username, was: existing.accessLevel }, 'system user level restored to hush')
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
}
