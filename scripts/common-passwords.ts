// Writes lib/auth/common-passwords.txt, the common-password list the library checks passwords against
// (lib/auth/password-policy.ts): the passwords of @zxcvbn-ts/language-common's list long enough to pass the length
// rule, lower-cased, sorted, one a line. A plain text file the library reads on its first check costs about 0.5 MB;
// the package's compressed list, decompressed into a Set, cost about 19 MB of RSS for the life of the process
// (bench/README.md, "Footprint (issue 24)"). test/auth/common-passwords.test.ts fails when the file and the
// installed package disagree: run `node scripts/common-passwords.ts` after updating the package.
import { createRequire } from 'node:module'
import { writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { PASSWORD_MIN } from '../lib/option-rules.ts'

type CommonDictionary = typeof import('@zxcvbn-ts/language-common')

/** The file's text, from the installed package. */
export function commonPasswordsText (): string {
  const { dictionary } = createRequire(import.meta.url)('@zxcvbn-ts/language-common') as CommonDictionary
  const long = dictionary['passwords-common'].filter(p => p.length >= PASSWORD_MIN).map(p => p.toLowerCase())
  return [...new Set(long)].sort().join('\n') + '\n'
}

export const COMMON_PASSWORDS_FILE = fileURLToPath(new URL('../lib/auth/common-passwords.txt', import.meta.url))

if (import.meta.main) await writeFile(COMMON_PASSWORDS_FILE, commonPasswordsText())
