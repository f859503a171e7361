// The public Gemini API backend: an API key, no envelope, no onboarding. A sanctioned path to the same
// models with the same client-facing features as the Code Assist backend.
import { geminiEventStream } from './backend.ts'
import type { Backend, EmbedResult, ForwardRequest, ForwardResponse, GeminiResponse, ListedModel, ModelListing } from './backend.ts'
import { fail } from '../../errors.ts'
import { createUpstreamClient } from './client.ts'
import type { UpstreamAuth, UpstreamClient } from './client.ts'
import { contentsToCount } from './count-tokens.ts'
import { forwardTo } from './forward.ts'
import type { UpstreamClientOptions } from './options.ts'
import { createCredentialPool } from './credential-pool.ts'
import type { CredentialPool, PoolCall } from './credential-pool.ts'
import { createResourcePins, INTERACTION_CREATE, interactionNamed, resourcesInAnswer, resourcesInInteraction, resourcesInPath, resourcesInRequest, uploadSession } from './resource-pins.ts'
import { createSseDecoder } from './sse.ts'
import type { ResourcePins } from './resource-pins.ts'

import { DEFAULT_GEMINI_API_ENDPOINT } from '../../option-rules.ts'
export { DEFAULT_GEMINI_API_ENDPOINT } from '../../option-rules.ts'

export interface GeminiApiBackendOptions extends UpstreamClientOptions {
  /** API key (GEMINI_API_KEY), sent as x-goog-api-key; several separated by commas are a pool (`key#1`, `key#2`, ...). Default unset. */
  apiKey?: string
  /** Base URL. Default `https://generativelanguage.googleapis.com` (GEMINI_API_ENDPOINT). */
  geminiApiEndpoint?: string
}

/** The keys of a GEMINI_API_KEY value: one, or several separated by commas (blanks ignored). */
export function apiKeyList (value: string | undefined): string[] {
  return (value ?? '').split(',').map(k => k.trim()).filter(k => k !== '')
}

function asResponse (value: unknown): GeminiResponse {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value as GeminiResponse : { candidates: [] }
}

/** A batchEmbedContents answer (https://ai.google.dev/api/embeddings#method:-models.batchembedcontents): `{embeddings:[{values}]}`, one per request. */
function embedResult (answer: Record<string, unknown>, expected: number): EmbedResult {
  const list = Array.isArray(answer.embeddings) ? answer.embeddings as unknown[] : []
  const embeddings = list.map(e => {
    const values = (e as { values?: unknown } | null)?.values
    return { values: Array.isArray(values) ? values.filter((v): v is number => typeof v === 'number') : [] }
  })
  if (embeddings.length !== expected) throw fail('UPSTREAM_ERROR', `The upstream answered ${embeddings.length} embeddings for ${expected} inputs`)
  const usage = answer.usageMetadata as { promptTokenCount?: unknown } | undefined
  return { embeddings, promptTokens: typeof usage?.promptTokenCount === 'number' ? usage.promptTokenCount : undefined }
}

/** Largest forwarded answer read for the resource names it creates; a longer one passes on unread. */
const MAX_CREATE_ANSWER_BYTES = 1024 * 1024
/** The models.list page size asked for (the API's largest). */
const LIST_PAGE_SIZE = 1000
/** Most models.list pages read in one discovery round, against a list that never ends. */
const MAX_LIST_PAGES = 20

/** Runs a call through the credential that created a resource it names, else through any credential of the pool. */
function through<R> (pool: CredentialPool<UpstreamAuth>, pins: ResourcePins, resources: string[], call: PoolCall, attempt: (auth: UpstreamAuth, name: string) => Promise<R>): Promise<R> {
  const pinned = pins.credentialFor(resources)
  return pinned === undefined ? pool.run(attempt, call) : pool.runOn(pinned, auth => attempt(auth, pinned), call)
}

/** A models.list entry (https://ai.google.dev/api/models#Model) as discovery reads it. */
function listedModel (raw: unknown): ListedModel | undefined {
  if (raw === null || typeof raw !== 'object') return undefined
  const m = raw as Record<string, unknown>
  if (typeof m.name !== 'string' || !m.name.startsWith('models/')) return undefined
  return {
    id: m.name.slice('models/'.length),
    inputTokenLimit: typeof m.inputTokenLimit === 'number' ? m.inputTokenLimit : undefined,
    outputTokenLimit: typeof m.outputTokenLimit === 'number' ? m.outputTokenLimit : undefined,
    thinking: m.thinking === true,
    methods: Array.isArray(m.supportedGenerationMethods) ? m.supportedGenerationMethods.filter((x): x is string => typeof x === 'string') : undefined,
  }
}

