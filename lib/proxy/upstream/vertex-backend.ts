// The Vertex AI backend: the Gemini API's request and response JSON on Google Cloud's own endpoint, with
// application-default credentials (a service-account key file, GKE Workload Identity) or, in express mode, an API
// key. Hosts, paths and sources: docs/upstream-protocol.md, "Vertex AI backend".
import { readFileSync } from 'node:fs'
import type { AuthClient } from 'google-auth-library'
import { fail } from '../../errors.ts'
import type { GatehouseError } from '../../errors.ts'
import { geminiEventStream } from './backend.ts'
import type { Backend, GeminiRequest, GeminiResponse, ListedModel, ModelListing } from './backend.ts'
import { createUpstreamClient } from './client.ts'
import type { UpstreamAuth } from './client.ts'
import { contentsToCount } from './count-tokens.ts'
import type { UpstreamClientOptions } from './options.ts'
import { createVertexEmbed } from './vertex-embed.ts'
import { createVertexForward } from './vertex-forward.ts'
import { notPassedThrough } from './forward.ts'
import { createVertexCacheForward, pinnedToCache, withFullCacheName } from './vertex-cache.ts'
import type { VertexCacheSite, VertexCacheSites } from './vertex-cache.ts'
import { DEFAULT_VERTEX_LOCATION, vertexHost, vertexLocationList } from '../../option-rules.ts'
import { createCredentialPool } from './credential-pool.ts'
import { SILENT_LOGGER } from '../../logger.ts'
import { optionalPackage } from '../../load-package.ts'

export interface VertexBackendOptions extends UpstreamClientOptions {
  /** Google Cloud project (GOOGLE_CLOUD_PROJECT). Default unset: express mode with `apiKey`. */
  projectId?: string
  /**
   * The locations that serve a model (the model file's `locations.vertex`), undefined for one served everywhere. A
   * pooled location that does not serve a call's model is skipped for it; when none does, MODEL_NOT_FOUND (404).
   * createProxy sets it from its model file.
   */
  modelLocations?: (model: string) => readonly string[] | undefined
  /** Vertex AI location (GOOGLE_CLOUD_LOCATION): `global` or a region such as `us-central1`; several separated by commas are a pool, one member per location, named by it (needs projectId, no vertexEndpoint). Default `global`. */
  vertexLocation?: string
  /** Base URL replacing the location's host (VERTEX_ENDPOINT). Default `https://aiplatform.googleapis.com` for `global`, `https://R-aiplatform.googleapis.com` for region R. */
  vertexEndpoint?: string
  /** Service-account key file (GOOGLE_APPLICATION_CREDENTIALS). Default unset: google-auth-library's application-default credentials (the metadata server on GKE). */
  credentialsFile?: string
  /** Express mode API key (GEMINI_API_KEY), used when no projectId is set; sent as x-goog-api-key. */
  apiKey?: string
}

/** Where one Vertex call goes and how it authenticates: what a pool of credentials or locations varies per call. */
export interface VertexTarget {
  url (model: string, action: string): string
  auth: UpstreamAuth
  /** The location, for cached contents; unset in express mode, which has none. */
  cache?: VertexCacheSite
  /** Google's publisher model list on this target's host (publishers.models.list, v1beta1), for discovery and re-probes. */
  modelList?: string
}

/** Google's OAuth 2.0 token endpoint: the one google-auth-library calls for a service account's JWT grant. */
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token'
const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform'

function asResponse (value: unknown): GeminiResponse {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value as GeminiResponse : { candidates: [] }
}

/**
 * Vertex requires `role` on every content where the Gemini API defaults it to `user` (a single-turn native request
 * often leaves it out); the request is copied only when one is missing.
 */
export function withRoles (request: GeminiRequest): GeminiRequest {
  const contents = request.contents
  if (!Array.isArray(contents) || contents.every(c => c === null || typeof c !== 'object' || typeof (c as { role?: unknown }).role === 'string')) return request
  return {
    ...request,
    contents: contents.map(c => c !== null && typeof c === 'object' && typeof (c as { role?: unknown }).role !== 'string' ? { ...c, role: 'user' } : c),
  }
}

/** The one preparation of a generate/stream/countTokens body for a target: roles (withRoles) and `cachedContent` named in full for the target's location. */
export function vertexRequest (request: GeminiRequest, target: VertexTarget): GeminiRequest {
  return withFullCacheName(withRoles(request), target)
}

