// The one owner of what a model call costs: a key caller's call is admitted by the rate limiter before the
// upstream call and settled after it (tokens from the upstream's usageMetadata, the concurrency slot freed), and
// every call, the operator's included, is recorded once in the usage ledger and reported once to onCall. It
// observes a call's normalised events (usage seen, output forwarded, ended), which the lifecycle
// (lib/proxy/call/lifecycle.ts) sends whatever the surface; errors end a call in the route table's error mappers.
// A request on no model (a file, an operation, a model list) is admitted for its request count only and recorded
// under NO_MODEL; one refused before its call began is recorded under REFUSED, spending no limit (docs/model-proxy.md,
// "Limits and usage").
import type { HandlerRequest, Surface } from '../../http/contract.ts'
import { isGatehouseError } from '../../errors.ts'
import type { AccessLevel } from '../../store/types.ts'
import type { RateLimiter, Admission } from '../../metering/rate-limiter.ts'
import type { CallPrice } from '../../metering/budgets.ts'
import type { UsageEntry, UsageLedger } from '../../metering/usage-ledger.ts'
import type { TokenUsage } from '../../metering/token-usage.ts'
import type { CallCost, PriceList } from '../../metering/call-cost.ts'
import { callUsageOf } from '../../metering/call-cost.ts'
import type { KeyCaller, ProxyCaller } from './caller.ts'

export interface MeteringOptions {
  limiter?: RateLimiter
  usage?: UsageLedger
  onCall?: (entry: UsageEntry, accessLevel: AccessLevel | 'operator') => void
  now: () => Date
  /** Prices each model call (docs/prices.md); absent: usage rows carry no cost. */
  prices?: Pick<PriceList, 'cost'>
  /** The backend calls go to (Backend.name): the price list's backend. */
  backend?: string
}

/** One call in progress, told its normalised events; every ending after the first is ignored. */
export interface MeteredCall {
  /** The x-ratelimit-* headers for every response of the call (none for the operator or without limits). */
  readonly headers: Readonly<Record<string, string>>
  /** The upstream reported this usage; a stream's is a running total, so the last one seen is what the call used. */
  usage (used: TokenUsage | undefined): void
  /** `chars` characters of answer and thought text went to the client. */
  forwarded (chars: number): void
  /** The call ended, answered with `status` (CLIENT_CLOSED when the client went away). */
  end (status: number): void
}

/** How a call that ends without any usage reported is charged: its input estimate, or nothing (countTokens). */
export type Unreported = 'estimate' | 'nothing'

export interface Metering {
  /**
   * Begins a call of `model` (its usage row's name), reserving its input estimate plus `requestedOutputTokens` (what
   * outputReservation gives; default 0) in the caller's token windows; throws RATE_LIMITED (RateLimitedError,
   * recorded as a 429) when a limit refuses it. `readBytes`: the request body's size as the gateway read it (a
   * pass-through body it checked), the floor of the input estimate whatever Content-Length said. `referencedTokens`:
   * the input the upstream brings in by reference (lib/proxy/access/reservation.ts), added to the estimate.
   */
  begin (req: HandlerRequest, caller: ProxyCaller, surface: Surface, model: string, requestedOutputTokens?: number, unreported?: Unreported, readBytes?: number, referencedTokens?: number): Promise<MeteredCall>
  /** Begins a request on no model: counted against the requests per minute, charged nothing, recorded under NO_MODEL. */
  request (req: HandlerRequest, caller: ProxyCaller, surface: Surface): Promise<MeteredCall>
  /**
   * Begins the record of a key's request refused before its call began (a body that does not parse, a model the
   * catalogue or the policy refuses): spends none of the caller's limits (RateLimiter.refusal: their own allowance,
   * RATE_LIMITED past it), charged nothing, recorded under REFUSED.
   */
  refused (req: HandlerRequest, caller: ProxyCaller, surface: Surface): Promise<MeteredCall>
  /**
   * Begins a key's read of the model list: spends no request of the minute (RateLimiter.listing: its own, larger
   * allowance, RATE_LIMITED past it), charged nothing, recorded under NO_MODEL.
   */
  listing (req: HandlerRequest, caller: ProxyCaller, surface: Surface): Promise<MeteredCall>
  /** The call `req` began, if any (for the error mappers). */
  callOf (req: HandlerRequest): MeteredCall | undefined
}

