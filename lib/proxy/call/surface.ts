// What a client surface declares to the proxy (docs/model-proxy.md, "Adding a surface"): its name, its routes, its
// error mapper, and for each model route the operation runModelCall runs (./run-model-call.ts). The surface keeps
// only its wire format: parsing, translation both ways, its stream translator, its error body and its own state.
import type { Handler, HandlerRequest, HandlerResponse, Route, Surface } from '../../http/contract.ts'
import type { ProxyCaller } from '../access/caller.ts'
import type { ProxyContext } from '../context.ts'
import type { SseTranslator } from '../routes-stream.ts'
import type { EmbedResult, ForwardResponse, GeminiRequest, GeminiResponse } from '../upstream/backend.ts'
import type { Unreported } from '../access/metering.ts'
import type { AnswerReader, ModelCall } from './lifecycle.ts'

/** What the pipeline reads from a parsed request to govern its call. */
export interface ParsedCall {
  /** The model as the client named it. */
  model: string
  /** The client asked for an event stream. */
  stream?: boolean
  /** The output the request asks for at most, in the surface's own field. */
  maxOutputTokens?: unknown
  /** How many answers it asks for (`n`, `candidateCount`): the output reservation times it (ModelCallSpec.outputCount). */
  outputCount?: unknown
  /** The input the upstream brings in by reference (files, a cache, stored history: lib/proxy/access/reservation.ts). */
  referencedInputTokens?: number
  /** The http(s) image URLs the request makes the proxy fetch (their share of the body budget is held). */
  imageUrls?: number
  /** The model is a project's tuned model (`tunedModels/{model}`), outside the catalogue (ModelCallSpec.tuned). */
  tuned?: boolean
  /** A forwarded call produces no output (an embedding, a count, a cache creation): nothing reserved for it. */
  noOutput?: boolean
  /** How a forwarded answer without usage is charged (a count: nothing); default its input estimate. */
  unreported?: Unreported
  /** The body's size as the gateway read it (a forwarded body), the floor of the input estimate. */
  readBytes?: number
}

/** A parsed request: what the pipeline reads, and the surface's own checked body. */
export type Parsed<B> = ParsedCall & { body: B }

/** generateContent or streamGenerateContent, by the parsed request's `stream`. */
export interface GenerateOperation<P extends ParsedCall = any, M = any> {
  kind: 'generate'
  /** The request read and checked for `caller` (async for a surface that loads state: a stored response). */
  parse: (req: HandlerRequest, caller: ProxyCaller) => P | Promise<P>
  /** The Gemini request, translated under the call's content options, and what the answer's translation needs. */
  toGemini: (parsed: P, call: ModelCall) => Promise<{ request: GeminiRequest, meta: M }>
  /** A unary answer in the surface's format; a value that is none (a 502) throws and ends the call as that failure. */
  fromGemini: (response: GeminiResponse, meta: M) => unknown
  /** The body sent for a unary answer, after the call ended (a stored response written first); default the answer. */
  respond?: (answer: any, meta: M) => Promise<unknown>
  /** The translator of a stream's events into the surface's SSE text. */
  streamTranslator: (meta: M) => SseTranslator
  /** Awaited after the upstream's last event, before the translator's end goes out (a stored response written). */
  beforeStreamEnd?: (meta: M) => (() => Promise<void>) | undefined
}

/** countTokens: a request charged nothing. */
export interface CountOperation<P extends ParsedCall = any> {
  kind: 'countTokens'
  parse: (req: HandlerRequest, caller: ProxyCaller) => P | Promise<P>
  toGemini: (parsed: P, call: ModelCall) => Promise<GeminiRequest> | GeminiRequest
  fromGemini: (counted: { totalTokens: number } & Record<string, unknown>) => unknown
}

/** Embeddings (Backend.embed): charged the upstream's count, else the input estimate. */
export interface EmbedOperation<P extends ParsedCall = any> {
  kind: 'embed'
  parse: (req: HandlerRequest, caller: ProxyCaller) => P | Promise<P>
  toGemini: (parsed: P, call: ModelCall) => GeminiRequest[]
  fromGemini: (result: EmbedResult, parsed: P, call: ModelCall) => unknown
}

/**
 * A model call whose body goes upstream in Google's own format through the backend's forward (the Interactions
 * create, the native pass-through's model actions and cache creations): the pipeline admits it, then meters the
 * answer as it passes (lifecycle.ts, meteredAnswer).
 */
export interface ForwardOperation<P extends ParsedCall = any> {
  kind: 'forward'
  parse: (req: HandlerRequest, caller: ProxyCaller) => P | Promise<P>
  /** Sends the admitted call; its answer, the reader that meters it, and the answer headers the surface passes on. */
  forward: (parsed: P, call: ModelCall, req: HandlerRequest, caller: ProxyCaller) => Promise<{ answer: ForwardResponse, reader?: AnswerReader, headers?: Record<string, string> }>
}

export type ModelOperation = GenerateOperation | CountOperation | EmbedOperation | ForwardOperation

/** A route of a surface: a model call the pipeline runs, or a plain request (a stored response read, a model list). */
export interface SurfaceRoute {
  method: string
  path: string
  /** The model call of a POST route. */
  call?: ModelOperation
  /** A plain request's handler (it authenticates and begins its request itself, under the same governed route). */
  handler?: Handler
  /** A path another route of the surface already answers preflights for (or the handler answers OPTIONS itself). */
  noPreflight?: boolean
  /** Bodies read as they arrive (Route.streamBody). */
  streamBody?: Route['streamBody']
  /** The route's own error mapper, in place of the surface's (`/v1/models` answers in the asking client's style). */
  errorResponse?: (err: unknown, req?: HandlerRequest) => HandlerResponse
  /** The route's own credential check before the body is read (Route.authenticate); default the proxy's key check. */
  authenticate?: Route['authenticate']
  /** The WebSocket transport of the path (Route.upgrade), given the surface's own routes built. */
  upgrade?: (built: (route: SurfaceRoute) => Route) => Route['upgrade']
}

/** One client surface: a folder under lib/proxy and one line in lib/proxy/surfaces.ts. */
export interface SurfaceDeclaration {
  /** The usage row's surface, and the surface a key's refused request is recorded under. */
  name: Surface
  /** Answers a failure in the surface's own error shape. */
  errorResponse: () => (err: unknown, req?: HandlerRequest) => HandlerResponse
  /** How a refusal of the model reads on this surface (naming the `model` parameter); default as it is. */
  modelRefused?: (err: unknown) => unknown
  /**
   * Its format has no continuation token: the pipeline follows a long decode's continuations and answers whole
   * (lib/proxy/models/continuation.ts); without it, the client drives continuation (the native routes).
   */
  answersWhole?: boolean
  /** Its routes, built once for the proxy (settings of its own are the registry's to hand it: lib/proxy/surfaces.ts). */
  routes: (ctx: ProxyContext) => SurfaceRoute[]
}
