// The readable records of an in-memory change log (the file store's, lib/store/changes/file.ts):
// each key's latest record, and per (environment, locale) the records in seq order for reads.
//
// A record replaced by a newer one of its key stays in its scope's list, marked dead, until dead
// records outnumber live ones; then the list is rebuilt. So a write costs a map update and an
// array push, and a read a binary search and a walk over the records after the position.
import { changeKeyText, changeScopeText, matchesChangeFilter } from './common.js'
import type { ChangeFilter, ChangeKey, ChangeRecord } from '../../../types/changes.js'

interface Slot {
  readonly record: ChangeRecord
  live: boolean
}

class ScopeList {
  slots: Slot[] = []
  live = 0

  push (slot: Slot): void {
    this.slots.push(slot)
    this.live++
  }

  died (): void {
    this.live--
    if (this.slots.length > 64 && this.slots.length > 2 * this.live) this.slots = this.slots.filter(s => s.live)
  }

  /** The index of the first slot with a seq above `seq`. */
  after (seq: number): number {
    let lo = 0
    let hi = this.slots.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if ((this.slots[mid] as Slot).record.seq <= seq) lo = mid + 1
      else hi = mid
    }
    return lo
  }
}

export class ChangeIndex {
  private readonly byKey = new Map<string, Slot>()
  private readonly scopes = new Map<string, ScopeList>()
  private highest = 0

  /** Live records: one per key. */
  get size (): number {
    return this.byKey.size
  }

  get (key: ChangeKey): ChangeRecord | undefined {
    return this.byKey.get(changeKeyText(key))?.record
  }

  /** Makes `record` its key's record. Seqs must come in increasing order. */
  put (record: ChangeRecord): void {
    if (record.seq <= this.highest) throw new RangeError(`seq ${record.seq} is not above ${this.highest}`)
    this.highest = record.seq
    const key = changeKeyText(record)
    const scope = this.scope(record.environment, record.locale)
    const before = this.byKey.get(key)
    if (before !== undefined) this.kill(before)
    const slot = { record, live: true }
    this.byKey.set(key, slot)
    scope.push(slot)
  }

  /** Drops `record` if it is still its key's record (compaction). */
  remove (record: ChangeRecord): boolean {
    const key = changeKeyText(record)
    const slot = this.byKey.get(key)
    if (slot === undefined || slot.record !== record) return false
    this.byKey.delete(key)
    this.kill(slot)
    return true
  }

  /** Every live record, in no particular order. */
  * records (): IterableIterator<ChangeRecord> {
    for (const slot of this.byKey.values()) yield slot.record
  }

  /** Up to `limit` live records above `afterSeq` in the filter's scope that match it, and whether more follow. */
  page (afterSeq: number, limit: number, filter: ChangeFilter): { records: ChangeRecord[], more: boolean } {
    const list = this.scopes.get(changeScopeText(filter.environment, filter.locale))
    const records: ChangeRecord[] = []
    if (list === undefined) return { records, more: false }
    const collections = filter.collections === undefined ? null : new Set(filter.collections)
    const slots = list.slots
    for (let i = list.after(afterSeq); i < slots.length; i++) {
      const slot = slots[i] as Slot
      if (!slot.live || !matchesChangeFilter(slot.record, filter, collections)) continue
      if (records.length === limit) return { records, more: true }
      records.push(slot.record)
    }
    return { records, more: false }
  }

  private kill (slot: Slot): void {
    slot.live = false
    this.scope(slot.record.environment, slot.record.locale).died()
  }

  private scope (environment: string, locale: string | null): ScopeList {
    const text = changeScopeText(environment, locale)
    let list = this.scopes.get(text)
    if (list === undefined) {
      list = new ScopeList()
      this.scopes.set(text, list)
    }
    return list
  }
}
