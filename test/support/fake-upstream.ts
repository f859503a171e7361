// A fake of everything the proxy talks to, on one local HTTP server (127.0.0.1, free port):
//
//   Code Assist   POST /v1internal:generateContent, :streamGenerateContent?alt=sse, :countTokens,
//                 :loadCodeAssist, :onboardUser;  GET /v1internal/operations/...
//   Gemini API    POST /v1beta/models/{model}:generateContent, :streamGenerateContent?alt=sse, :countTokens
//   Vertex AI     POST /v1/projects/{p}/locations/{l}/publishers/google/models/{model}:{same calls}, and express
//                 mode's /v1/publishers/google/models/{model}:{same calls} (test/support/fake-vertex.ts); also :predict
//                 (embeddings: values [content length, instance index, 0.5], statistics.token_count the words) and
//                 :embedContent (values [text length, 0, 0.5] cut to embedContentConfig.outputDimensionality,
//                 usageMetadata.promptTokenCount the words)
//                 Context caching: /v1/projects/{p}/locations/{l}/cachedContents (POST create, GET list with pageSize /
//                 pageToken) and .../cachedContents/{id} (GET, PATCH, DELETE), kept per location in fake.caches; a create
//                 needs `model` as projects/{p}/locations/{l}/publishers/google/models/{m} of the same path (else 400),
//                 and a Vertex generate/stream whose `cachedContent` is not the full name of a cache of its own
//                 location gets 400 (call 'cachedContents')
//   Interactions  POST /v1beta/interactions (streamed or not), GET/DELETE /v1beta/interactions/{id}, POST .../{id}/cancel,
//                 kept in fake.interactions (call 'interactions'; test/support/fake-interactions.ts); with fake.keyScoped
//                 each belongs to the key that created it
//   Gemini API resources: files and uploads, cachedContents, batches, long-running operations, kept in fake.gemini
//                 (call 'resources'; test/support/fake-gemini-resources.ts)
//   OAuth         POST /token (form-encoded refresh_token grant; issues fake-access-1, -2, ...)
//   Model lists   GET /v1beta/models (Gemini API models.list, pageSize / pageToken, at most 1000 a page) and
//                 GET /v1beta1/publishers/google/models (Vertex, bearer token or express key), from fake.listedModels
//                 (fake.keyModels narrows one key's list); call 'listModels'
//                 GET /v1beta/models/{m} and /v1beta1/publishers/google/models/{m}: that entry of the same list, else
//                 Google's 404; call 'getModel'
//   Files, caches POST /upload/v1beta/files, GET /v1beta/files/{id} (call 'files'), POST/GET /v1beta/cachedContents
//                 (call 'cachedContents'): each owned by the key that created it (fake.owned); a Gemini API generate,
//                 stream or countTokens naming a file or cache another key created (or none) gets Google's bare 403
//
// Usage:
//
//   const fake = await startFakeUpstream()          // t.teardown(() => fake.close()); { record: false } for benchmarks
//   backend options: { codeAssistEndpoint: fake.url, geminiApiEndpoint: fake.url }, credentials with token_uri: fake.tokenUri
//
//   fake.requests                                     every request: { api, call, method, path, query, headers, body, model, closed }
//   fake.calls('generateContent')                     the requests of one call (both APIs), in order
//   fake.last('streamGenerateContent')                the latest one
//   await fake.waitFor('streamGenerateContent', n?)   until n (default 1) such requests have arrived
//   await request.closed                              'finished' (the fake completed its answer) or 'aborted' (the client hung up first)
//
//   fake.reply(call, ...replies)       one-shot answers for the next requests of that call (FIFO), then the default again
//   fake.setDefault(call, reply)       replaces the default answer of a call
//   fake.setDefault(call, reply, model)  ...of a call naming that model only (Code Assist envelope or Gemini API path)
//   fake.acceptedTokens = new Set(['x'])   when set, Code Assist calls with any other bearer token get 401 (issued tokens are added)
//   fake.apiKey = 'k'                  when set, Gemini API calls with another x-goog-api-key get 400 API_KEY_INVALID
//   fake.keyReplies.set('k', reply)    every Gemini API call with that x-goog-api-key gets this answer (a pool's key that is rate limited, disabled, ...)
//                                      (Vertex: with acceptedTokens, project paths need one of those bearer tokens,
//                                      express paths this key)
//   fake.locationReplies.set('l', reply)  every Vertex call naming location l in its path gets this answer (a pool's location)
//   fake.bearerReplies.set('t', reply)    every Code Assist generate/stream/countTokens call with bearer token t gets this answer
//                                         (a pool's credential file; setup calls such as loadCodeAssist are answered as usual)
//   fake.tokenGate = form => reply     when set, a token request it answers with a reply is refused with that reply
//   fake.tokenExpiresIn = 3599         expires_in of issued tokens
//   fake.caches                        Vertex cached contents by full name (projects/p/locations/l/cachedContents/id)
//   fake.now = () => date              when set, a generate/stream/countTokens naming a model on or after its shutdown date
//                                      in fake.shutdowns (key `api model`, value YYYY-MM-DD) gets 404 NOT_FOUND, and the
//                                      model lists leave it out from that date
//   fake.decodeTokens = n              when set, a Gemini 4 generate/stream answered by default writes an answer of n
//                                      output tokens (the word "w" each) by Google's long-decode rules: one call gives at
//                                      most its per-call cap (65,536 streamed; 32,768 non-streamed on Argon and Carbon),
//                                      maxOutputTokens (default that cap) bounds every call together, and a call that
//                                      stops at its cap with tokens left ends with finishReason CONTINUATION and a
//                                      continuationToken the next request sends back at its top level
// Gemini 4 rules, always: a Gemini 4 generate/stream gets 400 INVALID_ARGUMENT for a thinkingBudget, a MINIMAL level
// (XHIGH too on Argon and Carbon), presencePenalty/frequencyPenalty or candidateCount > 1, a cachedContents create
// naming a Gemini 4 model gets 400 INVALID_ARGUMENT (no explicit caching), and on Vertex a location other than
// global, us and eu gets 404 NOT_FOUND (docs/model-proxy.md, "Gemini 4").
//   fake.gemini                        the Gemini API's files, caches, batches and operations (fake-gemini-resources.ts)
//   fake.reset()                       forgets requests and queued replies, restores defaults
//
// System parameters, as Google's front end applies them to every Gemini API JSON answer (not a stream's events):
// `fields`/`$fields` masks, `alt=proto` protobuf bytes and `callback`/`$callback` JSONP (fake-system-parameters.ts).
//
// Thought signatures, as Gemini 3 checks them (docs/upstream-protocol.md, "Thought signatures"): a generate or
// stream call to a gemini-3* model whose current turn (every step after the last user content that is not only
// functionResponse parts) has a model step whose first functionCall part carries no thoughtSignature gets 400
// INVALID_ARGUMENT with Google's message, before any scripted reply is taken. fake.signatureChecks = false turns it off.
//
// A scripted model: fake.script = rec => reply | undefined, when set, answers each generate or stream call that passed
// the rules above (auth, signatures, shutdowns, Gemini 4) and has no queued reply; undefined falls back to the default.
//
// A FakeReply (all fields optional): status, headers, body (JSON), text (literal body), chunks (stream events),
// sse (literal SSE text), multiLine / crlf / comments (how events are framed), chunkDelayMs, holdAfter, delayMs,
// stall ('headers': never answer; 'body': headers, then nothing), dropAfter (cut the connection after N
// events). A 200 reply without body/text/chunks/sse gets the call's default answer (so `{ delayMs: 50 }`
// delays the default); a non-200 one without a body gets a Google error body for that status.
// Generate and stream bodies are given in the public Gemini shape: on the Code Assist paths the fake
// wraps each one as {response, traceId} unless `raw` is set.
//
// Builders: geminiResponse({text, thought, functionCalls, finishReason, usage}), googleError(status, message, opts),
// googleErrors.* (Google's own credential-fault, quota and missing-resource answers, ErrorInfo reason/domain/metadata
// included), listedModel(id, spec),
// errorReply(status, opts) (opts.array for array-shaped errors, opts.retryDelay for RetryInfo),
// streamReply(chunks, framing), invalidGrant(), and the setup answers currentTier(project or null), needsOnboarding(tierId),
// validationRequired(url), operation({done, project, name}).
import http from 'node:http'
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { geminiResourceReply, isGeminiResourcePath, newGeminiResources } from './fake-gemini-resources.ts'
import type { GeminiResources } from './fake-gemini-resources.ts'
import { interactionReply, isInteractionsPath, newFakeInteractions } from './fake-interactions.ts'
import { shapeAnswer } from './fake-system-parameters.ts'
import type { FakeInteractions } from './fake-interactions.ts'

