// The embedded store's usage rows, one per (day, userId, keyId, model, surface), their counts added in place.
import { usageRowKey } from '../embedded-file-format.ts'
import { checkedUsage, checkedUsageQuery, compareUsage, USAGE_COUNTS } from '../record-checks.ts'
import type { Tables, Writes } from './state.ts'
import type { UsageRecord, UsageStore } from '../types.ts'

type UsageTables = Pick<Tables, 'usage' | 'log'>

/** Adds the record's counts to its row, creating the row when new. */
export function addUsage (t: UsageTables, r: UsageRecord): void {
  const id = usageRowKey(r)
  const row = t.usage.get(id)
  if (row === undefined) {
    t.usage.set(id, { ...r })
    return
  }
  for (const field of USAGE_COUNTS) row[field] += r[field]
  t.log.changed('usage', id)
}

export function createUsageStore (t: UsageTables, w: Writes): UsageStore {
  return {
    async record (batch) {
      if (!Array.isArray(batch)) throw new TypeError('batch must be an array')
      const records = batch.map(checkedUsage)
      if (records.length === 0) return
      w.beginChange()
      for (const r of records) addUsage(t, r)
      await w.commit()
    },

    async query (q) {
      const { from, to, userId, limit } = checkedUsageQuery(q)
      return [...t.usage.values()]
        .filter(r => r.day >= from && r.day <= to && (userId === undefined || r.userId === userId))
        .sort(compareUsage)
        .slice(0, limit)
        .map(r => ({ ...r }))
    },
  }
}
