// What both storage backends share: options, the logger they report to, frozen entries, the
// per-collection count cache, and the fields a collection's indexes are built for.
import { CmsError, conflict, notFound, validationFailed } from '../errors.js'
import { deepFreeze, valueAtPath } from '../query/values.js'
import { parseListQuery } from '../query/parse.js'
import type { FieldRef, ListQuery, SortKey, ValueKind } from '../../types/query.js'
import type { FieldDefinition, ResolvedSchema } from '../../types/schema.js'
import type { Scope } from '../../types/scope.js'
import type { StoredDraft } from '../../types/editorial.js'
import type { ContentStore, EntryInput, EntryStatus, StoredEntry, WritePrecondition } from '../../types/store.js'

/** The subset of a pino logger the stores use. */
export interface StoreLogger {
  info: (obj: object, msg: string) => void
  warn: (obj: object, msg: string) => void
  error: (obj: object, msg: string) => void
}

export const silentLogger: StoreLogger = { info () {}, warn () {}, error () {} }

export interface StoreOptions {
  /** The data dir (contract §1): `lectern.db` or `content/` lives under it. */
  dataDir: string
  /** Configured environments (CMS_ENVIRONMENTS); empty: the single default environment. */
  environments?: readonly string[]
  /** Configured locales (CMS_LOCALES); empty: locales off. */
  locales?: readonly string[]
  log?: StoreLogger
  /** The time of a write (tests pass a fixed clock); the system clock by default. */
  clock?: () => Date
  /** CMS_SYNC_RETENTION_DAYS: days the change log keeps tombstones (default 30). */
  syncRetentionDays?: number
  /** CMS_ENTRY_CACHE_BYTES: bytes of parsed entries in each of the SQLite store's entry caches (default 8 MiB); 0 keeps none. */
  entryCacheBytes?: number
  /** CMS_DATABASE_URL: the PostgreSQL store's database (required with CMS_STORE=postgres). */
  databaseUrl?: string
  /** CMS_DATABASE_POOL: the PostgreSQL store's query connections (default 10), besides its listening one. */
  databasePool?: number
  /** The PostgreSQL store's mark on the writes it announces (the cluster bus's origin: lib/cluster/bus.ts), so this process skips its own. */
  origin?: string
  /** How long one of the PostgreSQL store's statements may run before the database counts as unreachable (default 15 s; tests shorten it). */
  queryTimeoutMs?: number
}

export const ENTRY_STATUSES: readonly EntryStatus[] = ['draft', 'published']

export function isEntryStatus (value: unknown): value is EntryStatus {
  return value === 'draft' || value === 'published'
}

/**
 * An entry as handed out: frozen, data included, at every depth. Both stores do this, so a
 * caller that changed a returned entry in place would fail the same way on both.
 */
export function frozenEntry (slug: string, status: EntryStatus, data: Record<string, unknown>, createdAt: string, updatedAt: string): StoredEntry {
  return Object.freeze({ slug, status, data: deepFreeze(data), createdAt, updatedAt })
}

/** The stores' timestamps: ISO 8601 UTC with milliseconds, from the configured clock. */
export function timestamps (options: StoreOptions): () => string {
  const clock = options.clock
  return clock === undefined ? () => new Date().toISOString() : () => clock().toISOString()
}

/** Whether a value can be looked up by findByValue: a string, a finite number or a boolean. */
export function isLookupValue (value: unknown): value is string | number | boolean {
  return typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))
}

/** The kind findByValue compares a value as (values.ts `typedKey`). */
export function lookupKind (value: string | number | boolean): ValueKind {
  return typeof value === 'string' ? 'string' : typeof value === 'number' ? 'number' : 'boolean'
}

/**
 * Values computed for list queries (counts, ordered results), per collection, valid until the
 * next write to the collection: call `invalidate` after each one.
 */
export class CollectionCache<T> {
  private readonly byCollection = new Map<string, Map<string, T>>()

  constructor (private readonly perCollection = 256) {}

  get (collection: string, key: string): T | undefined {
    return this.byCollection.get(collection)?.get(key)
  }

  set (collection: string, key: string, value: T): void {
    let map = this.byCollection.get(collection)
    if (map === undefined) {
      map = new Map()
      this.byCollection.set(collection, map)
    }
    if (!map.has(key) && map.size >= this.perCollection) map.delete(map.keys().next().value as string)
    map.set(key, value)
  }

  /** Every value held, of every collection. */
  * values (): IterableIterator<T> {
    for (const map of this.byCollection.values()) yield * map.values()
  }

  /** Forgets every value of a collection. */
  invalidate (collection: string): void {
    this.byCollection.delete(collection)
  }

  clear (): void {
    this.byCollection.clear()
  }
}

/** A stable text of a query's conditions (status, filters, `_q`), for count cache keys. */
export function conditionsKey (query: Pick<ListQuery, 'status' | 'filters' | 'q'>): string {
  return JSON.stringify([query.status, query.q, query.filters.map(f => [f.field.name, f.field.kind, f.field.array, f.op, f.value])])
}