export type FakeCall = 'generateContent' | 'streamGenerateContent' | 'countTokens' | 'predict' | 'embedContent' | 'loadCodeAssist' | 'onboardUser' | 'getOperation' | 'cachedContents' | 'listModels' | 'getModel' | 'files' | 'resources' | 'interactions' | 'token' | 'other'

export interface FakeRequest {
  api: 'code-assist' | 'gemini-api' | 'vertex' | 'oauth' | 'unknown'
  call: FakeCall
  method: string
  /** Path without the query string. */
  path: string
  query: Record<string, string>
  headers: IncomingHttpHeaders
  /** Parsed JSON, the form fields of a token request, or the raw text. */
  body: any
  /** Code Assist: the envelope's model; Gemini API and Vertex: the model in the path. */
  model?: string
  /** Vertex: the project and location in the path (both unset in express mode). */
  project?: string
  location?: string
  closed: Promise<'finished' | 'aborted'>
}

export interface FakeReply {
  status?: number
  headers?: Record<string, string>
  body?: unknown
  /** Do not wrap in the Code Assist envelope. */
  raw?: boolean
  text?: string
  chunks?: unknown[]
  sse?: string
  multiLine?: boolean
  crlf?: boolean
  comments?: boolean
  chunkDelayMs?: number
  /** Events from this index on are never sent: the stream stays open until the client leaves (a model still generating). */
  holdAfter?: number
  delayMs?: number
  stall?: 'headers' | 'body'
  dropAfter?: number
}

export interface FakeUpstream {
  url: string
  tokenUri: string
  requests: FakeRequest[]
  acceptedTokens: Set<string> | undefined
  apiKey: string | undefined
  keyReplies: Map<string, FakeReply>
  locationReplies: Map<string, FakeReply>
  bearerReplies: Map<string, FakeReply>
  tokenExpiresIn: number
  tokenGate: ((form: Record<string, string>) => FakeReply | undefined) | undefined
  /** Access tokens issued by /token, in order. */
  issuedTokens: string[]
  /** Vertex cached contents by full resource name. */
  caches: Map<string, Record<string, unknown>>
  /** The clock of the shutdown dates; unset, no model is shut down. */
  now: (() => Date) | undefined
  /** Shutdown dates (YYYY-MM-DD) by `api model` (api: gemini-api, vertex, code-assist). */
  shutdowns: Map<string, string>
  /** Output tokens a Gemini 4 answer runs to (long decode); unset, the call's default answer. */
  decodeTokens: number | undefined
  /** What models.list (Gemini API) and the publisher model list (Vertex) answer: Gemini API Model entries. */
  listedModels: Array<Record<string, unknown>>
  /** Gemini API: the model ids models.list answers through one key (its project's models); other keys get listedModels. */
  keyModels: Map<string, string[]>
  /** Gemini API files and caches (`files/x`, `cachedContents/y`) by name, with the key that created them: only that key may use them. */
  owned: Map<string, string>
  /**
   * Gemini API files and caches belong to the key that created them (`owned`, the pool's resource pins); off, they
   * are the one project's resources of `gemini` (fake-gemini-resources.ts). Default false.
   */
  keyScoped: boolean
  /** The Gemini API's files, caches, batches and operations. */
  gemini: GeminiResources
  /** The Gemini API's stored interactions (fake-interactions.ts). */
  interactions: FakeInteractions
  /** Refuse Gemini 3 turns whose function calls lost their thought signature (default true). */
  signatureChecks: boolean
  /** A model played by a function: the reply to a generate or stream call (see the header). Default unset. */
  script: ((rec: FakeRequest) => FakeReply | undefined) | undefined
  calls (call: FakeCall): FakeRequest[]
  last (call: FakeCall): FakeRequest | undefined
  waitFor (call: FakeCall, count?: number): Promise<FakeRequest>
  reply (call: FakeCall, ...replies: FakeReply[]): void
  setDefault (call: FakeCall, reply: FakeReply, model?: string): void
  reset (): void
  close (): Promise<void>
}

// ---- builders ---------------------------------------------------------------------------------

export interface ResponseSpec {
  text?: string
  thought?: string
  functionCalls?: Array<{ name: string, args?: Record<string, unknown>, thoughtSignature?: string }>
  finishReason?: string
  usage?: Record<string, number> | boolean
  modelVersion?: string
  responseId?: string
}

/** A GenerateContentResponse (public Gemini shape). `usage: true` adds a small usageMetadata. */
export function geminiResponse (spec: ResponseSpec = {}): Record<string, unknown> {
  const parts: Array<Record<string, unknown>> = []
  if (spec.thought !== undefined) parts.push({ text: spec.thought, thought: true })
  if (spec.text !== undefined) parts.push({ text: spec.text })
  for (const fc of spec.functionCalls ?? []) {
    parts.push({ functionCall: { name: fc.name, args: fc.args ?? {} }, ...(fc.thoughtSignature === undefined ? {} : { thoughtSignature: fc.thoughtSignature }) })
  }
  const candidate: Record<string, unknown> = { content: { role: 'model', parts }, index: 0 }
  if (spec.finishReason !== undefined) candidate.finishReason = spec.finishReason
  const out: Record<string, unknown> = { candidates: [candidate] }
  if (spec.usage === true) out.usageMetadata = { promptTokenCount: 5, candidatesTokenCount: 7, totalTokenCount: 12 }
  else if (spec.usage !== undefined && spec.usage !== false) out.usageMetadata = spec.usage
  if (spec.modelVersion !== undefined) out.modelVersion = spec.modelVersion
  if (spec.responseId !== undefined) out.responseId = spec.responseId
  return out
}

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
}

