// JSON logs with pino. Secrets are redacted at any depth (pino's own `redact` only takes fixed paths):
// fields named like authorization, token, password, key, secret, credential or cookie, and
// `?key=` / `?token=` query values and Bearer/Basic values inside any logged string.
import { pino } from 'pino'
import type { DestinationStream, Logger as PinoLogger } from 'pino'
import type { LogLevel } from './config.ts'

type LogFn = (objOrMsg: unknown, msg?: string) => void

/** The logger shape lib takes: pino-compatible. */
export interface Logger {
  debug: LogFn
  info: LogFn
  warn: LogFn
  error: LogFn
}

export const REDACTED = '[redacted]'

const SECRET_FIELD = /authorization|token|passw|secret|credential|cookie|^key$|key$|[-_]key|^apikey/i
const SECRET_QUERY = /([?&;](?:key|token|access_token|refresh_token|id_token|api_key|apikey|password|client_secret|code)=)[^&#\s"']*/gi
const SECRET_SCHEME = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g
const MAX_DEPTH = 8

/** `s` with secret query values (`?key=`, `?token=`…) and Bearer/Basic credentials replaced. */
export function redactString (s: string): string {
  if (s.includes('=') || s.includes('Bearer') || s.includes('Basic')) {
    return s.replace(SECRET_QUERY, `$1${REDACTED}`).replace(SECRET_SCHEME, `$1 ${REDACTED}`)
  }
  return s
}

/** A copy of `value` with secrets replaced by `[redacted]`; the input is never changed. */
export function redact (value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (typeof value === 'string') return redactString(value)
  if (value === null || typeof value !== 'object') return value
  if (depth >= MAX_DEPTH || seen.has(value)) return '[…]'
  seen.add(value)
  if (Array.isArray(value)) return value.map(v => redact(v, depth + 1, seen))
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
