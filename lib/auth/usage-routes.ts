// The usage routes (docs/accounts.md, "Usage"): a user reads their own usage, a hush admin everyone's or one
// user's, by UTC day, from the rows the usage ledger (lib/metering/usage-ledger.ts) writes.
import type Joi from 'joi'
import type { HandlerRequest, HandlerResponse, Route } from '../http/contract.ts'
import type { SessionRecord, UsageQuery, UsageRecord, UsageStore } from '../store/types.ts'
import type { Sessions } from './sessions.ts'
import { fail } from '../errors.ts'
import { formatMicros } from '../metering/call-cost.ts'
import { adminQuery, lazySchema, parse, sessionQuery, targetParams } from './schemas.ts'

/** The days a query covers when it gives neither `from` nor `to`: the last 30, today included. */
export const USAGE_DEFAULT_DAYS = 30
/** Longest span between `from` and `to`, in days: a year and a leap day. */
export const USAGE_MAX_SPAN_DAYS = 366
/** Most rows one answer holds (about 2 MB of JSON): a longer answer is refused, so no query can hold a store's every row in memory. */
export const USAGE_MAX_ROWS = 10_000

const DAY_MS = 86_400_000
const day = lazySchema(Joi => Joi.string().pattern(/^\d{4}-\d{2}-\d{2}$/)
  .messages({ 'string.pattern.base': '{{#label}} must be a UTC day, YYYY-MM-DD' }))
// Operator-password calls are recorded under this user id (no key), so an admin can ask for them too.
const usageUserId = lazySchema(Joi => Joi.alternatives(targetParams().extract('user_id').optional(), Joi.string().valid('operator'))
  .messages({ 'alternatives.match': '{{#label}} must be a 24-character hexadecimal id or "operator"' }))

interface DayRange { from?: string, to?: string }
/** A day range alone (the console's usage query); `user_id` as an admin may name it. */
export const dayRangeQuery = lazySchema(Joi => Joi.object<DayRange & { user_id?: string }>({ from: day(), to: day(), user_id: usageUserId() }))
const ownUsageQuery = lazySchema(() => (sessionQuery() as Joi.ObjectSchema).keys({ from: day(), to: day() }) as Joi.ObjectSchema<{ user_id: string, token?: string } & DayRange>)
const adminUsageQuery = lazySchema(() => (adminQuery() as Joi.ObjectSchema).keys({ from: day(), to: day(), user_id: usageUserId() }) as Joi.ObjectSchema<{ admin_id: string, token?: string, user_id?: string } & DayRange>)

export interface UsageRouteDeps {
  /** Builds a route under the accounts base path with the accounts error mapper (lib/auth/routes.ts). */
  route: (method: string, path: string, handle: (req: HandlerRequest) => Promise<HandlerResponse>) => Route
  /** The required user-agent. */
  deviceOf: (req: HandlerRequest) => string
  /** The session token in any of its forms. */
  tokenOf: (req: HandlerRequest, queryToken?: string) => string | undefined
  sessions: Sessions
  /** The caller's live session, or 403 below hush. */
  requireHush: (adminId: string, token: string | undefined, device: string) => Promise<SessionRecord>
  usage: UsageStore
  now: () => Date
  ok: (body: unknown) => HandlerResponse
}

/** Milliseconds of a real UTC day, or undefined for one like 2026-02-30. */
function dayTime (value: string): number | undefined {
  const time = Date.parse(value + 'T00:00:00.000Z')
  return Number.isFinite(time) && new Date(time).toISOString().slice(0, 10) === value ? time : undefined
}

/** The inclusive range asked for, with its defaults; 400 for a day that does not exist, a reversed or too long range. */
export function dayRange (query: DayRange, now: Date): { from: string, to: string } {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())
  const to = query.to === undefined ? today : dayTime(query.to)
  if (to === undefined) throw fail('INVALID_INPUT', '"to" is not a day of the calendar')
  const from = query.from === undefined ? to - (USAGE_DEFAULT_DAYS - 1) * DAY_MS : dayTime(query.from)
  if (from === undefined) throw fail('INVALID_INPUT', '"from" is not a day of the calendar')
  if (from > to) throw fail('INVALID_INPUT', '"from" must not be after "to"')
  if (to - from > USAGE_MAX_SPAN_DAYS * DAY_MS) throw fail('INVALID_INPUT', `"from" and "to" may be at most ${USAGE_MAX_SPAN_DAYS} days apart`)
  const iso = (time: number): string => new Date(time).toISOString().slice(0, 10)
  return { from: iso(from), to: iso(to) }
}

/** The rows of `query`, or 400 when there are more than USAGE_MAX_ROWS: the store never reads more than one past it. */
export async function usageRows (usage: UsageStore, query: UsageQuery, narrower: string): Promise<UsageRecord[]> {
  const rows = await usage.query({ ...query, limit: USAGE_MAX_ROWS + 1 })
  if (rows.length > USAGE_MAX_ROWS) throw fail('INVALID_INPUT', `The range holds more than ${USAGE_MAX_ROWS} usage rows; ask for ${narrower}`)
  return rows
}

const COUNTS = [
  ['requests', 'requests'],
  ['input_tokens', 'inputTokens'],
  ['output_tokens', 'outputTokens'],
  ['thinking_tokens', 'thinkingTokens'],
  ['cached_tokens', 'cachedTokens'],
  ['errors_4xx', 'errors4xx'],
  ['errors_5xx', 'errors5xx'],
  ['cost_micros', 'costMicros'],
  ['unpriced_requests', 'unpricedRequests'],
  ['grounded_requests', 'groundedRequests'],
  ['tool_use_tokens', 'toolUseTokens'],
] as const

/** The answer: the range, the rows in the store's order, and their totals; cost_usd is cost_micros for display. */
function usageAnswer (range: { from: string, to: string }, rows: UsageRecord[]): unknown {
  const totals: Record<string, number> = Object.fromEntries(COUNTS.map(([wire]) => [wire, 0]))
  const out = rows.map(row => {
    const view: Record<string, unknown> = { day: row.day, user_id: row.userId, key_id: row.keyId, model: row.model, surface: row.surface }
    for (const [wire, field] of COUNTS) {
      view[wire] = row[field]
      totals[wire] += row[field]
    }
    view.cost_usd = formatMicros(row.costMicros)
    return view
  })
  return { ...range, rows: out, totals: { ...totals, cost_usd: formatMicros(totals.cost_micros) } }
}

export function createUsageRoutes (deps: UsageRouteDeps): Route[] {
  const { route, deviceOf, tokenOf, sessions, requireHush, usage, now, ok } = deps
  return [
    route('GET', '/auth/usage', async (req) => {
      const device = deviceOf(req)
      const query = parse(ownUsageQuery, req.query)
      const range = dayRange(query, now())
      // The session names the user: another user's user_id fails here as on every self route.
      const session = await sessions.authenticate(query.user_id, tokenOf(req, query.token), device)
      return ok(usageAnswer(range, await usageRows(usage, { ...range, userId: session.userId }, 'fewer days (from, to)')))
    }),

    route('GET', '/admin/usage', async (req) => {
      const device = deviceOf(req)
      const query = parse(adminUsageQuery, req.query)
      const range = dayRange(query, now())
      await requireHush(query.admin_id, tokenOf(req, query.token), device)
      const rows = query.user_id === undefined
        ? await usageRows(usage, range, 'fewer days (from, to) or one user (user_id)')
        : await usageRows(usage, { ...range, userId: query.user_id }, 'fewer days (from, to)')
      return ok(usageAnswer(range, rows))
    }),
  ]
}