export interface GoogleErrorOptions {
  /** ErrorInfo reason (RATE_LIMIT_EXCEEDED, QUOTA_EXHAUSTED, VALIDATION_REQUIRED, ...). */
  reason?: string
  /** ErrorInfo domain. Default cloudcode-pa.googleapis.com. */
  domain?: string
  /** ErrorInfo metadata. Default {}. */
  metadata?: Record<string, string>
  /** RetryInfo delay, e.g. '0.2s'. */
  retryDelay?: string
  /** A Help link. */
  helpUrl?: string
  helpDescription?: string
  details?: unknown[]
}

/** A Google RPC error body `{error:{code, message, status, details}}`. */
export function googleError (status: number, message?: string, opts: GoogleErrorOptions = {}): Record<string, unknown> {
  const details: unknown[] = [...(opts.details ?? [])]
  if (opts.reason !== undefined) details.push({ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: opts.reason, domain: opts.domain ?? 'cloudcode-pa.googleapis.com', metadata: opts.metadata ?? {} })
  if (opts.retryDelay !== undefined) details.push({ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: opts.retryDelay })
  if (opts.helpUrl !== undefined) details.push({ '@type': 'type.googleapis.com/google.rpc.Help', links: [{ description: opts.helpDescription ?? 'Learn more', url: opts.helpUrl }] })
  const error: Record<string, unknown> = { code: status, message: message ?? `Fake upstream error ${status}`, status: STATUS_NAMES[status] ?? 'UNKNOWN' }
  if (details.length > 0) error.details = details
  return { error }
}

/** A non-200 answer with a Google error body; `array` wraps it as streaming calls sometimes do. */
export function errorReply (status: number, opts: GoogleErrorOptions & { message?: string, array?: boolean } = {}): FakeReply {
  const body = googleError(status, opts.message, opts)
  return { status, body: opts.array === true ? [body] : body }
}

const GEMINI_SERVICE = 'generativelanguage.googleapis.com'

/**
 * Google's own error answers, as the Gemini API and Vertex send them: status, `error.status`, message and an ErrorInfo
 * (`type.googleapis.com/google.rpc.ErrorInfo`) with the reason, domain and metadata of Google's `google.api.ErrorReason`
 * (domain googleapis.com). An expired key answers API_KEY_INVALID with its own message; a missing file or a file of
 * another project answers a bare 403 with no ErrorInfo.
 */