/** The usage row of a request that names no model (files, operations, model lists). */
export const NO_MODEL = 'none'
/** The usage row of a request refused before its call began: an error of its key and user, never a model's row. */
export const REFUSED = '(refused)'
/** The status recorded for a call the client abandoned (nginx's "client closed request"). */
export const CLIENT_CLOSED = 499

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({})

/** The size of a body as the host gave it (bytes or text); 0 for a value a host parsed already. */
export function bodyBytes (body: unknown): number {
  if (typeof body === 'string') return Buffer.byteLength(body)
  return body instanceof Uint8Array ? body.byteLength : 0
}

/** Characters per token, the usual rate for text: estimates and the floor of an abandoned stream. */
export const CHARS_PER_TOKEN = 4

/**
 * The input tokens a request reserves before the call: its JSON bytes / 4, the usual characters per token of text.
 * Only a reservation; the charge is what the upstream reports.
 */
export function estimateInputTokens (body: unknown): number {
  return Math.ceil(bodyBytes(body) / CHARS_PER_TOKEN)
}

/** The input estimate of a request: its body as given, or its Content-Length for a body streamed through (pass-through). */
export function requestTokens (req: HandlerRequest): number {
  const given = estimateInputTokens(req.body)
  if (given > 0) return given
  const length = Number(req.headers['content-length'])
  return Number.isSafeInteger(length) && length > 0 ? Math.ceil(length / CHARS_PER_TOKEN) : 0
}

/**
 * What an ended call is charged (docs/model-proxy.md, "Limits and usage"): the usage the upstream reported, its
 * output at least the text forwarded ÷ 4; without any report, the input estimate (or nothing) and the forwarded text.
 * `abandonedOutput`: the output reserved, when the client left (499): it is the floor while the last usage seen
 * reports no answer tokens, since the upstream may have spent them (thoughts, a function call) before that report.
 */
function charged (reported: TokenUsage | undefined, forwardedChars: number, estimate: number, unreported: Unreported, abandonedOutput: number): TokenUsage | undefined {
  const sent = Math.ceil(forwardedChars / CHARS_PER_TOKEN)
  const floor = (reported?.outputTokens ?? 0) === 0 ? Math.max(sent, abandonedOutput) : sent
  if (reported === undefined) {
    const input = unreported === 'estimate' ? estimate : 0
    return input === 0 && floor === 0 ? undefined : { inputTokens: input, outputTokens: floor, thinkingTokens: 0, cachedTokens: 0 }
  }
  const output = reported.outputTokens + reported.thinkingTokens
  return output >= floor ? reported : { ...reported, outputTokens: floor - reported.thinkingTokens }
}

/** The output a call reserves when it sets no maximum and the catalog knows no limit of its model (a tuned model). */
export const DEFAULT_OUTPUT_RESERVATION = 8192

/**
 * The output tokens a call reserves at admission (docs/model-proxy.md, "Reservations"): the maximum it asks for
 * (`max_completion_tokens`/`max_tokens`, `maxOutputTokens`; a positive whole number, else ignored) but never more
 * than the model's output limit; with no maximum, that limit itself (DEFAULT_OUTPUT_RESERVATION for a model the
 * catalog does not know); times `count`, the answers asked for (reservation.ts outputCount). However large, it
 * refuses no call by itself: a call is admitted while its windows are under their limits (lib/metering/rate-limiter.ts).
 */
export function outputReservation (catalog: { listed (id: string): { outputTokenLimit: number } | undefined }, base: string, requested: unknown, count = 1): number {
  const limit = catalog.listed(base)?.outputTokenLimit
  const asked = typeof requested === 'number' && Number.isSafeInteger(requested) && requested > 0 ? requested : undefined
  const one = asked === undefined ? limit ?? DEFAULT_OUTPUT_RESERVATION : limit === undefined ? asked : Math.min(asked, limit)
  return one * count
}

/**
 * The cost fields of a finished call's usage row (docs/prices.md, "Cost per call"): priced from the usage the
 * upstream reported (the charge only when it reported none) at the price in force when the call began.
 */
function costFields (prices: Pick<PriceList, 'cost'> | undefined, backend: string, model: string, at: Date, reported: TokenUsage | undefined, used: TokenUsage | undefined): Pick<UsageEntry, 'costMicros' | 'unpriced'> {
  const priced = reported ?? used
  if (prices === undefined || priced === undefined) return {}
  const cost = prices.cost({ model, backend, at, usage: callUsageOf(priced, model) })
  return cost.priced ? { costMicros: cost.micros } : { unpriced: true }
}

