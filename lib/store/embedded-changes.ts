// Which records of the embedded store changed since its last save, for the journal (./embedded-journal.ts): each
// saved list is a Map that notes the ids set or deleted in it; an edit in place (a key's last use, a usage row's
// counts) is noted by name.
import type { RecordKind } from './embedded-file-format.ts'

export interface ChangeLog {
  /** A Map of `kind`'s records by id that notes every set and delete once `start` was called. */
  tracked: <V>(kind: RecordKind) => Map<string, V>
  /** The record of `kind` named `id` was edited in place. */
  changed: (kind: RecordKind, id: string) => void
  /** From now on changes are noted (not while the file is loaded). */
  start: () => void
  /** The changes noted since the last drain, by kind, and forgets them. */
  drain: () => Map<RecordKind, Set<string>>
  /** Whether changes are noted that no save has taken yet. */
  pending: () => boolean
}

export function createChangeLog (): ChangeLog {
  let dirty = new Map<RecordKind, Set<string>>()
  let noting = false
  const changed = (kind: RecordKind, id: string): void => {
    if (!noting) return
    let ids = dirty.get(kind)
    if (ids === undefined) {
      ids = new Set()
      dirty.set(kind, ids)
    }
    ids.add(id)
  }
  class TrackedMap<V> extends Map<string, V> {
    private readonly kind: RecordKind
    constructor (kind: RecordKind) {
      super()
      this.kind = kind
    }

    override set (key: string, value: V): this {
      changed(this.kind, key)
      return super.set(key, value)
    }

    override delete (key: string): boolean {
      const had = super.delete(key)
      if (had) changed(this.kind, key)
      return had
    }
  }
  return {
    tracked: <V>(kind: RecordKind) => new TrackedMap<V>(kind),
    changed,
    start: () => { noting = true },
    drain () {
      const taken = dirty
      dirty = new Map()
      return taken
    },
    pending: () => dirty.size > 0,
  }
}
