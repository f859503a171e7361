// The one governed lifecycle of every model call and every request a key makes (docs/model-proxy.md, "One
// lifecycle for every model call"): caller → model (resolved through the catalogue) → policy → admission →
// upstream → settle. A surface parses its request and translates the answer; everything that governs the call is
// here, so a surface added later inherits it by construction. Metering observes the call's normalised events
// (usage seen, output forwarded, ended) whatever the surface; errors thrown before the end reach the route table's
// error mapper, which ends the call with the status answered (lib/proxy/routes.ts).
import type { Handler, HandlerRequest, Surface } from '../../http/contract.ts'
import { fail, isGatehouseError } from '../../errors.ts'
import type { ProxyCaller } from '../access/caller.ts'
import { allowedModel, modelNotAllowed } from '../access/model-policy.ts'
import { CLIENT_CLOSED, DEFAULT_OUTPUT_RESERVATION, bodyBytes, outputReservation } from '../access/metering.ts'
import { outputCount } from '../access/reservation.ts'
import { addressBucket } from '../../http/client-address.ts'
import type { MeteredCall, Unreported } from '../access/metering.ts'
import type { ProxyContext } from '../context.ts'
import type { ModelName } from '../models/name.ts'
import type { Backend, EmbedResult, ForwardResponse, GeminiRequest, GeminiResponse } from '../upstream/backend.ts'
import { openUpstreamStream, sseBody } from '../routes-stream.ts'
import { eventBatches } from '../upstream/backend.ts'
import type { SseTranslator, StreamWatch } from '../routes-stream.ts'
import { outputChars, readUsageMetadata, searchQueriesOf, usageOf } from '../gemini/hub.ts'
import type { GeminiAnswer } from '../gemini/hub.ts'
import { UsageScan } from './usage-scan.ts'
import type { TokenUsage } from '../../metering/token-usage.ts'
import { contentOptions } from './content-options.ts'
import { applyRequestRules } from './request-rules.ts'
import { geminiToolsUsed } from '../access/tool-policy.ts'
import type { ContentOptions } from './content-options.ts'

/** How a refusal names the surface a model is limited to. */
const SURFACE_ROUTES: Record<string, string> = { interactions: 'the Interactions API (POST /v1beta/interactions)' }

/** The usage row of every model outside the catalogue (docs/model-proxy.md, "Limits and usage"): invented names cannot add rows. */
export const OTHER_MODEL = 'other'

export interface ModelCallSpec {
  /** The surface, as usage records it (`chat`, `native`, ...). */
  surface: Surface
  /** The model as the client named it (path or body). */
  model: string
  /** The model is a project's tuned model (`tunedModels/{model}`), outside the catalogue (beginModelCall). */
  tuned?: boolean
  /** The output the request asks for at most (max_tokens, maxOutputTokens); anything else: the model's limit, capped. */
  maxOutputTokens?: unknown
  /** How many answers the request asks for (`n`, `candidateCount`): the output reservation times it (outputCount). */
  outputCount?: unknown
  /** The input the upstream brings in by reference (files, a cache, stored history: lib/proxy/access/reservation.ts). */
  referencedInputTokens?: number
  /** The call produces no output (counting, embedding): nothing reserved for it. */
  noOutput?: boolean
  /** How an answer without usage is charged (default its input estimate; countTokens: nothing). */
  unreported?: Unreported
  /** The body's size as the gateway read it (pass-through), the floor of the input estimate (Metering.begin). */
  readBytes?: number
  /** How a refusal of the model reads on this surface (chat names the `model` parameter); default as it is. */
  modelRefused?: (err: unknown) => unknown
  /** The upstream the call uses, given the configured one and the model (chat's long decoding); default the configured one. */
  upstream?: (backend: Backend, model: ModelName) => Backend
  /** The http(s) image URLs the request makes the proxy fetch: their share of the body budget is held (holdImages). */
  imageUrls?: number
}

