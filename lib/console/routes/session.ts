// Signing in and out, and one's own sessions: the cookie's session opens, ends and is listed here.
import type { Route } from '../../http/contract.ts'
import type { SessionRecord } from '../../store/types.ts'
import type { ConsoleParts } from '../console-parts.ts'
import { consoleDevice } from '../../auth/sessions.ts'
import { lazySchema, loginBody, parse, signInLinkBody } from '../../auth/schemas.ts'
import { publicSession } from '../../auth/user-view.ts'
import { fail } from '../../errors.ts'
import { readJsonBody } from '../../http/json-body.ts'
import { userAgentOf } from '../callers.ts'
import { dataResponse } from '../security-headers.ts'
import { userView } from '../user-views.ts'

/** The sessions list names a session by this many hex digits of its digest: enough to tell one user's apart. */
const SESSION_REF_LENGTH = 16
const sessionParams = lazySchema(Joi => Joi.object<{ session_id: string }>({ session_id: Joi.string().hex().length(SESSION_REF_LENGTH).required() }))
const sessionRef = (s: SessionRecord): string => s.tokenHash.slice(0, SESSION_REF_LENGTH)

/** POST /api/login, /api/sign-in-link and /api/logout: the cookie's session opens and ends. */
export function signInRoutes ({ route, auth, cookies }: ConsoleParts): Route[] {
  const { accounts, sessions } = auth
  return [
    route('POST', '/api/login', async (req) => {
      const ua = userAgentOf(req)
      const input = parse(loginBody, readJsonBody(req, true))
      // Before the password is checked: a cookie the browser would drop must not leave a session behind.
      cookies.assertKept(req)
      // A new login always gets a new session id: the old cookie's session, if any, ends (no fixation).
      const old = cookies.token(req)
      const { user, token } = await accounts.login(input, consoleDevice(ua), req.remoteAddress)
      if (old !== undefined && old !== token) await sessions.authenticateConsole(old, ua).then(s => sessions.endByDigest(s.userId, s.tokenHash), () => false)
      return dataResponse({ user: userView(user) }, 200, { 'set-cookie': cookies.session(req, token, auth.options.sessionTtlMs / 1000) })
    }),

    // The holder of an admin's sign-in link chooses their password and is signed in, as by a login.
    route('POST', '/api/sign-in-link', async (req) => {
      const ua = userAgentOf(req)
      const input = parse(signInLinkBody, readJsonBody(req, true))
      cookies.assertKept(req)
      const { user, token } = await auth.signInLinks.redeem(input.token, input.password, consoleDevice(ua), req.remoteAddress)
      return dataResponse({ user: userView(user) }, 200, { 'set-cookie': cookies.session(req, token, auth.options.sessionTtlMs / 1000) })
    }),

    route('POST', '/api/logout', async (req) => {
      const token = cookies.token(req)
      if (token !== undefined) {
        const session = await sessions.authenticateConsole(token, userAgentOf(req)).catch(() => undefined)
        if (session !== undefined) await sessions.endByDigest(session.userId, session.tokenHash)
      }
      return dataResponse({ message: 'Signed out' }, 200, { 'set-cookie': cookies.cleared(req) })
    }),
  ]
}

/** /api/sessions: one's own sessions, listed and ended. */
export function sessionRoutes ({ route, auth: { sessions }, cookies, callers: { caller } }: ConsoleParts): Route[] {
  return [
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
  ]
}
