// createConsole: the web console (docs/console.md) as a route table any host mounts beside the others: its page
// and files, and its JSON API, which signs in to a cookie session and calls the accounts service's own rules.
import type { HandlerRequest, HandlerResponse, Route, RouteTable } from '../http/contract.ts'
import type { AuthService } from '../auth/service.ts'
import type { Proxy, UpstreamView } from '../proxy/create-proxy.ts'
import type { RateLimiter } from '../metering/rate-limiter.ts'
import type { SessionRecord, UserRecord } from '../store/types.ts'
import { authParts } from '../auth/service.ts'
import { consoleDevice } from '../auth/sessions.ts'
import { createAuthErrorResponse } from '../auth/error-body.ts'
import type Joi from 'joi'
import type { LazySchema } from '../auth/schemas.ts'
import { accessLevelBody, keyCreateBody, keyParams, lazySchema, loginBody, parse, passwordResetBody, selfUpdateBody, signupBody, targetParams, userStatusBody, USER_AGENT_MAX, withoutCurrentPassword } from '../auth/schemas.ts'
import { dayRange, dayRangeQuery, usageRows } from '../auth/usage-routes.ts'
import { limitsAtEachLevel, setUserLimits, userLimitsView } from '../auth/limit-routes.ts'
import { levelAtLeast } from '../auth/keys.ts'
import { effectiveLimits, levelEntry, limitsToWire, UNLIMITED } from '../metering/limits-rule.ts'
import { adminUser, publicSession } from '../auth/user-view.ts'
import { ConfigurationError, fail, isGatehouseError } from '../errors.ts'
import { readJsonBody } from '../http/json-body.ts'
import { assertSameOrigin } from './request-guard.ts'
import { cookieJar } from './cookie-session.ts'
import { createStaticAssets, defaultAssetsDir } from './static-assets.ts'
import { dataResponse, withSecurityHeaders } from './security-headers.ts'
import { shownIds, usageCsv, usageView } from './usage-view.ts'
import type { Dimension } from './usage-view.ts'
import { DEFAULT_CONSOLE_PATH } from '../option-rules.ts'

/** The order the upstream page lists model families in: the newest first, then the special ones. */
const FAMILY_ORDER = ['gemini-4', 'gemini-3', 'gemini-2.5-pro', 'gemini-2.5-flash', 'image', 'embedding', 'legacy', 'other']

export interface ConsoleOptions {
  /** The accounts service the console signs in to (createAuthService's result). Required. */
  auth: AuthService
  /** The proxy, for the admin's upstream page (credential states, models served). Default none: that page says so. */
  proxy?: Proxy
  /** The rate limiter the proxy admits with, for "what is left now". Default none: only the limits are shown. */
  limiter?: RateLimiter
  /** Where the console is served: its page at `${path}/`, its API under `${path}/api`. Default `/console`. */
  path?: string
  /** The folder of the built console (index.html, app.js, app.css). Default the package's console/build. */
  assetsDir?: string
  /**
   * Sign-in over plain HTTP from a host name other than localhost, with a cookie without Secure: for a trusted
   * network only (anyone on the path can read the session). Logged as a warning. Default false: such a sign-in
   * answers 403 CONSOLE_NEEDS_HTTPS and opens no session (docs/console.md, "Security").
   */
  allowHttp?: boolean
}

export interface Console {
  /** The console's routes, scoped to its path, for hapiPlugin, createNodeListener() or createFetchHandler(). */
  readonly routeTable: RouteTable
  /** routeTable.routes. */
  readonly routes: Route[]
}

/** Most users one admin page lists. */
export const USERS_PAGE_MAX = 100
/** The sessions list names a session by this many hex digits of its digest: enough to tell one user's apart. */
const SESSION_REF_LENGTH = 16
/** The message of a sensitive action asked for on an old session without the password. */
const PASSWORD_NEEDED = 'This action needs your current password (current_password): your sign-in is older than the re-authentication window'

