// The admin's upstream page: the backend, its credentials' states, and the models served by family.
import type { Route } from '../../http/contract.ts'
import type { UpstreamView } from '../../proxy/create-proxy.ts'
import type { ConsoleParts } from '../console-parts.ts'
import { dataResponse } from '../security-headers.ts'

/** The order the upstream page lists model families in: the newest first, then the special ones. */
const FAMILY_ORDER = ['gemini-4', 'gemini-3', 'gemini-2.5-pro', 'gemini-2.5-flash', 'image', 'embedding', 'legacy', 'other']

/** The listed base models by family (newest families first), each with its stage: the upstream page's list. */
function modelFamilies (standings: UpstreamView['standings']): Array<{ family: string, models: Array<Record<string, string | null>> }> {
  const families = new Map<string, Array<Record<string, string | null>>>()
  for (const s of standings) {
    let list = families.get(s.family)
    if (list === undefined) families.set(s.family, list = [])
    list.push({ id: s.id, stage: s.stage, shutdown_on: s.shutdownOn ?? null, replacement: s.replacement ?? null })
  }
  const rank = (family: string): number => { const i = FAMILY_ORDER.indexOf(family); return i === -1 ? FAMILY_ORDER.length : i }
  return [...families].sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b)).map(([family, models]) => ({ family, models }))
}

export function adminUpstreamRoutes ({ route, proxy, callers: { admin } }: ConsoleParts): Route[] {
  return [
    route('GET', '/api/admin/upstream', async (req) => {
      await admin(req)
      const view = proxy?.upstream()
      // Without an upstream nothing can be served: no model is claimed (the catalog would list them all).
      if (proxy === undefined || view === undefined || view.configured === false) return dataResponse({ configured: false, backend: null, credentials: [], models: [], families: [] })
      const ready = await proxy.ready()
      return dataResponse({
        configured: true,
        backend: view.backend ?? null,
        ready: ready.ok,
        reason: ready.reason ?? null,
        credentials: view.credentials.map(c => ({ name: c.name, state: c.state, reason: c.reason ?? null, until: c.until === undefined ? null : new Date(c.until).toISOString() })),
        models: view.models,
        families: modelFamilies(view.standings),
        // Models with no price in force: not in the spend, refused under a dollar budget (docs/prices.md).
        unpriced: view.unpriced ?? [],
      })
    }),
  ]
}
