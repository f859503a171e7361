// Reading a request body up to a size limit, for hosts that hand over a Node stream (the Hapi gateway,
// node:http, Express without a body parser).
import { Readable } from 'node:stream'
import { fail } from '../errors.ts'

/**
 * The whole body, or undefined when empty; PAYLOAD_TOO_LARGE past `maxBytes` (the rest is read and dropped,
 * so the socket stays usable for the 413). Plain stream events: an async iterator costs more per request.
 * With `expectedBytes` (the declared content-length) the body is copied into one buffer of that size as it
 * arrives, so a large body is never held twice (its chunks and their concatenation).
 */
export function readBody (payload: unknown, maxBytes: number, expectedBytes?: number): Promise<Buffer | undefined> {
  if (!(payload instanceof Readable) || payload.readableEnded) return Promise.resolve(undefined)
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let into = expectedBytes !== undefined && expectedBytes > 0 && expectedBytes <= maxBytes ? Buffer.allocUnsafe(expectedBytes) : undefined
    let size = 0
    let settled = false
    const settle = (err?: Error): void => {
      if (settled) return
      settled = true
      payload.off('data', onData)
      if (err !== undefined) reject(err)
      else if (size === 0) resolve(undefined)
      else if (into !== undefined) resolve(size === into.length ? into : into.subarray(0, size))
      else resolve(Buffer.concat(chunks, size))
    }
    const onData = (chunk: Buffer): void => {
      const at = size
      size += chunk.length
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
