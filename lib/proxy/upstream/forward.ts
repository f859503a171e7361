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

/** A JSON object (not an array, not null): what a request or answer body of the Gemini API is. */
export const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/**
 * A forwarded body a backend answers itself (Vertex's translations), read whole as a JSON object; an empty body is
 * `{}`. The route has already bounded its size and read time as it arrived.
 */
export async function readJsonObject (body: AsyncIterable<Uint8Array> | undefined): Promise<Record<string, unknown>> {
  const chunks: Uint8Array[] = []
  if (body !== undefined) for await (const chunk of body) chunks.push(chunk)
  if (chunks.length === 0) return {}
  let value: unknown
  try {
    value = JSON.parse(Buffer.concat(chunks).toString('utf8'))
  } catch {
    throw fail('INVALID_INPUT', 'The request body must be JSON')
  }
  if (!isObject(value)) throw fail('INVALID_INPUT', 'The request body must be a JSON object')
  return value
}

/** A 200 JSON answer made by the proxy in place of the upstream's. */
export function jsonAnswer (value: unknown): ForwardResponse {
  const bytes = Buffer.from(JSON.stringify(value))
  return {
    status: 200,
    headers: { 'content-type': 'application/json; charset=UTF-8' },
    body: (async function * oneChunk () { yield bytes })(),
    baseUrl: '',
  }
}
