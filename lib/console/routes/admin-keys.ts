// The admin's view of one user's API keys: listed with their spend this month, and revoked (re-authenticated).
import type { Route } from '../../http/contract.ts'
import type { ConsoleParts } from '../console-parts.ts'
import { keyParams, parse, targetParams } from '../../auth/schemas.ts'
import { fail } from '../../errors.ts'
import { dataResponse } from '../security-headers.ts'
import { keysWithSpend } from '../key-spend.ts'

export function adminKeyRoutes ({ route, auth: { keys, options: { store, now } }, callers: { admin, adminAction } }: ConsoleParts): Route[] {
  return [
    route('GET', '/api/admin/users/{user_id}/keys', async (req) => {
      await admin(req)
      const { user_id: id } = parse(targetParams, req.params)
      if (await store.users.findById(id) === null) throw fail('USER_NOT_FOUND')
      return dataResponse(await keysWithSpend(store.usage, id, await keys.list(id), now()))
    }),

    // Revoking another user's key is a sensitive change, as their level or status is: a recent sign-in or the password.
    route('DELETE', '/api/admin/users/{user_id}/keys/{key_id}', async (req) => {
      const { id } = await adminAction(req)
      const { key_id: keyId } = parse(keyParams, { key_id: req.params.key_id })
      await keys.deleteOwn(id, keyId)
      return dataResponse({ message: 'API key revoked' })
    }),
  ]
}