const usersQuery = lazySchema(Joi => Joi.object<{ q?: string, offset: number, limit: number }>({
  q: Joi.string().max(32).allow(''),
  offset: Joi.number().integer().min(0).max(1_000_000).default(0),
  limit: Joi.number().integer().min(1).max(USERS_PAGE_MAX).default(25),
}))
const sessionParams = lazySchema(Joi => Joi.object<{ session_id: string }>({ session_id: Joi.string().hex().length(SESSION_REF_LENGTH).required() }))
const limitsBody = lazySchema(Joi => Joi.object().unknown(true).label('body').required())
/** A day range of one's own: `user_id` is an admin's. */
const ownDayRange = lazySchema(() => dayRangeQuery().fork('user_id', s => s.forbidden()))

/** The checked `path` option: `/a/b`, no trailing slash. */
function consolePath (path: unknown): string {
  if (path === undefined) return DEFAULT_CONSOLE_PATH
  if (typeof path !== 'string' || !/^(?:\/[A-Za-z0-9._~-]+)+\/?$/.test(path)) {
    throw new ConfigurationError('path', `createConsole: path must be a path such as /console (segments of letters, digits, ".", "_", "~", "-"), got ${JSON.stringify(path)}`)
  }
  return path.replace(/\/$/, '')
}

