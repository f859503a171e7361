// The admin's users page: the list, one user's record, and an admin's changes to a user (every one only after a
// recent sign-in or the password: adminChange and adminAction in lib/console/callers.ts).
import type { HandlerRequest, HandlerResponse, Route } from '../../http/contract.ts'
import type { UserRecord } from '../../store/types.ts'
import type { ConsoleParts } from '../console-parts.ts'
import { accessLevelBody, inviteBody, lazySchema, parse, passwordResetBody, signupBody, targetParams, userStatusBody } from '../../auth/schemas.ts'
import { randomPassword } from '../../auth/passwords.ts'
import type { SignInLink } from '../../auth/sign-in-links.ts'
import { limitsAtEachLevel, setUserLimits, userLimitsView } from '../../auth/limit-routes.ts'
import { fail } from '../../errors.ts'
import { bodyAndPassword } from '../callers.ts'
import { dataResponse } from '../security-headers.ts'
import { standing, userView } from '../user-views.ts'

/** Most users one admin page lists. */
export const USERS_PAGE_MAX = 100

const usersQuery = lazySchema(Joi => Joi.object<{ q?: string, offset: number, limit: number }>({
  q: Joi.string().max(32).allow(''),
  offset: Joi.number().integer().min(0).max(1_000_000).default(0),
  limit: Joi.number().integer().min(1).max(USERS_PAGE_MAX).default(25),
}))
const limitsBody = lazySchema(Joi => Joi.object().unknown(true).label('body').required())

const linkView = (link: SignInLink): { token: string, expires_at: string } => ({ token: link.token, expires_at: link.expiresAt.toISOString() })

/** GET /api/admin/users: one page of users, all or those whose username holds `q`, each with their last sign-in. */
async function listUsers ({ auth: { sessions, options: { store: { users } } } }: ConsoleParts, req: HandlerRequest): Promise<HandlerResponse> {
  const query = parse(usersQuery, req.query)
  let found: UserRecord[]
  const fragment = query.q?.trim().toLowerCase() ?? ''
  if (fragment === '') {
    found = await users.list(query.limit + 1, query.offset)
  } else {
    const names = (await users.searchUsernames(fragment, query.offset + query.limit + 1)).slice(query.offset)
    found = (await Promise.all(names.map(name => users.findByUsernameKey(name.toLowerCase())))).filter(u => u !== null)
  }
  const page = found.slice(0, query.limit)
  const withLogin = await Promise.all(page.map(async u => ({
    ...userView(u),
    last_login: (await sessions.list(u.id))[0]?.createdAt.toISOString() ?? null,
  })))
  return dataResponse({ users: withLogin, offset: query.offset, limit: query.limit, more: found.length > query.limit })
}

/** The users list, one user's record, and a new user. */
export function adminUserRoutes (parts: ConsoleParts): Route[] {
  const { route, auth: { accounts, sessions, keys, signInLinks, options: { store, limits: byLevel } }, callers: { admin, present } } = parts
  return [
    route('GET', '/api/admin/users', async (req) => {
      await admin(req)
      return await listUsers(parts, req)
    }),

    route('GET', '/api/admin/users/{user_id}', async (req) => {
      await admin(req)
      const { user_id: id } = parse(targetParams, req.params)
      const user = await store.users.findById(id)
      if (user === null) throw fail('USER_NOT_FOUND')
      return dataResponse({
        user: userView(user),
        sessions: (await sessions.list(id)).length,
        keys: (await keys.list(id)).length,
        limits: await userLimitsView(store.users, store.limits, byLevel, id),
        level_limits: limitsAtEachLevel(byLevel, await store.limits.get(id)),
        standing: await standing(parts, user),
      })
    }),

    // Without a password the new user gets a sign-in link and chooses their own; with one, the admin passes it on.
    route('POST', '/api/admin/users', async (req) => {
      const who = await admin(req)
      const [rest, password] = bodyAndPassword(req)
      const linked = rest.password === undefined
      const input = linked ? { ...parse(inviteBody, rest), password: randomPassword() } : parse(signupBody, rest)
      await present(who, password, req)
      const user = await accounts.create(input)
      if (!linked) return dataResponse({ user: userView(user) }, 201)
      return dataResponse({ user: userView(user), sign_in_link: linkView(await signInLinks.issue(user.id)) }, 201)
    }),
  ]
}

/** An admin's changes to one user: password, level, status, limits, lockout, sessions. */
export function adminUserChangeRoutes ({ route, auth: { accounts, sessions, signInLinks, options: { store, limits: byLevel } }, callers: { adminAction, adminChange } }: ConsoleParts): Route[] {
  return [
    // A reset by link: the old password stops working at once and the user's sessions end (signInLinks.issue).
    route('POST', '/api/admin/users/{user_id}/sign-in-link', async (req) => {
      const { who, id } = await adminAction(req)
      if (id === who.user.id) throw fail('INVALID_INPUT', 'A sign-in link is for another user: change your own password on the Account page')
      return dataResponse(linkView(await signInLinks.issue(id)), 201)
    }),

    // A new password ends the user's sessions (accounts.update); the admin tells them it out of band.
    route('PUT', '/api/admin/users/{user_id}/password', async (req) => {
      const { id, input } = await adminChange(req, passwordResetBody)
      return dataResponse({ user: userView(await accounts.update(id, { password: input.password })) })
    }),

    route('PUT', '/api/admin/users/{user_id}/level', async (req) => {
      const { id, input } = await adminChange(req, accessLevelBody)
      const updated = await accounts.setAccessLevel(id, input.access_level)
      return dataResponse({ user: userView(updated) })
    }),

    route('PUT', '/api/admin/users/{user_id}/status', async (req) => {
      const { id, input } = await adminChange(req, userStatusBody)
      const updated = await accounts.setDisabled(id, input.disabled)
      return dataResponse({ user: userView(updated) })
    }),

    route('PUT', '/api/admin/users/{user_id}/limits', async (req) => {
      const { id, rest } = await adminChange(req, limitsBody)
      await setUserLimits(store.users, store.limits, id, rest)
      return dataResponse(await userLimitsView(store.users, store.limits, byLevel, id))
    }),

    route('DELETE', '/api/admin/users/{user_id}/lockout', async (req) => {
      const { id } = await adminAction(req)
      await accounts.clearLockout(id)
      return dataResponse({ message: 'Lockout cleared' })
    }),

    route('DELETE', '/api/admin/users/{user_id}/sessions', async (req) => {
      const { who, id } = await adminAction(req)
      if (await store.users.findById(id) === null) throw fail('USER_NOT_FOUND')
      // An admin ending their own sessions keeps the one they are using.
      return dataResponse({ ended: await sessions.endOthers(id, id === who.user.id ? who.session.tokenHash : undefined) })
    }),
  ]
}
