// The one interface every storage backend implements (CMS_STORE=sqlite|file|postgres).
//
// Every store behaves identically (lib/store/*.ts; test/lib/store/contract.test.ts runs one suite
// over each of them):
// - Every read returns a promise, so a store with a database across the network can implement it.
//   Only `revision` is synchronous: it is no read but the store's own local signal (below).
// - Entries handed out are frozen (data included, at every depth): copy before changing.
// - Reads (get, getMany, findByValue, list, entries) see committed, durable writes only.
// - A write is decided when it commits, by the store alone, against every committed write and every
//   write committed before it, from this process or any other sharing the data: create's
//   duplicate slug (CONFLICT), update's missing entry (NOT_FOUND) and a taken `unique` value
//   (VALIDATION_FAILED) reject that write's own promise and no other. SQLite decides in the
//   transaction that stores the row; the file store in its single writer, counting the writes it has
//   in flight; PostgreSQL in the write's savepoint, inside a transaction holding the schema's
//   advisory write lock (the slug by the unique index).
//   No caller needs a lock for these rules, and concurrent writes share commits (SQLite: one
//   transaction per event-loop turn; file store: parallel fsyncs, ordered per entry).
// - A store's write methods are the one place where a write commits: whatever must commit with the
//   entry (the change log) is recorded there. Each write that changes an entry gets a `seq` in the
//   store's change log (`changes`, contract §9), in commit order across the whole store: SQLite
//   records it in the write's savepoint; the file store appends it durably before the entry file
//   is renamed into place (and repairs a record a crash cut short at open); PostgreSQL in the
//   write's savepoint, its seq handed out under the write lock (so in commit order). A write resolves only once its record is durable, so a client that was
//   answered finds its write in the log, after any restart or crash.
import type { ChangeLog } from './changes.js'
import type { EditorialStore, StoredDraft } from './editorial.js'
import type { ListQuery } from './query.js'
import type { ResolvedSchema } from './schema.js'
import type { Scope } from './scope.js'

export type EntryStatus = 'draft' | 'published'

/** An entry as stored: the data holds the schema fields only (no `_slug`, no system fields). */
export interface StoredEntry {
  slug: string
  status: EntryStatus
  data: Record<string, unknown>
  /** ISO 8601 UTC, kept by the store. */
  createdAt: string
  updatedAt: string
}

export interface EntryInput {
  slug: string
  status: EntryStatus
  data: Record<string, unknown>
  /**
   * Dotted paths of the collection's `unique` fields (CollectionModel.uniqueFields), given with
   * each write rather than learnt from prepareCollection, so the rule follows the very model
   * the data was validated against, even across a schema change racing the write. The store
   * decides them as part of the write (see above): a scalar value (string, finite number,
   * boolean) that another entry of the same collection, locale and environment holds at that
   * path rejects with VALIDATION_FAILED, one message per path,
   * `<path>: must be unique; the entry '<slug>' already has this value`; a clash is reported
   * before create's duplicate slug, and after update's missing entry. Absent or empty: nothing
   * is unique.
   */
  unique?: readonly string[]
  /**
   * CMS_REVISIONS: when above 0, the write also stores a version of the entry as written (its
   * status and data, types/editorial.ts), numbered one above the entry's newest (kept or not,
   * also across a delete), and drops the versions older than the newest `keepVersions`, all in
   * the write's own commit. Absent or 0: no version.
   */
  keepVersions?: number
  /** The write publishes the entry's pending draft: the draft is removed in the write's own commit. */
  clearDraft?: boolean
  /**
   * update only (a create ignores it): what the caller read and built this write from. The write
   * applies only if, when it is decided (in its commit, as the rules above), the entry is still
   * exactly `entry` (its status, updated_at and data) and, when `draft` is given, the entry's
   * pending draft is still exactly `draft` (its updated_at and data; gone or saved again since:
   * refused). Else it writes nothing (no version, no change record, the draft untouched) and
   * rejects with CONFLICT, an `EntryChanged` (lib/store/common.ts `isEntryChanged`), after a
   * missing entry (NOT_FOUND) and before a unique clash: the caller reads again and retries. So
   * a read-modify-write is not lost to another process's write in between (contract §12).
   * Absent: the write applies to whatever is stored.
   */
  expected?: WritePrecondition
}

/** What an update was built from (EntryInput.expected): the stored entry and pending draft as read. */
export interface WritePrecondition {
  entry: Pick<StoredEntry, 'status' | 'updatedAt' | 'data'>
  /** The pending draft a publish read (with clearDraft); absent: the draft is not checked. */
  draft?: Pick<StoredDraft, 'updatedAt' | 'data'>
}

