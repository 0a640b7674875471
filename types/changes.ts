// The change log every store keeps (contract §9): the one read interface the SQLite, file and
// PostgreSQL stores implement, so `GET /api/sync` (and webhooks' `seq`) work the same on each.
//
// The log holds, per entry key (environment, locale, collection, slug), the entry's latest change
// only. A new change of a key replaces the key's record with one of a higher `seq`; a delete leaves
// a tombstone, kept for the retention period (CMS_SYNC_RETENTION_DAYS). So reading "the records
// after seq N, in seq order" gives each entry changed since N once, and a paged read with writes
// racing it skips nothing: a record that moves past the reader's position is met again later.
//
// How a reader turns a record into a sync item (lib/store/changes/common.ts `announcedOp`): the
// record says which entry changed, and when; the entry's state when read says what it is now. A
// record whose write did not land (a crash between the file store's log append and its entry
// write) therefore announces the entry as it is, which the client may already hold: harmless.
import type { EntryStatus } from './store.js'

export type ChangeOp = 'upsert' | 'delete'

/** The entry a change is about. `locale` is null when locales are off. */
export interface ChangeKey {
  environment: string
  locale: string | null
  collection: string
  slug: string
}

/** A change as a store reports it; the log gives it its `seq`. */
export interface Change extends ChangeKey {
  op: ChangeOp
  /** The entry's status after an upsert; null for a delete. */
  status: EntryStatus | null
  /**
   * ISO 8601 UTC with milliseconds (the stores' form): the entry's `updatedAt` after an upsert
   * (the file store compares it with the entry at open to find writes a crash cut short), the
   * time of a delete (what retention counts from).
   */
  at: string
}

/** A change in the log: frozen. */
export interface ChangeRecord extends Change {
  /** Position in commit order across the whole store: a positive integer, never reused. */
  readonly seq: number
}

export interface ChangeFilter {
  environment: string
  locale: string | null
  /** Only these collections; every collection when absent. */
  collections?: readonly string[]
  /**
   * An initial sync's start (§9 `initial=true`): records at or below `seq` that announce an
   * absent entry (a tombstone; a draft too when `publishedOnly`) are left out, since a client
   * that started from nothing cannot hold it. Records above `seq` came during the run and are
   * all given: the client may have received the entry earlier in the run.
   */
  baseline?: { seq: number, publishedOnly: boolean }
}

export interface ChangePage {
  /** Records after the position asked for, matching the filter, in seq order. */
  records: ChangeRecord[]
  /** Whether more records follow (the page is full). */
  more: boolean
  /**
   * Where the next read goes on from (the next cursor's position): the last record's seq when
   * `more`, else the latest seq the log had when it was read (never below the position asked for).
   */
  upTo: number
}

export interface CompactionResult {
  /** Tombstones dropped because they were older than the retention period. */
  dropped: number
  /** The horizon after compaction. */
  horizon: number
}

export interface ChangeLog {
  /**
   * Up to `limit` records with a seq above `afterSeq`, in seq order. Only changes whose write is
   * over (committed, or failed and recorded as the entry really is) are readable, and only once
   * every change with a lower seq is over too, so a position handed out never has to go back.
   */
  since: (afterSeq: number, limit: number, filter: ChangeFilter) => Promise<ChangePage>
  /** The highest readable seq; 0 for an empty log. */
  latestSeq: () => Promise<number>
  /**
   * The highest seq compaction has dropped (0 when none): a position below it may have missed a
   * delete, so a cursor there is expired (410 CURSOR_EXPIRED; common.ts `cursorState`).
   */
  horizon: () => Promise<number>
  /** Drops tombstones older than the retention period, moving the horizon up. */
  compact: () => Promise<CompactionResult>
}
