// Every input of the accounts routes, as joi schemas. Unknown keys are rejected (joi's default for
// objects) and messages never echo a value, so a password or a 60 KB string is never sent back.
import type Joi from 'joi'
import { joi } from '../load-package.ts'
import { ACCESS_LEVELS } from '../store/types.ts'
import type { AccessLevel } from '../store/types.ts'
import { fail } from '../errors.ts'
import type { KeyCreateInput } from './keys.ts'
import { MODEL_PATTERN } from '../proxy/access/model-policy.ts'
import { parseDollars } from '../metering/prices.ts'

import { KEY_EXPIRES_DAYS_MAX, PASSWORD_MIN, PASSWORD_MAX, USERNAME_CHARS, USERNAME_MAX, USERNAME_MIN } from '../option-rules.ts'
export { KEY_EXPIRES_DAYS_MAX }
// The username and password rules live in lib/option-rules.ts (the gateway checks its environment with them).
export { USERNAME_PATTERN, PASSWORD_MIN, PASSWORD_MAX } from '../option-rules.ts'
/** A search fragment longer than the longest username can match nothing. */
const SEARCH_QUERY_MAX = 32
export const USER_AGENT_MAX = 1024

/** A schema built on its first use, so importing the library does not load joi (lib/load-package.ts). */
export type LazySchema<T> = () => T

/** `build`, run once with joi when the schema is first asked for. */
export function lazySchema<T> (build: (Joi: typeof import('joi')) => T): LazySchema<T> {
  let built: T | undefined
  return () => (built ??= build(joi()))
}

const username = lazySchema(Joi => Joi.string().min(USERNAME_MIN).max(USERNAME_MAX).pattern(USERNAME_CHARS)
  .messages({ 'string.pattern.base': '{{#label}} may contain only letters, digits, "_", "." and "-"' }))
const password = lazySchema(Joi => Joi.string().min(PASSWORD_MIN).max(PASSWORD_MAX))
// An empty string or null means "no email"; tlds are not checked so internal domains work.
const email = lazySchema(Joi => Joi.string().max(254).email({ tlds: { allow: false } }).lowercase().allow(null, ''))
const userId = lazySchema(Joi => Joi.string().pattern(/^[0-9a-fA-F]{24}$/).lowercase()
  .messages({ 'string.pattern.base': '{{#label}} must be a 24-character hexadecimal id' }))
// The caller's id beside a token: an id that cannot exist names no session, and answers as an unknown one does.
const sessionUserId = lazySchema(Joi => Joi.string().allow('').lowercase())
// Tokens are 43 base64url characters; the bound only keeps junk short before it is hashed.
const TOKEN_MAX = 256
const token = lazySchema(Joi => Joi.string().max(TOKEN_MAX).allow(''))

export interface SignupInput { username: string, password: string, email?: string | null }
export interface LoginInput { username: string, password: string }
export interface UserUpdateInput { username?: string, password?: string, email?: string | null }
export interface SelfUpdateInput extends UserUpdateInput { current_password?: string, revoke_keys?: boolean }
/** The body of ending every other session (optional): `revoke_keys` deletes the user's API keys too. */
export interface EndSessionsInput { revoke_keys?: boolean }
export interface SessionQuery { user_id: string, token?: string }
export interface AdminQuery { admin_id: string, token?: string }
export interface ListQuery { user_id: string, token?: string, limit: number, offset: number }
export interface SearchQuery { query: string, limit: number }

export const signupBody = lazySchema(Joi => Joi.object<SignupInput>({
  username: username().required(),
  password: password().required(),
  email: email(),
}).label('body').required())

/** An admin's addition of a user who chooses their own password through a sign-in link. */
export const inviteBody = lazySchema(Joi => Joi.object<{ username: string, email?: string | null }>({
  username: username().required(),
  email: email(),
}).label('body').required())

/** Redeeming a sign-in link: the link's token and the password its holder chooses. */
export const signInLinkBody = lazySchema(Joi => Joi.object<{ token: string, password: string }>({
  token: Joi.string().max(TOKEN_MAX).required(),
  password: password().required(),
}).label('body').required())

