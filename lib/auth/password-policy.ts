// Which passwords a user may set (ASVS 6.2.4, 6.2.11): beyond the length rule of schemas.ts, none of the
// common passwords of @zxcvbn-ts/language-common's list (about 49,000, 18,000 of them long enough to pass the
// length rule) and none that contains the username, both compared case-insensitively.
import { createRequire } from 'node:module'
import { fail } from '../errors.ts'
import { PASSWORD_MIN } from './schemas.ts'

type CommonDictionary = typeof import('@zxcvbn-ts/language-common')

let common: Set<string> | undefined

/** Built on first use (about 40 ms, 2 MB), so a process that never checks a password never pays for it. */
function commonPasswords (): Set<string> {
  if (common === undefined) {
    const { dictionary } = createRequire(import.meta.url)('@zxcvbn-ts/language-common') as CommonDictionary
    // Shorter ones are refused by length already; keep only those that can reach this check.
    common = new Set(dictionary['passwords-common'].filter(p => p.length >= PASSWORD_MIN).map(p => p.toLowerCase()))
  }
  return common
}

/** Why `password` may not be set for `username`, as the `detail` a client is shown; undefined when it may. */
export function weakPasswordReason (password: string, username: string): string | undefined {
  const lower = password.toLowerCase()
  if (lower.includes(username.toLowerCase())) return 'The password must not contain the username'
  if (commonPasswords().has(lower)) return 'This password is one of the most common passwords; choose a less predictable one'
  return undefined
}

/** Throws WEAK_PASSWORD (400) with the reason when `password` may not be set for `username`. */
export function assertPasswordAllowed (password: string, username: string): void {
  const reason = weakPasswordReason(password, username)
  if (reason !== undefined) throw fail('WEAK_PASSWORD', reason)
}