export interface ListResult {
  items: StoredEntry[]
  total: number
  /** Whether matches follow the page: given by keyset reads (`query.after`), which have no offset to count from. */
  more?: boolean
}

/** What a create or update committed: the entry as stored, and its change's position in the log. */
export interface StoredWrite {
  entry: StoredEntry
  /** The change's `seq` (ChangeRecord.seq): what the write's webhook payload carries. */
  seq: number
}

export interface StoredLocation {
  scope: Scope
  collection: string
  entry: StoredEntry
}

export interface ContentStore extends EditorialStore {
  readonly kind: 'sqlite' | 'file' | 'postgres'
  /** Opens the database or builds the in-memory index. */
  open: () => Promise<void>
  /** Flushes pending writes and releases files and handles. */
  close: () => Promise<void>
  /** Makes sure a collection's storage location exists in every environment (schema create). */
  ensureCollection: (collection: string) => Promise<void>
  /**
   * Prepares a collection's indexes from its resolved schema (SQLite: expression indexes for
   * `default_sort` and `unique` fields; the file store needs none). Idempotent; call at start
   * and after every schema create or update. The store plugin does so. Indexes only: the
   * unique rule comes with each write (EntryInput.unique).
   */
  prepareCollection: (schema: ResolvedSchema) => Promise<void>

  get: (scope: Scope, collection: string, slug: string) => Promise<StoredEntry | undefined>
  /** Batch read for reference checks and `_resolve` (no query per reference). */
  getMany: (scope: Scope, collection: string, slugs: readonly string[]) => Promise<Map<string, StoredEntry>>
  /**
   * The slug of another entry (not `excludeSlug`) whose committed data has `value` at dotted
   * `path`, or null: what a write's unique check would find, read ahead of the write.
   */
  findByValue: (scope: Scope, collection: string, path: string, value: unknown, excludeSlug: string | null) => Promise<string | null>
  /**
   * A page of entries matching the query, with the total. `query.fields` is not applied here.
   * With `query.after` (keyset paging, contract §10): the first `perPage` matches after that
   * position of the order, and `more`; `page` is ignored.
   */
  list: (scope: Scope, collection: string, query: ListQuery) => Promise<ListResult>
  /** Every stored entry, in pages, for rebuilding derived indexes. */
  entries: () => AsyncIterable<StoredLocation>
  /**
   * A number that changes whenever a write to the entries of (scope, collection) becomes
   * visible to this process's reads, and is otherwise the same: a cheap, synchronous "has
   * anything here changed since?" for memos of what was read (the resolved texts of `_resolve`).
   * It is a local cache-validity signal, not a read: a networked store bumps it when it learns of
   * a write, its own or another process's (PostgreSQL: through LISTEN/NOTIFY). Compare it per
   * (scope, collection) only: it only grows, a write takes a number no bucket had before, and a
   * reopen starts above every earlier one; buckets never written since open share one. Read it
   * before the reads it stamps: a write that lands in between then only costs a rebuild.
   */
  revision: (scope: Scope, collection: string) => number
  /**
   * A text that changes whenever the stored content changes, by any means (the file store: the
   * name, size and modification time of every entry file, so files written by hand while the
   * server was stopped count; SQLite: the change log's latest seq). Derived data saved across
   * restarts (the reference index) is trusted at start only when it was saved with the same one.
   */
  contentFingerprint: () => Promise<string>
  /**
   * Resolves when the store can answer right now (GET /ready, contract §12), and rejects when it
   * cannot: closed, or its database or folder unreachable. Cheap: a trivial read, nothing scanned.
   */
  ping: () => Promise<void>

  /**
   * The change log's read side (types/changes.ts): each entry key's latest change, tombstones
   * kept CMS_SYNC_RETENTION_DAYS. Usable between open and close; what `GET /api/sync` reads.
   */
  readonly changes: ChangeLog

  /** Durable (entry and change record) before it resolves. Rejects with VALIDATION_FAILED (unique) or CONFLICT (slug taken). */
  create: (scope: Scope, collection: string, input: EntryInput) => Promise<StoredWrite>
  /**
   * Durable (entry and change record) before it resolves. Rejects with NOT_FOUND when the entry is
   * missing, CONFLICT (EntryChanged) when it is not as `input.expected` says, or VALIDATION_FAILED (unique).
   */
  update: (scope: Scope, collection: string, input: EntryInput) => Promise<StoredWrite>
  /**
   * Durable (removal and tombstone) before it resolves: the tombstone's seq; null when there was
   * nothing to delete (no record). The entry's pending draft and schedules (pending and failed) go
   * in the same commit; its versions stay.
   */
  delete: (scope: Scope, collection: string, slug: string) => Promise<number | null>
}
