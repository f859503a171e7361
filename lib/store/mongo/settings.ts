// The MongoDB store's gateway-wide settings: collection `settings`, one document per name as its _id, so it needs
// no index of its own.
import type { Db } from 'mongodb'
import { checkedSetting, settingName } from '../record-checks.ts'
import type { SettingName, SettingRecord, SettingStore } from '../types.ts'
import { retryDuplicateUpsert } from './driver.ts'

interface SettingDoc extends Omit<SettingRecord, 'name'> {
  _id: SettingName
}

export function createSettingStore (db: Db): SettingStore {
  const settings = db.collection<SettingDoc>('settings')
  return {
    async get (name) {
      const doc = await settings.findOne({ _id: settingName(name) })
      return doc === null ? null : checkedSetting({ name: doc._id, value: doc.value, setBy: doc.setBy, setAt: doc.setAt })
    },

    async set (record) {
      const { name, ...rest } = checkedSetting(record)
      await retryDuplicateUpsert(() => settings.replaceOne({ _id: name }, rest, { upsert: true }))
    },

    async clear (name) {
      const result = await settings.deleteOne({ _id: settingName(name) })
      return result.deletedCount > 0
    },
  }
}
