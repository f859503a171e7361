// The console's usage answers (docs/console.md, "Usage"): the rows the usage routes read (lib/auth/usage-routes.ts),
// summed per UTC day on the server by model, key or user, so a year of rows reaches the page as a few short series.
import type { UsageRecord } from '../store/types.ts'
import { formatMicros } from '../metering/call-cost.ts'
import { REFUSED } from '../proxy/access/metering.ts'

/** The counts the console charts, as they are named on the wire (errors: the 4xx and 5xx answers among the requests;
 * cost_micros: the spend, docs/prices.md; grounded_requests: the calls that ran Google Search). */
export const USAGE_METRICS = ['requests', 'input_tokens', 'output_tokens', 'thinking_tokens', 'errors_4xx', 'errors_5xx', 'cost_micros', 'grounded_requests'] as const
export type UsageMetric = typeof USAGE_METRICS[number]
type Counts = Record<UsageMetric, number>
type Series = Record<UsageMetric, number[]>

const FIELD: Record<UsageMetric, 'requests' | 'inputTokens' | 'outputTokens' | 'thinkingTokens' | 'errors4xx' | 'errors5xx' | 'costMicros' | 'groundedRequests'> = {
  requests: 'requests', input_tokens: 'inputTokens', output_tokens: 'outputTokens', thinking_tokens: 'thinkingTokens', errors_4xx: 'errors4xx', errors_5xx: 'errors5xx', cost_micros: 'costMicros', grounded_requests: 'groundedRequests',
}
/** Series beyond this many per breakdown are summed into one "(others)", so a chart stays readable and the answer short. */
export const TOP_SERIES = 8
/** Users listed as the top users. */
export const TOP_USERS = 20

export type Dimension = 'model' | 'key' | 'user'

/** One series; a key's carries its owner's name (`owner`) where users are named too (the admin's view). */
export interface Group { id: string | null, label: string, owner?: string, totals: Counts, series: Series }

export interface UsageView {
  from: string
  to: string
  days: string[]
  totals: Counts
  daily: Array<{ day: string } & Counts>
  by: Partial<Record<Dimension, Group[]>>
  top_users?: Array<{ id: string, label: string } & Counts>
  /** The users who spent most (cost_micros), those who spent nothing left out; the admin's view only. */
  top_spenders?: Array<{ id: string, label: string } & Counts>
}

const zero = (): Counts => Object.fromEntries(USAGE_METRICS.map(m => [m, 0])) as Counts
const tokens = (c: Counts): number => c.input_tokens + c.output_tokens + c.thinking_tokens

/** Every UTC day from `from` to `to`, both included. */
export function daysBetween (from: string, to: string): string[] {
  const out: string[] = []
  for (let t = Date.parse(from + 'T00:00:00Z'); t <= Date.parse(to + 'T00:00:00Z'); t += 86_400_000) out.push(new Date(t).toISOString().slice(0, 10))
  return out
}

function add (into: Counts, row: UsageRecord): void {
  for (const m of USAGE_METRICS) into[m] += row[FIELD[m]]
}

const idOf: Record<Dimension, (row: UsageRecord) => string | null> = {
  model: row => row.model,
  key: row => row.keyId,
  user: row => row.userId,
}

/**
 * One breakdown: the largest TOP_SERIES groups by tokens (then requests), the rest as one "(others)". Refusals
 * (REFUSED rows) are no model's: they count in the totals, days, keys and users as errors, never as a model.
 */
function breakdown (rows: UsageRecord[], days: string[], dimension: Dimension, label: (id: string | null) => string, owner?: (keyId: string | null) => string | undefined): Group[] {
  const index = new Map(days.map((d, i) => [d, i]))
  const groups = new Map<string | null, { totals: Counts, rows: UsageRecord[] }>()
  for (const row of rows) {
    if (dimension === 'model' && row.model === REFUSED) continue
    const id = idOf[dimension](row)
    let group = groups.get(id)
    if (group === undefined) groups.set(id, group = { totals: zero(), rows: [] })
    add(group.totals, row)
    group.rows.push(row)
  }
  const ranked = [...groups].sort(([, a], [, b]) => tokens(b.totals) - tokens(a.totals) || b.totals.requests - a.totals.requests)
  const series = (list: UsageRecord[]): Series => {
    const out = Object.fromEntries(USAGE_METRICS.map(m => [m, days.map(() => 0)])) as Series
    for (const row of list) {
      const i = index.get(row.day)
      if (i !== undefined) for (const m of USAGE_METRICS) out[m][i] += row[FIELD[m]]
    }
    return out
  }
  const shown: Group[] = ranked.slice(0, TOP_SERIES).map(([id, g]) => {
    const by = owner?.(id)
    return { id, label: label(id), ...(by === undefined ? {} : { owner: by }), totals: g.totals, series: series(g.rows) }
  })
  const rest = ranked.slice(TOP_SERIES)
  if (rest.length > 0) {
    const totals = zero()
    for (const [, g] of rest) for (const m of USAGE_METRICS) totals[m] += g.totals[m]
    shown.push({ id: '(others)', label: `(${rest.length} others)`, totals, series: series(rest.flatMap(([, g]) => g.rows)) })
  }
  return shown
}

