// The signed-in user's own page: who they are, what they may do and use, and their account's changes.
import type { Route } from '../../http/contract.ts'
import type { ConsoleParts } from '../console-parts.ts'
import { parse, selfUpdateBody } from '../../auth/schemas.ts'
import { levelAtLeast } from '../../auth/keys.ts'
import { isGatehouseError } from '../../errors.ts'
import { readJsonBody } from '../../http/json-body.ts'
import { dataResponse } from '../security-headers.ts'
import { standing, userView } from '../user-views.ts'

export function meRoutes (parts: ConsoleParts): Route[] {
  const { route, base, proxy, auth: { accounts, options }, callers: { caller } } = parts
  return [
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
          reauth_until: new Date(session.createdAt.getTime() + options.reauthMs).toISOString(),
        },
        is_admin: user.accessLevel === 'hush',
        can_create_keys: levelAtLeast(user.accessLevel, options.proxyMinAccessLevel),
        key_min_level: options.proxyMinAccessLevel,
        console_path: base,
        standing: await standing(parts, user),
        models: proxy?.upstream().models.filter(id => !/-(search|nothinking|maxthinking)/.test(id)) ?? [],
      })
    }),

    route('PUT', '/api/account', async (req) => {
      const { session } = await caller(req)
      const input = parse(selfUpdateBody, readJsonBody(req, true))
      return dataResponse({ user: userView(await accounts.updateSelf(session, input, req.remoteAddress)) })
    }),
  ]
}
