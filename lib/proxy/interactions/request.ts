// What the Interactions surface checks before an interaction is created or named (docs/interactions.md): the
// create body's model, the fields a key may not send, the ids it names and the Api-Revision header passed on.
import { fail } from '../../errors.ts'
import type { ProxyCaller } from '../access/caller.ts'

/** An interaction id as the gateway accepts one in a path or a body: Google's ids are short URL-safe tokens. */
const INTERACTION_ID = /^[A-Za-z0-9_.-]{1,256}$/
/** Api-Revision names a revision by its date (`2026-05-20`); nothing longer or of another shape is passed on. */
const API_REVISION = /^\d{4}-\d{2}-\d{2}$/

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/** The owner record's name of an interaction. */
export function interactionResource (id: string): string {
  return `interactions/${id}`
}

/** An id from a path or a body, checked; throws INVALID_INPUT for anything else. */
export function interactionId (value: unknown, where: string): string {
  if (typeof value !== 'string' || !INTERACTION_ID.test(value)) throw fail('INVALID_INPUT', `${where} must be an interaction id (letters, digits, '_', '-', '.'; at most 256)`)
  return value
}

/** The client's Api-Revision header, checked, as the header to send upstream (none when the client sent none). */
export function apiRevision (headers: Record<string, string | undefined>): Record<string, string> {
  const given = headers['api-revision']
  if (given === undefined) return {}
  if (!API_REVISION.test(given)) throw fail('INVALID_INPUT', 'Api-Revision must be a revision date such as 2026-05-20')
  return { 'api-revision': given }
}

export interface CreateRequest {
  body: Record<string, unknown>
  /** The model as the client named it (`models/` prefix dropped). */
  model: string
  previousId?: string
  stream: boolean
  /** Whether the upstream keeps the interaction (store, default true): only a stored one has an owner to record. */
  stored: boolean
  maxOutputTokens?: unknown
  /** generation_config.candidate_count: the answers asked for (the output reservation times it). */
  outputCount?: unknown
}

/** `previousInteractionId` → `previous_interaction_id`: the field names the API defines, as Google's JSON parser reads either. */
const snakeCase = (name: string): string => name.replace(/[A-Z]/g, c => `_${c.toLowerCase()}`)

/**
 * An object with its camelCase keys in the snake_case spelling the Interactions API defines, so every check reads
 * one spelling and what goes upstream is what was checked; both spellings of one field is a 400.
 */
function canonical (value: Record<string, unknown>, where: string): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, v] of Object.entries(value)) {
    const name = snakeCase(key)
    if (Object.hasOwn(out, name)) throw fail('INVALID_INPUT', `${where} names ${name} twice (snake_case and camelCase): send one`)
    // Defined, not assigned: a `__proto__` key stays a field rather than setting the object's prototype.
    Object.defineProperty(out, name, { value: v, enumerable: true, writable: true, configurable: true })
  }
  return out
}

/** Fields that are JSON booleans: a string ("true") is refused rather than read one way here and another upstream. */
const BOOLEAN_FIELDS = ['background', 'stream', 'store'] as const

/**
 * A create body checked: a JSON object naming a `model` (agents are not served: they name no model the catalogue and
 * the policy can judge); for a key, no `background` (its tokens would be spent after the call is settled). Its
 * top-level and generation_config fields are canonicalised to snake_case first, and its booleans must be booleans.
 */
export function createRequest (given: unknown, caller: ProxyCaller): CreateRequest {
  if (!isObject(given)) throw fail('INVALID_INPUT', 'The request body must be a JSON object')
  const body = canonical(given, 'The request body')
  if (isObject(body.generation_config)) body.generation_config = canonical(body.generation_config, 'generation_config')
  for (const name of BOOLEAN_FIELDS) {
    if (body[name] !== undefined && typeof body[name] !== 'boolean') throw fail('INVALID_INPUT', `${name} must be true or false (a JSON boolean)`)
  }
  if (body.agent !== undefined || body.agent_config !== undefined) throw fail('INVALID_INPUT', 'Agent interactions are not served by this gateway; name a `model`')
  if (typeof body.model !== 'string' || body.model === '') throw fail('INVALID_INPUT', 'An interaction must name its `model`')
  if (caller.kind === 'key' && body.background === true) {
    throw fail('INVALID_INPUT', 'background interactions are not served to keys: their tokens cannot be metered; stream instead')
  }
  const previousId = body.previous_interaction_id === undefined || body.previous_interaction_id === null
    ? undefined
    : interactionId(body.previous_interaction_id, 'previous_interaction_id')
  const config = isObject(body.generation_config) ? body.generation_config : undefined
  return {
    body,
    model: body.model.replace(/^models\//, ''),
    previousId,
    stream: body.stream === true,
    stored: body.store !== false,
    maxOutputTokens: config?.max_output_tokens,
    outputCount: config?.candidate_count,
  }
}
