import t from 'tap'
import { readFile } from 'node:fs/promises'
import { COMMON_PASSWORDS_FILE, commonPasswordsText } from '../../scripts/common-passwords.ts'
import { weakPasswordReason } from '../../lib/auth/password-policy.ts'

// The list the library ships (lib/auth/common-passwords.txt) is @zxcvbn-ts/language-common's, in the form
// scripts/common-passwords.ts writes: run that script when this fails after an update of the package.
t.test('the shipped common-password list is the installed package\'s list, lower-cased, of passwords long enough to pass the length rule', async t => {
  t.ok((await readFile(COMMON_PASSWORDS_FILE, 'utf8')) === commonPasswordsText(), 'lib/auth/common-passwords.txt matches @zxcvbn-ts/language-common')
})

t.test('a password is compared with whole lines of the list only: a part of a listed password, or two of them joined by a line break, may be set', async t => {
  const listed = 'password123'
  t.ok(weakPasswordReason(listed, 'someone') !== undefined, 'the listed password is refused')
  t.equal(weakPasswordReason('assword12', 'someone'), undefined, 'a part of it is not')
  // Neighbours in the file, so a search of the text for the password alone would find them.
  t.equal(weakPasswordReason('iloveyou1\niloveyou11', 'someone'), undefined, 'two listed passwords across a line break are not one')
})
