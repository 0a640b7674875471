// The one interface both storage backends implement (CMS_STORE=sqlite|file).
import type { ListQuery } from './query.js'
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

  get: (scope: Scope, collection: string, slug: string) => StoredEntry | undefined
  /** Batch read for reference checks and `_resolve` (no query per reference). */
  getMany: (scope: Scope, collection: string, slugs: readonly string[]) => Map<string, StoredEntry>
  /** The slug of another entry (not `excludeSlug`) whose data has `value` at dotted `path`, or null. */
  findByValue: (scope: Scope, collection: string, path: string, value: unknown, excludeSlug: string | null) => string | null
  list: (scope: Scope, collection: string, query: ListQuery) => ListResult
  /** Every stored entry, for rebuilding derived indexes at start. */
  entries: () => Iterable<StoredLocation>

  /** Durable before it resolves. Rejects with a CONFLICT CmsError when the slug exists. */
  create: (scope: Scope, collection: string, input: EntryInput) => Promise<StoredEntry>
  /** Durable before it resolves. Rejects with a NOT_FOUND CmsError when the entry is missing. */
  update: (scope: Scope, collection: string, input: EntryInput) => Promise<StoredEntry>
  /** Durable before it resolves; false when there was nothing to delete. */
  delete: (scope: Scope, collection: string, slug: string) => Promise<boolean>
}
