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
import type { UsageEntry, UsageLedger } from '../../metering/usage-ledger.ts'
import type { TokenUsage } from '../../metering/token-usage.ts'
import type { PriceList } from '../../metering/call-cost.ts'
import { callUsageOf } from '../../metering/call-cost.ts'
import type { ProxyCaller } from './caller.ts'

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
   * pass-through body it checked), the floor of the input estimate whatever Content-Length said.
   */
  begin (req: HandlerRequest, caller: ProxyCaller, surface: Surface, model: string, requestedOutputTokens?: number, unreported?: Unreported, readBytes?: number): Promise<MeteredCall>
  /** Begins a request on no model: counted against the requests per minute, charged nothing, recorded under NO_MODEL. */
  request (req: HandlerRequest, caller: ProxyCaller, surface: Surface): Promise<MeteredCall>
  /**
   * Begins the record of a key's request refused before its call began (a body that does not parse, a model the
   * catalogue or the policy refuses): spends none of the caller's limits (RateLimiter.refusal: their own allowance,
   * RATE_LIMITED past it), charged nothing, recorded under REFUSED.
   */
  refused (req: HandlerRequest, caller: ProxyCaller, surface: Surface): Promise<MeteredCall>
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
const CHARS_PER_TOKEN = 4

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
 */
function charged (reported: TokenUsage | undefined, forwardedChars: number, estimate: number, unreported: Unreported): TokenUsage | undefined {
  const floor = Math.ceil(forwardedChars / CHARS_PER_TOKEN)
  if (reported === undefined) {
    const input = unreported === 'estimate' ? estimate : 0
    return input === 0 && floor === 0 ? undefined : { inputTokens: input, outputTokens: floor, thinkingTokens: 0, cachedTokens: 0 }
  }
  const output = reported.outputTokens + reported.thinkingTokens
  return output >= floor ? reported : { ...reported, outputTokens: floor - reported.thinkingTokens }
}

/** The output a call that sets no maximum of its own reserves: the model's output limit, at most this. */
export const DEFAULT_OUTPUT_RESERVATION = 8192

/**
 * The output tokens a call reserves at admission (docs/model-proxy.md, "Limits and usage"): the maximum it asks for
 * (`max_completion_tokens`/`max_tokens`, `maxOutputTokens`; a positive whole number, else ignored), else the model's
 * output limit when the catalog knows the model, at most DEFAULT_OUTPUT_RESERVATION; never more than that limit.
 */
export function outputReservation (catalog: { get (id: string): { outputTokenLimit: number } | undefined }, base: string, requested: unknown): number {
  let limit: number | undefined
  try {
    limit = catalog.get(base)?.outputTokenLimit
  } catch {} // a model the catalog refuses was refused before the call began
  if (typeof requested === 'number' && Number.isSafeInteger(requested) && requested > 0) return limit === undefined ? requested : Math.min(requested, limit)
  return limit === undefined ? DEFAULT_OUTPUT_RESERVATION : Math.min(limit, DEFAULT_OUTPUT_RESERVATION)
}

/**
 * The cost fields of a finished call's usage row (docs/prices.md, "Cost per call"): priced from the usage the
 * upstream reported (the charge only when it reported none) at the price in force when the call began.
 */
function costFields (prices: Pick<PriceList, 'cost'> | undefined, backend: string, model: string, at: Date, reported: TokenUsage | undefined, used: TokenUsage | undefined): Pick<UsageEntry, 'costMicros' | 'unpriced'> {
  const priced = reported ?? used
  if (prices === undefined || priced === undefined) return {}
  const cost = prices.cost({ model, backend, at, usage: callUsageOf(priced) })
  return cost.priced ? { costMicros: cost.micros } : { unpriced: true }
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

  function call (caller: ProxyCaller, surface: Surface, model: string, admission: Admission | undefined, estimate: number, unreported: Unreported | undefined): MeteredCall {
    const userId = caller.kind === 'operator' ? 'operator' : caller.userId
    const keyId = caller.kind === 'operator' ? null : caller.keyId
    const level = caller.kind === 'operator' ? 'operator' : caller.accessLevel
    const began = now()
    let ended = false
    let last: TokenUsage | undefined
    let chars = 0
    return {
      headers: admission?.headers ?? NO_HEADERS,
      usage (used) { if (used !== undefined) last = used },
      forwarded (n) { chars += n },
      end (status) {
        if (ended) return
        ended = true
        // A request on no model (unreported undefined) is charged nothing; a refused or failed call only what it reported
        // or sent; one the client left, its input too (the upstream had it).
        const used = unreported === undefined ? undefined : charged(last, chars, status < 400 || status === CLIENT_CLOSED ? estimate : 0, unreported)
        // settle never rejects the answer: a store failure costs this call's charge, not the client's response.
        admission?.settle(used).catch(() => {})
        if (unreported === undefined) {
          usage?.record({ at: now(), userId, keyId, model, surface, status })
          return
        }
        const entry: UsageEntry = { at: now(), userId, keyId, model, surface, status, ...(used === undefined ? {} : { usage: used }), ...costFields(prices, backend, model, began, last, used) }
        report(entry, level)
      },
    }
  }

  // `estimate` undefined: the request's own (requestTokens), worked out here so begin adds no async layer of its own.
  async function admit (req: HandlerRequest, caller: ProxyCaller, surface: Surface, model: string, given: number | undefined, reserved: number, unreported: Unreported | undefined): Promise<MeteredCall> {
    const estimate = given ?? requestTokens(req)
    let admission: Admission | undefined
    if (caller.kind === 'key' && limiter !== undefined) {
      try {
        admission = await limiter.admit(caller, estimate + reserved)
      } catch (err) {
        if (isGatehouseError(err)) {
          const entry = { at: now(), userId: caller.userId, keyId: caller.keyId, model, surface, status: err.status }
          if (unreported === undefined) usage?.record(entry)
          else report(entry, caller.accessLevel)
        }
        throw err
      }
    }
    const metered = call(caller, surface, model, admission, estimate, unreported)
    calls.set(req, metered)
    return metered
  }

  return {
    begin: (req, caller, surface, model, requestedOutputTokens, unreported = 'estimate', readBytes = 0) =>
      admit(req, caller, surface, model, readBytes > 0 ? Math.max(requestTokens(req), Math.ceil(readBytes / CHARS_PER_TOKEN)) : undefined, requestedOutputTokens ?? 0, unreported),
    request: (req, caller, surface) => admit(req, caller, surface, NO_MODEL, 0, 0, undefined),
    async refused (req, caller, surface) {
      let admission: Admission | undefined
      if (caller.kind === 'key' && limiter?.refusal !== undefined) {
        try {
          admission = await limiter.refusal(caller)
        } catch (err) {
          if (isGatehouseError(err)) usage?.record({ at: now(), userId: caller.userId, keyId: caller.keyId, model: REFUSED, surface, status: err.status })
          throw err
        }
      }
      const metered = call(caller, surface, REFUSED, admission, 0, undefined)
      calls.set(req, metered)
      return metered
    },
    callOf: req => calls.get(req),
  }
}
