// The admin's gateway-wide switches: public sign-up and public user lookup, over their configured defaults.
import type { Route } from '../../http/contract.ts'
import type { SettingState } from '../../auth/settings.ts'
import type { ConsoleParts } from '../console-parts.ts'
import { lazySchema, parse } from '../../auth/schemas.ts'
import { bodyAndPassword } from '../callers.ts'
import { dataResponse } from '../security-headers.ts'

/** The API's field name of each setting. */
const FIELDS = { public_signup: 'publicSignup', public_lookup: 'publicLookup' } as const

const settingsBody = lazySchema(Joi => Joi.object<Partial<Record<keyof typeof FIELDS, boolean>>>({
  public_signup: Joi.boolean().strict(),
  public_lookup: Joi.boolean().strict(),
}).min(1).label('body').required().messages({ 'object.min': 'Give public_signup or public_lookup (true or false)' }))

const stateView = (s: SettingState): Record<string, unknown> => ({ value: s.value, configured: s.configured, set_by: s.setBy, set_at: s.setAt?.toISOString() ?? null })

export function adminSettingsRoutes ({ route, auth: { settings }, callers: { admin, present } }: ConsoleParts): Route[] {
  const view = async (): Promise<Record<string, unknown>> => Object.fromEntries(await Promise.all(
    Object.entries(FIELDS).map(async ([field, name]) => [field, stateView(await settings.state(name))])))
  return [
    route('GET', '/api/admin/settings', async (req) => {
      await admin(req)
      return dataResponse(await view())
    }),

    // Opening sign-up or lookup lets anyone in: the same recent sign-in or password as the other admin changes.
    route('PUT', '/api/admin/settings', async (req) => {
      const who = await admin(req)
      const [rest, password] = bodyAndPassword(req)
      const input = parse(settingsBody, rest)
      await present(who, password, req)
      for (const [field, name] of Object.entries(FIELDS)) {
        const value = input[field as keyof typeof FIELDS]
        if (value !== undefined) await settings.set(name, value, who.user.id)
      }
      return dataResponse(await view())
    }),
  ]
}
