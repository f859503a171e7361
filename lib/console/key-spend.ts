// A key as the console lists it (docs/console.md, "Usage"): the public key with what it spent this UTC month, read
// from the usage rows (the cost the key's monthly cap is charged: lib/metering/budgets.ts), beside the cap itself.
import type { PublicKey } from '../auth/keys.ts'
import type { UsageStore } from '../store/types.ts'
import { monthOf } from '../metering/budgets.ts'
import { formatMicros } from '../metering/call-cost.ts'

export type KeyWithSpend = PublicKey & {
  /** The cost of the key's calls this UTC month, in whole micro-dollars (the usage rows' cost_micros). */
  spent_micros_this_month: number
  /** The same as a dollar string (formatMicros). */
  spent_usd_this_month: string
}

const isoDay = (time: number): string => new Date(time).toISOString().slice(0, 10)

/** `keys` (all of `userId`'s) with each one's spend in the UTC month of `now`. */
export async function keysWithSpend (usage: UsageStore, userId: string, keys: PublicKey[], now: Date): Promise<KeyWithSpend[]> {
  const spent = new Map<string, number>()
  if (keys.length > 0) {
    const rows = await usage.query({ from: isoDay(monthOf(now.getTime())[0]), to: isoDay(now.getTime()), userId })
    for (const row of rows) if (row.keyId !== null) spent.set(row.keyId, (spent.get(row.keyId) ?? 0) + row.costMicros)
  }
  return keys.map(k => {
    const micros = spent.get(k.key_id) ?? 0
    return { ...k, spent_micros_this_month: micros, spent_usd_this_month: formatMicros(micros) }
  })
}
