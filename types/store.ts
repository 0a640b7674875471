// The one interface both storage backends implement (CMS_STORE=sqlite|file).
//
// Both behave identically (lib/store/*.ts):
// - Entries handed out are frozen (data included, at every depth): copy before changing.
// - Reads (get, getMany, list, entries) see committed, durable writes only.
// - A write is checked when it is called: create's duplicate slug and update's missing entry
//   reject its own promise (CONFLICT / NOT_FOUND) whatever else is in flight, and findByValue
//   already sees writes in flight. A unique check (findByValue) followed by create/update in the
//   same synchronous run is therefore race-free without any lock, and concurrent writes to one
//   collection share commits (SQLite: one transaction per event-loop turn; file store: parallel
//   fsyncs, ordered per entry).
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
   * Dotted paths of `unique` fields to check atomically with the write, against committed and
   * in-flight writes: a value another entry holds rejects with VALIDATION_FAILED, one message
   * per path (`<path>: must be unique; the entry '<slug>' already has this value`). Optional:
   * lets a pipeline await other work between its own checks and the write without a lock.
   */
  unique?: readonly string[]
}

export interface ListResult {
  items: StoredEntry[]
  total: number
}

export interface StoredLocation {
  scope: Scope
  collection: string
  entry: StoredEntry
}

export interface ContentStore {
  readonly kind: 'sqlite' | 'file'
  /** Opens the database or builds the in-memory index. */
  open: () => Promise<void>
  /** Flushes pending writes and releases files and handles. */
  close: () => Promise<void>
  /** Makes sure a collection's storage location exists in every environment (schema create). */
  ensureCollection: (collection: string) => Promise<void>
  /**
   * Prepares a collection's indexes from its resolved schema (SQLite: expression indexes for
   * `default_sort` and `unique` fields; the file store needs none). Idempotent; call at start
   * and after every schema create or update. The store plugin does so.
   */
  prepareCollection: (schema: ResolvedSchema) => void

  get: (scope: Scope, collection: string, slug: string) => StoredEntry | undefined
  /** Batch read for reference checks and `_resolve` (no query per reference). */
  getMany: (scope: Scope, collection: string, slugs: readonly string[]) => Map<string, StoredEntry>
  /** The slug of another entry (not `excludeSlug`) whose data has `value` at dotted `path`, or null. */
  findByValue: (scope: Scope, collection: string, path: string, value: unknown, excludeSlug: string | null) => string | null
  /** A page of entries matching the query, with the total. `query.fields` is not applied here. */
  list: (scope: Scope, collection: string, query: ListQuery) => ListResult
  /** Every stored entry, for rebuilding derived indexes at start. */
  entries: () => Iterable<StoredLocation>
  /**
   * A number that changes whenever a write to the entries of (scope, collection) becomes
   * visible to reads, and is otherwise the same: a cheap "has anything here changed since?"
   * for memos of what was read (the resolved texts of `_resolve`). Compare it per (scope,
   * collection) only: it only grows, a write takes a number no bucket had before, and a
   * reopen starts above every earlier one; buckets never written since open share one.
   */
  revision: (scope: Scope, collection: string) => number

  /** Durable before it resolves. Rejects with a CONFLICT CmsError when the slug exists. */
  create: (scope: Scope, collection: string, input: EntryInput) => Promise<StoredEntry>
  /** Durable before it resolves. Rejects with a NOT_FOUND CmsError when the entry is missing. */
  update: (scope: Scope, collection: string, input: EntryInput) => Promise<StoredEntry>
  /** Durable before it resolves; false when there was nothing to delete. */
  delete: (scope: Scope, collection: string, slug: string) => Promise<boolean>
}
