// The upstream seen by the proxy routes: one interface, two implementations
// (Code Assist with OAuth user credentials; the public Gemini API with an API key).
// Requests and responses are in the public Gemini API shape; the Code Assist backend
// adds and removes its envelope ({model, project, user_prompt_id, request} / {response, traceId}).
import type { PushQueue, PushQueueFlow, PushSink } from './push-queue.ts'

import type { GeminiAnswer, GeminiRequest } from '../gemini/hub.ts'

export type { GeminiRequest }
/** A GenerateContentResponse in the public Gemini API shape, typed by the hub (lib/proxy/gemini/hub.ts). */
export type GeminiResponse = GeminiAnswer

export interface UpstreamCall {
  /** Base model id, no `models/` prefix and no variant suffix, e.g. gemini-2.5-pro. */
  model: string
  request: GeminiRequest
  /** Aborted when the client goes away: the upstream call is cancelled. */
  signal?: AbortSignal
  /** Optional conversation id forwarded as session_id (Code Assist). */
  sessionId?: string
}

// The built-in backends' streams also keep their events as they arrived, every event of one upstream read
// together, and can hand them to a sink as they arrive, so a route can translate and send them with one write
// and no promise per event. That is a performance detail of this package, not part of the Backend contract: it
// sits under a private symbol, and any AsyncIterable<GeminiResponse> will do.
const BATCHES = Symbol('gatehouse.eventBatches')

interface BatchedEvents extends AsyncIterable<GeminiResponse> {
  readonly [BATCHES]: PushQueue<GeminiResponse[]>
}

/** A stream of the events in `batches` (each batch non-empty), one at a time; eventBatches and attachEventBatches give the batches back. Read it one way, once. */
export function geminiEventStream (batches: PushQueue<GeminiResponse[]>): AsyncIterable<GeminiResponse> {
  const stream: BatchedEvents = {
    [BATCHES]: batches,
    async * [Symbol.asyncIterator] () {
      for await (const batch of batches) yield * batch
    },
  }
  return stream
}

/**
 * The batches of a stream's events: as they arrived for a stream of geminiEventStream (handed over as they are:
 * one generator less for every batch to pass through), else one event per batch.
 */
export function eventBatches (events: AsyncIterable<GeminiResponse>): AsyncIterable<GeminiResponse[]> {
  const batches = (events as Partial<BatchedEvents>)[BATCHES]
  if (batches !== undefined) return batches
  return (async function * oneByOne () {
    for await (const event of events) yield [event]
  })()
}

/** For a stream of geminiEventStream: `sink` gets its batches as they arrive (see PushQueue.attach); undefined for any other stream. */
export function attachEventBatches (events: AsyncIterable<GeminiResponse>, sink: PushSink<GeminiResponse[]>): PushQueueFlow | undefined {
  return (events as Partial<BatchedEvents>)[BATCHES]?.attach(sink)
}

export interface ReadyState {
  ok: boolean
  /** Why not ready (credentials unusable, project not resolved, ...). */
  reason?: string
}

/** A native request passed through (lib/proxy/native/pass-through.ts): path and headers already checked. */
export interface ForwardRequest {
  method: string
  /** The path under the backend's API (`/v1beta/cachedContents`, `/upload/v1beta/files`), as received: checked, not decoded. */
  path: string
  /** The query without the client's key, encoded (`?a=b`), or ''. */
  query: string
  /** Only headers that are safe to pass on; the backend adds its own credentials. */
  headers: Record<string, string>
  /** The body as it arrives, never buffered; undefined when there is none. */
  body?: AsyncIterable<Uint8Array>
  signal?: AbortSignal
  /** The base id of the model a cache creation or an interaction names in its body, already resolved and allowed (lib/proxy/native/pass-through.ts, lib/proxy/interactions/surface.ts). */
  bodyModel?: string
}

/** The upstream's answer, as it arrives. */
export interface ForwardResponse {
  status: number
  /** Header names lower-cased; a repeated header joined with ', '. */
  headers: Record<string, string>
  body: AsyncIterable<Uint8Array>
  /** The base URL the upstream's own URLs in answers start with (resumable upload URLs), to point them at the proxy instead. */
  baseUrl: string
}

/** Most inputs one request may embed: one batchEmbedContents call. */
export const MAX_EMBEDDING_INPUTS = 100

/** One embedContent request per input, for one model (POST /v1/embeddings). */
export interface EmbedCall {
  model: string
  /** EmbedContentRequests (`{content, taskType?, title?, outputDimensionality?}`), answered in order. */
  requests: GeminiRequest[]
  signal?: AbortSignal
}

