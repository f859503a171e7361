// Reading a request body up to a size limit and within a deadline: the one body reader of the serving path
// (lib/http/serve.ts), over a Node stream (Hapi, node:http, Express without a body parser) or a fetch body.
import { Readable } from 'node:stream'
import { fail, isGatehouseError } from '../errors.ts'

/**
 * How long a host waits for a request body. A body that arrives too slowly holds its socket, its place in the
 * body budget (lib/http/body-budget.ts) and its bytes so far; past these limits the request is a 408 in its
 * surface's shape and the connection is closed.
 */
export interface BodyReadLimits {
  /**
   * The whole body must have arrived within this many ms of the start of the read. Default 240 000 (4 minutes:
   * a 20 MB image at 0.7 Mbit/s, a slow mobile uplink; under node:http's own 5-minute requestTimeout, whose 408
   * would not be in the surface's shape).
   */
  timeoutMs: number
  /** Once graceMs have passed, the bytes so far must average at least this many per second. Default 16384 (16 KiB/s). */
  minBytesPerSecond: number
  /** How long a body may arrive at any rate (a mobile radio waking up, a slow start), in ms. Default 10 000. */
  graceMs: number
}

export const DEFAULT_BODY_READ_LIMITS: Readonly<BodyReadLimits> = Object.freeze({ timeoutMs: 240_000, minBytesPerSecond: 16 * 1024, graceMs: 10_000 })

export interface BodyReadWatch {
  /** Counts bytes as they arrive. */
  received: (bytes: number) => void
  /** The read ended (whole, refused or failed): no more checks. */
  stop: () => void
}

/**
 * Watches one body read against `limits` and calls `expired` once when it has run out of time or fallen below
 * the minimum rate. One timer per read, set for the moment the bytes so far would no longer keep up the rate
 * (at the earliest graceMs, at the latest timeoutMs), so a body arriving at a good rate is looked at rarely.
 */
export function watchBodyRead (limits: BodyReadLimits, expired: () => void): BodyReadWatch {
  const started = Date.now()
  let size = 0
  let timer: NodeJS.Timeout | undefined
  const check = (): void => {
    const elapsed = Date.now() - started
    if (elapsed >= limits.timeoutMs || size * 1000 < limits.minBytesPerSecond * elapsed) {
      timer = undefined
      expired()
      return
    }
    const keepsUp = limits.minBytesPerSecond > 0 ? Math.ceil(size * 1000 / limits.minBytesPerSecond) : Infinity
    timer = setTimeout(check, Math.max(1, Math.min(limits.timeoutMs, keepsUp) - elapsed))
  }
  timer = setTimeout(check, Math.min(limits.graceMs, limits.timeoutMs))
  return {
    received (bytes) { size += bytes },
    stop () {
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
    },
  }
}

/** Whether a body read failed for being too slow: hosts close the connection after that 408, the rest of the body unread. */
export function isBodyTimeout (err: unknown): boolean {
  return isGatehouseError(err) && err.code === 'REQUEST_TIMEOUT'
}

/**
 * The whole body, or undefined when empty; PAYLOAD_TOO_LARGE past `maxBytes` (the rest is read and dropped,
 * so the socket stays usable for the 413); REQUEST_TIMEOUT past `limits` (the rest is left unread). Plain
 * stream events: an async iterator costs more per request. With `expectedBytes` (the declared content-length)
 * the body is copied into one buffer of that size as it arrives, so a large body is never held twice (its
 * chunks and their concatenation).
 */
export function readBody (payload: unknown, maxBytes: number, expectedBytes?: number, limits: BodyReadLimits = DEFAULT_BODY_READ_LIMITS): Promise<Buffer | undefined> {
  if (!(payload instanceof Readable) || payload.readableEnded) return Promise.resolve(undefined)
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let into = expectedBytes !== undefined && expectedBytes > 0 && expectedBytes <= maxBytes ? Buffer.allocUnsafe(expectedBytes) : undefined
    let size = 0
    let settled = false
    const watch = watchBodyRead(limits, () => settle(fail('REQUEST_TIMEOUT')))
    const settle = (err?: Error): void => {
      if (settled) return
      settled = true
      watch.stop()
      payload.off('data', onData)
      if (err !== undefined) reject(err)
      else if (size === 0) resolve(undefined)
      else if (into !== undefined) resolve(size === into.length ? into : into.subarray(0, size))
      else resolve(Buffer.concat(chunks, size))
    }
    const onData = (chunk: Buffer): void => {
      const at = size
      size += chunk.length
      watch.received(chunk.length)
      if (size > maxBytes) {
        settle(fail('PAYLOAD_TOO_LARGE'))
        payload.resume()
        return
      }
      if (into !== undefined) {
        if (size <= into.length) {
          chunk.copy(into, at)
          return
        }
        // More than declared (a host that does not enforce content-length): collect from here on.
        chunks.push(into.subarray(0, at))
        into = undefined
      }
      chunks.push(chunk)
    }
    // A client that hangs up mid-body is not a server fault. These listeners stay, so a late socket error
    // never goes unhandled; 'close' also comes after a normal end, hence the check before building an error.
    const cutOff = (): void => { if (!settled) settle(fail('INVALID_INPUT', 'The request body was cut off')) }
    payload.on('data', onData)
    payload.once('end', () => settle())
    payload.on('error', cutOff)
    payload.once('close', cutOff)
    if (payload.destroyed) cutOff()
  })
}

/**
 * The body as it arrives, never held whole: chunks as the stream gives them, with the limits readBody keeps
 * (PAYLOAD_TOO_LARGE past `maxBytes`, the rest read and dropped; REQUEST_TIMEOUT past `limits`, the rest left
 * unread and the socket kept for the 408), thrown from the iteration so whoever forwards the body stops there.
 * For routes that pass a body through (Route.streamBody).
 */
export async function * streamBody (payload: Readable, maxBytes: number, limits: BodyReadLimits = DEFAULT_BODY_READ_LIMITS): AsyncGenerator<Buffer> {
  let expire: (err: Error) => void = () => {}
  const expired = new Promise<never>((_resolve, reject) => { expire = reject })
  expired.catch(() => {})
  const watch = watchBodyRead(limits, () => expire(fail('REQUEST_TIMEOUT')))
  // Not destroyed when the iteration stops early: the socket must stay to carry the answer.
  const chunks = payload.iterator({ destroyOnReturn: false })
  let size = 0
  try {
    for (;;) {
      let next: IteratorResult<Buffer>
      try {
        next = await Promise.race([chunks.next(), expired])
      } catch (err) {
        if (isGatehouseError(err)) throw err
        throw fail('INVALID_INPUT', 'The request body was cut off')
      }
      if (next.done === true) return
      size += next.value.length
      watch.received(next.value.length)
      if (size > maxBytes) {
        payload.resume()
        throw fail('PAYLOAD_TOO_LARGE')
      }
      yield next.value
    }
  } finally {
    watch.stop()
  }
}