/** Every model one key's models.list names, page by page. */
async function listWith (client: UpstreamClient, base: string, auth: UpstreamAuth, pageSize = LIST_PAGE_SIZE): Promise<ListedModel[]> {
  const models: ListedModel[] = []
  let token: string | undefined
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const query = new URLSearchParams({ pageSize: String(pageSize) })
    if (token !== undefined) query.set('pageToken', token)
    const answer = await client.json({ url: `${base}/v1beta/models?${query.toString()}`, method: 'GET', auth }) as { models?: unknown, nextPageToken?: unknown }
    for (const raw of Array.isArray(answer.models) ? answer.models : []) {
      const model = listedModel(raw)
      if (model !== undefined) models.push(model)
    }
    token = typeof answer.nextPageToken === 'string' && answer.nextPageToken !== '' ? answer.nextPageToken : undefined
    if (token === undefined) break
  }
  return models
}

/**
 * The answer with its body passed on as it arrives, and `done` called with the whole body once it ended (undefined
 * past MAX_CREATE_ANSWER_BYTES): the client reads a create's answer before it names the resource, so the pin is
 * in place by then.
 */
function watchedBody (body: AsyncIterable<Uint8Array>, done: (bytes: Buffer | undefined) => void): AsyncIterable<Uint8Array> {
  return (async function * watched () {
    const kept: Uint8Array[] = []
    let size = 0
    for await (const chunk of body) {
      size += chunk.length
      if (size <= MAX_CREATE_ANSWER_BYTES) kept.push(chunk)
      yield chunk
    }
    done(size <= MAX_CREATE_ANSWER_BYTES ? Buffer.concat(kept) : undefined)
  })()
}

/** A streamed interaction's events passed on as they arrive, its id pinned from the first event naming it, before that event goes on. */
function pinnedEvents (body: AsyncIterable<Uint8Array>, pin: (resource: string) => void): AsyncIterable<Uint8Array> {
  return (async function * watched () {
    const decoder = createSseDecoder()
    let pinned = false
    for await (const chunk of body) {
      if (!pinned) {
        for (const data of decoder.push(chunk)) {
          let named: string | undefined
          try {
            named = interactionNamed(JSON.parse(data))
          } catch {}
          if (named !== undefined) {
            pin(named)
            pinned = true
            break
          }
        }
      }
      yield chunk
    }
  })()
}

/** Pins what a forwarded answer created (an upload session, a file, a cache, a batch, an interaction) to the credential that answered. */
function pinCreated (answer: ForwardResponse, req: ForwardRequest, credential: string, pins: ResourcePins): ForwardResponse {
  if (answer.status < 200 || answer.status >= 300) return answer
  if (req.method === 'POST' && INTERACTION_CREATE.test(req.path)) {
    const pin = (resource: string): void => pins.pin(resource, credential)
    if ((answer.headers['content-type'] ?? '').startsWith('text/event-stream')) return { ...answer, body: pinnedEvents(answer.body, pin) }
    return {
      ...answer,
      body: watchedBody(answer.body, bytes => {
        let named: string | undefined
        try {
          named = bytes === undefined ? undefined : interactionNamed(JSON.parse(bytes.toString('utf8')))
        } catch {}
        if (named !== undefined) pin(named)
      }),
    }
  }
  const upload = answer.headers['x-goog-upload-url']
  const session = upload === undefined ? null : new URL(upload, 'http://upload.invalid').searchParams.get('upload_id')
  if (session !== null && session !== '') pins.pin(uploadSession(session), credential)
  if (req.method !== 'POST' || !(answer.headers['content-type'] ?? '').includes('json')) return answer
  return {
    ...answer,
    body: watchedBody(answer.body, bytes => {
      if (bytes === undefined) return
      let parsed: unknown
      try {
        parsed = JSON.parse(bytes.toString('utf8'))
      } catch {
        return
      }
      for (const resource of resourcesInAnswer(parsed)) pins.pin(resource, credential)
    }),
  }
}

/**
 * The resources a cache creation's body names (its contents' files), or the interaction a new one continues, read
 * again from the one chunk the route already read whole.
 */