/** A model call admitted: its model, its headers, and the upstream calls that end it. */
export interface ModelCall {
  /** The model resolved through the catalogue and allowed by the policy. */
  readonly model: ModelName
  /** The x-ratelimit-* headers every answer of the call carries. */
  readonly headers: Readonly<Record<string, string>>
  /** The call's meter, for an answer the surface sends itself (a pass-through answer: meteredAnswer). */
  readonly metered: MeteredCall
  /** The proxy's limits on the content the surface translates for this call (lib/proxy/call/content-options.ts). */
  readonly content: ContentOptions
  /** Unary generateContent; the call ends (200, the answer's usage) once `translate` gave the surface's answer. */
  generate: <T>(request: GeminiRequest, translate: (response: GeminiResponse) => T) => Promise<T>
  /**
   * streamGenerateContent as an SSE body of `translator`'s text; the call ends with the stream (client gone: 499).
   * `beforeEnd` is awaited after the upstream's last event and before the translator's end goes out (a stored answer
   * written first, so an immediate follow-up finds it).
   */
  stream: (request: GeminiRequest, translator: SseTranslator, beforeEnd?: () => Promise<void>) => Promise<AsyncIterableIterator<string>>
  /** countTokens; the call ends at the answer. */
  countTokens: (request: GeminiRequest) => Promise<{ totalTokens: number } & Record<string, unknown>>
  /** Embeddings (Backend.embed, present: the surface checked); charged the upstream's count, else the input estimate. */
  embed: (requests: GeminiRequest[]) => Promise<EmbedResult>
}

/** The usage row a resolved model is recorded under: its catalogue base, or OTHER_MODEL. */
export function usageModel (ctx: Pick<ProxyContext, 'catalog'>, model: ModelName): string {
  return ctx.catalog.listed(model.base) === undefined ? OTHER_MODEL : model.base
}

function resolve (ctx: ProxyContext, caller: ProxyCaller, spec: ModelCallSpec): ModelName {
  try {
    const model = allowedModel(ctx, caller, spec.model)
    // A model the file limits to some surfaces (Gemini Omni: the Interactions API) is refused on the others.
    const only = model.spec?.surfaces
    if (only !== undefined && !only.includes(spec.surface)) {
      throw fail('INVALID_INPUT', `The model \`${model.base}\` is served only through ${only.map(s => SURFACE_ROUTES[s] ?? s).join(', ')}`)
    }
    return model
  } catch (err) {
    throw spec.modelRefused === undefined ? err : spec.modelRefused(err)
  }
}

/** The policy's check of a tuned model: only a policy that allows every model allows one (no pattern names it). Throws MODEL_NOT_ALLOWED. */
export function allowedTunedModel (ctx: Pick<ProxyContext, 'modelPolicy'>, caller: ProxyCaller, name: string): void {
  if (!ctx.modelPolicy.allows(caller, `tunedModels/${name}`)) throw modelNotAllowed(`tunedModels/${name}`)
}

/**
 * The model a call is on, resolved and allowed, with its usage row and the output it reserves. A tuned model is
 * outside the catalogue: allowed only by a policy that allows every model, recorded under OTHER_MODEL.
 */
function admittedModel (ctx: ProxyContext, caller: ProxyCaller, spec: ModelCallSpec): { model: ModelName, row: string, output: number } {
  if (spec.tuned === true) {
    allowedTunedModel(ctx, caller, spec.model)
    const name = `tunedModels/${spec.model}`
    const model: ModelName = { requested: name, base: name, search: false, thinking: 'default', family: 'other', conflicting: false }
    return { model, row: OTHER_MODEL, output: spec.noOutput === true ? 0 : DEFAULT_OUTPUT_RESERVATION }
  }
  const model = resolve(ctx, caller, spec)
  const output = spec.noOutput === true ? 0 : outputReservation(ctx.catalog, model.base, spec.maxOutputTokens, outputCount(spec.outputCount))
  return { model, row: usageModel(ctx, model), output }
}

