// The embedded store's counter windows. Windows of KEPT_WINDOW_MS or more (a day's tokens, a day's or month's
// dollars) are kept with the file, carried by the next save rather than awaited; a minute's live in memory only.
import { counterId } from '../embedded-file-format.ts'
import type { StoredCounter } from '../embedded-file-format.ts'
import { checkedAmount, checkedCounterOps, checkedDate, text } from '../record-checks.ts'
import type { Tables, Writes } from './state.ts'
import type { CounterStore } from '../types.ts'

type CounterTables = Pick<Tables, 'counters' | 'log'>

/** Counter windows this long or longer are kept with the file (a day's or a month's); shorter ones in memory only. */
const KEPT_WINDOW_MS = 3_600_000

/** Adds to a counter window (arguments checked, beginChange done); returns its new total. */
export function addToWindow (t: CounterTables, key: string, start: number, add: number, end: number): number {
  let windows = t.counters.get(key)
  if (windows === undefined) {
    windows = new Map()
    t.counters.set(key, windows)
  }
  const w = windows.get(start) ?? { total: 0, expiresAt: end }
  w.total += add
  w.expiresAt = Math.max(w.expiresAt, end)
  windows.set(start, w)
  if (w.expiresAt - start >= KEPT_WINDOW_MS) t.log.changed('counters', counterId(key, start))
  return w.total
}

/** Drops windows past their expiry; the next save carries the removal of kept ones. */
export function sweepCounters (t: CounterTables, now: number): void {
  for (const [key, windows] of t.counters) {
    for (const [start, w] of windows) {
      if (w.expiresAt > now) continue
      windows.delete(start)
      if (w.expiresAt - start >= KEPT_WINDOW_MS) t.log.changed('counters', counterId(key, start))
    }
    if (windows.size === 0) t.counters.delete(key)
  }
}

/** The counter windows the file keeps: those of an hour or longer, not yet expired. */
export function keptCounters (counters: Tables['counters']): StoredCounter[] {
  const kept: StoredCounter[] = []
  for (const [key, windows] of counters) {
    for (const [start, w] of windows) if (w.expiresAt - start >= KEPT_WINDOW_MS) kept.push({ key, windowStart: new Date(start), total: w.total, expiresAt: new Date(w.expiresAt) })
  }
  return kept
}

/** A kept counter window named by counterId, as the file holds it. */
export function keptCounter (counters: Tables['counters'], id: string): StoredCounter | undefined {
  const at = id.lastIndexOf('\n')
  const key = id.slice(0, at)
  const start = Number(id.slice(at + 1))
  const w = counters.get(key)?.get(start)
  return w === undefined ? undefined : { key, windowStart: new Date(start), total: w.total, expiresAt: new Date(w.expiresAt) }
}

export function createCounterStore (t: CounterTables, w: Writes): CounterStore {
  return {
    async add (key, windowStart, amount, expiresAt) {
      text(key, 'key')
      const start = checkedDate(windowStart, 'windowStart').getTime()
      const add = checkedAmount(amount)
      const end = checkedDate(expiresAt, 'expiresAt').getTime()
      w.beginChange()
      return addToWindow(t, key, start, add, end)
    },

    async get (key, windowStart) {
      const start = checkedDate(windowStart, 'windowStart').getTime()
      return t.counters.get(text(key, 'key'))?.get(start)?.total ?? 0
    },

    async batch (ops) {
      const checked = checkedCounterOps(ops)
      if (checked.some(op => op.add !== undefined)) w.beginChange()
      return checked.map(({ key, start, add }) => add === undefined
        ? t.counters.get(key)?.get(start.getTime())?.total ?? 0
        : addToWindow(t, key, start.getTime(), add.amount, add.expiresAt.getTime()))
    },
  }
}
