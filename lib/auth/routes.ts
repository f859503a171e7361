// The accounts route table: HTTP in, account rules out. Handlers throw; the serving path (lib/http/serve.ts)
// answers through the routes' auth error mapper.
import type { Settings } from './settings.ts'
import type { HandlerRequest, HandlerResponse, Route, RouteTable } from '../http/contract.ts'
import type { SessionRecord } from '../store/types.ts'
import type { ResolvedAuthOptions } from './options.ts'
import type { Accounts } from './accounts.ts'
import type { Sessions } from './sessions.ts'
import type { Keys } from './keys.ts'
import type { LookupLimiter } from './lookup-limiter.ts'
import { fail } from '../errors.ts'
import { readJsonBody } from '../http/json-body.ts'
import { createAuthErrorResponse } from './error-body.ts'
import { createUsageRoutes } from './usage-routes.ts'
import { adminUser, publicSession, publicUser } from './user-view.ts'
import { requestToken } from './session-token.ts'
import { createLimitRoutes } from './limit-routes.ts'
import {
  USER_AGENT_MAX, parse, accessLevelBody, adminQuery, emptyQuery, listQuery, loginBody,
  searchQuery, parseSessionQuery, selfUpdateBody, signupBody, targetParams, updateQuery, userStatusBody, userUpdateBody, usernameQuery,
  keyCreateBody, keyParams, endSessionsBody, withoutCurrentPassword,
} from './schemas.ts'

export interface AuthRouteDeps {
  options: ResolvedAuthOptions
  lookupLimiter: LookupLimiter
  accounts: Accounts
  sessions: Sessions
  keys: Keys
  settings: Pick<Settings, 'value'>
}

/** The device a session is bound to: the user-agent header, on the routes that require it (docs/accounts.md, "Routes"). */
function deviceOf (req: HandlerRequest): string {
  const device = req.headers['user-agent']
  if (device === undefined || device.trim() === '') throw fail('USER_AGENT_REQUIRED')
  if (device.length > USER_AGENT_MAX) throw fail('INVALID_INPUT', `The user-agent header is too long (at most ${USER_AGENT_MAX} characters)`)
  return device
}

const jsonBody = (req: HandlerRequest): unknown => readJsonBody(req, true)
// Answers carry tokens and account data: no cache may keep them.
const ok = (body: unknown, status = 200): HandlerResponse => ({ status, headers: { 'cache-control': 'no-store' }, body })