/**
 * A call's reservation priced on first read (its getters shared on the prototype), so a caller under no dollar
 * budget costs no pricing and no per-call closures.
 */
class LazyPrice implements CallPrice {
  private cost: CallCost | undefined
  private readonly list: Pick<PriceList, 'cost'>
  private readonly backend: string
  private readonly now: () => Date
  readonly model: string
  private readonly estimate: number
  private readonly reserved: number

  constructor (list: Pick<PriceList, 'cost'>, backend: string, now: () => Date, model: string, estimate: number, reserved: number) {
    this.list = list
    this.backend = backend
    this.now = now
    this.model = model
    this.estimate = estimate
    this.reserved = reserved
  }

  private priced (): CallCost {
    this.cost ??= this.list.cost({ model: this.model, backend: this.backend, at: this.now(), usage: { promptTokens: this.estimate, candidatesTokens: this.reserved } })
    return this.cost
  }

  get reservedMicros (): number | undefined {
    const c = this.priced()
    return c.priced ? c.micros : undefined
  }

  get unpriced (): string | undefined {
    const c = this.priced()
    return c.priced ? undefined : c.message
  }
}

/** Where ended calls go: the usage ledger, the price list, the clock and the report to onCall. */
interface CallSink {
  usage: UsageLedger | undefined
  prices: Pick<PriceList, 'cost'> | undefined
  backend: string
  now: () => Date
  report: (entry: UsageEntry, level: AccessLevel | 'operator') => void
}

/** One call's meter; methods on the prototype, so a call costs one object rather than a closure per event. */
class Meter implements MeteredCall {
  readonly headers: Readonly<Record<string, string>>
  private readonly sink: CallSink
  private readonly caller: ProxyCaller
  private readonly surface: Surface
  private readonly model: string
  private readonly admission: Admission | undefined
  private readonly estimate: number
  private readonly unreported: Unreported | undefined
  private readonly reservedOutput: number
  private readonly began: Date
  private ended = false
  private last: TokenUsage | undefined
  private chars = 0

  constructor (sink: CallSink, caller: ProxyCaller, surface: Surface, model: string, admission: Admission | undefined, estimate: number, unreported: Unreported | undefined, reservedOutput: number) {
    this.sink = sink
    this.caller = caller
    this.surface = surface
    this.model = model
    this.admission = admission
    this.estimate = estimate
    this.unreported = unreported
    this.reservedOutput = reservedOutput
    this.headers = admission?.headers ?? NO_HEADERS
    this.began = sink.now()
  }

  usage (used: TokenUsage | undefined): void { if (used !== undefined) this.last = used }

  forwarded (n: number): void { this.chars += n }

  end (status: number): void {
    if (this.ended) return
    this.ended = true
    const { sink, caller, model, surface, admission, unreported } = this
    const userId = caller.kind === 'operator' ? 'operator' : caller.userId
    const keyId = caller.kind === 'operator' ? null : caller.keyId
    // A request on no model (unreported undefined) is charged nothing; a refused or failed call only what it reported
    // or sent; one the client left, its input too (the upstream had it).
    const abandoned = status === CLIENT_CLOSED ? this.reservedOutput : 0
    const used = unreported === undefined ? undefined : charged(this.last, this.chars, status < 400 || status === CLIENT_CLOSED ? this.estimate : 0, unreported, abandoned)
    if (unreported === undefined) {
      // settle never rejects the answer: a store failure costs this call's charge, not the client's response.
      admission?.settle(used).catch(() => {})
      sink.usage?.record({ at: sink.now(), userId, keyId, model, surface, status })
      return
    }
    const cost = costFields(sink.prices, sink.backend, model, this.began, this.last, used)
    // The dollar budgets are charged what the usage row records (lib/metering/budgets.ts).
    admission?.settle(used, cost.costMicros).catch(() => {})
    const entry: UsageEntry = { at: sink.now(), userId, keyId, model, surface, status, ...(used === undefined ? {} : { usage: used }), ...cost }
    sink.report(entry, caller.kind === 'operator' ? 'operator' : caller.accessLevel)
  }
}