/**
 * A stream's watch: the text forwarded, and the last usageMetadata reported, kept as it came and read once when the
 * call ends (no allocation per batch); `end` ends the call with it.
 */
function streamWatch (metered: MeteredCall): StreamWatch & { end: (status: number) => void } {
  let lastUsage: unknown
  let queries = 0
  const end = (status: number): void => {
    const used = lastUsage === undefined ? undefined : readUsageMetadata(lastUsage)
    if (used !== undefined) metered.usage(queries === 0 ? used : { ...used, searchQueries: queries })
    metered.end(status)
  }
  return {
    batch (events) {
      for (let i = events.length - 1; i >= 0; i--) {
        const u = (events[i] as GeminiAnswer | null)?.usageMetadata
        if (u !== undefined && u !== null) { lastUsage = u; break }
      }
      for (let i = 0; i < events.length; i++) queries = Math.max(queries, searchQueriesOf(events[i]))
      metered.forwarded(outputChars(events))
    },
    ended (err) { end(err === undefined ? 200 : isGatehouseError(err) ? err.status : 500) },
    end,
  }
}

/** What each request holds of the body budget for its image fetches, given back when its handler returns (governed). */
const imageHolds = new WeakMap<HandlerRequest, () => void>()

/**
 * Holds room in the body budget for the `urls` images a request makes the proxy fetch, until its handler has returned
 * (the upstream then has the request): they count against the same budget as a large body, and those of one request
 * may total no more than a request body may hold. Not when the body itself was counted: this request would then wait
 * for room that it holds itself.
 */
async function holdImages (ctx: ProxyContext, req: HandlerRequest, urls: number): Promise<void> {
  const budget = ctx.bodyBudget
  if (ctx.fetchImage === undefined || urls === 0 || budget === undefined || bodyBytes(req.body) > budget.smallBytes) return
  const bytes = Math.min(urls * (ctx.maxImageBytes ?? ctx.maxBodyBytes), ctx.maxBodyBytes)
  imageHolds.set(req, await budget.reserve(bytes, req.signal, req.remoteAddress === undefined ? undefined : addressBucket(req.remoteAddress)))
}

function releaseImages (req: HandlerRequest): void {
  const release = imageHolds.get(req)
  if (release === undefined) return
  imageHolds.delete(req)
  release()
}

/** The upstream's events, then `beforeEnd` awaited before they end. */
async function * thenBefore (events: AsyncIterable<GeminiResponse>, beforeEnd: () => Promise<void>): AsyncGenerator<GeminiResponse> {
  for await (const batch of eventBatches(events)) yield * batch
  await beforeEnd()
}

/**
 * Begins a model call for `caller` (authenticated): the model resolved and allowed, then admitted against the
 * caller's limits with the output it may produce reserved. Throws MODEL_NOT_FOUND, MODEL_NOT_ALLOWED or RATE_LIMITED;
 * generate and stream throw TOOL_NOT_ALLOWED before the upstream call for a built-in tool the caller's level may not send.
 */
export async function beginModelCall (ctx: ProxyContext, req: HandlerRequest, caller: ProxyCaller, spec: ModelCallSpec): Promise<ModelCall> {
  const { model, row, output } = admittedModel(ctx, caller, spec)
  const metered = await ctx.metering.begin(req, caller, spec.surface, row, output, spec.unreported, spec.readBytes, spec.referencedInputTokens)
  if (spec.imageUrls !== undefined && spec.imageUrls > 0) await holdImages(ctx, req, spec.imageUrls)
  const backend = spec.upstream === undefined ? ctx.backend : spec.upstream(ctx.backend, model)
  return new AdmittedCall(ctx, req, caller, model, metered, backend, contentOptions(ctx, req, spec.model))
}