export const googleErrors = {
  apiKeyInvalid: (service = GEMINI_SERVICE): FakeReply => errorReply(400, { message: 'API key not valid. Please pass a valid API key.', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service } }),
  apiKeyExpired: (service = GEMINI_SERVICE): FakeReply => errorReply(400, { message: 'API key expired. Please renew the API key.', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service } }),
  consumerSuspended: (service = GEMINI_SERVICE, project = '123456789'): FakeReply => errorReply(403, {
    message: `Permission denied: Consumer 'api_key:AIzaFake' has been suspended.`, reason: 'CONSUMER_SUSPENDED', domain: 'googleapis.com', metadata: { service, consumer: `projects/${project}` },
  }),
  serviceDisabled: (service = GEMINI_SERVICE, project = '123456789'): FakeReply => {
    const activationUrl = `https://console.developers.google.com/apis/api/${service}/overview?project=${project}`
    const serviceTitle = service === GEMINI_SERVICE ? 'Generative Language API' : 'Vertex AI API'
    return errorReply(403, {
      message: `${serviceTitle} has not been used in project ${project} before or it is disabled. Enable it by visiting ${activationUrl} then retry.`,
      reason: 'SERVICE_DISABLED', domain: 'googleapis.com', metadata: { service, consumer: `projects/${project}`, activationUrl, containerInfo: project, serviceTitle },
    })
  },
  /** The credential lacks an IAM permission on its project (Vertex: aiplatform.endpoints.predict). */
  iamPermissionDenied: (resource: string, permission = 'aiplatform.endpoints.predict'): FakeReply => errorReply(403, {
    message: `Permission '${permission}' denied on resource '//aiplatform.googleapis.com/${resource}' (or it may not exist).`, reason: 'IAM_PERMISSION_DENIED', domain: 'iam.googleapis.com', metadata: { permission, resource },
  }),
  /** Code Assist for a project the account may not use. */
  consumerInvalid: (project = 'default'): FakeReply => errorReply(403, {
    message: `Permission denied on resource project ${project}.`, reason: 'CONSUMER_INVALID', domain: 'googleapis.com', metadata: { containerInfo: project, service: 'cloudaicompanion.googleapis.com', consumer: `projects/${project}` },
  }),
  accessTokenExpired: (service = 'aiplatform.googleapis.com'): FakeReply => errorReply(401, {
    message: 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.', reason: 'ACCESS_TOKEN_EXPIRED', domain: 'googleapis.com', metadata: { service },
  }),
  /** A per-model quota spent: 429 RESOURCE_EXHAUSTED with QuotaFailure (the model among its dimensions), Help and RetryInfo. */
  quotaExceeded: (model: string, retryDelay = '30s'): FakeReply => errorReply(429, {
    message: 'You exceeded your current quota, please check your plan and billing details.',
    helpUrl: 'https://ai.google.dev/gemini-api/docs/rate-limits',
    helpDescription: 'Learn more about Gemini API quotas',
    retryDelay,
    details: [{ '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [{ quotaMetric: `${GEMINI_SERVICE}/generate_content_free_tier_requests`, quotaId: 'GenerateRequestsPerDayPerProjectPerModel-FreeTier', quotaDimensions: { location: 'global', model }, quotaValue: '50' }] }],
  }),
  fileNotFound: (id: string): FakeReply => errorReply(403, { message: `You do not have permission to access the File ${id} or it may not exist.` }),
  cacheNotFound: (): FakeReply => errorReply(403, { message: 'CachedContent not found (or permission denied)' }),
}

/** Gemini API Model entries (https://ai.google.dev/api/models#Model) the fakes list by default. */
export function listedModel (id: string, spec: { input?: number, output?: number, thinking?: boolean, methods?: string[] } = {}): Record<string, unknown> {
  const entry: Record<string, unknown> = {
    name: `models/${id}`,
    version: '001',
    displayName: id,
    inputTokenLimit: spec.input ?? 1048576,
    outputTokenLimit: spec.output ?? 65536,
    supportedGenerationMethods: spec.methods ?? ['generateContent', 'countTokens', 'createCachedContent', 'batchGenerateContent'],
    temperature: 1,
    topP: 0.95,
    topK: 64,
    maxTemperature: 2,
  }
  if (spec.thinking !== false) entry.thinking = true
  return entry
}

function defaultListedModels (): Array<Record<string, unknown>> {
  return [listedModel('gemini-2.5-flash'), listedModel('gemini-2.5-pro'), listedModel('gemini-2.5-flash-lite'), listedModel('gemini-embedding-001', { input: 2048, output: 1, thinking: false, methods: ['embedContent', 'countTextTokens'] })]
}

/** A streamed answer: one SSE event per chunk. */
export function streamReply (chunks: unknown[], framing: Pick<FakeReply, 'multiLine' | 'crlf' | 'comments' | 'chunkDelayMs' | 'dropAfter'> = {}): FakeReply {
  return { chunks, ...framing }
}

/** The token endpoint's answer for a revoked or expired refresh token. */
export function invalidGrant (): FakeReply {
  return { status: 400, body: { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' } }
}

/** loadCodeAssist for an onboarded account; `null` for one without a project of its own. */
export function currentTier (project: string | null = 'fake-project', tierId = 'standard-tier'): FakeReply {
  const body: Record<string, unknown> = { currentTier: { id: tierId, name: tierId }, allowedTiers: [{ id: tierId, isDefault: true }] }
  if (project !== null) body.cloudaicompanionProject = project
  return { body }
}

/** loadCodeAssist for an account that is not onboarded yet; the given tier is the default. */
export function needsOnboarding (tierId = 'free-tier'): FakeReply {
  return { body: { allowedTiers: [{ id: tierId, name: tierId, isDefault: true, userDefinedCloudaicompanionProject: tierId !== 'free-tier' }] } }
}

/** loadCodeAssist for an account that must be verified in a browser first. */
export function validationRequired (url = 'https://accounts.google.com/signin/continue?fake=1', message = 'Verify your account to continue.'): FakeReply {
  return {
    body: {
      allowedTiers: [{ id: 'free-tier', isDefault: true }],
      ineligibleTiers: [{ reasonCode: 'VALIDATION_REQUIRED', reasonMessage: message, tierId: 'free-tier', tierName: 'Gemini Code Assist for individuals', validationUrl: url }],
    },
  }
}

/** A long-running operation (onboardUser / GET operations/...). */
export function operation (spec: { done: boolean, project?: string, name?: string }): FakeReply {
  const body: Record<string, unknown> = { name: spec.name ?? 'operations/fake-onboard', done: spec.done }
  if (spec.done && spec.project !== undefined) {
    body.response = { '@type': 'type.googleapis.com/google.internal.cloud.code.v1internal.OnboardUserResponse', cloudaicompanionProject: { id: spec.project, name: spec.project } }
  }
  return { body }
}

// ---- server -----------------------------------------------------------------------------------

const DEFAULT_TEXT = 'Hello from the fake upstream.'

function defaultReplies (): Record<FakeCall, FakeReply> {
  return {
    generateContent: { body: geminiResponse({ text: DEFAULT_TEXT, finishReason: 'STOP', usage: true }) },
    streamGenerateContent: {
      chunks: [
        geminiResponse({ text: 'Hello from' }),
        geminiResponse({ text: ' the fake upstream.', finishReason: 'STOP', usage: true }),
      ],
    },
    countTokens: {},
    predict: {},
    embedContent: {},
    loadCodeAssist: currentTier(),
    onboardUser: operation({ done: true, project: 'fake-project' }),
    getOperation: operation({ done: true, project: 'fake-project' }),
    cachedContents: {},
    listModels: {},
    getModel: {},
    files: {},
    resources: {},
    interactions: {},
    token: {},
    other: errorReply(404, { message: 'Fake upstream: unknown path' }),
  }
}

const VERTEX_PATH = /^\/v1\/(?:projects\/([^/]+)\/locations\/([^/]+)\/)?publishers\/google\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens|predict|embedContent)$/

const VERTEX_CACHE_PATH = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/cachedContents(?:\/([^/]+))?$/

function route (method: string, path: string): { api: FakeRequest['api'], call: FakeCall, model?: string, project?: string, location?: string } {
  if (path === '/token') return { api: 'oauth', call: 'token' }
  if (method === 'GET' && path === '/v1beta/models') return { api: 'gemini-api', call: 'listModels' }
  if (isInteractionsPath(path)) return { api: 'gemini-api', call: 'interactions' }
  if (method === 'GET' && path === '/v1beta1/publishers/google/models') return { api: 'vertex', call: 'listModels' }
  const detail = /^\/(v1beta\/models|v1beta1\/publishers\/google\/models)\/([^/:]+)$/.exec(path)
  if (detail !== null && method === 'GET') return { api: detail[1] === 'v1beta/models' ? 'gemini-api' : 'vertex', call: 'getModel', model: decodeURIComponent(detail[2]) }
  if (/^\/(?:upload\/)?v1beta\/files(?:\/[^/]+)?$/.test(path)) return { api: 'gemini-api', call: 'files' }
  if (/^\/v1beta\/cachedContents(?:\/[^/]+)?$/.test(path)) return { api: 'gemini-api', call: 'cachedContents' }
  const ca = /^\/v1internal:(\w+)$/.exec(path)
  if (ca !== null && method === 'POST') {
    const call = ca[1] as FakeCall
    if (['generateContent', 'streamGenerateContent', 'countTokens', 'loadCodeAssist', 'onboardUser'].includes(call)) return { api: 'code-assist', call }
  }
  if (method === 'GET' && path.startsWith('/v1internal/operations/')) return { api: 'code-assist', call: 'getOperation' }
  const api = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/.exec(path)
  if (api !== null && method === 'POST') return { api: 'gemini-api', call: api[2] as FakeCall, model: decodeURIComponent(api[1]) }
  if (isGeminiResourcePath(path)) return { api: 'gemini-api', call: 'resources' }
  const cache = VERTEX_CACHE_PATH.exec(path)
  if (cache !== null) return { api: 'vertex', call: 'cachedContents', project: cache[1], location: cache[2] }
  const vertex = VERTEX_PATH.exec(path)
  if (vertex !== null && method === 'POST') {
    const [, project, location, model, call] = vertex
    return { api: 'vertex', call: call as FakeCall, model: decodeURIComponent(model), project, location }
  }
  return { api: 'unknown', call: 'other' }
}

/** Shutdown dates the fake enforces when given a clock, as the issue reports them (see lib/proxy/models/models.json). */
function defaultShutdowns (): Map<string, string> {
  return new Map([
    ['gemini-api gemini-2.5-pro', '2026-12-01'],
    ['gemini-api gemini-2.5-flash', '2026-12-01'],
    ['gemini-api gemini-2.5-flash-image', '2026-10-02'],
    ['gemini-api gemini-3-pro-preview', '2026-03-09'],
    ['gemini-api gemini-3-pro-image-preview', '2026-06-25'],
    ['gemini-api gemini-3.1-flash-image-preview', '2026-06-25'],
    ['vertex gemini-2.5-pro', '2026-10-20'],
    ['vertex gemini-2.5-flash', '2026-10-20'],
    ['vertex gemini-2.5-flash-lite', '2026-10-20'],
  ])
}

const GEMINI_4_LOCATIONS = ['global', 'us', 'eu']

/** One call's output cap on a Gemini 4 model: 65,536 streamed; non-streamed 32,768 on Argon and Carbon. */
function perCallCap (model: string, streamed: boolean): number {
  return !streamed && /^gemini-4-(argon|carbon)/.test(model) ? 32768 : 65536
}

function invalidArgument (message: string): FakeReply {
  return errorReply(400, { message })
}

/** A Gemini 4 request Google refuses, or a Vertex location that does not serve it; undefined when it is fine. */
function gemini4Refusal (rec: FakeRequest, body: any): FakeReply | undefined {
  const model = rec.model ?? ''
  if (!model.startsWith('gemini-4-')) return undefined
  if (rec.api === 'vertex' && rec.location !== undefined && !GEMINI_4_LOCATIONS.includes(rec.location)) {
    return errorReply(404, { message: `Publisher Model \`projects/${rec.project ?? ''}/locations/${rec.location}/publishers/google/models/${model}\` was not found or your project does not have access to it.` })
  }
  if (rec.call === 'countTokens') return undefined
  const config = body?.generationConfig ?? {}
  const thinking = config.thinkingConfig ?? {}
  if (thinking.thinkingBudget !== undefined) return invalidArgument('thinking_budget is not supported by this model; use thinking_level.')
  const level = typeof thinking.thinkingLevel === 'string' ? thinking.thinkingLevel.toUpperCase() : undefined
  if (level === 'MINIMAL' || (level === 'XHIGH' && /^gemini-4-(argon|carbon)/.test(model))) return invalidArgument(`thinking_level ${level} is not supported by this model.`)
  for (const field of ['presencePenalty', 'frequencyPenalty']) {
    if (config[field] !== undefined) return invalidArgument(`${field === 'presencePenalty' ? 'presence_penalty' : 'frequency_penalty'} is not supported by this model.`)
  }
  if (typeof config.candidateCount === 'number' && config.candidateCount > 1) return invalidArgument('Multiple candidates is not enabled for this model.')
  return undefined
}

/** Gemini 4 takes no explicit caches (docs/model-proxy.md, "Gemini 4"): a cache create naming one is refused, on both APIs. */
function cacheCreateRefusal (rec: FakeRequest): FakeReply | undefined {
  if (rec.method !== 'POST' || !/\/cachedContents$/.test(rec.path) || typeof rec.body?.model !== 'string') return undefined
  const model = /(?:^|\/)models\/([^/]+)$/.exec(rec.body.model)?.[1] ?? ''
  return model.startsWith('gemini-4-') ? invalidArgument(`Model ${model} does not support explicit context caching (cachedContents); it uses implicit caching.`) : undefined
}

/** One long-decode hop of a Gemini 4 answer `total` tokens long, as a generate body or stream chunks. */
function longDecodeHop (rec: FakeRequest, body: any, total: number): FakeReply {
  const streamed = rec.call === 'streamGenerateContent'
  const model = rec.model ?? ''
  const token = body?.continuationToken
  if (token !== undefined && (typeof token !== 'string' || !/^fake-ct-\d+$/.test(token))) return invalidArgument('Invalid continuation_token.')
  const start = token === undefined ? 0 : Number(token.slice('fake-ct-'.length))
  const cap = perCallCap(model, streamed)
  const budget = typeof body?.generationConfig?.maxOutputTokens === 'number' ? body.generationConfig.maxOutputTokens : cap
  const n = Math.max(0, Math.min(cap, total - start, budget - start))
  const end = start + n
  const finishReason = end >= total ? 'STOP' : end >= budget ? 'MAX_TOKENS' : 'CONTINUATION'
  const prompt = wordCount(body?.contents)
  const last = (text: string): Record<string, unknown> => {
    const response = geminiResponse({ text, finishReason, modelVersion: model })
    if (finishReason === 'CONTINUATION') (response.candidates as Array<Record<string, unknown>>)[0].continuationToken = `fake-ct-${end}`
    response.usageMetadata = { promptTokenCount: prompt, candidatesTokenCount: n, totalTokenCount: prompt + n }
    return response
  }
  const words = (count: number): string => count === 0 ? '' : 'w ' + 'w '.repeat(count - 1)
  if (!streamed) return { body: last(words(n)) }
  const chunks: unknown[] = []
  const size = 16384
  for (let done = 0; done + size < n; done += size) chunks.push(geminiResponse({ text: words(size), modelVersion: model }))
  chunks.push(last(words(n - size * chunks.length)))
  return { chunks }
}

function wordCount (value: unknown): number {
  let n = 0
  const walk = (v: unknown): void => {
    if (typeof v === 'string') return
    if (Array.isArray(v)) { v.forEach(walk); return }
    if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (k === 'text' && typeof x === 'string') n += x.split(/\s+/).filter(w => w !== '').length
        else walk(x)
      }
    }
  }
  walk(value)
  return Math.max(1, n)
}