export function createMetering (options: MeteringOptions): Metering {
  const { limiter, usage, onCall, now, prices } = options
  const backend = options.backend ?? 'gemini-api'
  const calls = new WeakMap<HandlerRequest, MeteredCall>()

  function report (entry: UsageEntry, level: AccessLevel | 'operator'): void {
    usage?.record(entry)
    if (onCall !== undefined) {
      // A failing metrics hook must never change an answer.
      try { onCall(entry, level) } catch {}
    }
  }

  const sink: CallSink = { usage, prices, backend, now, report }
  const call = (caller: ProxyCaller, surface: Surface, model: string, admission: Admission | undefined, estimate: number, unreported: Unreported | undefined, reservedOutput: number): MeteredCall =>
    new Meter(sink, caller, surface, model, admission, estimate, unreported, reservedOutput)

  /** A limiter's refusal, recorded (with its status) before it is thrown. */
  function refused (err: unknown, caller: KeyCaller, model: string, surface: Surface, unreported: Unreported | undefined): unknown {
    if (isGatehouseError(err)) {
      const entry = { at: now(), userId: caller.userId, keyId: caller.keyId, model, surface, status: err.status }
      if (unreported === undefined) usage?.record(entry)
      else report(entry, caller.accessLevel)
    }
    return err
  }

  /**
   * A model call's reservation at the prices in force now (docs/prices.md, "Budgets"): input estimate, output
   * reserved. Priced on first read, so a caller under no dollar budget costs no pricing.
   */
  function priceOf (model: string, estimate: number, reserved: number): CallPrice {
    return prices === undefined ? { model, reservedMicros: undefined } : new LazyPrice(prices, backend, now, model, estimate, reserved)
  }

  // `estimate` undefined: the request's own (requestTokens), worked out here so begin adds no async layer of its own.
  async function admit (req: HandlerRequest, caller: ProxyCaller, surface: Surface, model: string, given: number | undefined, reserved: number, unreported: Unreported | undefined): Promise<MeteredCall> {
    const estimate = given ?? requestTokens(req)
    let admission: Admission | undefined
    if (caller.kind === 'key' && limiter !== undefined) {
      try {
        admission = await limiter.admit(caller, estimate + reserved, unreported === undefined ? undefined : priceOf(model, estimate, reserved))
      } catch (err) {
        if (!isGatehouseError(err) || err.code !== 'MODEL_UNPRICED') throw refused(err, caller, model, surface, unreported)
        // Refused before anything was counted: counted now as a request (no tokens, no dollars) and ended by the
        // route's error mapper as a failed call is, so it is counted and recorded once.
        let counted: Admission
        try {
          counted = await limiter.admit(caller, 0)
        } catch (over) {
          throw refused(over, caller, model, surface, unreported)
        }
        calls.set(req, call(caller, surface, model, counted, 0, unreported, 0))
        throw err
      }
    }
    const metered = call(caller, surface, model, admission, estimate, unreported, reserved)
    calls.set(req, metered)
    return metered
  }

  /** A key's request admitted by a window of its own (`admitAside`), charged nothing, recorded under `model`. */
  async function aside (req: HandlerRequest, caller: ProxyCaller, surface: Surface, model: string, admitAside: ((caller: KeyCaller) => Promise<Admission>) | undefined): Promise<MeteredCall> {
    let admission: Admission | undefined
    if (caller.kind === 'key' && admitAside !== undefined) {
      try {
        admission = await admitAside(caller)
      } catch (err) {
        if (isGatehouseError(err)) usage?.record({ at: now(), userId: caller.userId, keyId: caller.keyId, model, surface, status: err.status })
        throw err
      }
    }
    const metered = call(caller, surface, model, admission, 0, undefined, 0)
    calls.set(req, metered)
    return metered
  }

  return {
    begin: (req, caller, surface, model, requestedOutputTokens, unreported = 'estimate', readBytes = 0, referencedTokens = 0) =>
      admit(req, caller, surface, model, readBytes > 0 || referencedTokens > 0 ? Math.max(requestTokens(req), Math.ceil(readBytes / CHARS_PER_TOKEN)) + referencedTokens : undefined, requestedOutputTokens ?? 0, unreported),
    request: (req, caller, surface) => admit(req, caller, surface, NO_MODEL, 0, 0, undefined),
    refused: async (req, caller, surface) => await aside(req, caller, surface, REFUSED, limiter?.refusal?.bind(limiter)),
    listing: async (req, caller, surface) => limiter?.listing === undefined
      ? await admit(req, caller, surface, NO_MODEL, 0, 0, undefined)
      : await aside(req, caller, surface, NO_MODEL, limiter.listing.bind(limiter)),
    callOf: req => calls.get(req),
  }
}
