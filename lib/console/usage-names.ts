// The names a usage answer shows for the ids in its rows (usernames, key names), for the page and the CSV file,
// read from the store; the shaping itself is usage-view.ts's.
import type { HandlerResponse } from '../http/contract.ts'
import type { Store, UsageRecord } from '../store/types.ts'
import type { Dimension } from './usage-view.ts'
import { dataResponse } from './security-headers.ts'
import { shownIds, usageCsv } from './usage-view.ts'

/** Names for the ids a usage view shows: usernames, key names (a revoked key's kept; its id once that is gone too). */
export async function usageNamer (store: Store, rows: UsageRecord[], dimensions: Dimension[]): Promise<(dimension: Dimension, id: string | null) => string> {
  const names = new Map<string, string>()
  const nameUser = async (id: string): Promise<void> => {
    if (!names.has(`user:${id}`)) names.set(`user:${id}`, id === 'operator' ? '(operator password)' : (await store.users.findById(id))?.username ?? id)
  }
  for (const d of dimensions) {
    const ids = shownIds(rows, d).filter((id): id is string => id !== null)
    if (d === 'user') for (const id of ids) await nameUser(id)
    if (d !== 'key') continue
    // A revoked key keeps its name (KeyStore.names), marked as revoked.
    const known = await store.keys.names(ids)
    for (const id of ids) {
      const name = known.get(id)
      names.set(`key:${id}`, name === undefined ? `${id} (deleted)` : await store.keys.get(id) === null ? `${name} (revoked)` : name)
    }
  }
  // The admin's by-key view names each key's owner beside it.
  if (dimensions.includes('user')) {
    const shownKeys = new Set(shownIds(rows, 'key'))
    for (const row of rows) if (row.keyId !== null && shownKeys.has(row.keyId)) await nameUser(row.userId)
  }
  return (d, id) => id === null ? (d === 'key' ? '(no key)' : '') : d === 'model' ? id : names.get(`${d}:${id}`) ?? id
}

async function csvOf (store: Store, rows: UsageRecord[]): Promise<string> {
  const usernames = new Map<string, string>()
  for (const row of rows) {
    if (!usernames.has(row.userId)) usernames.set(row.userId, row.userId === 'operator' ? '' : (await store.users.findById(row.userId))?.username ?? '')
  }
  const keyNames = await store.keys.names([...new Set(rows.flatMap(r => r.keyId === null ? [] : [r.keyId]))])
  return usageCsv(rows, id => usernames.get(id) ?? '', id => id === null ? '' : keyNames.get(id) ?? '')
}

/** The rows as a CSV download named for `who` and the range. */
export async function usageCsvResponse (store: Store, rows: UsageRecord[], range: { from: string, to: string }, who: string): Promise<HandlerResponse> {
  const text = await csvOf(store, rows)
  const headers = {
    ...dataResponse(undefined).headers,
    'content-type': 'text/csv; charset=utf-8',
    'content-disposition': `attachment; filename="gatehouse-usage-${who}-${range.from}-to-${range.to}.csv"`,
  }
  return { status: 200, headers, body: (async function * () { yield Buffer.from(text) })() }
}