async function withBodyResources (req: ForwardRequest): Promise<{ req: ForwardRequest, resources: string[] }> {
  const interaction = INTERACTION_CREATE.test(req.path)
  if (req.method !== 'POST' || req.body === undefined || (!interaction && !/\/cachedContents\/?$/.test(req.path))) return { req, resources: [] }
  const chunks: Uint8Array[] = []
  for await (const chunk of req.body) chunks.push(chunk)
  const bytes = Buffer.concat(chunks)
  let parsed: unknown
  try {
    parsed = JSON.parse(bytes.toString('utf8'))
  } catch {}
  return { req: { ...req, body: (async function * again () { yield bytes })() }, resources: interaction ? resourcesInInteraction(parsed) : resourcesInRequest(parsed) }
}

export function createGeminiApiBackend (options: GeminiApiBackendOptions): Backend {
  const base = (options.geminiApiEndpoint ?? DEFAULT_GEMINI_API_ENDPOINT).replace(/\/+$/, '')
  const keys = apiKeyList(options.apiKey)
  const client = createUpstreamClient(options)
  // A set-aside key is back when models.list answers through it again.
  const pool = createCredentialPool(keys.map((key, i): { name: string, value: UpstreamAuth } => ({
    name: `key#${i + 1}`,
    value: { headers: async () => ({ 'x-goog-api-key': key }) },
  })), options, async auth => { await client.json({ url: `${base}/v1beta/models?pageSize=1`, method: 'GET', auth }) })
  const pins = createResourcePins({ now: options.now })
  const url = (model: string, action: string): string => `${base}/v1beta/models/${encodeURIComponent(model)}:${action}`
  const run = <R>(request: unknown, model: string, attempt: (auth: UpstreamAuth) => Promise<R>): Promise<R> => through(pool, pins, resourcesInRequest(request), { model }, attempt)

  return {
    name: 'gemini-api',
    async generate (call) {
      // The public API has no session_id; sending one would be an unknown field (400).
      return asResponse(await run(call.request, call.model, auth => client.json({ url: url(call.model, 'generateContent'), body: call.request, model: call.model, auth, signal: call.signal, expectObject: true })))
    },
    async stream (call) {
      return geminiEventStream(await run(call.request, call.model, auth => client.stream({ url: url(call.model, 'streamGenerateContent?alt=sse'), body: call.request, model: call.model, auth, signal: call.signal }, events => events.map(asResponse))))
    },
    async countTokens (call) {
      const nested = call.request.generateContentRequest
      const body = nested !== null && typeof nested === 'object'
        ? { generateContentRequest: { ...nested, model: `models/${call.model}`, contents: contentsToCount(call.request) } }
        : { contents: contentsToCount(call.request) }
      const answer = await run(call.request, call.model, auth => client.json({ url: url(call.model, 'countTokens'), body, model: call.model, auth, signal: call.signal })) as Record<string, unknown>
      return { ...answer, totalTokens: typeof answer.totalTokens === 'number' ? answer.totalTokens : 0 }
    },
    // A credential from the pool per forwarded call (the one that created a resource the call names); the upstream's
    // answer, a 429 included, goes back as it is: a streamed body cannot be sent twice, so there is no failover here.
    async forward (given) {
      const { req, resources } = await withBodyResources(given)
      const named = resourcesInPath(req.path, req.query)
      const model = /\/models\/([^/:]+)/.exec(req.path)?.[1] ?? req.bodyModel
      return await through(pool, pins, [...named, ...resources], { model }, async (auth, name) => pinCreated(await forwardTo(client, base, auth)(req), req, name, pins))
    },
    async embed (call) {
      const requests = call.requests.map(r => ({ ...r, model: `models/${call.model}` }))
      const answer = await pool.run(auth => client.json({ url: url(call.model, 'batchEmbedContents'), body: { requests }, model: call.model, auth, signal: call.signal }), { model: call.model }) as Record<string, unknown>
      return embedResult(answer, requests.length)
    },
    async listModels (): Promise<ModelListing> {
      const listed = new Map<string, ListedModel>()
      const failed: ModelListing['failed'] = []
      await Promise.all(pool.all().map(async ({ name, value }) => {
        try {
          const models = await listWith(client, base, value)
          pool.setModels(name, new Set(models.map(m => m.id)))
          for (const m of models) listed.set(m.id, m)
        } catch (err) {
          failed.push({ credential: name, reason: err instanceof Error ? err.message : String(err) })
        }
      }))
      if (failed.length === keys.length) throw fail('UPSTREAM_UNAVAILABLE', `models.list failed through every key: ${failed.map(f => `${f.credential}: ${f.reason}`).join('; ')}`)
      return { models: [...listed.values()], failed }
    },
    async ready () {
      if (keys.length === 0) return { ok: false, reason: 'GEMINI_API_KEY is not set' }
      await pool.reprobe()
      return pool.ready()
    },
    async close () {
      await client.close()
    },
  }
}
