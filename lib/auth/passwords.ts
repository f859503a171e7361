import { randomBytes } from 'node:crypto'
import { availableParallelism } from 'node:os'
import { argon2 } from '../load-package.ts'
import type { Algorithm, Options } from '@node-rs/argon2'

/** argon2id cost parameters (the PHC string of every hash records the ones it was made with). */
export interface Argon2Params {
  /** Memory in KiB. Default 19456 (19 MiB, OWASP's minimum for argon2id). */
  memoryCost: number
  /** Passes over memory. Default 2 (OWASP). */
  timeCost: number
  /** Lanes. Default 1 (OWASP). */
  parallelism: number
}

// The package declares its algorithms as a const enum, which type stripping cannot read; 2 is argon2id.
const ARGON2ID: Algorithm = 2

export interface PasswordHasher {
  hash (password: string): Promise<string>
  /**
   * Verifies against a stored hash; for an unknown user pass undefined: the same argon2 work is done against a
   * dummy hash. Waits ahead of queued hash() calls.
   */
  verify (storedHash: string | undefined, password: string): Promise<boolean>
  /** True when a stored hash was made with other parameters than the current ones (rehash at next login). */
  isOutdated (storedHash: string): boolean
}

/**
 * At most `limit` tasks run at once; the others wait their turn in arrival order, except that an urgent task
 * goes ahead of every waiting task that is not.
 */
export function createGate (limit: number): <T>(task: () => Promise<T>, urgent?: boolean) => Promise<T> {
  let running = 0
  const waiting: Array<() => void> = []
  const waitingUrgent: Array<() => void> = []
  return async (task, urgent = false) => {
    if (running < limit) running++
    else await new Promise<void>(resolve => (urgent ? waitingUrgent : waiting).push(resolve))
    try {
      return await task()
    } finally {
      const next = waitingUrgent.shift() ?? waiting.shift()
      if (next !== undefined) next()
      else running--
    }
  }
}

/**
 * The default number of argon2 computations in flight: one more than there are cores, so a core never
 * idles while the event loop hands it the next hash (measured: +7 % logins/s on 2 cores over one per
 * core), and at most 3. They run on libuv's threadpool (4 threads unless UV_THREADPOOL_SIZE says
 * otherwise), as do file writes: a burst of logins must leave a thread for the store's saves.
 */
export function defaultHashConcurrency (): number {
  return Math.min(availableParallelism() + 1, 3)
}

export function createPasswordHasher (params: Argon2Params, concurrency = defaultHashConcurrency()): PasswordHasher {
  const options: Options = { algorithm: ARGON2ID, ...params }
  const gate = createGate(concurrency)
  // Made once, with the current parameters, so an unknown username costs exactly what a known one does; by the
  // first check, in its slot, rather than at start (an argon2 hash holds 19 MiB while it runs), whether that
  // username is known or not, so the first check costs the same either way.
  let dummyHash: Promise<string> | undefined
  const dummyOf = async (): Promise<string> => await (dummyHash ??= argon2().hash(randomBytes(32), options)
    .catch((err: unknown) => { dummyHash = undefined; throw err }))

  return {
    hash: (password) => gate(() => argon2().hash(password, options)),
    // Checks (logins) go ahead of new hashes (sign-ups, password changes) when hashing is the bottleneck:
    // a flood of sign-ups must not keep existing users out.
    async verify (storedHash, password) {
      return await gate(async () => {
        const dummy = await dummyOf()
        if (storedHash === undefined) {
          await argon2().verify(dummy, password)
          return false
        }
        return await argon2().verify(storedHash, password)
      }, true)
    },
    isOutdated (storedHash) {
      try {
        const used = argon2().parseOptions(storedHash)
        return used.algorithm !== ARGON2ID || used.memoryCost !== params.memoryCost ||
          used.timeCost !== params.timeCost || used.parallelism !== params.parallelism
      } catch {
        return false
      }
    },
  }
}

/** A random password for the system user: 24 base64url characters (144 bits). */
export function randomPassword (): string {
  return randomBytes(18).toString('base64url')
}