interface KeyFile { type?: unknown, client_email?: unknown, private_key?: unknown, private_key_id?: unknown, token_uri?: unknown }

function readKeyFile (file: string): KeyFile {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as KeyFile
  } catch (err) {
    throw new Error(`the key file ${file} (GOOGLE_APPLICATION_CREDENTIALS) cannot be read as JSON: ${(err as Error).message}`, { cause: err })
  }
}

/** Application-default credentials as UpstreamAuth: a bearer token, refreshed by google-auth-library, loaded on first use. */
function adcAuth (options: VertexBackendOptions): UpstreamAuth & { check (): Promise<void> } {
  const logger = options.logger ?? SILENT_LOGGER
  let client: Promise<AuthClient> | undefined
  // google-auth-library (about 20 MB with its HTTP stack) loads on the first call, so a process that never calls
  // Vertex never loads it.
  async function load (): Promise<AuthClient> {
    const { GoogleAuth, JWT } = await optionalPackage('google-auth-library', 'createBackend', async () => await import('google-auth-library'))
    const file = options.credentialsFile
    const key = file === undefined ? undefined : readKeyFile(file)
    if (file === undefined || key?.type !== 'service_account') {
      // The metadata server (GKE Workload Identity), or a key file of another kind (external account, gcloud's user
      // credentials), which google-auth-library reads itself.
      return await new GoogleAuth({ keyFile: file, scopes: [CLOUD_PLATFORM_SCOPE] }).getClient()
    }
    // A service-account key, given to the JWT client as google-auth-library recommends for a file named by the operator.
    const jwt: AuthClient = new JWT({ email: String(key.client_email), key: String(key.private_key), keyId: typeof key.private_key_id === 'string' ? key.private_key_id : undefined, scopes: [CLOUD_PLATFORM_SCOPE] })
    const tokenUri = typeof key.token_uri === 'string' && key.token_uri !== GOOGLE_TOKEN_URL ? key.token_uri : undefined
    if (tokenUri !== undefined) {
      // google-auth-library always posts the JWT grant to Google's endpoint; the key file's own token_uri is
      // honoured here, as the key file is the operator's configuration.
      jwt.transporter.interceptors.request.add({
        resolved: async request => {
          if (String(request.url) === GOOGLE_TOKEN_URL) request.url = new URL(tokenUri)
          return request
        },
      })
    }
    return jwt
  }
  function credentialError (err: unknown): GatehouseError {
    const message = err instanceof Error ? err.message : String(err)
    logger.warn({ reason: message }, 'Could not get a Vertex AI access token from the application-default credentials')
    return fail('UPSTREAM_UNAVAILABLE', `Could not get a Vertex AI access token from the application-default credentials: ${message}`, { cause: err })
  }
  async function token (): Promise<string> {
    try {
      client ??= load()
      const { token } = await (await client).getAccessToken()
      if (typeof token !== 'string' || token === '') throw new Error('no access token')
      return token
    } catch (err) {
      client = undefined // a later call tries again (the metadata server may not be up yet)
      throw credentialError(err)
    }
  }
  let rejected: string | undefined
  return {
    async headers () {
      return { authorization: `Bearer ${await token()}` }
    },
    async rejected (used) {
      // The token was refused: mark it expired so google-auth-library fetches a new one (once per refused token).
      if (rejected === used.authorization) return
      rejected = used.authorization
      const loaded = await client
      if (loaded !== undefined) loaded.credentials = { ...loaded.credentials, expiry_date: 1 }
    },
    async check () { await token() },
  }
}