export const loginBody = lazySchema(Joi => Joi.object<LoginInput>({
  username: Joi.string().min(1).max(32).required(),
  password: Joi.string().min(1).max(PASSWORD_MAX).required(),
}).label('body').required())

const NOTHING_TO_UPDATE = 'Nothing to update: give at least one of username, password, email'

const revokeKeys = lazySchema(Joi => Joi.boolean().strict())
export const userUpdateBody = lazySchema(Joi => Joi.object<UserUpdateInput & { revoke_keys?: boolean }>({ username: username(), password: password(), email: email(), revoke_keys: revokeKeys() })
  .or('username', 'password', 'email').label('body').required()
  .messages({ 'object.missing': NOTHING_TO_UPDATE }))

// current_password is checked against the stored hash, so any password that could ever be set is accepted here.
const currentPassword = lazySchema(Joi => Joi.string().min(1).max(PASSWORD_MAX))
export const selfUpdateBody = lazySchema(Joi => Joi.object<SelfUpdateInput>({ username: username(), password: password(), email: email(), current_password: currentPassword(), revoke_keys: revokeKeys() })
  .or('username', 'password', 'email').label('body').required()
  .messages({ 'object.missing': NOTHING_TO_UPDATE }))

/**
 * A body that may carry `current_password` (recent authentication, lib/auth/accounts.ts confirmOwner): the body
 * without it, and the password apart (a string of a password's length, else INVALID_INPUT). Throws for a non-object.
 */
export function withoutCurrentPassword (body: unknown): [Record<string, unknown>, string | undefined] {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw fail('INVALID_INPUT', '"body" must be an object')
  const { current_password: password, ...rest } = body as Record<string, unknown>
  if (password !== undefined && (typeof password !== 'string' || password === '' || password.length > PASSWORD_MAX)) throw fail('INVALID_INPUT', '"current_password" must be a password')
  return [rest, password as string | undefined]
}

export const endSessionsBody = lazySchema(Joi => Joi.object<EndSessionsInput>({ revoke_keys: revokeKeys() }).label('body'))

export const userStatusBody = lazySchema(Joi => Joi.object<{ disabled: boolean }>({ disabled: Joi.boolean().strict().required() }).label('body').required())

export const accessLevelBody = lazySchema(Joi => Joi.object<{ access_level: AccessLevel }>({
  access_level: Joi.string().valid(...ACCESS_LEVELS).required()
    .messages({ 'any.only': `{{#label}} must be one of ${ACCESS_LEVELS.join(', ')}` }),
}).label('body').required())

export const sessionQuery = lazySchema(Joi => Joi.object<SessionQuery>({ user_id: sessionUserId().required(), token: token() }))
export const adminQuery = lazySchema(Joi => Joi.object<AdminQuery>({ admin_id: userId().required(), token: token() }))
export const listQuery = lazySchema(Joi => Joi.object<ListQuery>({
  user_id: userId().required(),
  token: token(),
  limit: Joi.number().integer().min(1).max(1000).default(100),
  offset: Joi.number().integer().min(0).max(Number.MAX_SAFE_INTEGER).default(0),
}))
export const updateQuery = lazySchema(Joi => Joi.object<{ user_id: string }>({ user_id: userId().required() }))
// user_id and token: the caller's session, which publicLookup false requires (any token form).
export const searchQuery = lazySchema(Joi => Joi.object<SearchQuery & { user_id?: string, token?: string }>({
  query: Joi.string().max(SEARCH_QUERY_MAX).required(),
  limit: Joi.number().integer().min(1).max(100).default(20),
  user_id: sessionUserId(),
  token: token(),
}))
export const usernameQuery = lazySchema(Joi => Joi.object<{ username: string, user_id?: string, token?: string }>({ username: username().required(), user_id: sessionUserId(), token: token() }))
export const targetParams = lazySchema(Joi => Joi.object<{ user_id: string }>({ user_id: userId().required() }))
export const emptyQuery = lazySchema(Joi => Joi.object({}))

