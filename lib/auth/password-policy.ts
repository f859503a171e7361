// Which passwords a user may set (ASVS 6.2.4, 6.2.11): beyond the length rule of schemas.ts, none of the
// common passwords of @zxcvbn-ts/language-common's list (about 49,000, 18,000 of them long enough to pass the
// length rule) and none that contains the username, both compared case-insensitively.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { fail } from '../errors.ts'

// The list as scripts/common-passwords.ts writes it: lower case, one a line, next to this module (in the built
// package, next to its one bundled module, scripts/bundle-lib.ts).
const COMMON_PASSWORDS_FILE = fileURLToPath(new URL('./common-passwords.txt', import.meta.url))
let common: string | undefined

/**
 * Whether `lower` is a line of the list, read on the first check, so a process that never checks never reads it:
 * 170 kB of text searched whole, about 0.2 ms a check, which only comes with a password set and its argon2 hash.
 */
function isCommon (lower: string): boolean {
  common ??= '\n' + readFileSync(COMMON_PASSWORDS_FILE, 'utf8')
  return !lower.includes('\n') && common.includes('\n' + lower + '\n')
}

/** Why `password` may not be set for `username`, as the `detail` a client is shown; undefined when it may. */
export function weakPasswordReason (password: string, username: string): string | undefined {
  const lower = password.toLowerCase()
  if (lower.includes(username.toLowerCase())) return 'The password must not contain the username'
  if (isCommon(lower)) return 'This password is one of the most common passwords; choose a less predictable one'
  return undefined
}

/** Throws WEAK_PASSWORD (400) with the reason when `password` may not be set for `username`. */
export function assertPasswordAllowed (password: string, username: string): void {
  const reason = weakPasswordReason(password, username)
  if (reason !== undefined) throw fail('WEAK_PASSWORD', reason)
}
