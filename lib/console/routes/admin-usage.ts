// Everyone's usage by day for the admin (by user, model and key; or one user's), on the page and as a CSV file.
import type { HandlerRequest, Route } from '../../http/contract.ts'
import type { UsageRecord } from '../../store/types.ts'
import type { ConsoleParts } from '../console-parts.ts'
import { parse } from '../../auth/schemas.ts'
import { dayRange, dayRangeQuery, usageRows } from '../../auth/usage-routes.ts'
import { dataResponse } from '../security-headers.ts'
import { usageView } from '../usage-view.ts'
import { usageCsvResponse, usageNamer } from '../usage-names.ts'

export function adminUsageRoutes ({ route, auth: { options: { store, now } }, callers: { admin } }: ConsoleParts): Route[] {
  /** The asked range and its rows, of one user when `user_id` is given. */
  async function rowsOf (req: HandlerRequest): Promise<{ range: { from: string, to: string }, who?: string, rows: UsageRecord[] }> {
    await admin(req)
    const query = parse(dayRangeQuery, req.query)
    const range = dayRange(query, now())
    const rows = await usageRows(store.usage, query.user_id === undefined ? range : { ...range, userId: query.user_id }, 'fewer days (from, to) or one user (user_id)')
    return { range, who: query.user_id, rows }
  }
  return [
    route('GET', '/api/admin/usage', async (req) => {
      const { range, rows } = await rowsOf(req)
      return dataResponse(usageView(range, rows, ['user', 'model', 'key'], await usageNamer(store, rows, ['user', 'key'])))
    }),

    route('GET', '/api/admin/usage.csv', async (req) => {
      const { range, who, rows } = await rowsOf(req)
      return await usageCsvResponse(store, rows, range, who ?? 'everyone')
    }),
  ]
}
