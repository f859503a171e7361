// Backend.forward for a backend whose native API sits under a base URL: all a backend supplies is that base and
// its credentials; what may pass, and how, is lib/proxy/native/pass-through.ts's.
import { fail } from '../../errors.ts'
import type { GatehouseError } from '../../errors.ts'
import type { ForwardRequest, ForwardResponse } from './backend.ts'
import type { UpstreamAuth, UpstreamClient } from './client.ts'

export function forwardTo (client: UpstreamClient, base: string, auth: UpstreamAuth): (req: ForwardRequest) => Promise<ForwardResponse> {
  return async function forward (req) {
    const answer = await client.forward({ ...req, url: new URL(base + req.path + req.query), headers: { ...req.headers, ...await auth.headers() } })
    return { ...answer, baseUrl: base }
  }
}

/** The 404 for a native path a backend does not serve: the one wording, naming the backend and saying why. */
export function notPassedThrough (backend: string | undefined, path: string, why: string): GatehouseError {
  return fail('NOT_FOUND', `The ${backend ?? 'configured'} backend has no ${path}: ${why}`)
}
