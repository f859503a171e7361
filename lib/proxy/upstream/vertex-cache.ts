// Context caching (`cachedContents`) on Vertex AI, for a client speaking the Gemini API: Vertex keeps a cache under
// one project and location (`projects/{p}/locations/{l}/cachedContents/{id}`), names its model in full
// (`projects/{p}/locations/{l}/publishers/google/models/{m}`) and wants generateContent's `cachedContent` in full too.
// Here the names are translated both ways, and a cache is pinned to the location that holds it. Express mode has no
// cachedContents. Sources and the naming scheme: docs/upstream-protocol.md, "Pass-through on Vertex AI".
import { fail } from '../../errors.ts'
import type { ForwardRequest, ForwardResponse, GeminiRequest } from './backend.ts'
import type { UpstreamAuth, UpstreamClient } from './client.ts'
import { isObject, jsonAnswer, readJsonObject } from './forward.ts'

/** What a Vertex target of a project (not express mode) adds for cached contents: its location and URLs under it. */
export interface VertexCacheSite {
  location: string
  /** `projects/{p}/locations/{l}`: the parent of its caches and of the full model names. */
  parent: string
  /** The URL of `path` (`cachedContents`, `cachedContents/{id}`) under the parent. */
  url (path: string): string
}

interface CacheTarget {
  auth: UpstreamAuth
  cache?: VertexCacheSite
}

/** The locations caches can live in: the pool's, in order; express mode has none. */
export interface VertexCacheSites<T extends CacheTarget = CacheTarget> {
  locations: readonly string[]
  /** The target of a location of the pool, else undefined. */
  target (location: string): T | undefined
  /**
   * Runs one upstream call at `location` only (a cache lives there and nowhere else), under the pool's rules for that
   * location: not sent while it cools down, a 429 cooling it down for every later call (credential-pool.ts, runOn).
   */
  run<R>(location: string, attempt: (target: T) => Promise<R>, model?: string): Promise<R>
}

/** Separates the cache id from its location in the names a pool of several locations hands out (`cachedContents/{id}.{location}`). */
const MARKER = '.'
const ID = /^[A-Za-z0-9_-]+$/

/** `cachedContents/{id}` or `cachedContents/{id}.{location}` (the prefix optional) → its parts. */
function splitName (name: string): { id: string, location?: string } {
  const bare = name.startsWith('cachedContents/') ? name.slice('cachedContents/'.length) : name
  const at = bare.indexOf(MARKER)
  return at < 0 ? { id: bare } : { id: bare.slice(0, at), location: bare.slice(at + 1) }
}

const noCache = (name: string): Error => fail('NOT_FOUND', `No cached content named ${name} on this backend; cachedContents.list shows them`)

/** The cache a client's name (`cachedContents/{id}`, or `cachedContents/{id}.{location}` with a pool) designates, and its location's target. */
export function cacheAt<T extends CacheTarget> (name: string, sites: VertexCacheSites<T>): { id: string, target: T & { cache: VertexCacheSite } } {
  const { id, location } = splitName(name)
  // A name without a location is the first location's (a single location's names never carry one).
  const target = sites.target(location ?? sites.locations[0])
  if (!ID.test(id) || target?.cache === undefined) throw noCache(name)
  return { id, target: target as T & { cache: VertexCacheSite } }
}

/** The name a client sees for a Vertex cache name: `cachedContents/{id}`, plus the location with a pool of several. */
function clientName (full: unknown, site: VertexCacheSite, sites: VertexCacheSites): unknown {
  if (typeof full !== 'string') return full
  const id = full.slice(full.lastIndexOf('/') + 1)
  return sites.locations.length > 1 ? `cachedContents/${id}${MARKER}${site.location}` : `cachedContents/${id}`
}

/** A CachedContent as the Gemini API names it: `name` the client's, `model` as `models/{m}`. */
function clientCache (value: unknown, site: VertexCacheSite, sites: VertexCacheSites): unknown {
  if (!isObject(value)) return value
  const out: Record<string, unknown> = { ...value, name: clientName(value.name, site, sites) }
  if (typeof value.model === 'string') out.model = `models/${value.model.slice(value.model.lastIndexOf('/') + 1)}`
  if (value.name === undefined) delete out.name
  return out
}

/**
 * A generate/stream request with its `cachedContent` (`cachedContents/{id}`) as Vertex's full resource name, and
 * the target of the cache's location (undefined without one: any location serves it). Throws NOT_FOUND for a name
 * of no location of the pool, or in express mode.
 */
export function pinnedToCache<T extends CacheTarget> (request: GeminiRequest, sites: VertexCacheSites<T> | undefined): (T & { cache: VertexCacheSite }) | undefined {
  const name = request.cachedContent
  if (typeof name !== 'string') return undefined
  if (sites === undefined) throw fail('NOT_FOUND', 'Vertex AI express mode has no context caching (cachedContent): it needs a Google Cloud project')
  return cacheAt(name, sites).target
}

/** `cachedContent` rewritten for the target that holds it (see pinnedToCache); the request copied only then. */
export function withFullCacheName (request: GeminiRequest, target: CacheTarget): GeminiRequest {
  const name = request.cachedContent
  if (typeof name !== 'string' || target.cache === undefined) return request
  return { ...request, cachedContent: `${target.cache.parent}/cachedContents/${splitName(name).id}` }
}

