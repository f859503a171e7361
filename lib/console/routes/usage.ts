// One's own usage by day, on the page (by model and key) and as a CSV file.
import type { Route } from '../../http/contract.ts'
import type { ConsoleParts } from '../console-parts.ts'
import { lazySchema, parse } from '../../auth/schemas.ts'
import { dayRange, dayRangeQuery, usageRows } from '../../auth/usage-routes.ts'
import { dataResponse } from '../security-headers.ts'
import { usageView } from '../usage-view.ts'
import { usageCsvResponse, usageNamer } from '../usage-names.ts'

/** A day range of one's own: `user_id` is an admin's. */
const ownDayRange = lazySchema(() => dayRangeQuery().fork('user_id', s => s.forbidden()))

export function usageRoutes ({ route, auth: { options: { store, now } }, callers: { caller } }: ConsoleParts): Route[] {
  return [
    route('GET', '/api/usage', async (req) => {
      const { user } = await caller(req)
      const range = dayRange(parse(ownDayRange, req.query), now())
      const rows = await usageRows(store.usage, { ...range, userId: user.id }, 'fewer days (from, to)')
      return dataResponse(usageView(range, rows, ['model', 'key'], await usageNamer(store, rows, ['key'])))
    }),

    route('GET', '/api/usage.csv', async (req) => {
      const { user } = await caller(req)
      const range = dayRange(parse(ownDayRange, req.query), now())
      const rows = await usageRows(store.usage, { ...range, userId: user.id }, 'fewer days (from, to)')
      return await usageCsvResponse(store, rows, range, user.username)
    }),
  ]
}
