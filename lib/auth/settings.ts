// The switches an admin may flip at run time (public sign-up, public user lookup): a stored value wins over the
// configured default (publicSignup, publicLookup), on every replica, until an admin sets it back to the default.
import type { SettingName } from '../store/types.ts'
import type { ResolvedAuthOptions } from './options.ts'

export interface SettingState {
  name: SettingName
  /** In force now. */
  value: boolean
  /** The configured default (the option or its environment variable). */
  configured: boolean
  /** The admin who changed it and when; null while the default holds. */
  setBy: string | null
  setAt: Date | null
}

export interface Settings {
  /** The value in force: what an admin stored, else the configured default. */
  value (name: SettingName): Promise<boolean>
  state (name: SettingName): Promise<SettingState>
  /** Stores an admin's choice; the configured default itself is stored as no choice, so a later configuration applies. */
  set (name: SettingName, value: boolean, adminId: string): Promise<SettingState>
}

export function createSettings ({ store: { settings }, now, publicSignup, publicLookup }: ResolvedAuthOptions): Settings {
  const configured: Record<SettingName, boolean> = { publicSignup, publicLookup }
  const api: Settings = {
    async value (name) {
      return (await settings.get(name))?.value ?? configured[name]
    },
    async state (name) {
      const stored = await settings.get(name)
      return { name, value: stored?.value ?? configured[name], configured: configured[name], setBy: stored?.setBy ?? null, setAt: stored?.setAt ?? null }
    },
    async set (name, value, adminId) {
      if (value === configured[name]) await settings.clear(name)
      else await settings.set({ name, value, setBy: adminId, setAt: now() })
      return await api.state(name)
    },
  }
  return api
}
