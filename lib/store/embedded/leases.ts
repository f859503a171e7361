// The embedded store's concurrency leases, in memory only: a restart ends every request holding one.
import { checkedDate, checkedLeaseLimit, text } from '../record-checks.ts'
import type { Tables, Writes } from './state.ts'
import type { LeaseStore } from '../types.ts'

type Leases = Tables['leases']

/** The live leases of `key` at `now`, expired ones dropped. */
function liveLeases (leases: Leases, key: string, now: number): Map<string, number> | undefined {
  const held = leases.get(key)
  if (held === undefined) return undefined
  for (const [id, expiresAt] of held) if (expiresAt <= now) held.delete(id)
  if (held.size === 0) leases.delete(key)
  return held.size === 0 ? undefined : held
}

export function sweepLeases (leases: Leases, now: number): void {
  for (const key of [...leases.keys()]) liveLeases(leases, key, now)
}

export function createLeaseStore (leases: Leases, w: Writes): LeaseStore {
  return {
    async acquire (key, leaseId, limit, now, expiresAt) {
      text(key, 'key')
      text(leaseId, 'leaseId')
      const max = checkedLeaseLimit(limit)
      const at = checkedDate(now, 'now').getTime()
      const end = checkedDate(expiresAt, 'expiresAt').getTime()
      w.beginChange()
      const held = liveLeases(leases, key, at) ?? new Map<string, number>()
      if (!held.has(leaseId) && held.size >= max) return false
      held.set(leaseId, end)
      leases.set(key, held)
      return true
    },

    async renew (key, leaseId, now, expiresAt) {
      text(key, 'key')
      text(leaseId, 'leaseId')
      const at = checkedDate(now, 'now').getTime()
      const end = checkedDate(expiresAt, 'expiresAt').getTime()
      const held = liveLeases(leases, key, at)
      if (held?.has(leaseId) !== true) return false
      held.set(leaseId, end)
      return true
    },

    async release (key, leaseId) {
      text(leaseId, 'leaseId')
      const held = leases.get(text(key, 'key'))
      held?.delete(leaseId)
      if (held?.size === 0) leases.delete(key)
    },

    async count (key, now) {
      text(key, 'key')
      return liveLeases(leases, key, checkedDate(now, 'now').getTime())?.size ?? 0
    },
  }
}