// API keys (lib/auth/keys.ts). Every field is client-controlled and stored, so each is bounded; strict: a string
// "30" is not a number of days.
export const KEY_NAME_MAX = 64
export const KEY_MODELS_MAX = 32
const keyId = lazySchema(Joi => Joi.string().pattern(/^[0-9a-fA-F]{24}$/).lowercase()
  .messages({ 'string.pattern.base': '{{#label}} must be a 24-character hexadecimal id' }))
export const keyCreateBody = lazySchema(Joi => Joi.object<KeyCreateInput>({
  // Printable: no control, format or line-separator characters, which would garble a listing or a log line.
  name: Joi.string().min(1).max(KEY_NAME_MAX).pattern(/^[^\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+$/u).required()
    .messages({ 'string.pattern.base': '{{#label}} may contain only printable characters' }),
  expires_in_days: Joi.number().strict().integer().min(1).max(KEY_EXPIRES_DAYS_MAX),
  current_password: currentPassword(),
  models: Joi.array().strict().min(1).max(KEY_MODELS_MAX).unique().items(
    Joi.string().pattern(MODEL_PATTERN).messages({ 'string.pattern.base': '{{#label}} must be 1-128 letters, digits, ".", "_", "-" or "*"' }),
  ),
  // Dollars as GEMINI_LIMITS writes them (lib/metering/limits-rule.ts): a number or a decimal string.
  usd_per_month: Joi.any().custom((value, helpers) => parseDollars(value) !== undefined ? value : helpers.error('any.invalid'))
    .messages({ 'any.invalid': '{{#label}} must be US dollars, 0 or more, as a number or a decimal string of at most 6 decimals (5, 2.5 or "2.50")' }),
}).label('body').required())
/** An admin's new password for a user (the console's reset). */
export const passwordResetBody = lazySchema(Joi => Joi.object<{ password: string }>({ password: password().required() }))
export const keyParams = lazySchema(Joi => Joi.object<{ key_id: string }>({ key_id: keyId().required() }))

/** The validated, converted value, or a 400 INVALID_INPUT naming the first problem. */
export function parse<T> (schema: LazySchema<Joi.ObjectSchema<T>>, value: unknown): T {
  // JSON.parse keeps "__proto__" as an own key, and joi drops it silently instead of refusing it.
  if (value !== null && typeof value === 'object' && Object.hasOwn(value, '__proto__')) throw fail('INVALID_INPUT', '"__proto__" is not allowed')
  // abortEarly and convert are joi's defaults; passing them anyway makes joi merge preferences on every call.
  const { value: out, error } = schema().validate(value)
  if (error !== undefined) {
    const message = error.details[0]?.message ?? 'Invalid input'
    // Unknown keys are echoed by name; keep a hostile 60 KB key out of the answer.
    throw fail('INVALID_INPUT', message.length > 200 ? message.slice(0, 200) + '…' : message)
  }
  return out as T
}

const LOWER_HEX_ID = /^[0-9a-f]{24}$/

/**
 * parse(sessionQuery, query), with its common case (a lower-case id, a token within TOKEN_MAX, no other key)
 * accepted without joi: validate is the busiest route, and joi was the largest part of its own work (`node
 * bench/profile.ts validate`). The result is the one joi gives; anything else goes through joi, errors included.
 */
export function parseSessionQuery (query: Readonly<Record<string, unknown>>): SessionQuery {
  let keys = 0
  for (const key in query) if (Object.hasOwn(query, key)) keys++
  const { user_id: userId, token } = query
  if (typeof userId === 'string' && LOWER_HEX_ID.test(userId)) {
    if (token === undefined && keys === 1) return { user_id: userId }
    if (typeof token === 'string' && token.length <= TOKEN_MAX && keys === 2) return { user_id: userId, token }
  }
  return parse(sessionQuery, query)
}
