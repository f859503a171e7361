// JSON logs with pino. Secrets are redacted at any depth (pino's own `redact` only takes fixed paths):
// fields named like authorization, token, password, key, secret, credential or cookie, and
// `?key=` / `?token=` query values, Bearer/Basic values and URL passwords inside any logged string.
// The same rules clean span attributes (trace-redaction.ts).
import { pino } from 'pino'
import type { DestinationStream, Logger as PinoLogger } from 'pino'
import type { LogLevel } from './config.ts'

// The logger shape is lib's (one interface); createLogger returns pino's, which has it and more.
export type { Logger } from '../lib/index.ts'

export const REDACTED = '[redacted]'

const SECRET_FIELD = /authorization|token|passw|secret|credential|cookie|^key$|key$|[-_]key|^apikey/i
/** Query parameters whose values are secrets, by their decoded, lower-cased name. */
const SECRET_PARAMS = new Set(['key', 'token', 'access_token', 'refresh_token', 'id_token', 'api_key', 'apikey', 'password', 'client_secret', 'code'])
// Every name=value pair after ?, & or ;, the name as written (it may be percent-encoded: ?tok%65n=).
const QUERY_PAIR = /([?&;])([^=&#?;\s"']*)=([^&#\s"']*)/g
const SECRET_SCHEME = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s/:@"']*):[^\s/@"']*@/gi
const PERCENT_BYTE = /%([0-9a-f]{2})/gi
// A user's API key (`ghk_` and 43 base64url characters, the library's KEY_PREFIX) wherever it appears in a string.
const API_KEY = /\bghk_[A-Za-z0-9_-]{8,}/g
const MAX_DEPTH = 8

/**
 * A query parameter name as the server reads it: `+` is a space and every %XX is decoded, as URLSearchParams
 * does (leniently: a malformed escape stays as written). Secret names are ASCII, so decoding byte by byte is enough.
 */
function paramName (raw: string): string {
  const name = raw.includes('%') || raw.includes('+') ? raw.replace(/\+/g, ' ').replace(PERCENT_BYTE, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))) : raw
  return name.trim().toLowerCase()
}

function redactPair (pair: string, sep: string, name: string): string {
  return SECRET_PARAMS.has(paramName(name)) ? `${sep}${name}=${REDACTED}` : pair
}

/** True for a field or header name that holds a secret (authorization, token, password, x-goog-api-key…). */
export function isSecretField (name: string): boolean {
  return SECRET_FIELD.test(name)
}

/**
 * `s` with secret query values (`?key=`, `?token=`, `?tok%65n=`, `?KEY=`…), Bearer/Basic credentials and URL
 * passwords (`scheme://user:…@`) and user API keys (`ghk_…`) replaced.
 */
export function redactString (s: string): string {
  let out = s
  if (out.includes('=')) out = out.replace(QUERY_PAIR, redactPair)
  if (out.includes('Bearer') || out.includes('Basic')) out = out.replace(SECRET_SCHEME, `$1 ${REDACTED}`)
  if (out.includes('@')) out = out.replace(URL_PASSWORD, `$1:${REDACTED}@`)
  if (out.includes('ghk_')) out = out.replace(API_KEY, REDACTED)
  return out
}

/** A copy of `value` with secrets replaced by `[redacted]`; the input is never changed. */
export function redact (value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (typeof value === 'string') return redactString(value)
  if (value === null || typeof value !== 'object') return value
  if (depth >= MAX_DEPTH || seen.has(value)) return '[…]'
  seen.add(value)
  // A flat header list, as undici keeps them (['x-goog-api-key', 'value', …]): a value after a secret name goes.
  if (Array.isArray(value)) return value.map((v, i) => i % 2 === 1 && typeof v === 'string' && isHeaderName(value[i - 1]) && SECRET_FIELD.test(value[i - 1]) ? REDACTED : redact(v, depth + 1, seen))
  if (Buffer.isBuffer(value) || ArrayBuffer.isView(value)) return `[${value.byteLength} bytes]`
  if (value instanceof Date) return value
  const out: Record<string, unknown> = {}
  if (value instanceof Error) {
    // Errors from HTTP clients carry request configs (headers, bodies): copy them field by field.
    out.type = value.name
    out.message = redactString(value.message)
    if (value.stack !== undefined) out.stack = redactString(value.stack)
    if ('code' in value) out.code = (value as { code: unknown }).code
    if (value.cause !== undefined) out.cause = redact(value.cause, depth + 1, seen)
  }
  for (const [k, v] of Object.entries(value)) {
    if (k in out) continue
    out[k] = SECRET_FIELD.test(k) && v !== undefined && v !== null ? REDACTED : redact(v, depth + 1, seen)
  }
  return out
}

function isHeaderName (value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9-]{1,64}$/.test(value)
}

const PRE_REDACTED = Symbol('gatehouse.log.preRedacted')

/**
 * Marks an entry whose every field the caller has already cleaned (strings through redactString), so the
 * logger passes it through as is. For the one line per request: the generic deep copy costs nearly as much as
 * pino's own formatting. The mark is a symbol key, which pino never prints.
 */
export function preRedacted<T extends object> (entry: T): T {
  (entry as Record<symbol, boolean>)[PRE_REDACTED] = true
  return entry
}

export interface LoggerOptions {
  level: LogLevel
  /** Where lines go. Default stdout. */
  destination?: DestinationStream
}

/**
 * Log lines are written in batches of this many bytes (one write per line halves request throughput), with
 * a plain blocking write, pino's default: handing each batch to libuv's threadpool cost more than writing it...
 */
const BATCH_BYTES = 4096
/** ...and at least this often, so a quiet gateway's lines still show up promptly. */
const FLUSH_INTERVAL_MS = 250

function stdoutDestination (): DestinationStream {
  const destination = pino.destination({ dest: 1, sync: true, minLength: BATCH_BYTES })
  const timer = setInterval(() => {
    try { destination.flush() } catch { clearInterval(timer) } // throws only once the stream is destroyed
  }, FLUSH_INTERVAL_MS).unref()
  return destination
}

let isoMs = 0
let isoText = ''
/** pino's isoTime, formatting each millisecond once: a busy gateway logs many lines per millisecond. */
function isoTime (): string {
  const now = Date.now()
  if (now !== isoMs) {
    isoMs = now
    isoText = `,"time":"${new Date(now).toISOString()}"`
  }
  return isoText
}

export function createLogger (options: LoggerOptions): PinoLogger {
  return pino({
    level: options.level,
    base: { service: 'gatehouse' },
    timestamp: isoTime,
    formatters: { level: label => ({ level: label }) },
    // redact() has already turned errors into plain objects (type, message, stack, code, cause).
    serializers: { err: (err: unknown) => err },
    hooks: {
      logMethod (args, method) {
        const first = args[0] as unknown
        if (typeof first === 'object' && first !== null && PRE_REDACTED in first) return method.apply(this, args)
        const cleaned = (args as unknown[]).map(a => redact(a))
        return method.apply(this, cleaned as Parameters<typeof method>)
      },
    },
  }, options.destination ?? stdoutDestination())
}
