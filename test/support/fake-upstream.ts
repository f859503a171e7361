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
//   OAuth         POST /token (form-encoded refresh_token grant; issues fake-access-1, -2, ...)
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
//   fake.reset()                       forgets requests and queued replies, restores defaults
//
// Thought signatures, as Gemini 3 checks them (docs/upstream-protocol.md, "Thought signatures"): a generate or
// stream call to a gemini-3* model whose current turn (every step after the last user content that is not only
// functionResponse parts) has a model step whose first functionCall part carries no thoughtSignature gets 400
// INVALID_ARGUMENT with Google's message, before any scripted reply is taken. fake.signatureChecks = false turns it off.
//
// A FakeReply (all fields optional): status, headers, body (JSON), text (literal body), chunks (stream events),
// sse (literal SSE text), multiLine / crlf / comments (how events are framed), chunkDelayMs, delayMs,
// stall ('headers': never answer; 'body': headers, then nothing), dropAfter (cut the connection after N
// events). A 200 reply without body/text/chunks/sse gets the call's default answer (so `{ delayMs: 50 }`
// delays the default); a non-200 one without a body gets a Google error body for that status.
// Generate and stream bodies are given in the public Gemini shape: on the Code Assist paths the fake
// wraps each one as {response, traceId} unless `raw` is set.
//
// Builders: geminiResponse({text, thought, functionCalls, finishReason, usage}), googleError(status, message, opts),
// errorReply(status, opts) (opts.array for array-shaped errors, opts.retryDelay for RetryInfo),
// streamReply(chunks, framing), invalidGrant(), and the setup answers currentTier(project or null), needsOnboarding(tierId),
// validationRequired(url), operation({done, project, name}).
import http from 'node:http'
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

export type FakeCall = 'generateContent' | 'streamGenerateContent' | 'countTokens' | 'predict' | 'embedContent' | 'loadCodeAssist' | 'onboardUser' | 'getOperation' | 'cachedContents' | 'token' | 'other'

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
  /** Refuse Gemini 3 turns whose function calls lost their thought signature (default true). */
  signatureChecks: boolean
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
  if (opts.reason !== undefined) details.push({ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: opts.reason, domain: 'cloudcode-pa.googleapis.com', metadata: {} })
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
    token: {},
    other: errorReply(404, { message: 'Fake upstream: unknown path' }),
  }
}

const VERTEX_PATH = /^\/v1\/(?:projects\/([^/]+)\/locations\/([^/]+)\/)?publishers\/google\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens|predict|embedContent)$/

const VERTEX_CACHE_PATH = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/cachedContents(?:\/([^/]+))?$/

function route (method: string, path: string): { api: FakeRequest['api'], call: FakeCall, model?: string, project?: string, location?: string } {
  if (path === '/token') return { api: 'oauth', call: 'token' }
  const ca = /^\/v1internal:(\w+)$/.exec(path)
  if (ca !== null && method === 'POST') {
    const call = ca[1] as FakeCall
    if (['generateContent', 'streamGenerateContent', 'countTokens', 'loadCodeAssist', 'onboardUser'].includes(call)) return { api: 'code-assist', call }
  }
  if (method === 'GET' && path.startsWith('/v1internal/operations/')) return { api: 'code-assist', call: 'getOperation' }
  const api = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/.exec(path)
  if (api !== null && method === 'POST') return { api: 'gemini-api', call: api[2] as FakeCall, model: decodeURIComponent(api[1]) }
  const cache = VERTEX_CACHE_PATH.exec(path)
  if (cache !== null) return { api: 'vertex', call: 'cachedContents', project: cache[1], location: cache[2] }
  const vertex = VERTEX_PATH.exec(path)
  if (vertex !== null && method === 'POST') {
    const [, project, location, model, call] = vertex
    return { api: 'vertex', call: call as FakeCall, model: decodeURIComponent(model), project, location }
  }
  return { api: 'unknown', call: 'other' }
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
    signatureChecks: true,
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
      fake.tokenGate = undefined
      fake.signatureChecks = true
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
    if (rec.api === 'vertex' && rec.project === undefined && fake.apiKey !== undefined && rec.headers['x-goog-api-key'] !== fake.apiKey) {
      return errorReply(400, { message: 'API key not valid. Please pass a valid API key.', reason: 'API_KEY_INVALID' })
    }
    if (rec.api === 'gemini-api' && fake.apiKey !== undefined) {
      const key = rec.headers['x-goog-api-key'] ?? rec.query.key
      if (key !== fake.apiKey) return errorReply(400, { message: 'API key not valid. Please pass a valid API key.', reason: 'API_KEY_INVALID' })
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
    if (rec.call !== 'cachedContents') return undefined
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
    const reply = authFailure(rec) ?? signatureFailure(rec) ?? cacheReply(rec) ?? nextReply(rec.call, rec.model)
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