export interface EmbedResult {
  /** One per request, in order. */
  embeddings: Array<{ values: number[] }>
  /** Input tokens, when the upstream says. */
  promptTokens?: number
}

export interface Backend {
  /** Which upstream this is (`gemini-api`, `vertex`, `code-assist`, ...), for messages such as a pass-through 404; one of those three also limits the catalog to the models the model file lists for it (`backends`). Default none. */
  readonly name?: string
  /**
   * Passes any other native request through with the backend's own credentials (the Gemini API's embedContent,
   * cachedContents, files, batches; Vertex answers embedContent and batchEmbedContents through embed). Rejects like generate when the upstream cannot be reached; any answer,
   * errors included, resolves as it is. Without it those paths answer 404 naming the backend.
   */
  forward? (req: ForwardRequest): Promise<ForwardResponse>
  /** Embeddings for several inputs (batchEmbedContents or the backend's equivalent). Without it POST /v1/embeddings answers 404. */
  embed? (call: EmbedCall): Promise<EmbedResult>
  /** Unary generateContent. Throws GatehouseError (UPSTREAM_*) with upstreamStatus/upstreamBody/retryAfter on upstream errors. */
  generate (call: UpstreamCall): Promise<GeminiResponse>
  /**
   * streamGenerateContent. Resolves once the upstream answered 200 (so errors are known before any byte is
   * sent to the client) with the events, each one GeminiResponse; rejects like generate otherwise.
   * Iteration throws GatehouseError UPSTREAM_ERROR/UPSTREAM_TIMEOUT if the upstream fails mid-stream.
   */
  stream (call: UpstreamCall): Promise<AsyncIterable<GeminiResponse>>
  /** countTokens for `{contents}`; answers `{totalTokens}`. */
  countTokens (call: UpstreamCall): Promise<{ totalTokens: number } & Record<string, unknown>>
  /**
   * Reads the upstream's own model list through every pooled credential (lib/proxy/models/discovery.ts calls it) and
   * routes each model only to the credentials that list it. Rejects when no credential answered. Without it (Code
   * Assist has no model list) there is no discovery.
   */
  listModels? (): Promise<ModelListing>
  /** Readiness: credentials usable and project resolved (may trigger discovery once). */
  ready (): Promise<ReadyState>
  close (): Promise<void>
}

export type CredentialState = 'ready' | 'cooling' | 'set_aside'

/** One credential as metrics and logs see it: its display name, never the secret. */
export interface CredentialStatus {
  name: string
  state: CredentialState
  /** Why it was set aside (the upstream's message). */
  reason?: string
  /** While cooling: when it is handed out again for the first of its cooling models (ms since the epoch). */
  until?: number
  /** While cooling: the models it cools down for ('' for calls without a model) and until when; other models still use it. */
  models?: Array<{ model: string, until: number }>
}

/** A model as the upstream's own list describes it (Gemini API models.list, Vertex publisher models). */
export interface ListedModel {
  /** Base id, no `models/` prefix. */
  id: string
  inputTokenLimit?: number
  outputTokenLimit?: number
  /** The list says the model thinks. */
  thinking?: boolean
  /** Generation methods, when the list says (generateContent, embedContent, ...). */
  methods?: string[]
}

/** One discovery round: the models listed per credential that answered; credentials that failed keep their last list. */
export interface ModelListing {
  /** Every model listed by at least one credential. */
  models: ListedModel[]
  /** Credentials whose list call failed, with why. */
  failed: Array<{ credential: string, reason: string }>
}

/** Observes upstream calls for metrics; every method optional. */
export interface ProxyObserver {
  upstreamCall? (model: string, status: number, seconds: number): void
  streamOpened? (): void
  streamClosed? (): void
  /** Events written to a streaming client, counted per write (events that arrived together go out together). */
  streamChunk? (events: number): void
  /** A credential of a pool cooled down after a 429 (by its display name: `key#2`, a file name). */
  credentialCooldown? (name: string): void
  /** A credential pool was created: `statuses` tells its credentials' states whenever asked (for gauges). */
  credentialPool? (statuses: () => CredentialStatus[]): void
  /** A discovery round ended: how many models the upstream lists, and which of them the model file lacks (served with defaults). */
  modelsDiscovered? (listed: number, unknown: readonly string[]): void
  /** A discovery round failed as a whole; the last good list stays. */
  modelDiscoveryFailed? (): void
}
