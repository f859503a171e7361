// Wraps a store so every operation reports its duration, for the gateway's store-duration histogram.
import { isGatehouseError } from '../errors.ts'
import type { Store } from './types.ts'

/**
 * Called once per operation. `operation` is `users.insert`, `sessions.put`, `ping`...; `ok` is false
 * when the operation failed. A GatehouseError (USERNAME_TAKEN) is an answer, not a store fault, so it counts as ok.
 */
export type StoreObserver = (adapter: string, operation: string, seconds: number, ok: boolean) => void

type Port = Exclude<keyof Store, 'kind' | 'ping' | 'flush' | 'close'>
type Method<P extends Port> = keyof Store[P] & string

/** Every method of every port, the type below failing to compile when a port gains one that is not listed. */
const OPERATIONS = {
  users: ['insert', 'findById', 'findByUsernameKey', 'searchUsernames', 'list', 'update', 'countByAccessLevel'],
  sessions: ['put', 'findByTokenHash', 'delete', 'deleteByUser', 'listByUser'],
  attempts: ['hit', 'get', 'clear', 'clearPrefix'],
  keys: ['create', 'findByDigest', 'get', 'listByUser', 'delete', 'deleteForUser', 'deleteAllForUser', 'names', 'touch'],
  limits: ['get', 'set', 'clear'],
  settings: ['get', 'set', 'clear'],
  counters: ['add', 'get', 'batch'],
  leases: ['acquire', 'renew', 'release', 'count'],
  usage: ['record', 'query'],
  owners: ['put', 'get', 'getMany', 'delete', 'countByUser'],
  responses: ['put', 'get', 'delete'],
} as const satisfies { [P in Port]: ReadonlyArray<Method<P>> }

/** Compiles only while OPERATIONS lists every method of every port. */
type Unlisted = { [P in Port]: Exclude<Method<P>, typeof OPERATIONS[P][number]> }[Port]
const complete: [Unlisted] extends [never] ? true : Unlisted = true

export function instrumentStore (store: Store, observe: StoreObserver): Store {
  const { kind } = store
  function timed<A extends unknown[], R> (operation: string, run: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
    // Plain promise callbacks rather than an async wrapper: one promise less per operation on the proxy's hot path.
    return (...args) => {
      const started = performance.now()
      let result: Promise<R>
      try {
        result = run(...args)
      } catch (err) {
        observe(kind, operation, (performance.now() - started) / 1000, isGatehouseError(err))
        return Promise.reject(err)
      }
      return result.then(value => {
        observe(kind, operation, (performance.now() - started) / 1000, true)
        return value
      }, (err: unknown) => {
        observe(kind, operation, (performance.now() - started) / 1000, isGatehouseError(err))
        throw err
      })
    }
  }

  const ports: Record<string, Record<string, unknown>> = {}
  for (const [port, methods] of Object.entries(OPERATIONS) as Array<[Port, readonly string[]]>) {
    const inner = store[port] as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>
    ports[port] = Object.fromEntries(methods.map(m => [m, timed(`${port}.${m}`, inner[m].bind(inner))]))
  }
  void complete
  return {
    ...(ports as unknown as Pick<Store, Port>),
    kind,
    ping: timed('ping', () => store.ping()),
    flush: timed('flush', () => store.flush()),
    close: timed('close', () => store.close()),
  }
}
