// Dollar budgets (docs/prices.md, "Budgets"): a user's usd_per_day and usd_per_month (GEMINI_LIMITS and the
// user's override) and a key's own usd_per_month, each a counter window in micro-dollars in the store, reserved
// and settled as the token windows are (lib/metering/rate-limiter.ts), so replicas on one store agree.
import type { CounterOp } from '../store/types.ts'
import { fail } from '../errors.ts'
import type { GatehouseError } from '../errors.ts'
import type { RateLimits } from './limits-rule.ts'
import { formatMicros } from './call-cost.ts'

/** A budget as GEMINI_LIMITS and the key create body name it; `key_usd_per_month` is a key's own cap. */
export const BUDGET_NAMES = ['usd_per_day', 'usd_per_month', 'key_usd_per_month'] as const
export type BudgetName = typeof BUDGET_NAMES[number]

/** True for a RateLimitedError's limit that is a dollar budget. */
export function isBudget (limit: string): limit is BudgetName {
  return (BUDGET_NAMES as readonly string[]).includes(limit)
}

/** A model call's price at admission (lib/proxy/access/metering.ts prices it): what the dollar budgets reserve. */
export interface CallPrice {
  /** The model as priced, named when it has no price. */
  model: string
  /** The call's reserved tokens at the prices in force now, in micro-dollars; undefined: the model has no known price. */
  reservedMicros: number | undefined
  /** Why the model has no price (PriceList.cost's message), for the refusal. */
  unpriced?: string
}

/** One budget in force for a call: its limit in micro-dollars and its counter window. */
export interface Budget {
  name: BudgetName
  limit: number
  /** The store counter's key. */
  key: string
  windowStart: Date
  /** When the window ends and the budget is whole again. */
  resetAt: Date
  expiresAt: Date
}

const DAY = 86_400_000
/** Windows are kept an hour past their end, as the token day's are, so a late settlement finds its window. */
const KEPT = 3_600_000

/** The first instant of the UTC day and of the next one. */
function dayOf (at: number): [number, number] {
  const start = at - (at % DAY)
  return [start, start + DAY]
}

/** The first instant of the UTC calendar month and of the next one. */
export function monthOf (at: number): [number, number] {
  const d = new Date(at)
  return [Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1), Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)]
}

function budget (name: BudgetName, limit: number, key: string, [start, end]: [number, number]): Budget {
  return { name, limit, key, windowStart: new Date(start), resetAt: new Date(end), expiresAt: new Date(end + KEPT) }
}

const NO_BUDGETS: readonly Budget[] = Object.freeze([])

/** A key caller's own cap, if its key has one. */
export interface KeyCap { keyId: string, usdPerMonthMicros?: number | null }

/** The budgets in force at `at`: the user's limits' dollar fields, then the key's own cap. */
export function budgetsAt (limits: RateLimits, userId: string, key: KeyCap | undefined, at: number): readonly Budget[] {
  // Most callers have no budget: they get one shared empty list rather than a new one per call.
  if (limits.usdPerDayMicros == null && limits.usdPerMonthMicros == null && key?.usdPerMonthMicros == null) return NO_BUDGETS
  const out: Budget[] = []
  if (limits.usdPerDayMicros != null) out.push(budget('usd_per_day', limits.usdPerDayMicros, `rate:usd-day:${userId}`, windowOf('usd_per_day', at)))
  if (limits.usdPerMonthMicros != null) out.push(budget('usd_per_month', limits.usdPerMonthMicros, `rate:usd-month:${userId}`, windowOf('usd_per_month', at)))
  if (key?.usdPerMonthMicros != null) out.push(budget('key_usd_per_month', key.usdPerMonthMicros, `rate:key-usd-month:${key.keyId}`, windowOf('key_usd_per_month', at)))
  return out
}

/** MODEL_UNPRICED: under a dollar budget a model without a price cannot be charged, so it is not called. */
export function unpricedRefusal (price: CallPrice | undefined, budgets: readonly Budget[]): GatehouseError {
  const why = price?.unpriced ?? `No price is known for ${price?.model ?? 'this model'}`
  return fail('MODEL_UNPRICED', `${why}, so the ${budgets.map(b => wireName(b.name)).join(' and ')} budget cannot be enforced on it: use a model with a price, or ask the operator to add one (docs/prices.md)`)
}

/** The budget as the refusal names it: the key's cap is the key's usd_per_month. */
function wireName (name: BudgetName): string {
  return name === 'key_usd_per_month' ? "this key's usd_per_month" : name
}

/** The ops that add the reservation to each budget's window (a read where nothing is reserved). */
export function reserveOps (budgets: readonly Budget[], micros: number): CounterOp[] {
  return budgets.map(b => micros > 0 ? { key: b.key, windowStart: b.windowStart, amount: micros, expiresAt: b.expiresAt } : { key: b.key, windowStart: b.windowStart })
}

/** What each budget has left after `totals` (its window's totals, this call's reservation in them), at least 0. */
function left (b: Budget, total: number): number {
  return Math.max(0, b.limit - total)
}

/** The x-gatehouse-budget-* headers: the budget with least left, what it has left in dollars, when it resets. */
export function budgetHeaders (budgets: readonly Budget[], totals: readonly number[], reserved: number, refused: boolean): Record<string, string> {
  if (budgets.length === 0) return {}
  let tightest = 0
  // A refused call takes its reservation back: what is left is then what it found.
  const remaining = budgets.map((b, i) => left(b, refused ? totals[i] - reserved : totals[i]))
  for (let i = 1; i < budgets.length; i++) if (remaining[i] < remaining[tightest]) tightest = i
  return {
    'x-gatehouse-budget': budgets[tightest].name,
    'x-gatehouse-budget-remaining-usd': formatMicros(remaining[tightest]),
    'x-gatehouse-budget-reset': budgets[tightest].resetAt.toISOString(),
  }
}

/** The first budget the call found spent (its window at or over the limit before its own reservation). */
export function spentBudget (budgets: readonly Budget[], totals: readonly number[], reserved: number): { budget: Budget, left: number } | undefined {
  for (const [i, b] of budgets.entries()) {
    if (totals[i] - reserved >= b.limit) return { budget: b, left: left(b, totals[i] - reserved) }
  }
  return undefined
}

/** The refusal's message: the budget, its amount, what is left and when it resets. */
export function budgetMessage (b: Budget, leftMicros: number): string {
  return `Budget reached: ${wireName(b.name)} of $${formatMicros(b.limit)}, $${formatMicros(leftMicros)} left; it resets at ${b.resetAt.toISOString()}`
}

/** The window of a budget at `at`: the UTC day for usd_per_day, the UTC calendar month otherwise. */
function windowOf (name: BudgetName, at: number): [number, number] {
  return name === 'usd_per_day' ? dayOf(at) : monthOf(at)
}

/**
 * The settlement's ops: each budget's reservation trued up to the call's cost in the window it was made in; a call
 * that ends in a later window is charged its whole cost there, the earlier window kept as it was.
 */
export function settleOps (budgets: readonly Budget[], reserved: number, cost: number, at: number): CounterOp[] {
  const ops: CounterOp[] = []
  for (const b of budgets) {
    const window = windowOf(b.name, at)
    const same = window[0] === b.windowStart.getTime()
    const amount = same ? cost - reserved : cost
    if (amount === 0) continue
    ops.push(same ? { key: b.key, windowStart: b.windowStart, amount, expiresAt: b.expiresAt } : { key: b.key, windowStart: new Date(window[0]), amount, expiresAt: new Date(window[1] + KEPT) })
  }
  return ops
}
