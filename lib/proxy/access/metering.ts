// The one owner of what a model call costs: a key caller's call is admitted by the rate limiter before the
// upstream call and settled after it (tokens from the upstream's usageMetadata, the concurrency slot freed), and
// every call, the operator's included, is recorded once in the usage ledger and reported once to onCall.
// Handlers begin a call once they know the model; errors end it in the route table's error mappers (routes.ts),
// streams in their translator (end, failure) or onStop (the client went away).
import type { HandlerRequest } from '../../http/contract.ts'
import { isGatehouseError } from '../../errors.ts'
import type { AccessLevel } from '../../store/types.ts'
import type { RateLimiter, Admission } from '../../metering/rate-limiter.ts'
import type { UsageEntry, UsageLedger } from '../../metering/usage-ledger.ts'
import type { TokenUsage } from '../../metering/token-usage.ts'
import type { GeminiResponse } from '../upstream/backend.ts'
import type { SseTranslator } from '../routes-stream.ts'
import type { ProxyCaller } from './caller.ts'

export type Surface = UsageEntry['surface']

export interface MeteringOptions {
  limiter?: RateLimiter
  usage?: UsageLedger
  onCall?: (entry: UsageEntry, accessLevel: AccessLevel | 'operator') => void
  now: () => Date
}

/** One model call in progress; every ending after the first is ignored. */
export interface MeteredCall {
  /** The x-ratelimit-* headers for every response of the call (none for the operator or without limits). */
  readonly headers: Readonly<Record<string, string>>
  /** The call answered 200 with this upstream response, whose usageMetadata is charged. */
  succeeded (response: GeminiResponse | undefined): void
  /** The call failed before a stream started, answered with `status`. */
  failed (status: number): void
  /** A stream's translator and onStop that end the call with the last usage the upstream reported. */
  streamed (translator: SseTranslator, onStop: () => void): { translator: SseTranslator, onStop: () => void }
}

export interface Metering {
  /**
   * Begins a call of `model` (a base name), reserving its input estimate plus `requestedOutputTokens` (what
   * outputReservation gives; default 0) in the caller's token windows; throws RATE_LIMITED (RateLimitedError,
   * recorded as a 429) when a limit refuses it.
   */
  begin (req: HandlerRequest, caller: ProxyCaller, surface: Surface, model: string, requestedOutputTokens?: number): Promise<MeteredCall>
  /** The call `req` began, if any (for the error mappers). */
  callOf (req: HandlerRequest): MeteredCall | undefined
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({})
/** The status recorded for a stream the client abandoned (nginx's "client closed request"). */
const CLIENT_CLOSED = 499

const count = (n: unknown): number => typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : 0

/** Tokens of an upstream response, as lib/proxy/chat/response-from-gemini.ts reads them; undefined when it reported none. */
export function usageOf (response: GeminiResponse | undefined): TokenUsage | undefined {
  const u = (response as { usageMetadata?: Record<string, unknown> } | undefined)?.usageMetadata
  if (u === undefined || u === null || typeof u !== 'object') return undefined
  return { inputTokens: count(u.promptTokenCount), outputTokens: count(u.candidatesTokenCount), thinkingTokens: count(u.thoughtsTokenCount), cachedTokens: count(u.cachedContentTokenCount) }
}

/** The size of a body as the host gave it (bytes or text); 0 for a value a host parsed already. */
export function bodyBytes (body: unknown): number {
  if (typeof body === 'string') return Buffer.byteLength(body)
  return body instanceof Uint8Array ? body.byteLength : 0
}

/**
 * The input tokens a request reserves before the call: its JSON bytes / 4, the usual characters per token of text.
 * Only a reservation; the charge is what the upstream reports.
 */
export function estimateInputTokens (body: unknown): number {
  return Math.ceil(bodyBytes(body) / 4)
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

export function createMetering (options: MeteringOptions): Metering {
  const { limiter, usage, onCall, now } = options
  const calls = new WeakMap<HandlerRequest, MeteredCall>()

  function report (entry: UsageEntry, level: AccessLevel | 'operator'): void {
    usage?.record(entry)
    if (onCall !== undefined) {
      // A failing metrics hook must never change an answer.
      try { onCall(entry, level) } catch {}
    }
  }

  function call (caller: ProxyCaller, surface: Surface, model: string, admission: Admission | undefined): MeteredCall {
    const userId = caller.kind === 'operator' ? 'operator' : caller.userId
    const keyId = caller.kind === 'operator' ? null : caller.keyId
    const level = caller.kind === 'operator' ? 'operator' : caller.accessLevel
    let ended = false
    const end = (status: number, used: TokenUsage | undefined): void => {
      if (ended) return
      ended = true
      // settle never rejects the answer: a store failure costs this call's charge, not the client's response.
      admission?.settle(used).catch(() => {})
      report(used === undefined ? { at: now(), userId, keyId, model, surface, status } : { at: now(), userId, keyId, model, surface, status, usage: used }, level)
    }
    return {
      headers: admission?.headers ?? NO_HEADERS,
      succeeded: response => { end(200, usageOf(response)) },
      failed: status => { end(status, undefined) },
      streamed (translator, onStop) {
        // Each event's usageMetadata is the running total so far: the last one is what the call used.
        let last: TokenUsage | undefined
        return {
          translator: {
            head: translator.head,
            events (batch) {
              for (let i = batch.length - 1; i >= 0; i--) {
                const u = usageOf(batch[i])
                if (u !== undefined) { last = u; break }
              }
              return translator.events(batch)
            },
            end () {
              end(200, last)
              return translator.end()
            },
            error (err) {
              end(isGatehouseError(err) ? err.status : 500, last)
              return translator.error(err)
            },
          },
          onStop () {
            onStop()
            end(CLIENT_CLOSED, last)
          },
        }
      },
    }
  }

  return {
    async begin (req, caller, surface, model, requestedOutputTokens) {
      let admission: Admission | undefined
      if (caller.kind === 'key' && limiter !== undefined) {
        try {
          admission = await limiter.admit(caller, estimateInputTokens(req.body) + (requestedOutputTokens ?? 0))
        } catch (err) {
          if (isGatehouseError(err)) report({ at: now(), userId: caller.userId, keyId: caller.keyId, model, surface, status: err.status }, caller.accessLevel)
          throw err
        }
      }
      const metered = call(caller, surface, model, admission)
      calls.set(req, metered)
      return metered
    },
    callOf: req => calls.get(req),
  }
}
