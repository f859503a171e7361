// Stored responses (docs/responses.md, "Stored responses"): what a `store: true` answer keeps, for its owner only,
// and how a later request reads it back. The record holds the response and the input items it answered (a previous
// response's included, each with an id), so previous_response_id continues from both and input_items lists them.
import { fail } from '../../errors.ts'
import type { Logger } from '../../logger.ts'
import { RESPONSE_RECORD_MAX_CHARS } from '../../store/types.ts'
import type { ResponseStore } from '../../store/types.ts'
import type { ProxyCaller } from '../access/caller.ts'
import type { InputItem } from './request-schema.ts'
import { newItemId } from './response-from-gemini.ts'
import type { ResponseObject } from './response-from-gemini.ts'

export interface StoredResponse {
  response: ResponseObject
  /** The input items the response answered, in order, each with an id. */
  input: InputItem[]
}

/** Whose stored responses a caller sees: a key's owner, or the operator. */
export function ownerOf (caller: ProxyCaller): string {
  return caller.kind === 'operator' ? 'operator' : caller.userId
}

const ID_PREFIX: Record<string, string> = { message: 'msg', function_call: 'fc', function_call_output: 'fco', custom_tool_call: 'ctc', custom_tool_call_output: 'ctco', reasoning: 'rs' }

/** The items with an id each (those that came without one get a new one). */
export function withIds (items: readonly InputItem[]): InputItem[] {
  return items.map(item => typeof item.id === 'string' && item.id !== '' ? item : { ...item, id: newItemId(ID_PREFIX[item.type ?? 'message'] ?? 'item') })
}

/** The 404 for a response id its caller does not hold, as OpenAI words it. */
export function responseNotFound (id: string, param: string | null = null): Error {
  return fail('NOT_FOUND', `Response with id '${id}' not found.`, { param })
}

/** Reads a stored response of `owner`; a 404 naming `param` when there is none. */
export async function loadResponse (store: ResponseStore | undefined, id: string, owner: string, now: Date, param: string | null = null): Promise<StoredResponse> {
  const record = store === undefined ? null : await store.get(id, owner, now)
  if (record === null) throw responseNotFound(id, param)
  return JSON.parse(record.data) as StoredResponse
}

/**
 * Keeps `stored` for `owner` until `ttlMs` from now. Never fails the answer: a record too large or a store fault is
 * logged, and the response is then simply not found later.
 */
export async function saveResponse (store: ResponseStore | undefined, stored: StoredResponse, owner: string, now: Date, ttlMs: number, logger: Logger | undefined): Promise<void> {
  if (store === undefined) return
  const data = JSON.stringify(stored)
  if (data.length > RESPONSE_RECORD_MAX_CHARS) {
    logger?.warn({ id: stored.response.id, chars: data.length }, 'response too large to store: previous_response_id will not find it')
    return
  }
  try {
    await store.put({ id: stored.response.id, ownerId: owner, data, createdAt: now, expiresAt: new Date(now.getTime() + ttlMs) })
  } catch (err) {
    logger?.warn({ id: stored.response.id, err }, 'response not stored')
  }
}