/** The single-location, single-credential target of these options (a pool varies them per call); `auth` shares one credential between the targets of a pool. */
export function vertexTarget (options: VertexBackendOptions, auth = adcAuth(options)): VertexTarget & { ready (): Promise<void> } {
  const location = options.vertexLocation ?? DEFAULT_VERTEX_LOCATION
  const project = options.projectId
  if (project === undefined) {
    // Express mode: the global endpoint, no project or location in the path.
    const base = (options.vertexEndpoint ?? vertexHost(DEFAULT_VERTEX_LOCATION)).replace(/\/+$/, '')
    const apiKey = options.apiKey ?? ''
    return {
      url: (model, action) => `${base}/v1/publishers/google/models/${encodeURIComponent(model)}:${action}`,
      auth: { headers: async () => ({ 'x-goog-api-key': apiKey }) },
      modelList: `${base}/v1beta1/publishers/google/models`,
      ready: async () => {
        if (apiKey === '') throw new Error('Vertex AI needs GOOGLE_CLOUD_PROJECT (application-default credentials) or GEMINI_API_KEY (express mode)')
      },
    }
  }
  const base = (options.vertexEndpoint ?? vertexHost(location)).replace(/\/+$/, '')
  const parent = `projects/${encodeURIComponent(project)}/locations/${encodeURIComponent(location)}`
  const prefix = `${base}/v1/${parent}/publishers/google/models/`
  return {
    url: (model, action) => `${prefix}${encodeURIComponent(model)}:${action}`,
    auth,
    cache: { location, parent, url: path => `${base}/v1/${parent}/${path}` },
    modelList: `${base}/v1beta1/publishers/google/models`,
    ready: () => auth.check(),
  }
}

/** Runs one upstream request on a target: a pool's `run` (the next location after a 429 or a credential fault), for `model` when the call names one. */
export type OnVertexTarget = <R>(attempt: (target: VertexTarget) => Promise<R>, model?: string) => Promise<R>

/**
 * A Vertex backend whose every upstream request goes through `run`, which hands it a target (so a pool can hand out
 * another location each time, and a call fails over before any byte reached the client).
 */
export function createVertexBackendOn (run: OnVertexTarget, options: VertexBackendOptions & { ready?: () => Promise<void>, sites?: VertexCacheSites<VertexTarget> }): Backend {
  const client = createUpstreamClient(options)
  const embed = createVertexEmbed(client, run)
  /**
   * Where a request goes: the location of the cache it names, without failing over (the cache lives there only) but
   * under that location's cooldown, else the pool's run.
   */
  function runFor (request: GeminiRequest): OnVertexTarget {
    const sites = options.sites
    const pinned = pinnedToCache(request, sites)
    return pinned === undefined || sites === undefined ? run : async (attempt, model) => await sites.run(pinned.cache.location, attempt, model)
  }
  return {
    name: 'vertex',
    embed,
    forward: createVertexForward(embed, createVertexCacheForward(client, run, options.sites), async (model, signal) => await run(async target => {
      if (target.modelList === undefined) throw notPassedThrough('vertex', `/v1beta/models/${model}`, 'this target has no publisher model list')
      return await client.json({ url: `${target.modelList}/${encodeURIComponent(model)}`, method: 'GET', model, auth: target.auth, signal })
    }, model)),
    async generate (call) {
      return asResponse(await runFor(call.request)(target => client.json({ url: target.url(call.model, 'generateContent'), body: vertexRequest(call.request, target), model: call.model, auth: target.auth, signal: call.signal, expectObject: true }), call.model))
    },
    async stream (call) {
      // The pool sits around the request up to its 200, so a stream fails over before any event is sent.
      return geminiEventStream(await runFor(call.request)(target => client.stream({ url: target.url(call.model, 'streamGenerateContent?alt=sse'), body: vertexRequest(call.request, target), model: call.model, auth: target.auth, signal: call.signal }, events => events.map(asResponse)), call.model))
    },
    async countTokens (call) {
      // Vertex's CountTokensRequest has no generateContentRequest: its contents, system instruction and tools sit at the top.
      const nested = call.request.generateContentRequest as GeminiRequest | undefined
      const from = nested !== null && typeof nested === 'object' ? nested : call.request
      const body: GeminiRequest = { contents: contentsToCount(call.request) }
      if (from.systemInstruction !== undefined) body.systemInstruction = from.systemInstruction
      if (from.tools !== undefined) body.tools = from.tools
      const answer = await run(target => client.json({ url: target.url(call.model, 'countTokens'), body: vertexRequest(body, target), model: call.model, auth: target.auth, signal: call.signal }), call.model) as Record<string, unknown>
      return { ...answer, totalTokens: typeof answer.totalTokens === 'number' ? answer.totalTokens : 0 }
    },
    async ready () {
      try {
        await options.ready?.()
        return { ok: true }
      } catch (err) {
        return { ok: false, reason: (err as Error).message }
      }
    },
    async close () {
      await client.close()
    },
  }
}

