// The checks of one environment variable's text, for read-environment.ts's schema: each rule gives the value (trimmed,
// converted) or throws EnvRefusal with why, worded as joi words it, which this file replaces at start-up (loading
// joi and building its schemas took about 120 ms and 5 MB of the gateway's start, bench/README.md, "Footprint
// (issue 24)"; the library still loads joi for its request schemas, on the first request).
import { isIP } from 'node:net'

/** Why a variable's text is refused, to follow its name: `must be a number`. */
export class EnvRefusal extends Error {}

/** A variable's rule: its value from its text (never empty: config.ts skips empty variables), or an EnvRefusal. */
export type EnvRule = (raw: string) => unknown

function refuse (why: string): never {
  throw new EnvRefusal(why)
}

export interface TextOptions {
  /** Leading and trailing white space removed first. Default true. */
  trim?: boolean
  min?: number
  max?: number
  /** The text must match; `name` says what it is in the refusal. */
  pattern?: { regex: RegExp, name: string }
  /** Lower-cased, then one of these. */
  oneOf?: readonly string[]
  hostname?: boolean
  /** An http:// or https:// URL. */
  httpUrl?: boolean
}

/** Text, checked in the order of the options' fields. */
export function text (options: TextOptions = {}): EnvRule {
  return raw => {
    let value = options.trim === false ? raw : raw.trim()
    if (options.min !== undefined && value.length < options.min) refuse(`length must be at least ${options.min} characters long`)
    if (options.max !== undefined && value.length > options.max) refuse(`length must be less than or equal to ${options.max} characters long`)
    if (options.pattern !== undefined && !options.pattern.regex.test(value)) refuse(`fails to match the ${options.pattern.name} pattern`)
    if (options.oneOf !== undefined) {
      value = value.toLowerCase()
      if (!options.oneOf.includes(value)) refuse(`must be one of [${options.oneOf.join(', ')}]`)
    }
    if (options.hostname === true && !isHostname(value)) refuse('must be a valid hostname')
    if (options.httpUrl === true && !isHttpUrl(value)) refuse('must be a valid uri with a scheme matching the http|https pattern')
    return value
  }
}

// A decimal number as joi's number() converts it: sign, digits with an optional fraction, optional exponent.
const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$/i

/** A number within min and max (both included), a whole one when `integer`. */
export function number (options: { integer?: boolean, min: number, max: number }): EnvRule {
  return raw => {
    const value = raw.trim()
    if (!NUMBER.test(value)) refuse('must be a number')
    const n = Number(value)
    if (Number.isInteger(n) && !Number.isSafeInteger(n)) refuse('must be a safe number')
    if (options.integer === true && !Number.isInteger(n)) refuse('must be an integer')
    if (n < options.min) refuse(`must be greater than or equal to ${options.min}`)
    if (n > options.max) refuse(`must be less than or equal to ${options.max}`)
    return n
  }
}

const TRUE = new Set(['true', '1', 'yes', 'on'])
const FALSE = new Set(['false', '0', 'no', 'off'])

/** true, 1, yes, on or false, 0, no, off, in any letter case. */
export const bool: EnvRule = raw => {
  const value = raw.trim().toLowerCase()
  if (TRUE.has(value)) return true
  if (FALSE.has(value)) return false
  return refuse('must be a boolean')
}

// Control characters, white space and the URL's separators (a host name has none of them).
// eslint-disable-next-line no-control-regex
const CONTROL_OR_SEPARATOR = /[\x00-\x20@:/\\#!$&'()*+,;=?]/
const LABEL = /^[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?$/
const TOP_LABEL = /^[a-zA-Z](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?$/

/** An IP address, or a host name of one or more labels (international ones as their punycode). */
function isHostname (value: string): boolean {
  if (isIP(value) !== 0) return true
  if (value.length > 256 || CONTROL_OR_SEPARATOR.test(value)) return false
  let ascii: string
  try {
    ascii = new URL(`http://${value.normalize('NFC').replaceAll('%', '%25')}`).host
  } catch {
    return false
  }
  const labels = ascii.split('.')
  return labels.every((label, i) => label.length > 0 && label.length <= 63 && (i < labels.length - 1 ? LABEL : TOP_LABEL).test(label))
}

function isHttpUrl (value: string): boolean {
  try {
    return /^https?:$/.test(new URL(value).protocol)
  } catch {
    return false
  }
}
