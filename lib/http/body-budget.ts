// How many request-body bytes a process holds at once. A proxied request with a 20 MB image is held several
// times over while it is parsed, translated and sent (about five copies at the peak), so a few of them at once
// can take more memory than a container has: in a 512 MiB pod, three concurrent 24 MB requests got the
// gateway OOM-killed. Routes that take large bodies reserve their declared size here before reading it; a
// request that does not fit waits its turn (first come, first served), and one that waits too long gets a 503
// with Retry-After, which the official SDKs retry. Hosts reserve only after the route's header-only
// authentication (Route.authenticate), and one client address holds at most a share of the budget, so
// neither strangers nor one client sending slowly can keep everyone else's large bodies waiting.
import { totalmem } from 'node:os'
import { fail } from '../errors.ts'
import { addressBucket } from './client-address.ts'

export interface BodyBudget {
  /** Bytes the budget holds. */
  readonly capacity: number
  /** Bytes reserved now. */
  readonly reserved: number
  /** Requests waiting for room. */
  readonly waiting: number
  /** Bodies up to this size are not counted (see BodyBudgetOptions.smallBytes). */
  readonly smallBytes: number
  /** Bytes one client may hold at once (see BodyBudgetOptions.perClientBytes). */
  readonly perClientBytes: number
  /**
   * Reserves `bytes` (capped at the capacity, so any allowed body can be admitted alone), waiting while they do
   * not fit or others wait before it; small bodies (see smallBytes) pass at once, uncounted. With `client` (the
   * key of a client address, see addressBucket), the client's reservations together stay within perClientBytes,
   * except that one holding nothing may always take one body; a request over its client's share waits without
   * holding up the others. Resolves with the function that gives them back (call it once the request no longer
   * holds its body). Rejects with SERVER_BUSY after the wait limit, CLIENT_CLOSED_REQUEST when `signal` aborts.
   */
  reserve (bytes: number, signal?: AbortSignal, client?: string): Promise<() => void>
}

export interface BodyBudgetOptions {
  /** Bytes of bodies held at once. */
  bytes: number
  /** Longest wait for room before a 503, in ms. Default 30 000. */
  maxWaitMs?: number
  /**
   * Bodies up to this size are neither counted nor kept waiting. Default 1 MiB. Whoever holds the budget with
   * large bodies (sent slowly, say) must not stall the ordinary small requests queued behind a large one; only
   * large requests wait, and ordinary ones cost no bookkeeping.
   */
  smallBytes?: number
  /**
   * Bytes one client may hold at once, so one client sending large bodies slowly cannot take the whole budget.
   * Default a quarter of `bytes`. A client holding nothing may always take one body, whatever its size.
   */
  perClientBytes?: number
}

/**
 * The default budget: a sixteenth of the memory the process may use (the container's limit when there is one,
 * else the machine's), and never less than the largest body a route accepts. 32 MiB in a 512 MiB pod: one body
 * of the largest size at a time, with the smaller ones beside it (measured: each 24 MB body in flight took
 * 60-90 MB).
 */
export function defaultBodyBudgetBytes (largestBody: number): number {
  // The global process, not an import of node:process: its ESM namespace reads every getter (4 MB of RSS).
  const limit = process.constrainedMemory()
  const memory = limit > 0 && limit < totalmem() ? limit : totalmem()
  return Math.max(largestBody, Math.floor(memory / 16))
}

interface Waiter { bytes: number, client: string | undefined, admit: () => void }

const NOTHING_TO_GIVE_BACK = (): void => {}

export function createBodyBudget (options: BodyBudgetOptions): BodyBudget {
  const capacity = options.bytes
  const maxWaitMs = options.maxWaitMs ?? 30_000
  const smallBytes = options.smallBytes ?? 1024 * 1024
  const perClientBytes = options.perClientBytes ?? Math.floor(capacity / 4)
  let reserved = 0
  const queue: Waiter[] = []
  /** Bytes held per client key; a client holding nothing has no entry. */
  const held = new Map<string, number>()

  function withinShare (client: string | undefined, bytes: number): boolean {
    if (client === undefined) return true
    const holds = held.get(client)
    return holds === undefined || holds + bytes <= perClientBytes
  }

  function take (client: string | undefined, bytes: number): () => void {
    reserved += bytes
    if (client !== undefined) held.set(client, (held.get(client) ?? 0) + bytes)
    let released = false
    return () => {
      if (released) return
      released = true
      reserved -= bytes
      if (client !== undefined) {
        const left = (held.get(client) ?? bytes) - bytes
        if (left > 0) held.set(client, left)
        else held.delete(client)
      }
      admitWaiting()
    }
  }

  // First come, first served for the budget as a whole; a waiter over its own client's share is passed over
  // (it waits for that client's other bodies), so it cannot hold up other clients queued behind it.
  function admitWaiting (): void {
    for (let i = 0; i < queue.length;) {
      const next = queue[i]
      if (!withinShare(next.client, next.bytes)) {
        i++
        continue
      }
      if (reserved + next.bytes > capacity) return
      queue.splice(i, 1)
      next.admit()
    }
  }

  return {
    capacity,
    smallBytes,
    perClientBytes,
    get reserved () { return reserved },
    get waiting () { return queue.length },
    reserve (requested, signal, client) {
      const bytes = Math.min(Math.max(0, requested), capacity)
      if (signal?.aborted === true) return Promise.reject(fail('CLIENT_CLOSED_REQUEST'))
      if (bytes <= smallBytes) return Promise.resolve(NOTHING_TO_GIVE_BACK)
      if (reserved + bytes <= capacity && withinShare(client, bytes) && queue.every(w => !withinShare(w.client, w.bytes))) {
        return Promise.resolve(take(client, bytes))
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
          client,
          admit: () => {
            clearTimeout(timer)
            signal?.removeEventListener('abort', onAbort)
            resolve(take(client, bytes))
          },
        }
        signal?.addEventListener('abort', onAbort, { once: true })
        queue.push(waiter)
      })
    },
  }
}

/**
 * What a host does before reading a body it is about to read itself (and after the route's authenticate hook):
 * reserve the body's declared size in the route's budget, counted against the client's address when the host
 * knows it. Resolves with the function that gives it back once the handler has answered, or undefined when there
 * is nothing to reserve (no budget, no body, or one over the limit, which is a 413 anyway).
 */
export async function reserveBody (route: { bodyBudget?: BodyBudget, maxBytes: number }, headers: Record<string, unknown>, signal?: AbortSignal, remoteAddress?: string): Promise<(() => void) | undefined> {
  if (route.bodyBudget === undefined) return undefined
  const bytes = declaredBodyBytes(headers, route.maxBytes)
  if (bytes === undefined || bytes > route.maxBytes) return undefined
  return await route.bodyBudget.reserve(bytes, signal, remoteAddress === undefined ? undefined : addressBucket(remoteAddress))
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