export function createAuthRoutes ({ options, lookupLimiter, accounts, sessions, keys, settings }: AuthRouteDeps): RouteTable & { routes: Route[] } {
  const { users } = options.store
  const errorResponse = createAuthErrorResponse()

  function route (method: string, path: string, handle: (req: HandlerRequest) => Promise<HandlerResponse>): Route {
    return {
      method,
      path: options.basePath + path,
      maxBytes: options.maxBodyBytes,
      errorResponse,
      handler: handle,
    }
  }

  /** The request's session token, from the query (where the seed put it), the token header or Authorization: Bearer. */
  const tokenOf = (req: HandlerRequest, queryToken?: string): string | undefined => requestToken(req, queryToken, options.queryTokens)

  /** The caller's live session (of an enabled user), and a 403 unless their level, read from the store now, is hush. */
  async function requireHush (adminId: string, token: string | undefined, device: string): Promise<SessionRecord> {
    const session = await sessions.authenticate(adminId, token, device)
    const admin = await users.findById(adminId)
    if (admin === null) throw fail('SESSION_NOT_FOUND')
    if (admin.accessLevel !== 'hush') throw fail('INSUFFICIENT_PERMISSIONS')
    return session
  }

  /**
   * The start of every admin route on one user, in the order its refusals take: the user-agent, the admin's
   * query, the target id, then the admin's session and level.
   */
  async function adminOnUser (req: HandlerRequest): Promise<{ target: { user_id: string }, session: SessionRecord }> {
    const device = deviceOf(req)
    const query = parse(adminQuery, req.query)
    const target = parse(targetParams, req.params)
    const session = await requireHush(query.admin_id, tokenOf(req, query.token), device)
    return { target, session }
  }

  /**
   * The one rule of recent authentication for an admin's write (confirmOwner, as the console and the self-update ask
   * it: a recent login or `current_password` in the body), so a leaked admin token alone changes nobody; on the
   * admin's own account it is the self-update's rule. The body comes back without it; a DELETE may send none.
   */
  async function confirmedBody (req: HandlerRequest, session: SessionRecord): Promise<Record<string, unknown>> {
    const given = jsonBody(req)
    const [body, currentPassword] = given === undefined && req.method === 'DELETE' ? [{}, undefined] : withoutCurrentPassword(given)
    await accounts.confirmOwner(session, currentPassword, req.remoteAddress)
    return body
  }

  /** The start of every admin write on one user (account fields, level, status, limits, sessions, lockout): the admin prelude, then confirmedBody. */
  async function adminWrite (req: HandlerRequest): Promise<{ target: { user_id: string }, session: SessionRecord, body: Record<string, unknown> }> {
    const { target, session } = await adminOnUser(req)
    return { target, session, body: await confirmedBody(req, session) }
  }

  /**
   * The gate of the user lookups (search-users, get-user-id): counted per address (LOOKUP_LIMITS), and with
   * publicLookup false only a signed-in caller's (`user_id` and a live session token, the user-agent it was made on).
   */
  async function lookupAllowed (req: HandlerRequest, query: { user_id?: string, token?: string }): Promise<void> {
    await lookupLimiter.admit(req.remoteAddress)
    if (await settings.value('publicLookup')) return
    if (query.user_id === undefined) throw fail('SESSION_NOT_FOUND', 'Sign in to look users up here: send user_id and your session token')
    await sessions.authenticate(query.user_id, tokenOf(req, query.token), deviceOf(req))
  }

  const routes: Route[] = [
    route('POST', '/auth/signup', async (req) => {
      parse(emptyQuery, req.query)
      await accounts.signup(parse(signupBody, jsonBody(req)), req.remoteAddress)
      return ok({ message: 'User created successfully' }, 201)
    }),

    route('POST', '/auth/login', async (req) => {
      const device = deviceOf(req)
      parse(emptyQuery, req.query)
      const input = parse(loginBody, jsonBody(req))
      const { user, token } = await accounts.login(input, device, req.remoteAddress)
      return ok({
        user_id: user.id,
        username: user.username,
        email: user.email,
        access_level: user.accessLevel,
        date_joined: user.dateJoined.toISOString(),
        access_token: token,
        token_type: 'bearer',
      })
    }),

    route('POST', '/auth/logout', async (req) => {
      const query = parseSessionQuery(req.query)
      const token = tokenOf(req, query.token)
      if (token === undefined) throw fail('INVALID_INPUT', '"token" is required (query parameter, token header or Authorization: Bearer)')
      await sessions.end(query.user_id, token)
      return ok({ message: 'Session forcefully expired' })
    }),

    route('GET', '/auth/validate', async (req) => {
      const device = deviceOf(req)
      const query = parseSessionQuery(req.query)
      const token = tokenOf(req, query.token)
      await sessions.authenticate(query.user_id, token, device)
      // Only the digest is stored, so the live token the client sent is the one answered.
      return ok({ access_token: token, token_type: 'bearer' })
    }),

    route('GET', '/auth/sessions', async (req) => {
      const device = deviceOf(req)
      const query = parseSessionQuery(req.query)
      const current = await sessions.authenticate(query.user_id, tokenOf(req, query.token), device)
      return ok((await sessions.list(current.userId)).map(s => publicSession(s, current)))
    }),

    route('DELETE', '/auth/sessions', async (req) => {
      const device = deviceOf(req)
      const query = parseSessionQuery(req.query)
      const current = await sessions.authenticate(query.user_id, tokenOf(req, query.token), device)
      const input = parse(endSessionsBody, jsonBody(req)) ?? {}
      const ended = await sessions.endOthers(current.userId, current.tokenHash)
      // Whoever held a session may have made keys with it: ending them all can end those too.
      if (input.revoke_keys === true) return ok({ message: 'Other sessions ended', ended, revoked_keys: await keys.revokeAll(current.userId) })
      return ok({ message: 'Other sessions ended', ended })
    }),

    route('GET', '/auth/search-users', async (req) => {
      const query = parse(searchQuery, req.query)
      await lookupAllowed(req, query)
      return ok(await users.searchUsernames(query.query.toLowerCase(), query.limit))
    }),

    route('GET', '/auth/get-user-id', async (req) => {
      const query = parse(usernameQuery, req.query)
      await lookupAllowed(req, query)
      const user = await users.findByUsernameKey(query.username.toLowerCase())
      if (user === null) throw fail('USERNAME_NOT_FOUND')
      return ok(user.id)
    }),

    route('PUT', '/auth/user/update', async (req) => {
      const device = deviceOf(req)
      const query = parse(updateQuery, req.query)
      const session = await sessions.authenticate(query.user_id, tokenOf(req), device)
      const input = parse(selfUpdateBody, jsonBody(req))
      const updated = publicUser(await accounts.updateSelf(session, input, req.remoteAddress))
      // After the update passed recent authentication: a refused one revokes nothing.
      if (input.revoke_keys === true) await keys.revokeAll(session.userId)
      return ok(updated)
    }),

    route('GET', '/admin/users', async (req) => {
      const device = deviceOf(req)
      const query = parse(listQuery, req.query)
      await requireHush(query.user_id, tokenOf(req, query.token), device)
      return ok((await users.list(query.limit, query.offset)).map(publicUser))
    }),

    route('GET', '/admin/user/{user_id}', async (req) => {
      const { target } = await adminOnUser(req)
      const user = await users.findById(target.user_id)
      if (user === null) throw fail('USER_NOT_FOUND')
      return ok(publicUser(user))
    }),

    route('PUT', '/admin/user/{user_id}', async (req) => {
      const { target, session, body } = await adminWrite(req)
      const { revoke_keys: revokeKeys, ...input } = parse(userUpdateBody, body)
      // An admin changing their own password keeps the session they are using, like a self-update.
      const keep = target.user_id === session.userId ? session.tokenHash : undefined
      const updated = publicUser(await accounts.update(target.user_id, input, keep))
      if (revokeKeys === true) await keys.revokeAll(target.user_id)
      return ok(updated)
    }),

    route('PUT', '/admin/user/{user_id}/access-level', async (req) => {
      const { target, body } = await adminWrite(req)
      const input = parse(accessLevelBody, body)
      const updated = await accounts.setAccessLevel(target.user_id, input.access_level)
      return ok(publicUser(updated))
    }),

    route('PUT', '/admin/user/{user_id}/status', async (req) => {
      const { target, body } = await adminWrite(req)
      const input = parse(userStatusBody, body)
      const updated = await accounts.setDisabled(target.user_id, input.disabled)
      return ok(adminUser(updated))
    }),

    route('DELETE', '/admin/user/{user_id}/sessions', async (req) => {
      const { target, session, body } = await adminWrite(req)
      const input = parse(endSessionsBody, body) ?? {}
      if (await users.findById(target.user_id) === null) throw fail('USER_NOT_FOUND')
      // An admin ending their own sessions keeps the one they are using, as the console does.
      const ended = await sessions.endOthers(target.user_id, target.user_id === session.userId ? session.tokenHash : undefined)
      if (input.revoke_keys === true) return ok({ message: 'Sessions ended', ended, revoked_keys: await keys.revokeAll(target.user_id) })
      return ok({ message: 'Sessions ended', ended })
    }),

    route('DELETE', '/admin/user/{user_id}/lockout', async (req) => {
      const { target } = await adminWrite(req)
      await accounts.clearLockout(target.user_id)
      return ok({ message: 'Lockout cleared' })
    }),

    ...createUsageRoutes({ route, deviceOf, tokenOf, sessions, requireHush, usage: options.store.usage, now: options.now, ok }),
    // API keys (lib/auth/keys.ts): the caller's own, by session, and any user's for an admin.
    route('POST', '/auth/keys', async (req) => {
      const device = deviceOf(req)
      const query = parseSessionQuery(req.query)
      const session = await sessions.authenticate(query.user_id, tokenOf(req, query.token), device)
      const { current_password: currentPassword, ...input } = parse(keyCreateBody, jsonBody(req))
      // A key outlives the session that made it, so making one is as sensitive as a self-update.
      await accounts.confirmOwner(session, currentPassword, req.remoteAddress)
      return ok(await keys.create(session.userId, input), 201)
    }),

    route('GET', '/auth/keys', async (req) => {
      const device = deviceOf(req)
      const query = parseSessionQuery(req.query)
      const session = await sessions.authenticate(query.user_id, tokenOf(req, query.token), device)
      return ok(await keys.list(session.userId))
    }),

    route('DELETE', '/auth/keys/{key_id}', async (req) => {
      const device = deviceOf(req)
      const query = parseSessionQuery(req.query)
      const params = parse(keyParams, req.params)
      const session = await sessions.authenticate(query.user_id, tokenOf(req, query.token), device)
      await keys.deleteOwn(session.userId, params.key_id)
      return ok({ message: 'API key deleted' })
    }),

    route('GET', '/admin/user/{user_id}/keys', async (req) => {
      const { target } = await adminOnUser(req)
      if (await users.findById(target.user_id) === null) throw fail('USER_NOT_FOUND')
      return ok(await keys.list(target.user_id))
    }),

    route('DELETE', '/admin/keys/{key_id}', async (req) => {
      const device = deviceOf(req)
      const query = parse(adminQuery, req.query)
      const params = parse(keyParams, req.params)
      const session = await requireHush(query.admin_id, tokenOf(req, query.token), device)
      await confirmedBody(req, session)
      await keys.delete(params.key_id)
      return ok({ message: 'API key deleted' })
    }),
  ]
  routes.push(...createLimitRoutes({ users, limits: options.store.limits, byLevel: options.limits, route, adminOnUser, adminWrite, ok }))
  // Unknown paths under basePath answer in the accounts shape.
  return { scope: options.basePath, routes, errorResponse }
}