/** Only the query parameters the cachedContents methods take (pageSize, pageToken, updateMask); never the client's key. */
function queryOf (query: string, names: string[]): URLSearchParams {
  const given = new URLSearchParams(query)
  const kept = new URLSearchParams()
  for (const name of names) {
    const value = given.get(name)
    if (value !== null) kept.set(name, value)
  }
  return kept
}

const withQuery = (url: string, query: URLSearchParams): string => query.size === 0 ? url : `${url}?${query.toString()}`

/**
 * Serves `cachedContents` (POST create, GET list) and `cachedContents/{id}` (GET, PATCH, DELETE) on Vertex. A create
 * goes to the pool's next location (`run`, failing over like any call, as the cache does not exist yet); the other
 * calls go to the cache's own location, never elsewhere, under that location's cooldown (`sites.run`). A list walks the pool's locations, its page token carrying
 * the location it continues in (`{location}:{Vertex's token}`) when there are several.
 */
export function createVertexCacheForward<T extends CacheTarget> (
  client: UpstreamClient,
  run: <R>(attempt: (target: T) => Promise<R>) => Promise<R>,
  sites: VertexCacheSites<T> | undefined,
): (req: ForwardRequest, rest: string[]) => Promise<ForwardResponse> {
  return async function cacheForward (req, rest) {
    if (sites === undefined) throw fail('NOT_FOUND', `Vertex AI express mode has no context caching (${req.path}): it needs a Google Cloud project (GOOGLE_CLOUD_PROJECT)`)
    if (rest.length > 2 || rest[1] === '') throw noCache(req.path)
    const signal = req.signal
    if (rest.length === 1) {
      if (req.method === 'POST') {
        const body = await readJsonObject(req.body)
        if (typeof body.model !== 'string' || body.model === '') throw fail('INVALID_INPUT', 'A cached content needs `model`')
        // pass-through.ts has resolved the model the cache is made for and checked it against the caller's policy.
        const model = req.bodyModel ?? body.model.slice(body.model.lastIndexOf('/') + 1)
        const answer = await run(async target => {
          const site = target.cache as VertexCacheSite
          const created = await client.json({ url: site.url('cachedContents'), method: 'POST', body: { ...body, model: `${site.parent}/publishers/google/models/${model}` }, model, auth: target.auth, signal, expectObject: true })
          return clientCache(created, site, sites)
        })
        return jsonAnswer(answer)
      }
      if (req.method !== 'GET') throw fail('METHOD_NOT_ALLOWED', 'cachedContents takes POST (create) or GET (list)')
      const query = queryOf(req.query, ['pageSize', 'pageToken'])
      let location = sites.locations[0]
      const several = sites.locations.length > 1
      const token = query.get('pageToken')
      if (several && token !== null) {
        const colon = token.indexOf(':')
        location = token.slice(0, colon)
        if (colon < 0 || !sites.locations.includes(location)) throw fail('INVALID_INPUT', 'The pageToken is not one this proxy handed out')
        if (colon === token.length - 1) query.delete('pageToken')
        else query.set('pageToken', token.slice(colon + 1))
      }
      const site = (sites.target(location) as T & { cache: VertexCacheSite }).cache
      const page = await sites.run(location, async target => await client.json({ url: withQuery(site.url('cachedContents'), query), method: 'GET', auth: target.auth, signal })) as Record<string, unknown>
      const list = Array.isArray(page.cachedContents) ? page.cachedContents.map(c => clientCache(c, site, sites)) : []
      const upstreamNext = typeof page.nextPageToken === 'string' && page.nextPageToken !== '' ? page.nextPageToken : undefined
      const following = sites.locations[sites.locations.indexOf(location) + 1]
      const next = !several ? upstreamNext : upstreamNext !== undefined ? `${location}:${upstreamNext}` : following !== undefined ? `${following}:` : undefined
      return jsonAnswer({ cachedContents: list, ...(next === undefined ? {} : { nextPageToken: next }) })
    }
    const { id, target: { cache: site } } = cacheAt(decodeURIComponent(rest[1]), sites)
    const url = site.url(`cachedContents/${encodeURIComponent(id)}`)
    const method = req.method
    if (method === 'GET' || method === 'DELETE') {
      const answer = await sites.run(site.location, async target => await client.json({ url, method, auth: target.auth, signal }))
      return jsonAnswer(method === 'GET' ? clientCache(answer, site, sites) : answer)
    }
    if (req.method !== 'PATCH') throw fail('METHOD_NOT_ALLOWED', 'A cached content takes GET, PATCH or DELETE')
    const body = await readJsonObject(req.body)
    // Vertex's model is immutable and named in full; the Gemini API's `models/{m}` is not sent on.
    delete body.model
    delete body.name
    const answer = await sites.run(site.location, async target => await client.json({ url: withQuery(url, queryOf(req.query, ['updateMask'])), method: 'PATCH', body, auth: target.auth, signal }))
    return jsonAnswer(clientCache(answer, site, sites))
  }
}