export interface FakeUpstreamOptions {
  /** Keep every request in `requests`. Default true; benchmarks turn it off to keep memory flat. */
  record?: boolean
}

export async function startFakeUpstream (options: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  const record = options.record !== false
  const sockets = new Set<Socket>()
  const queues = new Map<FakeCall, FakeReply[]>()
  let defaults = defaultReplies()
  const modelDefaults = new Map<string, FakeReply>()
  let traceCounter = 0
  const waiters: Array<{ call: FakeCall, count: number, resolve: (r: FakeRequest) => void }> = []

  const fake: FakeUpstream = {
    url: '',
    tokenUri: '',
    requests: [],
    acceptedTokens: undefined,
    apiKey: undefined,
    keyReplies: new Map(),
    locationReplies: new Map(),
    bearerReplies: new Map(),
    tokenExpiresIn: 3599,
    tokenGate: undefined,
    issuedTokens: [],
    caches: new Map(),
    now: undefined,
    shutdowns: defaultShutdowns(),
    decodeTokens: undefined,
    listedModels: defaultListedModels(),
    keyModels: new Map(),
    owned: new Map(),
    keyScoped: false,
    gemini: newGeminiResources(),
    interactions: newFakeInteractions(),
    signatureChecks: true,
    script: undefined,
    calls: call => fake.requests.filter(r => r.call === call),
    last: call => fake.calls(call).at(-1),
    waitFor (call, count = 1) {
      const have = fake.calls(call)
      if (have.length >= count) return Promise.resolve(have[count - 1])
      return new Promise(resolve => waiters.push({ call, count, resolve }))
    },
    reply (call, ...replies) {
      queues.set(call, [...(queues.get(call) ?? []), ...replies])
    },
    setDefault (call, reply, model) {
      if (model === undefined) defaults[call] = reply
      else modelDefaults.set(`${call} ${model}`, reply)
    },
    reset () {
      fake.requests.length = 0
      queues.clear()
      defaults = defaultReplies()
      modelDefaults.clear()
      fake.acceptedTokens = undefined
      fake.apiKey = undefined
      fake.keyReplies.clear()
      fake.locationReplies.clear()
      fake.bearerReplies.clear()
      fake.caches.clear()
      fake.listedModels = defaultListedModels()
      fake.keyModels.clear()
      fake.owned.clear()
      fake.gemini = newGeminiResources()
      fake.interactions = newFakeInteractions()
      fake.tokenGate = undefined
      fake.now = undefined
      fake.shutdowns = defaultShutdowns()
      fake.decodeTokens = undefined
      fake.signatureChecks = true
      fake.script = undefined
    },
    async close () {
      for (const s of sockets) s.destroy()
      for (const done of [...pauses]) done()
      await new Promise<void>(resolve => server.close(() => resolve()))
    },
  }

  // Pauses end early when the fake closes, so a scripted slow answer never keeps the test process alive.
  const pauses = new Set<() => void>()
  function pause (ms: number | undefined): Promise<void> {
    return new Promise(resolve => {
      const done = (): void => { clearTimeout(timer); pauses.delete(done); resolve() }
      const timer = setTimeout(done, ms ?? 0)
      pauses.add(done)
    })
  }

  function scriptReply (rec: FakeRequest): FakeReply | undefined {
    if (fake.script === undefined || (rec.call !== 'generateContent' && rec.call !== 'streamGenerateContent')) return undefined
    if ((queues.get(rec.call)?.length ?? 0) > 0) return undefined
    return fake.script(rec)
  }

  function nextReply (call: FakeCall, model: string | undefined): FakeReply {
    const queue = queues.get(call)
    if (queue !== undefined && queue.length > 0) return queue.shift() as FakeReply
    return (model === undefined ? undefined : modelDefaults.get(`${call} ${model}`)) ?? defaults[call]
  }

  function authFailure (rec: FakeRequest): FakeReply | undefined {
    if (rec.api === 'code-assist' && fake.acceptedTokens !== undefined) {
      const token = /^Bearer (.+)$/.exec(String(rec.headers.authorization ?? ''))?.[1]
      if (token === undefined || !fake.acceptedTokens.has(token)) {
        return errorReply(401, { message: 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.' })
      }
    }
    const keyReply = rec.api === 'gemini-api' ? fake.keyReplies.get(String(rec.headers['x-goog-api-key'] ?? rec.query.key)) : undefined
    if (keyReply !== undefined) return keyReply
    const locationReply = rec.api === 'vertex' && rec.location !== undefined ? fake.locationReplies.get(rec.location) : undefined
    if (locationReply !== undefined) return locationReply
    const modelCall = rec.call === 'generateContent' || rec.call === 'streamGenerateContent' || rec.call === 'countTokens'
    const bearer = rec.api === 'code-assist' && modelCall ? /^Bearer (.+)$/.exec(String(rec.headers.authorization ?? ''))?.[1] : undefined
    const bearerReply = bearer === undefined ? undefined : fake.bearerReplies.get(bearer)
    if (bearerReply !== undefined) return bearerReply
    if (rec.call === 'token' && fake.tokenGate !== undefined) return fake.tokenGate(rec.body)
    if (rec.api === 'vertex' && rec.project !== undefined && fake.acceptedTokens !== undefined) {
      const token = /^Bearer (.+)$/.exec(String(rec.headers.authorization ?? ''))?.[1]
      if (token === undefined || !fake.acceptedTokens.has(token)) {
        return errorReply(401, { message: 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.' })
      }
    }
    // The publisher model list names no project: it takes a bearer token (application-default credentials) or the express key.
    if (rec.api === 'vertex' && (rec.call === 'listModels' || rec.call === 'getModel') && rec.headers.authorization !== undefined) {
      const token = /^Bearer (.+)$/.exec(String(rec.headers.authorization))?.[1]
      return fake.acceptedTokens === undefined || (token !== undefined && fake.acceptedTokens.has(token)) ? undefined : googleErrors.accessTokenExpired()
    }
    if (rec.api === 'vertex' && rec.project === undefined && fake.apiKey !== undefined && rec.headers['x-goog-api-key'] !== fake.apiKey) {
      return googleErrors.apiKeyInvalid('aiplatform.googleapis.com')
    }
    if (rec.api === 'gemini-api' && fake.apiKey !== undefined) {
      const key = rec.headers['x-goog-api-key'] ?? rec.query.key
      if (key !== fake.apiKey) return googleErrors.apiKeyInvalid()
    }
    return undefined
  }

  function defaultBody (rec: FakeRequest): unknown {
    if (rec.call === 'countTokens') {
      const contents = rec.api === 'code-assist' ? rec.body?.request?.contents : rec.body?.contents ?? rec.body?.generateContentRequest?.contents
      return { totalTokens: wordCount(contents) }
    }
    if (rec.call === 'predict') {
      const instances: Array<{ content?: unknown }> = Array.isArray(rec.body?.instances) ? rec.body.instances : []
      const dimensions = rec.body?.parameters?.outputDimensionality
      return {
        predictions: instances.map((instance, i) => {
          const text = typeof instance.content === 'string' ? instance.content : ''
          return { embeddings: { values: [text.length, i, 0.5].slice(0, dimensions ?? 3), statistics: { token_count: wordCount({ text }), truncated: false } } }
        }),
      }
    }
    if (rec.call === 'embedContent') {
      const text = (rec.body?.content?.parts ?? []).map((p: { text?: string }) => p.text ?? '').join('')
      return { embedding: { values: [text.length, 0, 0.5].slice(0, rec.body?.embedContentConfig?.outputDimensionality ?? 3) }, usageMetadata: { promptTokenCount: wordCount(rec.body?.content) } }
    }
    if (rec.call === 'token') {
      const token = `fake-access-${fake.issuedTokens.length + 1}`
      fake.issuedTokens.push(token)
      fake.acceptedTokens?.add(token)
      return { access_token: token, expires_in: fake.tokenExpiresIn, scope: 'https://www.googleapis.com/auth/cloud-platform', token_type: 'Bearer' }
    }
    return defaults[rec.call].body
  }

  function wrap (rec: FakeRequest, reply: FakeReply, body: unknown): unknown {
    const wrapped = rec.api === 'code-assist' && (rec.call === 'generateContent' || rec.call === 'streamGenerateContent') && reply.raw !== true
    return wrapped ? { response: body, traceId: `fake-trace-${++traceCounter}` } : body
  }

  function frame (json: unknown, reply: FakeReply, index: number): string {
    const nl = reply.crlf === true ? '\r\n' : '\n'
    const lines = reply.multiLine === true ? JSON.stringify(json, null, 1).split('\n') : [JSON.stringify(json)]
    const prefix = reply.comments === true ? [': keepalive', 'event: message', `id: ${index + 1}`] : []
    return [...prefix, ...lines.map(l => `data: ${l}`)].join(nl) + nl + nl
  }

  let cacheCounter = 0
  /** Vertex context caching, per location; undefined for a call that is not about caches. */
  function cacheReply (rec: FakeRequest): FakeReply | undefined {
    const parent = `projects/${rec.project ?? ''}/locations/${rec.location ?? ''}`
    if (rec.api === 'vertex' && (rec.call === 'generateContent' || rec.call === 'streamGenerateContent') && rec.body?.cachedContent !== undefined) {
      const name = rec.body.cachedContent
      if (typeof name !== 'string' || !name.startsWith(`${parent}/cachedContents/`) || !fake.caches.has(name)) {
        return errorReply(400, { message: `Fake Vertex: cachedContent ${String(name)} is not a cache of ${parent}` })
      }
      return undefined
    }
    if (rec.call !== 'cachedContents' || rec.api !== 'vertex') return undefined
    const id = VERTEX_CACHE_PATH.exec(rec.path)?.[3]
    const now = '2026-11-24T00:00:00Z'
    if (id === undefined && rec.method === 'POST') {
      const model = rec.body?.model
      if (typeof model !== 'string' || !model.startsWith(`${parent}/publishers/google/models/`)) {
        return errorReply(400, { message: `Fake Vertex: model must be ${parent}/publishers/google/models/{model}, not ${String(model)}` })
      }
      const name = `${parent}/cachedContents/${1000 + ++cacheCounter}`
      const { contents, systemInstruction, tools, toolConfig, ttl, ...kept } = rec.body
      const cache = { ...kept, name, model, createTime: now, updateTime: now, expireTime: rec.body.expireTime ?? '2026-11-24T01:00:00Z', usageMetadata: { totalTokenCount: wordCount(contents) } }
      fake.caches.set(name, cache)
      return { body: cache }
    }
    if (id === undefined && rec.method === 'GET') {
      const all = [...fake.caches.values()].filter(c => String(c.name).startsWith(`${parent}/`))
      const from = Number(rec.query.pageToken ?? 0)
      const size = Number(rec.query.pageSize ?? 100)
      const page = all.slice(from, from + size)
      return { body: { cachedContents: page, ...(from + size < all.length ? { nextPageToken: String(from + size) } : {}) } }
    }
    const name = `${parent}/cachedContents/${id ?? ''}`
    const cache = fake.caches.get(name)
    if (cache === undefined) return errorReply(404, { message: `Fake Vertex: no cached content ${name}` })
    if (rec.method === 'GET') return { body: cache }
    if (rec.method === 'DELETE') { fake.caches.delete(name); return { body: {} } }
    if (rec.method === 'PATCH') {
      const updated = { ...cache, ...(rec.body?.ttl !== undefined ? { expireTime: '2026-11-24T02:00:00Z' } : {}), ...(rec.body?.expireTime !== undefined ? { expireTime: rec.body.expireTime } : {}), updateTime: '2026-11-24T00:30:00Z' }
      fake.caches.set(name, updated)
      return { body: updated }
    }
    return errorReply(405)
  }

  /** Whether `model` is shut down on `api` by fake.now (unset: nothing is). */
  function shutDown (api: string, model: string): boolean {
    const date = fake.now === undefined ? undefined : fake.shutdowns.get(`${api} ${model}`)
    return date !== undefined && (fake.now as () => Date)().getTime() >= Date.parse(`${date}T00:00:00Z`)
  }

  /** What the model rules say about a model call (shutdowns, Gemini 4), or undefined. */
  function modelReply (rec: FakeRequest): FakeReply | undefined {
    if (rec.call !== 'generateContent' && rec.call !== 'streamGenerateContent' && rec.call !== 'countTokens') return undefined
    const body = rec.api === 'code-assist' ? rec.body?.request : rec.body
    if (rec.model !== undefined && shutDown(rec.api, rec.model)) {
      return errorReply(404, { message: `models/${rec.model ?? ''} is not found for API version v1beta, or is not supported for ${rec.call}. Call ListModels to see the list of available models and their supported methods.` })
    }
    const refusal = gemini4Refusal(rec, body)
    if (refusal !== undefined) return refusal
    const queued = (queues.get(rec.call)?.length ?? 0) > 0
    if (fake.decodeTokens !== undefined && rec.call !== 'countTokens' && rec.model?.startsWith('gemini-4-') === true && !queued) return longDecodeHop(rec, body, fake.decodeTokens)
    return undefined
  }

  /** models.list (Gemini API, paged by pageSize / pageToken) and the publisher model list (Vertex); models.get and publishers.models.get from the same list. */
  function listReply (rec: FakeRequest): FakeReply | undefined {
    if (rec.call !== 'listModels' && rec.call !== 'getModel') return undefined
    const key = String(rec.headers['x-goog-api-key'] ?? rec.query.key ?? '')
    const only = rec.api === 'gemini-api' ? fake.keyModels.get(key) : undefined
    const serves = (id: string): boolean => (only === undefined || only.includes(id)) && !shutDown(rec.api, id)
    const all = fake.listedModels.filter(m => serves(String(m.name).slice('models/'.length)))
    if (rec.call === 'getModel') {
      const found = all.find(m => m.name === `models/${rec.model ?? ''}`)
      if (found === undefined) {
        return errorReply(404, { message: rec.api === 'gemini-api' ? `models/${rec.model ?? ''} is not found for API version v1beta, or is not supported for GET. Call ListModels to see the list of available models and their supported methods.` : `Publisher Model \`publishers/google/models/${rec.model ?? ''}\` not found.` })
      }
      return { body: rec.api === 'gemini-api' ? found : { name: `publishers/google/models/${rec.model ?? ''}`, versionId: '001', launchStage: 'GA', openSourceCategory: 'PROPRIETARY' } }
    }
    const from = Number(rec.query.pageToken ?? 0)
    const size = Math.min(Number(rec.query.pageSize ?? 50), 1000)
    const page = all.slice(from, from + size)
    const next = from + size < all.length ? { nextPageToken: String(from + size) } : {}
    if (rec.api === 'gemini-api') return { body: { models: page, ...next } }
    return { body: { publisherModels: page.map(m => ({ name: `publishers/google/models/${String(m.name).slice('models/'.length)}`, versionId: '001', launchStage: 'GA' })), ...next } }
  }

  let resourceCounter = 0
  /** Gemini API files and caches, owned by the key that created them; a generate naming one another key created (or none) gets Google's 403. */
  function resourceReply (rec: FakeRequest): FakeReply | undefined {
    if (rec.api !== 'gemini-api' || !fake.keyScoped) return undefined
    const key = String(rec.headers['x-goog-api-key'] ?? rec.query.key ?? '')
    if (rec.call === 'files' && rec.method === 'POST' && rec.path.startsWith('/upload/')) {
      const name = `files/upload-${++resourceCounter}`
      fake.owned.set(name, key)
      return { body: { file: { name, uri: `${fake.url}/v1beta/${name}`, mimeType: 'text/plain', sizeBytes: String(String(rec.body).length), state: 'ACTIVE' } } }
    }
    if (rec.call === 'files' && rec.method === 'GET') {
      const name = rec.path.slice('/v1beta/'.length)
      return fake.owned.get(name) === key ? { body: { name, state: 'ACTIVE' } } : googleErrors.fileNotFound(name.slice('files/'.length))
    }
    if (rec.call === 'cachedContents' && rec.method === 'POST') {
      const name = `cachedContents/c${++resourceCounter}`
      fake.owned.set(name, key)
      return { body: { name, model: rec.body?.model, expireTime: '2026-11-24T01:00:00Z' } }
    }
    if (rec.call === 'cachedContents') {
      const name = rec.path.slice('/v1beta/'.length)
      return fake.owned.get(name) === key ? { body: { name } } : googleErrors.cacheNotFound()
    }
    if (rec.call !== 'generateContent' && rec.call !== 'streamGenerateContent' && rec.call !== 'countTokens') return undefined
    const cache = rec.body?.cachedContent ?? rec.body?.generateContentRequest?.cachedContent
    if (typeof cache === 'string' && fake.owned.get(cache) !== key) return googleErrors.cacheNotFound()
    const contents: Array<{ parts?: Array<{ fileData?: { fileUri?: unknown } }> }> = Array.isArray(rec.body?.contents) ? rec.body.contents : []
    for (const part of contents.flatMap(c => Array.isArray(c?.parts) ? c.parts : [])) {
      const uri = part?.fileData?.fileUri
      if (typeof uri !== 'string') continue
      const name = /(files\/[^/?#]+)$/.exec(uri)?.[1] ?? uri
      if (fake.owned.get(name) !== key) return googleErrors.fileNotFound(name.replace(/^files\//, ''))
    }
    return undefined
  }

  /** The Interactions API (fake-interactions.ts), unless a reply was queued for it. */
  function interactionsReply (rec: FakeRequest): FakeReply | undefined {
    if (rec.call !== 'interactions' || (queues.get('interactions')?.length ?? 0) > 0) return undefined
    return interactionReply(rec, fake.interactions, {
      keyScoped: fake.keyScoped,
      decodeTokens: fake.decodeTokens,
      serves: model => /^gemini-/.test(model) && !shutDown('gemini-api', model),
      text: DEFAULT_TEXT,
    })
  }

  /** Gemini 3's check of the current turn's function calls (see the header), or undefined when they pass. */
  function signatureFailure (rec: FakeRequest): FakeReply | undefined {
    if (!fake.signatureChecks || (rec.call !== 'generateContent' && rec.call !== 'streamGenerateContent')) return undefined
    const model = rec.model ?? ''
    if (!/^gemini-3/.test(model)) return undefined
    const contents: Array<{ role?: string, parts?: Array<Record<string, any>> }> = (rec.api === 'code-assist' ? rec.body?.request?.contents : rec.body?.contents) ?? []
    let start = 0
    for (let i = contents.length - 1; i >= 0; i--) {
      const parts = contents[i].parts ?? []
      if (contents[i].role !== 'model' && parts.some(p => p.functionResponse === undefined)) { start = i + 1; break }
    }
    for (let i = start; i < contents.length; i++) {
      if (contents[i].role !== 'model') continue
      const parts = contents[i].parts ?? []
      const position = parts.findIndex(p => p.functionCall !== undefined)
      if (position >= 0 && typeof parts[position].thoughtSignature !== 'string') {
        return errorReply(400, { message: `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${String(parts[position].functionCall?.name)}\` , position ${i + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.` })
      }
    }
    return undefined
  }

  async function answer (rec: FakeRequest, res: ServerResponse): Promise<void> {
    // Without key-scoped resources, the Gemini API's files and caches are the project's (fake-gemini-resources.ts).
    if (!fake.keyScoped && rec.api === 'gemini-api' && (rec.call === 'files' || rec.call === 'cachedContents') && isGeminiResourcePath(rec.path)) rec.call = 'resources'
    const reply = authFailure(rec) ?? interactionsReply(rec) ?? signatureFailure(rec) ?? listReply(rec) ?? cacheCreateRefusal(rec) ?? resourceReply(rec) ?? cacheReply(rec) ?? geminiResourceReply(rec, fake.gemini, fake.url) ?? modelReply(rec) ?? scriptReply(rec) ?? nextReply(rec.call, rec.model)
    if (reply.delayMs !== undefined) await pause(reply.delayMs)
    if (reply.stall === 'headers') return
    const status = reply.status ?? 200
    const streaming = status === 200 && (reply.chunks !== undefined || reply.sse !== undefined ||
      (rec.call === 'streamGenerateContent' && reply.body === undefined && reply.text === undefined))
    if (streaming || reply.stall === 'body') {
      res.writeHead(status, { 'content-type': 'text/event-stream', ...reply.headers })
      res.flushHeaders()
      if (reply.stall === 'body') return
      const events = reply.sse !== undefined
        ? [reply.sse]
        : (reply.chunks ?? defaults.streamGenerateContent.chunks ?? []).map((c, i) => frame(wrap(rec, reply, c), reply, i))
      for (let i = 0; i < events.length; i++) {
        if (res.destroyed) return
        if (reply.dropAfter !== undefined && i >= reply.dropAfter) {
          // Let the events already written reach the client before the connection is cut.
          await pause(20)
          res.socket?.destroy()
          return
        }
        if (reply.holdAfter !== undefined && i >= reply.holdAfter) {
          await new Promise<void>(resolve => { res.once('close', resolve); pauses.add(resolve) })
          return
        }
        if (i > 0 && reply.chunkDelayMs !== undefined) await pause(reply.chunkDelayMs)
        await new Promise<void>(resolve => res.write(events[i], () => resolve()))
      }
      res.end()
      return
    }
    let text: string
    if (reply.text !== undefined) text = reply.text
    else if (reply.body !== undefined) text = JSON.stringify(status === 200 ? wrap(rec, reply, reply.body) : reply.body)
    else if (status === 200) text = JSON.stringify(wrap(rec, reply, defaultBody(rec)))
    else text = JSON.stringify(googleError(status))
    // The Gemini API's front end applies the system parameters to every JSON answer (fake-system-parameters.ts).
    const shaped = rec.api === 'gemini-api' && reply.text === undefined ? shapeAnswer(rec.query, JSON.parse(text), status === 200) : undefined
    if (shaped !== undefined) {
      res.writeHead(status, { ...reply.headers, 'content-type': shaped.contentType })
      res.end(shaped.body)
      return
    }
    res.writeHead(status, { 'content-type': reply.text !== undefined ? 'text/plain' : 'application/json; charset=UTF-8', ...reply.headers })
    res.end(text)
  }

  const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake')
      const raw = Buffer.concat(chunks).toString('utf8')
      const where = route(req.method ?? 'GET', url.pathname)
      let body: any = raw
      if (where.call === 'token') body = Object.fromEntries(new URLSearchParams(raw))
      else if (raw !== '') {
        try { body = JSON.parse(raw) } catch {}
      }
      let settle: (how: 'finished' | 'aborted') => void = () => {}
      const closed = new Promise<'finished' | 'aborted'>(resolve => { settle = resolve })
      res.on('close', () => settle(res.writableFinished ? 'finished' : 'aborted'))
      const rec: FakeRequest = {
        api: where.api,
        call: where.call,
        method: req.method ?? 'GET',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body,
        model: where.model ?? (typeof body?.model === 'string' ? body.model : undefined),
        project: where.project,
        location: where.location,
        closed,
      }
      if (record) fake.requests.push(rec)
      for (const w of [...waiters]) {
        const have = fake.calls(w.call)
        if (have.length >= w.count) {
          waiters.splice(waiters.indexOf(w), 1)
          w.resolve(have[w.count - 1])
        }
      }
      answer(rec, res).catch(() => res.destroy())
    })
  })
  server.on('connection', socket => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  fake.url = `http://127.0.0.1:${port}`
  fake.tokenUri = `${fake.url}/token`
  return fake
}