/** The sort a list gets when the client sends no `_sort` (the schema's default_sort), or null. */
export function defaultSortKey (schema: ResolvedSchema): SortKey | null {
  try {
    return parseListQuery({}, schema, { seesDrafts: true }).sort[0] ?? null
  } catch {
    return null
  }
}

/** Field types whose values are short scalars worth an index: what lists filter and sort on. */
const INDEXABLE_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'date', 'datetime', 'email', 'url', 'slug', 'color', 'select', 'reference', 'asset'])

/**
 * The scalar fields of a schema (top level and inside objects, not inside arrays) that lists
 * can filter and sort on with an index, typed as the query engine compares them, in schema order.
 */
export function indexableFieldRefs (schema: ResolvedSchema): FieldRef[] {
  const out: FieldRef[] = []
  const walk = (fields: Record<string, FieldDefinition>, prefix: string[]): void => {
    for (const name of Object.keys(fields)) {
      const def = fields[name] as FieldDefinition
      const path = [...prefix, name]
      if (def.field_type === 'object' && def.fields !== undefined) {
        walk(def.fields, path)
      } else if (INDEXABLE_TYPES.has(def.field_type) && !(def.field_type === 'reference' && def.multiple === true)) {
        try {
          const key = parseListQuery({ _sort: path.join('.') }, schema, { seesDrafts: true }).sort[0]
          if (key !== undefined) out.push(key.field)
        } catch {}
      }
    }
  }
  walk(schema.fields, [])
  return out
}

/**
 * The data paths of a schema's `unique` fields (not inside arrays, where uniqueness per entry
 * has no meaning) with the kind findByValue compares their values as.
 */
export function uniqueFieldRefs (schema: ResolvedSchema): FieldRef[] {
  const out: FieldRef[] = []
  const walk = (fields: Record<string, FieldDefinition>, prefix: string[]): void => {
    for (const name of Object.keys(fields)) {
      const def = fields[name] as FieldDefinition
      const path = [...prefix, name]
      if (def.field_type === 'object' && def.fields !== undefined) {
        walk(def.fields, path)
      } else if (def.unique === true) {
        out.push({ name: path.join('.'), path, system: false, kind: storedKind(def), array: false })
      }
    }
  }
  walk(schema.fields, [])
  return out
}

/** The JSON type a scalar field's values are stored as: dates are strings. */
function storedKind (def: FieldDefinition): ValueKind {
  switch (def.field_type) {
    case 'number':
    case 'integer':
      return 'number'
    case 'boolean':
      return 'boolean'
    case 'select':
      return def.options !== undefined && def.options.length > 0 && def.options.every(o => typeof o === 'number') ? 'number' : 'string'
    default:
      return 'string'
  }
}

// ---- the rules a store decides as part of a write (types/store.ts) ------------------------------

/** Create of a slug an entry already has: 409. */
export function slugTaken (slug: string, collection: string): CmsError {
  return conflict(`An entry with the slug '${slug}' already exists in '${collection}'.`)
}

/** Update (or read) of an entry that does not exist: 404. */
export function entryMissing (slug: string, collection: string): CmsError {
  return notFound(`Entry '${slug}' not found in '${collection}'.`)
}

/**
 * An update refused because the entry (or the draft it publishes) is no longer what the caller
 * read (EntryInput.expected): a CONFLICT, told apart from a taken slug by its class, so that the
 * content pipeline reads again and retries; what a client sees once the retries are spent.
 */
export class EntryChanged extends CmsError {
  constructor (slug: string, collection: string) {
    super('CONFLICT', `Entry '${slug}' in '${collection}' was changed by another request while this one was applied; try again.`)
  }
}

export function entryChanged (slug: string, collection: string): EntryChanged {
  return new EntryChanged(slug, collection)
}

export function isEntryChanged (err: unknown): err is EntryChanged {
  return err instanceof EntryChanged
}

/**
 * An update's precondition (EntryInput.expected) as the database stores compare it: the entry's
 * status and updated_at, and its data and the draft's as JSON text. The stores compare that text
 * with the stored text (the entry's `doc`/`data` column, the draft's `doc`), not the parsed values:
 * the stored text is itself JSON.stringify of the data written, and what a read hands out is
 * JSON.parse of it, so JSON.stringify of what was read gives back exactly that text (integer-like
 * keys already come first, numbers are already in their shortest form): equal text is equal data,
 * and the comparison is one memcmp, with no second document to parse into jsonb.
 * The data is compared besides updated_at because two writes may share a millisecond.
 */
export interface ExpectedText {
  status: EntryStatus
  updatedAt: string
  json: string
  draft: { updatedAt: string, json: string } | null
}

export function expectedText (expected: WritePrecondition | undefined): ExpectedText | null {
  if (expected === undefined) return null
  const { entry, draft } = expected
  return {
    status: entry.status,
    updatedAt: entry.updatedAt,
    json: JSON.stringify(entry.data),
    draft: draft === undefined ? null : { updatedAt: draft.updatedAt, json: JSON.stringify(draft.data) }
  }
}

