// The one place the console turns the API's refusals into plain words: the accounts routes name fields as the
// wire does ("expires_in_days") and word their checks as joi does; a person reads the form's labels instead.

/** The form label of each field the console sends, as the API's messages name it. */
const LABELS: Record<string, string> = {
  username: 'Username',
  password: 'Password',
  current_password: 'Current password',
  email: 'Email',
  name: 'Name',
  expires_in_days: 'Expiry',
  models: 'Models',
  from: 'From',
  to: 'To',
  access_level: 'Access level',
  rpm: 'Requests per minute',
  tpm: 'Tokens per minute',
  tokens_per_day: 'Tokens per UTC day',
  concurrent: 'Calls at once',
  q: 'Search',
  body: 'The form',
}

/** joi's phrasings, and what a person reads instead. */
const PHRASES: Array<[RegExp, string]> = [
  [/ is not allowed to be empty$/, ' is required'],
  [/ length must be at least (\d+) characters long$/, ' needs at least $1 characters'],
  [/ length must be less than or equal to (\d+) characters long$/, ' may have at most $1 characters'],
  [/ must be less than or equal to (\d+)$/, ' must be at most $1'],
  [/ must be greater than or equal to (\d+)$/, ' must be at least $1'],
  [/ must be a valid email$/, ' must be an email address, such as ada@example.com'],
  [/ must be a number$/, ' must be a number'],
  [/ must be an integer$/, ' must be a whole number'],
  [/ with value .* fails to match the required pattern: .*$/, ' has characters that are not allowed'],
  [/ fails to match the required pattern: .*$/, ' has characters that are not allowed'],
  [/ must contain at least (\d+) items$/, ' needs at least $1 entries'],
  [/ contains a duplicate value$/, ' lists a name twice'],
  [/ is not allowed$/, ' is not a field of this form'],
]

/** The console's own wording for refusals whose API text names the wire's fields. */
const WHOLE: Array<[RegExp, string]> = [
  [/^current_password is not the current password$/, 'That is not your current password. Check it and try again.'],
]

/** A field reference as the API writes it (`"models[0]"`, `"limits.member"`), as its form label. */
function label (field: string): string {
  const name = field.replace(/\[\d+\]$/, '').split('.').at(-1) ?? field
  const known = LABELS[name]
  return known ?? name.replaceAll('_', ' ')
}

/** How long until `seconds` from now, in words, with the UTC time it ends. */
export function untilWords (seconds: number, now: Date = new Date()): string {
  const end = new Date(now.getTime() + seconds * 1000)
  const at = end.toISOString().slice(11, 16)
  const minutes = Math.ceil(seconds / 60)
  const span = seconds < 60 ? `${Math.ceil(seconds)} seconds` : minutes === 1 ? '1 minute' : `${minutes} minutes`
  return `at ${at} UTC (in ${span})`
}

/**
 * The API's message (`detail`) in plain words: field names as the form's labels, joi's phrasing as a person's, and,
 * when the answer said when to retry (`retry-after`, in seconds), the time that wait ends.
 */
export function plainWords (detail: string, retryAfter?: number, now: Date = new Date()): string {
  let text = detail
  for (const [pattern, words] of WHOLE) if (pattern.test(text)) text = words
  const quoted = /^"([^"]+)"(.*)$/.exec(text)
  if (quoted !== null) {
    let rest = quoted[2]
    for (const [pattern, words] of PHRASES) rest = rest.replace(pattern, words)
    // Another field the message names ("from" must not be after "to"), known fields only: "_" stays a character.
    text = `${label(quoted[1])}${rest.replace(/"([a-z][a-z_]*)"/g, (whole, f: string) => LABELS[f] ?? whole)}`
    if (!/[.!?]$/.test(text)) text += '.'
  }
  if (retryAfter !== undefined && Number.isFinite(retryAfter) && retryAfter > 0) {
    text = text.replace(/;? ?try again later\.?$/i, '').replace(/\.$/, '') + `. You can try again ${untilWords(retryAfter, now)}.`
  }
  return text
}