/** A ModelCall as beginModelCall admits it; methods on the prototype, so a call costs one object, not a closure each. */
class AdmittedCall implements ModelCall {
  readonly model: ModelName
  readonly metered: MeteredCall
  readonly content: ContentOptions
  readonly headers: Readonly<Record<string, string>>
  private readonly ctx: ProxyContext
  private readonly req: HandlerRequest
  private readonly caller: ProxyCaller
  private readonly backend: Backend
  private readonly sessionId: HandlerRequest['headers'][string]

  constructor (ctx: ProxyContext, req: HandlerRequest, caller: ProxyCaller, model: ModelName, metered: MeteredCall, backend: Backend, content: ContentOptions) {
    this.ctx = ctx
    this.req = req
    this.caller = caller
    this.model = model
    this.metered = metered
    this.backend = backend
    this.content = content
    this.headers = metered.headers
    this.sessionId = req.headers['x-session-id']
  }

  /** What goes upstream, as translated (a `-search` name's googleSearch included): its built-in tools allowed, the model's rules applied. */
  private upstreamRequest (request: GeminiRequest): GeminiRequest {
    this.ctx.tools.check(this.caller, geminiToolsUsed(request.tools), this.model.search)
    return applyRequestRules(request, this.model)
  }

  async generate<T> (request: GeminiRequest, translate: (response: GeminiResponse) => T): Promise<T> {
    const response = await this.backend.generate({ model: this.model.base, request: this.upstreamRequest(request), signal: this.req.signal, sessionId: this.sessionId })
    this.metered.usage(usageOf(response))
    // Translated first: an answer that is none (a 502) ends the call as that failure, in the error mapper.
    const answer = translate(response)
    this.metered.end(200)
    return answer
  }

  async stream (request: GeminiRequest, translator: SseTranslator, beforeEnd?: () => Promise<void>): Promise<AsyncIterableIterator<string>> {
    const { ctx, req } = this
    const upstream = await openUpstreamStream(this.backend, { model: this.model.base, request: this.upstreamRequest(request), sessionId: this.sessionId }, req.signal)
    const watch = streamWatch(this.metered)
    const events = beforeEnd === undefined ? upstream.events : thenBefore(upstream.events, beforeEnd)
    return sseBody(events, translator, {
      keepAliveMs: ctx.keepAliveMs,
      keepAlive: translator.keepAlive,
      observer: ctx.observer,
      logger: ctx.logger,
      watch,
      onStop () {
        upstream.abort()
        watch.end(CLIENT_CLOSED)
      },
    })
  }

  async countTokens (request: GeminiRequest): Promise<{ totalTokens: number } & Record<string, unknown>> {
    const counted = await this.backend.countTokens({ model: this.model.base, request, signal: this.req.signal })
    this.metered.end(200)
    return counted
  }

  async embed (requests: GeminiRequest[]): Promise<EmbedResult> {
    const embed = this.backend.embed as NonNullable<Backend['embed']>
    const result = await embed.call(this.backend, { model: this.model.base, requests, signal: this.req.signal })
    if (result.promptTokens !== undefined) this.metered.usage({ inputTokens: result.promptTokens, outputTokens: 0, thinkingTokens: 0, cachedTokens: 0 })
    this.metered.end(200)
    return result
  }
}

/**
 * Begins a request on no model (a model list, a file, an operation): counted against the caller's requests per
 * minute and recorded; it carries the x-ratelimit-* headers. Throws RATE_LIMITED.
 */
export async function beginRequest (ctx: ProxyContext, req: HandlerRequest, caller: ProxyCaller, surface: Surface): Promise<MeteredCall> {
  return await ctx.metering.request(req, caller, surface)
}

/**
 * Begins a read of the model list (`/v1/models`, `/v1beta/models`): recorded as a request, but counted in its own
 * allowance rather than the caller's requests per minute (RateLimiter.listing). Throws RATE_LIMITED.
 */
