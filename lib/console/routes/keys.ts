// One's own API keys: listed with their spend this month, made (a sensitive action: recent sign-in or the password) and deleted.
import type { Route } from '../../http/contract.ts'
import type { ConsoleParts } from '../console-parts.ts'
import { keyCreateBody, keyParams, parse } from '../../auth/schemas.ts'
import { bodyAndPassword } from '../callers.ts'
import { dataResponse } from '../security-headers.ts'
import { keysWithSpend } from '../key-spend.ts'

export function keyRoutes ({ route, auth: { keys, options: { store, now } }, callers: { caller, present } }: ConsoleParts): Route[] {
  return [
    route('GET', '/api/keys', async (req) => {
      const { user } = await caller(req)
      return dataResponse(await keysWithSpend(store.usage, user.id, await keys.list(user.id), now()))
    }),

    route('POST', '/api/keys', async (req) => {
      const who = await caller(req)
      const [rest, password] = bodyAndPassword(req)
      const input = parse(keyCreateBody, rest)
      await present(who, password, req)
      return dataResponse(await keys.create(who.user.id, input), 201)
    }),

    route('DELETE', '/api/keys/{key_id}', async (req) => {
      const { user } = await caller(req)
      const { key_id: keyId } = parse(keyParams, req.params)
      await keys.deleteOwn(user.id, keyId)
      return dataResponse({ message: 'API key deleted' })
    }),
  ]
}