/** The view of `rows` over the range, broken down by each of `dimensions`, names given by `label`. */
export function usageView (range: { from: string, to: string }, rows: UsageRecord[], dimensions: Dimension[], label: (dimension: Dimension, id: string | null) => string): UsageView {
  const days = daysBetween(range.from, range.to)
  const totals = zero()
  const perDay = new Map(days.map(day => [day, zero()]))
  for (const row of rows) {
    add(totals, row)
    const day = perDay.get(row.day)
    if (day !== undefined) add(day, row)
  }
  const view: UsageView = {
    ...range,
    days,
    totals,
    daily: days.map(day => ({ day, ...perDay.get(day)! })),
    by: Object.fromEntries(dimensions.map(d => [d, breakdown(rows, days, d, id => label(d, id), d === 'key' && dimensions.includes('user') ? ownerOf(rows, label) : undefined)])),
  }
  if (dimensions.includes('user')) {
    const users = new Map<string, Counts>()
    for (const row of rows) {
      let c = users.get(row.userId)
      if (c === undefined) users.set(row.userId, c = zero())
      add(c, row)
    }
    view.top_users = [...users].sort(([, a], [, b]) => tokens(b) - tokens(a) || b.requests - a.requests).slice(0, TOP_USERS)
      .map(([id, c]) => ({ id, label: label('user', id), ...c }))
    view.top_spenders = [...users].filter(([, c]) => c.cost_micros > 0).sort(([, a], [, b]) => b.cost_micros - a.cost_micros || tokens(b) - tokens(a)).slice(0, TOP_USERS)
      .map(([id, c]) => ({ id, label: label('user', id), ...c }))
  }
  return view
}

/** The owner's name of each key of `rows` (a key has one owner; no key: none). */
function ownerOf (rows: UsageRecord[], label: (dimension: Dimension, id: string | null) => string): (keyId: string | null) => string | undefined {
  const owners = new Map<string, string>()
  for (const row of rows) if (row.keyId !== null) owners.set(row.keyId, row.userId)
  return keyId => {
    const userId = keyId === null ? undefined : owners.get(keyId)
    return userId === undefined ? undefined : label('user', userId)
  }
}

/** The ids of each dimension whose names a view shows: those of its largest groups, top users and top spenders. */
export function shownIds (rows: UsageRecord[], dimension: Dimension): Array<string | null> {
  const totals = new Map<string | null, number>()
  const spent = new Map<string | null, number>()
  for (const row of rows) {
    const id = idOf[dimension](row)
    totals.set(id, (totals.get(id) ?? 0) + row.inputTokens + row.outputTokens + row.thinkingTokens + row.requests)
    spent.set(id, (spent.get(id) ?? 0) + row.costMicros)
  }
  const top = (of: Map<string | null, number>): Array<string | null> => [...of].sort(([, a], [, b]) => b - a).slice(0, Math.max(TOP_SERIES, TOP_USERS)).map(([id]) => id)
  // The top spenders are named too, though they may not be the top users by tokens.
  return [...new Set([...top(totals), ...top(spent)])]
}

const CSV_COLUMNS = ['day', 'user_id', 'username', 'key_id', 'key_name', 'model', 'surface', 'requests', 'input_tokens', 'output_tokens', 'thinking_tokens', 'cached_tokens', 'errors_4xx', 'errors_5xx', 'cost_micros', 'cost_usd', 'unpriced_requests', 'grounded_requests', 'tool_use_tokens'] as const

/** A CSV cell: quoted when needed, and a leading = + - @ defused so a spreadsheet never runs a key name as a formula. */
function cell (value: string | number | null): string {
  if (value === null) return ''
  if (typeof value === 'number') return String(value)
  const text = /^[=+\-@\t\r]/.test(value) ? "'" + value : value
  return /[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/** The rows as CSV (RFC 4180, CRLF), with user and key names beside their ids. */
export function usageCsv (rows: UsageRecord[], username: (id: string) => string, keyName: (id: string | null) => string): string {
  const lines = [CSV_COLUMNS.join(',')]
  for (const r of rows) {
    lines.push([
      r.day, r.userId, username(r.userId), r.keyId, keyName(r.keyId), r.model, r.surface,
      r.requests, r.inputTokens, r.outputTokens, r.thinkingTokens, r.cachedTokens, r.errors4xx, r.errors5xx,
      r.costMicros, formatMicros(r.costMicros), r.unpricedRequests, r.groundedRequests, r.toolUseTokens,
    ].map(cell).join(','))
  }
  return lines.join('\r\n') + '\r\n'
}
