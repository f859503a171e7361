// How many request-body bytes a process holds at once. A proxied request with a 20 MB image is held several
// times over while it is parsed, translated and sent (about five copies at the peak), so a few of them at once
// can take more memory than a container has: in a 512 MiB pod, three concurrent 24 MB requests got the
// gateway OOM-killed. Routes that take large bodies reserve their declared size here before reading it; a
// request that does not fit waits its turn (first come, first served), and one that waits too long gets a 503
// with Retry-After, which the official SDKs retry.
import { constrainedMemory } from 'node:process'
import { totalmem } from 'node:os'
import { fail } from '../errors.ts'
import type { Route } from './contract.ts'

export interface BodyBudget {
  /** Bytes the budget holds. */
  readonly capacity: number
  /** Bytes reserved now. */
  readonly reserved: number
  /** Requests waiting for room. */
  readonly waiting: number
  /** Bodies up to this size are not counted (see BodyBudgetOptions.smallBytes). */
  readonly smallBytes: number
  /**
   * Reserves `bytes` (capped at the capacity, so any allowed body can be admitted alone), waiting while they do
   * not fit or others wait before it; small bodies (see smallBytes) pass at once, uncounted. Resolves with the
   * function that gives them back (call it once the request no longer holds its body). Rejects with SERVER_BUSY
   * after the wait limit, CLIENT_CLOSED_REQUEST when `signal` aborts.
   */
  reserve (bytes: number, signal?: AbortSignal): Promise<() => void>
}

export interface BodyBudgetOptions {
  /** Bytes of bodies held at once. */
  bytes: number
  /** Longest wait for room before a 503, in ms. Default 30 000. */
  maxWaitMs?: number
  /**
   * Bodies up to this size are neither counted nor kept waiting. Default 1 MiB. The budget is reserved before
   * the handler checks the client's password, so whoever holds it with large bodies (sent slowly, say) must
   * not stall the ordinary small requests queued behind a large one; only large requests wait.
   */
  smallBytes?: number
}

/**
 * The default budget: a sixteenth of the memory the process may use (the container's limit when there is one,
 * else the machine's), and never less than the largest body a route accepts. 32 MiB in a 512 MiB pod: one body
 * of the largest size at a time, with the smaller ones beside it (measured: each 24 MB body in flight took
 * 60-90 MB).
 */
export function defaultBodyBudgetBytes (largestBody: number): number {
  const limit = constrainedMemory()
  const memory = limit > 0 && limit < totalmem() ? limit : totalmem()
  return Math.max(largestBody, Math.floor(memory / 16))
}

interface Waiter { bytes: number, admit: () => void }

const NOTHING_TO_GIVE_BACK = (): void => {}

export function createBodyBudget (options: BodyBudgetOptions): BodyBudget {
  const capacity = options.bytes
  const maxWaitMs = options.maxWaitMs ?? 30_000
  const smallBytes = options.smallBytes ?? 1024 * 1024
  let reserved = 0
  const queue: Waiter[] = []

  function releaser (bytes: number): () => void {
    let released = false
    return () => {
      if (released) return
      released = true
      reserved -= bytes
      admitWaiting()
    }
  }

  function admitWaiting (): void {
    while (queue.length > 0 && reserved + queue[0].bytes <= capacity) {
      const next = queue.shift()!
      reserved += next.bytes
      next.admit()
    }
  }

  return {
    capacity,
    smallBytes,
    get reserved () { return reserved },
    get waiting () { return queue.length },
    reserve (requested, signal) {
      const bytes = Math.min(Math.max(0, requested), capacity)
      if (signal?.aborted === true) return Promise.reject(fail('CLIENT_CLOSED_REQUEST'))
      if (bytes <= smallBytes) return Promise.resolve(NOTHING_TO_GIVE_BACK)
      if (queue.length === 0 && reserved + bytes <= capacity) {
        reserved += bytes
        return Promise.resolve(releaser(bytes))
      }
      return new Promise((resolve, reject) => {
        const leave = (err: unknown): void => {
          clearTimeout(timer)
          signal?.removeEventListener('abort', onAbort)
          const i = queue.indexOf(waiter)
          if (i >= 0) queue.splice(i, 1)
          // Whoever waited behind this one may fit now.
          admitWaiting()
          reject(err)
        }
        const onAbort = (): void => leave(fail('CLIENT_CLOSED_REQUEST'))
        const timer = setTimeout(() => leave(fail('SERVER_BUSY', undefined, { retryAfter: 1 })), maxWaitMs)
        const waiter: Waiter = {
          bytes,
          admit: () => {
            clearTimeout(timer)
            signal?.removeEventListener('abort', onAbort)
            resolve(releaser(bytes))
          },
        }
        signal?.addEventListener('abort', onAbort, { once: true })
        queue.push(waiter)
      })
    },
  }
}

/**
 * What a host does before reading a body it is about to read itself: reserve the body's declared size in the
 * route's budget. Resolves with the function that gives it back once the handler has answered, or undefined
 * when there is nothing to reserve (no budget, no body, or one over the limit, which is a 413 anyway).
 */
export async function reserveBody (route: Route, headers: Record<string, unknown>, signal?: AbortSignal): Promise<(() => void) | undefined> {
  if (route.bodyBudget === undefined) return undefined
  const bytes = declaredBodyBytes(headers, route.maxBytes)
  if (bytes === undefined || bytes > route.maxBytes) return undefined
  return await route.bodyBudget.reserve(bytes, signal)
}

/**
 * The bytes a request's body will take: its declared content-length, the route's limit for a chunked body of
 * unknown length, undefined when it has none.
 */
export function declaredBodyBytes (headers: Record<string, unknown>, maxBytes: number): number | undefined {
  const length = headers['content-length']
  if (typeof length === 'string' && length.trim() !== '') {
    const declared = Number(length)
    if (Number.isFinite(declared)) return declared > 0 ? declared : undefined
  }
  return headers['transfer-encoding'] !== undefined ? maxBytes : undefined
}