export async function beginListing (ctx: ProxyContext, req: HandlerRequest, caller: ProxyCaller, surface: Surface): Promise<MeteredCall> {
  return await ctx.metering.listing(req, caller, surface)
}

/**
 * A route's handler under the lifecycle's deny by default: a key's request that fails before it began a call (a body
 * that does not parse, a model refused by the catalogue or the policy) is recorded as a refusal (Metering.refused),
 * an error of its key spending none of its limits (the route's error mapper ends it, lib/proxy/routes.ts).
 * A request whose key does not authenticate is not recorded.
 */
export function governed (ctx: ProxyContext, surface: Surface, handler: Handler): Handler {
  return async function governedHandler (req) {
    try {
      return await handler(req)
    } catch (err) {
      // A limiter's refusal was counted and recorded where it was made.
      const refusedByLimits = isGatehouseError(err) && err.code === 'RATE_LIMITED'
      if (req.method !== 'OPTIONS' && !refusedByLimits && ctx.metering.callOf(req) === undefined) {
        let caller: ProxyCaller | undefined
        try {
          caller = await ctx.checkAuth(req)
        } catch {}
        // Past the refusals' own allowance, that refusal (429) is the answer rather than the first failure.
        if (caller !== undefined) await ctx.metering.refused(req, caller, surface)
      }
      throw err
    } finally {
      releaseImages(req)
    }
  }
}

/** What the metered forward reads of an answer as its bytes go by (a Gemini usage scan, an interaction's reader). */
export interface AnswerReader {
  push: (chunk: Uint8Array) => void
  /** The body ended: whatever is still buffered is read. */
  end?: () => void
  /** Awaited before the bytes read so far go out (an interaction's owner recorded before the client sees its id). */
  beforeSend?: () => Promise<void>
  /** A JSON answer read whole at its end: its last chunk goes out only once the end was read. */
  readonly holdsLast?: boolean
  readonly usage: TokenUsage | undefined
  /** Characters of answer text forwarded (the floor of an abandoned call's charge). */
  readonly chars?: number
  /** The answer reported a failure in its body (an SSE error event): the call ends as a 502. */
  readonly failed?: boolean
}

/**
 * An answer passed through, metered as it goes to the client: what it reports read from its bytes by `reader`
 * (default the Gemini usage scan of JSON or SSE, never held whole), and the call ended with its status once the body
 * is done (499 when the client left: `signal`). Serves the native pass-through and the Interactions create.
 */
export function meteredAnswer (metered: MeteredCall, answer: ForwardResponse, signal?: AbortSignal, reader?: AnswerReader): AsyncIterable<Uint8Array> {
  const ok = answer.status >= 200 && answer.status < 300
  if (!ok) {
    metered.end(answer.status)
    return answer.body
  }
  const read: AnswerReader = reader ?? new UsageScan((answer.headers['content-type'] ?? '').startsWith('text/event-stream'))
  const source = answer.body
  return (async function * metering () {
    let status = CLIENT_CLOSED
    let pending: Uint8Array | undefined
    try {
      for await (const chunk of source) {
        read.push(chunk)
        if (read.holdsLast === true) {
          if (pending !== undefined) yield pending
          pending = chunk
          continue
        }
        if (read.beforeSend !== undefined) await read.beforeSend()
        yield chunk
      }
      read.end?.()
      if (read.beforeSend !== undefined) await read.beforeSend()
      if (pending !== undefined) yield pending
      status = read.failed === true ? 502 : answer.status
    } catch (err) {
      // The upstream cut because the client left (the host aborted the forward) is the client's closing.
      status = signal?.aborted === true ? CLIENT_CLOSED : isGatehouseError(err) ? err.status : 502
      throw err
    } finally {
      metered.usage(read.usage)
      if (read.chars !== undefined) metered.forwarded(read.chars)
      metered.end(status)
    }
  })()
}