export function createConsole (options: ConsoleOptions): Console {
  const parts = options?.auth === undefined ? undefined : authParts(options.auth)
  if (parts === undefined) throw new ConfigurationError('auth', 'createConsole: options.auth must be the result of createAuthService()')
  const base = consolePath(options.path)
  const { accounts, sessions, keys } = parts
  const { store, now, maxBodyBytes, limits: byLevel, proxyMinAccessLevel } = parts.options
  const { users } = store
  const assets = createStaticAssets(options.assetsDir ?? defaultAssetsDir())
  const authError = createAuthErrorResponse()
  const errorResponse = (err: unknown): HandlerResponse => withSecurityHeaders(authError(err))
  const lastSegment = base.slice(base.lastIndexOf('/') + 1)
  if (options.allowHttp !== undefined && typeof options.allowHttp !== 'boolean') throw new ConfigurationError('allowHttp', `createConsole: allowHttp must be true or false, got ${JSON.stringify(options.allowHttp)}`)
  const cookies = cookieJar(options.allowHttp === true)
  if (options.allowHttp === true) parts.options.logger?.warn(`console: allowHttp is on: sign-in over plain HTTP sends the session cookie unencrypted; use it on a trusted network only (${base}/)`)

  function route (method: string, path: string, handler: (req: HandlerRequest) => Promise<HandlerResponse>): Route {
    return {
      method,
      path: base + path,
      maxBytes: maxBodyBytes,
      errorResponse,
      // Before the body is read: a cross-site request is refused unread.
      authenticate: (req) => { assertSameOrigin(req) },
      handler: async (req) => {
        assertSameOrigin(req)
        return await handler(req)
      },
    }
  }

  function userAgentOf (req: HandlerRequest): string {
    const ua = req.headers['user-agent']
    if (ua === undefined || ua.trim() === '') throw fail('USER_AGENT_REQUIRED')
    if (ua.length > USER_AGENT_MAX) throw fail('INVALID_INPUT', `The user-agent header is too long (at most ${USER_AGENT_MAX} characters)`)
    return ua
  }

  interface Caller { session: SessionRecord, user: UserRecord }

  /** The caller behind the cookie: a live console session of an enabled user, or 401. */
  async function caller (req: HandlerRequest): Promise<Caller> {
    const session = await sessions.authenticateConsole(cookies.token(req), userAgentOf(req))
    const user = await users.findById(session.userId)
    if (user === null) throw fail('SESSION_NOT_FOUND')
    return { session, user }
  }

  /** The caller, and a 403 unless their level, read from the store now, is hush (as the accounts admin routes). */
  async function admin (req: HandlerRequest): Promise<Caller> {
    const who = await caller(req)
    if (who.user.accessLevel !== 'hush') throw fail('INSUFFICIENT_PERMISSIONS')
    return who
  }

  /** The JSON body without `current_password`, and that password (checked: a string of a password's length) apart. */
  function bodyAndPassword (req: HandlerRequest): [Record<string, unknown>, string | undefined] {
    return withoutCurrentPassword(readJsonBody(req, true))
  }

  /** A sensitive action: the session is recent or the current password is given (lib/auth/accounts.ts, confirmOwner). */
  async function present (who: Caller, password: string | undefined, req: HandlerRequest): Promise<void> {
    await accounts.confirmOwner(who.session, password, req.remoteAddress, PASSWORD_NEEDED)
  }

  /**
   * An admin's sensitive change to one user (level, status, limits): the target's id and the body checked by
   * `schema`, once the admin's session is recent or their current password is given.
   */
  async function adminChange<T> (req: HandlerRequest, schema: LazySchema<Joi.ObjectSchema<T>>): Promise<{ id: string, input: T, rest: Record<string, unknown> }> {
    const who = await admin(req)
    const { user_id: id } = parse(targetParams, req.params)
    const [rest, password] = bodyAndPassword(req)
    const input = parse(schema, rest)
    await present(who, password, req)
    return { id, input, rest }
  }

  const userView = (user: UserRecord): Record<string, unknown> => ({ user_id: user.id, ...adminUser(user) })
  const sessionRef = (s: SessionRecord): string => s.tokenHash.slice(0, SESSION_REF_LENGTH)

  async function standing (user: UserRecord): Promise<unknown> {
    const caller = { userId: user.id, accessLevel: user.accessLevel }
    if (options.limiter?.standing !== undefined) {
      const { limits, used } = await options.limiter.standing(caller)
      return { limits: limitsToWire(limits), used: limitsToWire(used) }
    }
    return { limits: limitsToWire({ ...UNLIMITED, ...effectiveLimits(levelEntry(byLevel, user.accessLevel), await store.limits.get(user.id)) }), used: null }
  }

  /** Names for the ids a usage view shows: usernames, key names (a revoked key's kept; its id once that is gone too). */
  async function namer (rows: Parameters<typeof shownIds>[0], dimensions: Dimension[]): Promise<(dimension: Dimension, id: string | null) => string> {
    const names = new Map<string, string>()
    const nameUser = async (id: string): Promise<void> => {
      if (!names.has(`user:${id}`)) names.set(`user:${id}`, id === 'operator' ? '(operator password)' : (await users.findById(id))?.username ?? id)
    }
    for (const d of dimensions) {
      const ids = shownIds(rows, d).filter((id): id is string => id !== null)
      if (d === 'user') for (const id of ids) await nameUser(id)
      if (d !== 'key') continue
      // A revoked key keeps its name (KeyStore.names), marked as revoked.
      const known = await store.keys.names(ids)
      for (const id of ids) {
        const name = known.get(id)
        names.set(`key:${id}`, name === undefined ? `${id} (deleted)` : await store.keys.get(id) === null ? `${name} (revoked)` : name)
      }
    }
    // The admin's by-key view names each key's owner beside it.
    if (dimensions.includes('user')) {
      const shownKeys = new Set(shownIds(rows, 'key'))
      for (const row of rows) if (row.keyId !== null && shownKeys.has(row.keyId)) await nameUser(row.userId)
    }
    return (d, id) => id === null ? (d === 'key' ? '(no key)' : '') : d === 'model' ? id : names.get(`${d}:${id}`) ?? id
  }

  async function csvOf (rows: Parameters<typeof shownIds>[0]): Promise<string> {
    const usernames = new Map<string, string>()
    for (const row of rows) {
      if (!usernames.has(row.userId)) usernames.set(row.userId, row.userId === 'operator' ? '' : (await users.findById(row.userId))?.username ?? '')
    }
    const keyNames = await store.keys.names([...new Set(rows.flatMap(r => r.keyId === null ? [] : [r.keyId]))])
    return usageCsv(rows, id => usernames.get(id) ?? '', id => id === null ? '' : keyNames.get(id) ?? '')
  }

  function csvResponse (text: string, range: { from: string, to: string }, who: string): HandlerResponse {
    const headers = {
      ...dataResponse(undefined).headers,
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="gatehouse-usage-${who}-${range.from}-to-${range.to}.csv"`,
    }
    return { status: 200, headers, body: (async function * () { yield Buffer.from(text) })() }
  }

  /** The listed base models by family (newest families first), each with its stage: the upstream page's list. */
  function modelFamilies (standings: UpstreamView['standings']): Array<{ family: string, models: Array<Record<string, string | null>> }> {
    const families = new Map<string, Array<Record<string, string | null>>>()
    for (const s of standings) {
      let list = families.get(s.family)
      if (list === undefined) families.set(s.family, list = [])
      list.push({ id: s.id, stage: s.stage, shutdown_on: s.shutdownOn ?? null, replacement: s.replacement ?? null })
    }
    const rank = (family: string): number => { const i = FAMILY_ORDER.indexOf(family); return i === -1 ? FAMILY_ORDER.length : i }
    return [...families].sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b)).map(([family, models]) => ({ family, models }))
  }

  const page = (name: string) => async (req: HandlerRequest): Promise<HandlerResponse> => await assets.serve(name, req.headers['if-none-match'])

  const routes: Route[] = [
    // The page lives at `${base}/`: relative URLs (assets, api) then resolve under the console wherever it is mounted.
    route('GET', '', async () => ({ status: 308, headers: { location: `${lastSegment}/`, 'cache-control': 'no-store' } })),
    route('GET', '/', page('index.html')),
    route('GET', '/assets/{file}', async (req) => await assets.serve(req.params.file, req.headers['if-none-match'])),

    route('POST', '/api/login', async (req) => {
      const ua = userAgentOf(req)
      const input = parse(loginBody, readJsonBody(req, true))
      // Before the password is checked: a cookie the browser would drop must not leave a session behind.
      cookies.assertKept(req)
      // A new login always gets a new session id: the old cookie's session, if any, ends (no fixation).
      const old = cookies.token(req)
      const { user, token } = await accounts.login(input, consoleDevice(ua), req.remoteAddress)
      if (old !== undefined && old !== token) await sessions.authenticateConsole(old, ua).then(s => sessions.endByDigest(s.userId, s.tokenHash), () => false)
      return dataResponse({ user: userView(user) }, 200, { 'set-cookie': cookies.session(req, token, parts.options.sessionTtlMs / 1000) })
    }),

    route('POST', '/api/logout', async (req) => {
      const token = cookies.token(req)
      if (token !== undefined) {
        const session = await sessions.authenticateConsole(token, userAgentOf(req)).catch(() => undefined)
        if (session !== undefined) await sessions.endByDigest(session.userId, session.tokenHash)
      }
      return dataResponse({ message: 'Signed out' }, 200, { 'set-cookie': cookies.cleared(req) })
    }),

    route('GET', '/api/me', async (req) => {
      // Asked first by every page load: not being signed in is an answer here, not an error (the page shows sign-in).
      const who = await caller(req).catch((err: unknown) => {
        if (isGatehouseError(err) && err.status === 401) return undefined
        throw err
      })
      if (who === undefined) return dataResponse({ signed_in: false })
      const { session, user } = who
      return dataResponse({
        signed_in: true,
        user: userView(user),
        session: {
          created_at: session.createdAt.toISOString(),
          expires_at: session.expiresAt.toISOString(),
          reauth_until: new Date(session.createdAt.getTime() + parts.options.reauthMs).toISOString(),
        },
        is_admin: user.accessLevel === 'hush',
        can_create_keys: levelAtLeast(user.accessLevel, proxyMinAccessLevel),
        key_min_level: proxyMinAccessLevel,
        console_path: base,
        standing: await standing(user),
        models: options.proxy?.upstream().models.filter(id => !/-(search|nothinking|maxthinking)/.test(id)) ?? [],
      })
    }),

    route('GET', '/api/sessions', async (req) => {
      const { session } = await caller(req)
      return dataResponse((await sessions.list(session.userId)).map(s => ({ id: sessionRef(s), ...publicSession(s, session) })))
    }),

    route('DELETE', '/api/sessions', async (req) => {
      const { session } = await caller(req)
      return dataResponse({ ended: await sessions.endOthers(session.userId, session.tokenHash) })
    }),

    route('DELETE', '/api/sessions/{session_id}', async (req) => {
      const { session } = await caller(req)
      const { session_id: ref } = parse(sessionParams, req.params)
      const target = (await sessions.list(session.userId)).find(s => sessionRef(s) === ref.toLowerCase())
      if (target === undefined || !await sessions.endByDigest(session.userId, target.tokenHash)) throw fail('NO_ACTIVE_SESSION')
      const headers: Record<string, string> = target.tokenHash === session.tokenHash ? { 'set-cookie': cookies.cleared(req) } : {}
      return dataResponse({ ended: 1 }, 200, headers)
    }),

    route('PUT', '/api/account', async (req) => {
      const { session } = await caller(req)
      const input = parse(selfUpdateBody, readJsonBody(req, true))
      return dataResponse({ user: userView(await accounts.updateSelf(session, input, req.remoteAddress)) })
    }),

    route('GET', '/api/keys', async (req) => {
      const { user } = await caller(req)
      return dataResponse(await keys.list(user.id))
    }),

    route('POST', '/api/keys', async (req) => {
      const who = await caller(req)
      const [rest, password] = bodyAndPassword(req)
      const input = parse(keyCreateBody, rest)
      await present(who, password, req)
      return dataResponse(await keys.create(who.user.id, input), 201)
    }),

    route('DELETE', '/api/keys/{key_id}', async (req) => {
      const { user } = await caller(req)
      const { key_id: keyId } = parse(keyParams, req.params)
      await keys.deleteOwn(user.id, keyId)
      return dataResponse({ message: 'API key deleted' })
    }),

    route('GET', '/api/usage', async (req) => {
      const { user } = await caller(req)
      const range = dayRange(parse(ownDayRange, req.query), now())
      const rows = await usageRows(store.usage, { ...range, userId: user.id }, 'fewer days (from, to)')
      return dataResponse(usageView(range, rows, ['model', 'key'], await namer(rows, ['key'])))
    }),

    route('GET', '/api/usage.csv', async (req) => {
      const { user } = await caller(req)
      const range = dayRange(parse(ownDayRange, req.query), now())
      const rows = await usageRows(store.usage, { ...range, userId: user.id }, 'fewer days (from, to)')
      return csvResponse(await csvOf(rows), range, user.username)
    }),

    route('GET', '/api/admin/users', async (req) => {
      await admin(req)
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
    }),

    route('GET', '/api/admin/users/{user_id}', async (req) => {
      await admin(req)
      const { user_id: id } = parse(targetParams, req.params)
      const user = await users.findById(id)
      if (user === null) throw fail('USER_NOT_FOUND')
      return dataResponse({
        user: userView(user),
        sessions: (await sessions.list(id)).length,
        keys: (await keys.list(id)).length,
        limits: await userLimitsView(users, store.limits, byLevel, id),
        level_limits: limitsAtEachLevel(byLevel, await store.limits.get(id)),
        standing: await standing(user),
      })
    }),

    route('POST', '/api/admin/users', async (req) => {
      const who = await admin(req)
      const [rest, password] = bodyAndPassword(req)
      const input = parse(signupBody, rest)
      await present(who, password, req)
      return dataResponse({ user: userView(await accounts.create(input)) }, 201)
    }),

    // A new password ends the user's sessions (accounts.update); the admin tells them it out of band.
    route('PUT', '/api/admin/users/{user_id}/password', async (req) => {
      const { id, input } = await adminChange(req, passwordResetBody)
      return dataResponse({ user: userView(await accounts.update(id, { password: input.password })) })
    }),

    route('GET', '/api/admin/users/{user_id}/keys', async (req) => {
      await admin(req)
      const { user_id: id } = parse(targetParams, req.params)
      if (await users.findById(id) === null) throw fail('USER_NOT_FOUND')
      return dataResponse(await keys.list(id))
    }),

    route('DELETE', '/api/admin/users/{user_id}/keys/{key_id}', async (req) => {
      await admin(req)
      const { user_id: id } = parse(targetParams, { user_id: req.params.user_id })
      const { key_id: keyId } = parse(keyParams, { key_id: req.params.key_id })
      await keys.deleteOwn(id, keyId)
      return dataResponse({ message: 'API key revoked' })
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
      await setUserLimits(users, store.limits, id, rest)
      return dataResponse(await userLimitsView(users, store.limits, byLevel, id))
    }),

    route('DELETE', '/api/admin/users/{user_id}/lockout', async (req) => {
      await admin(req)
      const { user_id: id } = parse(targetParams, req.params)
      await accounts.clearLockout(id)
      return dataResponse({ message: 'Lockout cleared' })
    }),

    route('DELETE', '/api/admin/users/{user_id}/sessions', async (req) => {
      const who = await admin(req)
      const { user_id: id } = parse(targetParams, req.params)
      if (await users.findById(id) === null) throw fail('USER_NOT_FOUND')
      // An admin ending their own sessions keeps the one they are using.
      return dataResponse({ ended: await sessions.endOthers(id, id === who.user.id ? who.session.tokenHash : undefined) })
    }),

    route('GET', '/api/admin/usage', async (req) => {
      await admin(req)
      const query = parse(dayRangeQuery, req.query)
      const range = dayRange(query, now())
      const rows = await usageRows(store.usage, query.user_id === undefined ? range : { ...range, userId: query.user_id }, 'fewer days (from, to) or one user (user_id)')
      return dataResponse(usageView(range, rows, ['user', 'model', 'key'], await namer(rows, ['user', 'key'])))
    }),

    route('GET', '/api/admin/usage.csv', async (req) => {
      await admin(req)
      const query = parse(dayRangeQuery, req.query)
      const range = dayRange(query, now())
      const rows = await usageRows(store.usage, query.user_id === undefined ? range : { ...range, userId: query.user_id }, 'fewer days (from, to) or one user (user_id)')
      return csvResponse(await csvOf(rows), range, query.user_id ?? 'everyone')
    }),

    route('GET', '/api/admin/upstream', async (req) => {
      await admin(req)
      const proxy = options.proxy
      const view = proxy?.upstream()
      // Without an upstream nothing can be served: no model is claimed (the catalog would list them all).
      if (proxy === undefined || view === undefined || view.configured === false) return dataResponse({ configured: false, backend: null, credentials: [], models: [], families: [] })
      const ready = await proxy.ready()
      return dataResponse({
        configured: true,
        backend: view.backend ?? null,
        ready: ready.ok,
        reason: ready.reason ?? null,
        credentials: view.credentials.map(c => ({ name: c.name, state: c.state, reason: c.reason ?? null, until: c.until === undefined ? null : new Date(c.until).toISOString() })),
        models: view.models,
        families: modelFamilies(view.standings),
      })
    }),
  ]
  return { routeTable: { scope: base, routes, errorResponse }, routes }
}
