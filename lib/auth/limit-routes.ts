// Admin routes on a user's proxy rate limits: PUT sets the user's override, GET shows it with the limits in effect.
// The rate limiter (lib/metering/rate-limiter.ts) reads overrides through a short cache, so a change holds on
// every replica within its overridesCacheMs.
import type { HandlerRequest, HandlerResponse, Route } from '../http/contract.ts'
import type { AccessLevel, LimitStore, UserStore } from '../store/types.ts'
import { ACCESS_LEVELS } from '../store/types.ts'
import type { LimitsByLevel, RateLimits } from '../metering/limits-rule.ts'
import { effectiveLimits, levelEntry, limitsToWire, parseLimitsBody, UNLIMITED } from '../metering/limits-rule.ts'
import { fail } from '../errors.ts'

export interface LimitRouteDeps {
  users: UserStore
  limits: LimitStore
  /** Limits by access level (createAuthService's option limits). */
  byLevel: LimitsByLevel
  route: (method: string, path: string, handle: (req: HandlerRequest) => Promise<HandlerResponse>) => Route
  /** The admin prelude of lib/auth/routes.ts: user-agent, admin query, target id, then the admin's session and level. */
  adminOnUser: (req: HandlerRequest) => Promise<{ target: { user_id: string } }>
  /** The admin write prelude of lib/auth/routes.ts: adminOnUser, then recent authentication; the body without current_password. */
  adminWrite: (req: HandlerRequest) => Promise<{ target: { user_id: string }, body: unknown }>
  ok: (body: unknown, status?: number) => HandlerResponse
}

export interface UserLimitsView {
  user_id: string
  limits: Record<string, number | null> | null
  effective: Record<string, number | null>
}

/** A user's override and the limits in effect (404 for an unknown user): the answer of GET and PUT, and the console's. */
export async function userLimitsView (users: UserStore, limits: LimitStore, byLevel: LimitsByLevel, userId: string): Promise<UserLimitsView> {
  const user = await users.findById(userId)
  if (user === null) throw fail('USER_NOT_FOUND')
  const override = await limits.get(userId)
  return {
    user_id: userId,
    limits: override === null ? null : limitsToWire(override),
    // Every field, null where unlimited, so an admin sees what holds without knowing the level table.
    effective: limitsToWire({ ...UNLIMITED, ...effectiveLimits(levelEntry(byLevel, user.accessLevel), override) }),
  }
}

/** The limits a user with `override` would have at each access level (levelEntry's fallback included): the console's warning before a level change. */
export function limitsAtEachLevel (byLevel: LimitsByLevel, override: Readonly<RateLimits> | null): Record<AccessLevel, Record<string, number | null>> {
  return Object.fromEntries(ACCESS_LEVELS.map(level => [level, limitsToWire({ ...UNLIMITED, ...effectiveLimits(levelEntry(byLevel, level), override) })])) as Record<AccessLevel, Record<string, number | null>>
}

/** Sets a user's override from a wire body (400 for a bad one, 404 for an unknown user); an empty body clears it. */
export async function setUserLimits (users: UserStore, limits: LimitStore, userId: string, body: unknown): Promise<void> {
  const parsed = parseLimitsBody(body)
  if (await users.findById(userId) === null) throw fail('USER_NOT_FOUND')
  // An empty body leaves nothing to override: the user is back on their level's limits.
  if (Object.keys(parsed).length === 0) await limits.clear(userId)
  else await limits.set(userId, parsed)
}

export function createLimitRoutes ({ users, limits, byLevel, route, adminOnUser, adminWrite, ok }: LimitRouteDeps): Route[] {
  return [
    route('GET', '/admin/user/{user_id}/limits', async (req) => {
      const { target } = await adminOnUser(req)
      return ok(await userLimitsView(users, limits, byLevel, target.user_id))
    }),

    route('PUT', '/admin/user/{user_id}/limits', async (req) => {
      const { target, body } = await adminWrite(req)
      await setUserLimits(users, limits, target.user_id, body)
      return ok(await userLimitsView(users, limits, byLevel, target.user_id))
    }),
  ]
}
