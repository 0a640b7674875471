// The newest records of a change log kept in memory in front of its table (the SQLite store's,
// lib/store/changes/sqlite.ts): every record of the log with a seq above `from`, so a read from a
// position at or above `from` (an incremental sync, the common case) needs no query. Bounded: past
// `capacity` records, the older half is let go and `from` moves up; reads from before `from` go to
// the table.
import { ChangeIndex } from './memory.js'
import type { ChangeFilter, ChangeRecord } from '../../../types/changes.js'

export class RecentChanges {
  private index = new ChangeIndex()
  /** Every record of the log with a seq above this is held. */
  private from: number
  /** The highest seq held, or `from` when none is. */
  private last: number

  constructor (private readonly capacity: number, from = 0) {
    if (!Number.isSafeInteger(capacity) || capacity < 2) throw new RangeError('capacity must be an integer of 2 or more')
    this.from = from
    this.last = from
  }

  /** The highest seq held (records above it are not known here yet). */
  get latest (): number {
    return this.last
  }

  /** Whether a read after `afterSeq` is answered here. */
  covers (afterSeq: number): boolean {
    return afterSeq >= this.from
  }

  /** Records written after `latest`, in seq order: each one replaces its key's older record. */
  add (records: Iterable<ChangeRecord>): void {
    for (const record of records) {
      this.index.put(record)
      this.last = record.seq
    }
    if (this.index.size > this.capacity) this.trim()
  }

  /** Holds nothing, from `seq` on: every record of the log with a seq above it is to be added. */
  reset (seq: number): void {
    this.index = new ChangeIndex()
    this.from = seq
    this.last = seq
  }

  /** Up to `limit` records above `afterSeq` (at or above `from`) in the filter's scope that match it, and whether more follow. */
  page (afterSeq: number, limit: number, filter: ChangeFilter): { records: ChangeRecord[], more: boolean } {
    if (!this.covers(afterSeq)) throw new RangeError(`position ${afterSeq} is before the records held (${this.from})`)
    return this.index.page(afterSeq, limit, filter)
  }

  /** Keeps the newest half: `from` moves to the newest record let go. */
  private trim (): void {
    const records = [...this.index.records()].sort((a, b) => a.seq - b.seq)
    const drop = records.length - Math.floor(this.capacity / 2)
    this.from = (records[drop - 1] as ChangeRecord).seq
    this.index = new ChangeIndex()
    for (const record of records.slice(drop)) this.index.put(record)
  }
}