/**
 * The Vertex AI backend: one credential, and its locations as a pool (one location is a pool of one, which never
 * cools down). Credentials load on the first call. createBackend refuses several locations without a project or
 * with vertexEndpoint (lib/option-rules.ts vertexLocationProblem).
 */
export function createVertexBackend (options: VertexBackendOptions): Backend {
  const listed = options.projectId === undefined ? [] : vertexLocationList(options.vertexLocation ?? '')
  const locations = listed.length > 0 ? listed : [DEFAULT_VERTEX_LOCATION]
  const auth = adcAuth(options)
  const targets = new Map(locations.map(location => [location, vertexTarget({ ...options, vertexLocation: location }, auth)]))
  const client = createUpstreamClient(options)
  // A set-aside location is back when a token comes and its host answers the publisher model list again.
  const pool = createCredentialPool([...targets].map(([name, value]) => ({ name, value })), options, async target => {
    await target.ready()
    await client.json({ url: `${target.modelList as string}?pageSize=1`, method: 'GET', auth: target.auth })
  })
  const first = pool.all()[0].value
  // A location the model file does not list for a model is skipped for its calls (docs/model-proxy.md, "Gemini 4").
  const servingLocations = (model: string | undefined): ((location: string) => boolean) | undefined => {
    const serving = model === undefined || options.projectId === undefined ? undefined : options.modelLocations?.(model)
    if (serving === undefined) return undefined
    if (!locations.some(l => serving.includes(l))) {
      throw fail('MODEL_NOT_FOUND', `The model \`${model as string}\` is served by Vertex only from ${serving.join(', ')}, and none of those is configured (GOOGLE_CLOUD_LOCATION: ${locations.join(', ')})`)
    }
    return location => serving.includes(location)
  }
  const backend = createVertexBackendOn(
    async (attempt, model) => await pool.run(attempt, { model, only: servingLocations(model) }),
    {
      ...options,
      // Express mode (no project) has no cached contents.
      sites: options.projectId === undefined ? undefined : { locations, target: location => targets.get(location), run: (location, attempt, model) => pool.runOn(location, attempt, { model }) },
      ready: async () => {
        await first.ready()
        await pool.reprobe()
        const state = pool.ready()
        if (!state.ok) throw new Error(state.reason)
      },
    },
  )
  return {
    ...backend,
    async listModels () {
      const listed = new Map<string, ListedModel>()
      const failed: ModelListing['failed'] = []
      await Promise.all(pool.all().map(async ({ name, value }) => {
        try {
          const models = await listPublisherModels(client, value)
          pool.setModels(name, new Set(models.map(m => m.id)))
          for (const m of models) listed.set(m.id, m)
        } catch (err) {
          failed.push({ credential: name, reason: err instanceof Error ? err.message : String(err) })
        }
      }))
      if (failed.length === locations.length) throw fail('UPSTREAM_UNAVAILABLE', `The publisher model list failed in every location: ${failed.map(f => `${f.credential}: ${f.reason}`).join('; ')}`)
      return { models: [...listed.values()], failed }
    },
    async close () {
      await backend.close()
      await client.close()
    },
  }
}

/** Most pages of the publisher model list read in one discovery round. */
const MAX_LIST_PAGES = 20

/** Google's publisher models (publishers.models.list: `publisherModels[].name` = `publishers/google/models/{id}`); the list gives no token limits. */
async function listPublisherModels (client: ReturnType<typeof createUpstreamClient>, target: VertexTarget): Promise<ListedModel[]> {
  const models: ListedModel[] = []
  let token: string | undefined
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const query = new URLSearchParams({ pageSize: '1000' })
    if (token !== undefined) query.set('pageToken', token)
    const answer = await client.json({ url: `${target.modelList as string}?${query.toString()}`, method: 'GET', auth: target.auth }) as { publisherModels?: unknown, nextPageToken?: unknown }
    for (const raw of Array.isArray(answer.publisherModels) ? answer.publisherModels : []) {
      const name = (raw as { name?: unknown } | null)?.name
      const m = typeof name === 'string' ? /^publishers\/google\/models\/([^/@]+)$/.exec(name) : null
      if (m !== null) models.push({ id: m[1] })
    }
    token = typeof answer.nextPageToken === 'string' && answer.nextPageToken !== '' ? answer.nextPageToken : undefined
    if (token === undefined) break
  }
  return models
}
