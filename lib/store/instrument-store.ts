// Wraps a store so every operation reports its duration, for the gateway's store-duration histogram.
import { isGatehouseError } from '../errors.ts'
import type { Store } from './types.ts'

/**
 * Called once per operation. `operation` is `users.insert`, `sessions.put`, `ping`...; `ok` is false
 * when the operation failed. A GatehouseError (USERNAME_TAKEN) is an answer, not a store fault, so it counts as ok.
 */
export type StoreObserver = (adapter: string, operation: string, seconds: number, ok: boolean) => void

export function instrumentStore (store: Store, observe: StoreObserver): Store {
  function timed<A extends unknown[], R> (operation: string, run: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
    // Plain promise callbacks rather than an async wrapper: one promise less per operation on the proxy's hot path.
    const { kind } = store
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
  const { users, sessions, attempts, keys, limits, settings, counters, leases, usage, owners, responses } = store

  return {
    kind: store.kind,
    users: {
      insert: timed('users.insert', user => users.insert(user)),
      findById: timed('users.findById', id => users.findById(id)),
      findByUsernameKey: timed('users.findByUsernameKey', key => users.findByUsernameKey(key)),
      searchUsernames: timed('users.searchUsernames', (fragment, limit) => users.searchUsernames(fragment, limit)),
      list: timed('users.list', (limit, offset) => users.list(limit, offset)),
      update: timed('users.update', (id, patch) => users.update(id, patch)),
      countByAccessLevel: timed('users.countByAccessLevel', level => users.countByAccessLevel(level)),
    },
    sessions: {
      put: timed('sessions.put', session => sessions.put(session)),
      findByTokenHash: timed('sessions.findByTokenHash', tokenHash => sessions.findByTokenHash(tokenHash)),
      delete: timed('sessions.delete', tokenHash => sessions.delete(tokenHash)),
      deleteByUser: timed('sessions.deleteByUser', (userId, keep) => sessions.deleteByUser(userId, keep)),
      listByUser: timed('sessions.listByUser', userId => sessions.listByUser(userId)),
    },
    attempts: {
      hit: timed('attempts.hit', (key, windowMs, now) => attempts.hit(key, windowMs, now)),
      get: timed('attempts.get', (key, now) => attempts.get(key, now)),
      clear: timed('attempts.clear', key => attempts.clear(key)),
      clearPrefix: timed('attempts.clearPrefix', prefix => attempts.clearPrefix(prefix)),
    },
    keys: {
      create: timed('keys.create', key => keys.create(key)),
      findByDigest: timed('keys.findByDigest', digest => keys.findByDigest(digest)),
      get: timed('keys.get', keyId => keys.get(keyId)),
      listByUser: timed('keys.listByUser', userId => keys.listByUser(userId)),
      delete: timed('keys.delete', keyId => keys.delete(keyId)),
      deleteForUser: timed('keys.deleteForUser', (userId, keyId) => keys.deleteForUser(userId, keyId)),
      deleteAllForUser: timed('keys.deleteAllForUser', userId => keys.deleteAllForUser(userId)),
      names: timed('keys.names', keyIds => keys.names(keyIds)),
      touch: timed('keys.touch', (keyId, lastUsedAt) => keys.touch(keyId, lastUsedAt)),
    },
    limits: {
      get: timed('limits.get', userId => limits.get(userId)),
      set: timed('limits.set', (userId, override) => limits.set(userId, override)),
      clear: timed('limits.clear', userId => limits.clear(userId)),
    },
    settings: {
      get: timed('settings.get', name => settings.get(name)),
      set: timed('settings.set', record => settings.set(record)),
      clear: timed('settings.clear', name => settings.clear(name)),
    },
    counters: {
      add: timed('counters.add', (key, windowStart, amount, expiresAt) => counters.add(key, windowStart, amount, expiresAt)),
      get: timed('counters.get', (key, windowStart) => counters.get(key, windowStart)),
      batch: timed('counters.batch', ops => counters.batch(ops)),
    },
    leases: {
      acquire: timed('leases.acquire', (key, leaseId, limit, now, expiresAt) => leases.acquire(key, leaseId, limit, now, expiresAt)),
      renew: timed('leases.renew', (key, leaseId, now, expiresAt) => leases.renew(key, leaseId, now, expiresAt)),
      release: timed('leases.release', (key, leaseId) => leases.release(key, leaseId)),
      count: timed('leases.count', (key, now) => leases.count(key, now)),
    },
    usage: {
      record: timed('usage.record', batch => usage.record(batch)),
      query: timed('usage.query', q => usage.query(q)),
    },
    owners: {
      put: timed('owners.put', record => owners.put(record)),
      get: timed('owners.get', (resource, now) => owners.get(resource, now)),
      getMany: timed('owners.getMany', (resources, now) => owners.getMany(resources, now)),
      delete: timed('owners.delete', resource => owners.delete(resource)),
      countByUser: timed('owners.countByUser', (userId, now, exceptPrefix) => owners.countByUser(userId, now, exceptPrefix)),
    },
    responses: {
      put: timed('responses.put', record => responses.put(record)),
      get: timed('responses.get', (id, ownerId, now) => responses.get(id, ownerId, now)),
      delete: timed('responses.delete', (id, ownerId) => responses.delete(id, ownerId)),
    },
    ping: timed('ping', () => store.ping()),
    flush: timed('flush', () => store.flush()),
    close: timed('close', () => store.close()),
  }
}
