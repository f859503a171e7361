// Who calls a console route: the cookie's session and its user, an admin, and the re-authentication of a sensitive
// action (docs/console.md, "Security"), shared by every page area's routes (lib/console/routes/).
import type Joi from 'joi'
import type { HandlerRequest } from '../http/contract.ts'
import type { AuthParts } from '../auth/service.ts'
import type { SessionRecord, UserRecord } from '../store/types.ts'
import type { LazySchema } from '../auth/schemas.ts'
import type { CookieJar } from './cookie-session.ts'
import { lazySchema, parse, targetParams, USER_AGENT_MAX, withoutCurrentPassword } from '../auth/schemas.ts'
import { fail } from '../errors.ts'
import { readJsonBody } from '../http/json-body.ts'

/** The message of a sensitive action asked for on an old session without the password. */
const PASSWORD_NEEDED = 'This action needs your current password (current_password): your sign-in is older than the re-authentication window'

export interface Caller { session: SessionRecord, user: UserRecord }

/** The body of an admin action with nothing to say but the password: `current_password`, or nothing at all. */
const passwordOnlyBody = lazySchema(Joi => Joi.object({}).label('body'))

export interface Callers {
  /** The caller behind the cookie: a live console session of an enabled user, or 401. */
  caller (req: HandlerRequest): Promise<Caller>
  /** The caller, and a 403 unless their level, read from the store now, is hush (as the accounts admin routes). */
  admin (req: HandlerRequest): Promise<Caller>
  /** A sensitive action: the session is recent or the current password is given (lib/auth/accounts.ts, confirmOwner). */
  present (who: Caller, password: string | undefined, req: HandlerRequest): Promise<void>
  /**
   * An admin's sensitive change to one user (level, status, limits): the target's id and the body checked by
   * `schema`, once the admin's session is recent or their current password is given.
   */
  adminChange<T> (req: HandlerRequest, schema: LazySchema<Joi.ObjectSchema<T>>): Promise<{ id: string, input: T, rest: Record<string, unknown> }>
  /**
   * An admin's sensitive action on one user that takes no input (revoking a key, clearing a lockout, ending sessions):
   * the admin and the target's id, once the session is recent or the body's `current_password` is given.
   */
  adminAction (req: HandlerRequest): Promise<{ who: Caller, id: string }>
}

/** The request's user-agent, which a console session is bound to: required, and of a bounded length. */
export function userAgentOf (req: HandlerRequest): string {
  const ua = req.headers['user-agent']
  if (ua === undefined || ua.trim() === '') throw fail('USER_AGENT_REQUIRED')
  if (ua.length > USER_AGENT_MAX) throw fail('INVALID_INPUT', `The user-agent header is too long (at most ${USER_AGENT_MAX} characters)`)
  return ua
}

/** The JSON body without `current_password`, and that password (checked: a string of a password's length) apart. */
export function bodyAndPassword (req: HandlerRequest): [Record<string, unknown>, string | undefined] {
  return withoutCurrentPassword(readJsonBody(req, true))
}

export function createCallers ({ accounts, sessions, options }: AuthParts, cookies: CookieJar): Callers {
  const { users } = options.store
  const callers: Callers = {
    async caller (req) {
      const session = await sessions.authenticateConsole(cookies.token(req), userAgentOf(req))
      const user = await users.findById(session.userId)
      if (user === null) throw fail('SESSION_NOT_FOUND')
      return { session, user }
    },
    async admin (req) {
      const who = await callers.caller(req)
      if (who.user.accessLevel !== 'hush') throw fail('INSUFFICIENT_PERMISSIONS')
      return who
    },
    async present (who, password, req) {
      await accounts.confirmOwner(who.session, password, req.remoteAddress, PASSWORD_NEEDED)
    },
    async adminChange (req, schema) {
      const who = await callers.admin(req)
      const { user_id: id } = parse(targetParams, req.params)
      const [rest, password] = bodyAndPassword(req)
      const input = parse(schema, rest)
      await callers.present(who, password, req)
      return { id, input, rest }
    },
    async adminAction (req) {
      const who = await callers.admin(req)
      const { user_id: id } = parse(targetParams, { user_id: req.params.user_id })
      // A DELETE usually has no body: then only a recent sign-in will do.
      const [rest, password] = withoutCurrentPassword(readJsonBody(req, true) ?? {})
      parse(passwordOnlyBody, rest)
      await callers.present(who, password, req)
      return { who, id }
    },
  }
  return callers
}
