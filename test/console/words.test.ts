// The console's one translation of API refusals into plain words (console/src/words.ts): the form's labels for the
// wire's field names, a person's phrasing for joi's, and the time a Retry-After wait ends.
import t from 'tap'
import { plainWords, untilWords } from '../../console/src/words.ts'

const NOW = new Date('2026-06-01T12:00:00Z')

t.test('validation messages name fields as the forms label them, in plain words', async t => {
  t.equal(plainWords('"expires_in_days" must be less than or equal to 3650'), 'Expiry must be at most 3650.')
  t.equal(plainWords('"username" length must be at least 3 characters long'), 'Username needs at least 3 characters.')
  t.equal(plainWords('"email" must be a valid email'), 'Email must be an email address, such as ada@example.com.')
  t.equal(plainWords('"models[0]" must be 1-128 letters, digits, ".", "_", "-" or "*"'), 'Models must be 1-128 letters, digits, ".", "_", "-" or "*".')
  t.equal(plainWords('"from" must not be after "to"'), 'From must not be after To.')
  t.equal(plainWords('"name" is not allowed to be empty'), 'Name is required.')
})

t.test('a wrong current password is said as a person would say it', async t => {
  t.equal(plainWords('current_password is not the current password'), 'That is not your current password. Check it and try again.')
})

t.test('a lockout says when it ends: the UTC time and how long from now', async t => {
  t.equal(plainWords('Too many failed login attempts; try again later', 900, NOW), 'Too many failed login attempts. You can try again at 12:15 UTC (in 15 minutes).')
  t.equal(untilWords(30, NOW), 'at 12:00 UTC (in 30 seconds)')
  t.equal(untilWords(61, NOW), 'at 12:01 UTC (in 2 minutes)')
  t.equal(plainWords('Sign-up is closed here: ask an admin to add you'), 'Sign-up is closed here: ask an admin to add you', 'a message already in words is left alone')
})
