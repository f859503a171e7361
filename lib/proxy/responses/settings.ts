// createProxy's `responses` option, checked once at construction (docs/responses.md, "Options"): the secret that
// seals thought signatures, the store that keeps responses, and how long they are kept.
import { ConfigurationError } from '../../errors.ts'
import type { ResponseStore } from '../../store/types.ts'
import { createSignatureSealer } from './encrypted-content.ts'
import { DEFAULT_RESPONSES_TTL_DAYS, RESPONSES_SECRET_MIN_LENGTH } from '../../option-rules.ts'
import type { SignatureSealer } from './encrypted-content.ts'
import { createResponsesRequestValidator } from './request-schema.ts'
import { socketDrain, socketLimits } from './socket-limits.ts'
import type { SocketDrain, SocketLimits } from './socket-limits.ts'
import type { ResponsesLimits, ResponsesRequest } from './request-schema.ts'

export interface ResponsesOptions {
  /**
   * Seals the thought signatures a reasoning item's encrypted_content carries, at least 16 characters; every
   * replica behind one address needs the same. Default a random key of this process: items sealed before a restart
   * no longer open (their calls then get the placeholder signature).
   */
  secret?: string
  /** Where `store: true` responses are kept for their owner (a Store's `responses`). Default none: nothing is stored, and previous_response_id is a 404. */
  store?: ResponseStore
  /** Days a stored response is kept, a positive integer. Default 30. */
  ttlDays?: number
  /** Request limits. Default 20000 input items, 512 tools. */
  limits?: Partial<ResponsesLimits>
  /** The WebSocket transport's limits (socket-limits.ts). Default 900 s idle, 3600 s lifetime, 32 sockets a key. */
  websocket?: Partial<SocketLimits>
}

export interface ResponsesSettings {
  validate: (body: unknown) => ResponsesRequest
  sealer: SignatureSealer
  store?: ResponseStore
  ttlMs: number
  websocket: SocketLimits
  /** The proxy's live sockets (Proxy.closeSockets). */
  sockets: SocketDrain
  /** The clock of stored responses' lifetimes (createProxy's `now`). */
  now: () => Date
}

function refuse (name: string, rule: string): never {
  throw new ConfigurationError(`responses.${name}`, `createProxy: responses.${name} must be ${rule}`)
}

export function createResponsesSettings (options: ResponsesOptions | undefined, now: () => Date): ResponsesSettings {
  if (options !== undefined && (options === null || typeof options !== 'object' || Array.isArray(options))) {
    throw new ConfigurationError('responses', 'createProxy: responses must be an object')
  }
  const { secret, store, ttlDays = DEFAULT_RESPONSES_TTL_DAYS, limits, websocket } = options ?? {}
  if (secret !== undefined && (typeof secret !== 'string' || secret.length < RESPONSES_SECRET_MIN_LENGTH)) refuse('secret', `a string of at least ${RESPONSES_SECRET_MIN_LENGTH} characters`)
  if (store !== undefined && (store === null || typeof store !== 'object' || ['put', 'get', 'delete'].some(m => typeof (store as unknown as Record<string, unknown>)[m] !== 'function'))) {
    refuse('store', 'a ResponseStore (put, get, delete): a Store\'s responses')
  }
  if (!Number.isSafeInteger(ttlDays) || ttlDays < 1) refuse('ttlDays', `a positive integer (got ${String(ttlDays)})`)
  if (limits !== undefined && (limits === null || typeof limits !== 'object')) refuse('limits', 'an object')
  for (const [name, value] of Object.entries(limits ?? {})) {
    if (!Number.isSafeInteger(value) || (value as number) < 1) refuse(`limits.${name}`, `a positive integer (got ${String(value)})`)
  }
  return { validate: createResponsesRequestValidator(limits), sealer: createSignatureSealer(secret), store, ttlMs: ttlDays * 86_400_000, websocket: socketLimits(websocket), sockets: socketDrain(), now }
}