/** Whether `current` (and its pending `draft`) are what `expected` says, for a store holding them in memory. */
export function holdsPrecondition (expected: WritePrecondition, current: StoredEntry, draft: StoredDraft | undefined): boolean {
  const { entry } = expected
  if (current.status !== entry.status || current.updatedAt !== entry.updatedAt || !sameData(current.data, entry.data)) return false
  if (expected.draft === undefined) return true
  return draft !== undefined && draft.updatedAt === expected.draft.updatedAt && sameData(draft.data, expected.draft.data)
}

/** Same data: the very object handed out (frozen), else the same JSON text (see ExpectedText). */
function sameData (a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b)
}

/** The values a write's unique fields (EntryInput.unique) hold that another entry could hold too. */
export function uniqueValues (input: EntryInput): Array<[path: string, value: string | number | boolean]> {
  const out: Array<[string, string | number | boolean]> = []
  for (const path of input.unique ?? []) {
    const value = valueAtPath(input.data, path.split('.'))
    if (isLookupValue(value)) out.push([path, value])
  }
  return out
}

/**
 * The unique rule: VALIDATION_FAILED with one message per path whose value another entry holds
 * (`holders`: each of uniqueValues' paths with the slug holding it, or null).
 */
export function checkUniqueHolders (holders: ReadonlyArray<readonly [path: string, holder: string | null]>): void {
  const problems: string[] = []
  for (const [path, holder] of holders) {
    if (holder !== null) problems.push(`${path}: must be unique; the entry '${holder}' already has this value`)
  }
  if (problems.length > 0) throw validationFailed(problems)
}

/**
 * The unique rule read ahead of a write, from committed entries (findByValue): throws what the
 * write would, had nothing else been written in between. The write itself decides; this only lets
 * a pipeline answer in the order its rules are listed (a clash before a later rule's check).
 */
export async function expectUnique (store: Pick<ContentStore, 'findByValue'>, scope: Scope, collection: string, input: EntryInput): Promise<void> {
  const values = uniqueValues(input)
  if (values.length === 0) return
  checkUniqueHolders(await Promise.all(values.map(async ([path, value]) =>
    [path, await store.findByValue(scope, collection, path, value, input.slug)] as const)))
}

// ---- what the database stores queue (SQLite, PostgreSQL: one transaction per event-loop turn) ---

/** A create or update as queued: its row's values, decided in the write's savepoint. */
export interface WriteOperation {
  kind: 'create' | 'update'
  scope: Scope
  collection: string
  /** The locale column: '' when locales are off. */
  locale: string
  slug: string
  status: EntryStatus
  json: string
  search: string
  at: string
  /** The values of the write's unique fields (EntryInput.unique), decided in its savepoint. */
  unique: Array<[path: string, value: string | number | boolean]>
}

export interface DeleteOperation {
  kind: 'delete'
  scope: Scope
  collection: string
  locale: string
  slug: string
  /** The tombstone's time (what retention counts from). */
  at: string
}

/** What a write did in its savepoint: the row's created_at (create, update) and its change's seq (null: a delete of nothing). */
export interface Applied {
  createdAt?: string
  seq: number | null
}

/** A queued write, its promise's two ends, and its outcome once its savepoint ran. */
export interface Pending<O> {
  op: O
  resolve: (value: Applied) => void
  reject: (err: unknown) => void
  result?: { ok: true, value: Applied } | { ok: false, error: unknown }
}

/** A field a collection's expression index is built on, and the direction of its index. */
export interface IndexedField {
  field: FieldRef
  direction: 'asc' | 'desc'
}

/**
 * The fields a collection's expression indexes are built on, in order, each store writing them in
 * its own SQL (at most its own number of indexes): the default_sort field in its default
 * direction; each unique field no scalar index covers as findByValue compares it (any direction
 * serves its equality; a unique date field is looked up as text); then every scalar lists filter
 * and sort on, in the direction lists usually want: newest or largest first for dates and numbers,
 * A to Z for text (an index walked backwards yields equal keys in descending slug order, which
 * the database then re-sorts: the slug tie-break is ascending either way).
 */
export function indexedFields (schema: ResolvedSchema): IndexedField[] {
  const out: IndexedField[] = []
  const sort = defaultSortKey(schema)
  if (sort !== null && !sort.field.system && !sort.field.array) out.push({ field: sort.field, direction: sort.direction })
  const scalars = indexableFieldRefs(schema)
  const covered = new Set(scalars.map(f => `${f.name}\u0000${f.kind}`))
  for (const field of uniqueFieldRefs(schema)) if (!covered.has(`${field.name}\u0000${field.kind}`)) out.push({ field, direction: 'asc' })
  for (const field of scalars) out.push({ field, direction: field.kind === 'number' || field.kind === 'date' ? 'desc' : 'asc' })
  return out
}
