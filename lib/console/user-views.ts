// How the console shows a user: their record as the admin routes do, and their limits with what is used now.
import type { UserRecord } from '../store/types.ts'
import type { ConsoleParts } from './console-parts.ts'
import { adminUser } from '../auth/user-view.ts'
import { effectiveLimits, levelEntry, limitsToWire, UNLIMITED } from '../metering/limits-rule.ts'

export const userView = (user: UserRecord): Record<string, unknown> => ({ user_id: user.id, ...adminUser(user) })

/** The user's limits and, with a limiter, what they used of them; without one, the limits of their level and record. */
export async function standing ({ auth, limiter }: ConsoleParts, user: UserRecord): Promise<unknown> {
  const caller = { userId: user.id, accessLevel: user.accessLevel }
  if (limiter?.standing !== undefined) {
    const { limits, used } = await limiter.standing(caller)
    return { limits: limitsToWire(limits), used: limitsToWire(used) }
  }
  const { store, limits: byLevel } = auth.options
  return { limits: limitsToWire({ ...UNLIMITED, ...effectiveLimits(levelEntry(byLevel, user.accessLevel), await store.limits.get(user.id)) }), used: null }
}
