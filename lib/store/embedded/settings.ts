// The embedded store's gateway-wide settings, by name.
import { checkedSetting, settingName } from '../record-checks.ts'
import type { Tables, Writes } from './state.ts'
import type { SettingStore } from '../types.ts'

export function createSettingStore (settings: Tables['settings'], w: Writes): SettingStore {
  return {
    async get (name) {
      const s = settings.get(settingName(name))
      return s === undefined ? null : { ...s, setAt: new Date(s.setAt) }
    },

    async set (record) {
      const checked = checkedSetting(record)
      w.beginChange()
      settings.set(checked.name, checked)
      await w.commit()
    },

    async clear (name) {
      settingName(name)
      w.beginChange()
      if (!settings.delete(name)) return false
      await w.commit()
      return true
    },
  }
}
