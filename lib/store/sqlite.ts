// The SQLite store (CMS_STORE=sqlite): one database file `<data>/lectern.db` in WAL mode, a row
// per entry keyed by (environment, collection, locale — '' when locales are off, slug) holding
// the data as JSON text, the status and the timestamps; `entry_search` holds each entry's
// folded search text for `_q` (values.ts `searchText`); `change_log` holds each entry key's latest
// change (changes/sqlite.ts), recorded in the write's own savepoint, so it commits with the row.
//
// Writes: group commit. A write is queued and the queue is committed as one transaction at the
// end of the event-loop turn (setImmediate), each write in its own savepoint so a failing row
// fails only its own promise; every promise settles after the shared COMMIT, which with
// `synchronous=FULL` has reached the disk. Reads see committed data only. Each write's rules are
// decided inside its savepoint, so they hold against every committed row and every earlier write
// of the batch (the transaction is BEGIN IMMEDIATE: no other connection writes in between): a
// taken `unique` value is looked up before the row is written (VALIDATION_FAILED), a create's
// duplicate slug surfaces as the row's UNIQUE violation (CONFLICT), an update of no row is a
// NOT_FOUND. Reads are synchronous underneath (better-sqlite3) and return promises because the
// interface is asynchronous.
//
// Lists: lib/query/sql.ts turns the query into WHERE/ORDER BY over SQLite's JSON functions.
// prepareCollection gives each collection expression indexes (its scalar fields, default_sort,
// unique fields). A filtered count is computed once per collection version (until the next
// write to it); a page walks the sort's index when the counts say that is cheaper than sorting
// the matches; a query asked repeatedly is materialized as an ordered list of row ids (see
// ResultState); pages and single reads come from caches of parsed entries, which a write to
// the entry (or the end of the flush that wrote it) keeps exact.
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import Database, { type SqliteDatabase, type Statement } from '../sqlite-driver.js'
import { LRUCache } from 'lru-cache'
import { DEFAULT_ENTRY_CACHE_BYTES } from '../config.js'
import { CmsError } from '../errors.js'
import { afterSegments, conditionsSql, indexKeySql, orderSql, keySql, type Params } from '../query/sql.js'
import { searchText } from '../query/values.js'
import {
  CollectionCache, checkUniqueHolders, conditionsKey, entryMissing, frozenEntry, isEntryStatus, isLookupValue, lookupKind,
  slugTaken, timestamps, silentLogger, uniqueValues, entryChanged, expectedText, type ExpectedText, type StoreLogger, type StoreOptions,
  indexedFields, type Applied, type DeleteOperation, type Pending as PendingWrite, type WriteOperation
} from './common.js'
import { checkBucket, assertStoredSlug, isCollectionName, isSlug } from './names.js'
import { EntryCache, bucketText } from './entry-cache.js'
import { entryChange, storeChangeLogOptions, type ChangeLogOptions } from './changes/common.js'
import { SqliteChangeLog } from './changes/sqlite.js'
import { setAsideUnreadable } from './sqlite-set-aside.js'
import { analyze, registerFunctions } from './sqlite-connection.js'
import { buildIndexes } from './sqlite-index-build.js'
import { EDITORIAL_DDL, EditorialTables, type EntryKey } from './sqlite-editorial.js'
import { applyLayout } from './sqlite-layout.js'
import { layoutOf, type Layout } from './layout.js'
import type { ChangeLog } from '../../types/changes.js'
import type { FieldRef, KeysetPosition, ListQuery, SortKey } from '../../types/query.js'
import type { ResolvedSchema } from '../../types/schema.js'
import type { Scope } from '../../types/scope.js'
import type { ContentStore, EntryInput, EntryStatus, ListResult, StoredEntry, StoredLocation, StoredWrite } from '../../types/store.js'
import type { EntryVersion, ScheduleFilter, ScheduleInput, ScheduleRecord, SchedulePage, ScheduleStatus, StoredDraft, VersionSummary } from '../../types/editorial.js'

export const DATABASE_FILE = 'lectern.db'

/** Bumped when the search text's folding changes (values.ts `fold`), or with Node's Unicode tables. */
const SEARCH_VERSION = `1/${process.versions.unicode ?? ''}`
const SCHEMA_VERSION = '1'
const STATEMENT_CACHE = 500
/** Entries kept parsed, at most, in each entry cache (by row id for list pages, by key for single reads)... */
const ROW_CACHE = 20_000
/*
 * ...and bytes, each (CMS_ENTRY_CACHE_BYTES, config.ts). An entry is counted as its row's data
 * length plus ENTRY_OVERHEAD (entrySize): parsed, it takes about that (measured: 240 bytes more
 * than its data for the bench's shape, and for data of 1 to 5 KB; a character of Latin-1 text is
 * a byte in V8, any other two, so text beyond Latin-1 may take up to twice what it is counted for).
 */
/** An entry's bytes besides its data's characters: its record, slug, timestamps, and the cache's slot. */
const ENTRY_OVERHEAD = 320
/**
 * SQLite's page cache, in KiB (cache_size takes a negative number as KiB): the pages read last,
 * above the operating system's file cache. A full pull reads every page once and fills it: with
 * 64 MiB, the bench's pull of 100,000 entries peaked at 300 MB of RSS, with 16 MiB at 259-262.
 */
const PAGE_CACHE_KIB = 16 * 1024
/** Row ids kept in materialized lists, over all collections (8 bytes each). */
const MATERIALIZED_IDS = 2_000_000
/** Expression indexes per collection at most: each one costs every write to the collection. */
const MAX_COLLECTION_INDEXES = 24
const ENTRY_COLUMNS = 'slug, status, created_at, updated_at, data'
/** How long an index build's connection waits for the store's write in progress (it is short). */
const BUILD_BUSY_TIMEOUT_MS = 60_000
/**
 * Rows from which indexes are built in a worker thread: below, a build takes a few ms on the main
 * thread (1,000 rows, 7 indexes: about 20 ms), less than starting the thread and its connection.
 */
const WORKER_BUILD_ROWS = 1000

/**
 * A list query (conditions and sort) within a collection version. Its pages are answered by
 * direct SQL (`spent` adds up what that cost) until the cost reaches what counting its matches
 * did; then its matches are materialized, in order, as row ids, and each page is a slice. A
 * query asked once costs one SQL page; a query asked again and again costs an id slice,
 * whatever the page; the work wasted on a materialization that a write discards is bounded by
 * what the direct pages had already cost (the rent-or-buy rule).
 */
interface ResultState {
  spent: number
  ids: Float64Array | null
}

interface EntryRow {
  slug: string
  status: EntryStatus
  created_at: string
  updated_at: string
  data: string
}

/** A create or update with what it does to the editorial tables in its own savepoint. */
interface EntryWrite extends WriteOperation {
  /** EntryInput.keepVersions (0: no version). */
  keepVersions: number
  clearDraft: boolean
  /** An update's precondition (EntryInput.expected) as text (common.ts `expectedText`); null: none. */
  expected: ExpectedText | null
}

/** An editorial write (a draft, a schedule, a claim): run in its own savepoint of the batch, like an entry write. */
interface EditorialCall {
  kind: 'editorial'
  run: () => void
}

type Operation = EntryWrite | DeleteOperation | EditorialCall

interface Pending extends PendingWrite<Operation> {
  /** The row an update or delete changed (for the row cache). */
  rowId?: number
}

const localeKey = (scope: Scope): string => scope.locale ?? ''

function entryKey (scope: Scope, collection: string, slug: string): EntryKey {
  checkBucket(scope, collection)
  return { environment: scope.environment, collection, locale: localeKey(scope), slug }
}

/** An entry cache's content: entries, and the bytes they are counted for (at most ROW_CACHE_BYTES). */
export interface CacheUse {
  entries: number
  bytes: number
}

export class SqliteStore implements ContentStore {
  readonly kind = 'sqlite' as const
  private db: SqliteDatabase | null = null
  private readonly file: string
  private readonly log: StoreLogger
  private readonly now: () => string
  private readonly changeLogOptions: ChangeLogOptions
  /** Where unlabelled content lives under the settings (§14): the store moves its content there at open. */
  private readonly layout: Layout
  /** Made at open (it needs the database). */
  private changeLog: SqliteChangeLog | null = null
  /** The editorial tables' statements (sqlite-editorial.ts), made at open. */
  private tables: EditorialTables | null = null
  /** The log's read side, the same object whether the store is open or not (a closed store's rejects every call). */
  readonly changes: ChangeLog = {
    since: async (afterSeq, limit, filter) => await this.openChangeLog().since(afterSeq, limit, filter),
    latestSeq: async () => await this.openChangeLog().latestSeq(),
    horizon: async () => await this.openChangeLog().horizon(),
    compact: async () => await this.openChangeLog().compact()
  }

  private readonly statements = new Map<string, Statement>()
  /** Per collection until its next write: counts, with what computing them cost (ms). */
  private readonly counts = new CollectionCache<{ count: number, cost: number }>()
  /** Per collection until its next write: whether a keyset segment of a list query matches anything (listAfter). */
  private readonly matched = new CollectionCache<boolean>()
  /** Per collection until its next write: each list query's direct cost so far, or its ordered ids. */
  private readonly results = new CollectionCache<ResultState>()
  private materializedIds = 0
  /** Entries by row id, as lists hand them out; a write to a row drops it. */
  private readonly rows: LRUCache<number, StoredEntry>
  /** Entries by key (environment, collection, locale, slug), as get hands them out; a write to the key drops it. */
  private readonly keyed: EntryCache
  private queue: Pending[] = []
  private flushTimer: NodeJS.Immediate | null = null
  private writeBatch: ((batch: Pending[]) => void) | null = null
  /** revision(): the latest per (environment, collection, locale) written since open, else `openRevision`. */
  private readonly revisions = new Map<string, number>()
  private lastRevision = 0
  private openRevision = 0
  /** The expression indexes of each collection (names) that exist now (what INDEXED BY may name). */
  private readonly indexes = new Map<string, Set<string>>()
  /** Index builds, one after the other (sqlite-index-build.ts); writes wait while one runs. */
  private builds: Promise<void> = Promise.resolve()
  private building = 0
  /** Rows when the statistics were last gathered, and rows written since. */
  private analyzedRows = 0
  private writesSinceAnalyze = 0
  private analyzeTimer: NodeJS.Immediate | null = null

  constructor (options: StoreOptions) {
    this.file = path.join(options.dataDir, DATABASE_FILE)
    this.log = options.log ?? silentLogger
    this.now = timestamps(options)
    this.changeLogOptions = storeChangeLogOptions(options)
    this.layout = layoutOf(options)
    // With 0 bytes (a `lectern` command, which reads each entry once) nothing fits: every entry
    // is larger than a one-byte bound, and lru-cache does not keep what exceeds it.
    const maxSize = Math.max(1, options.entryCacheBytes ?? DEFAULT_ENTRY_CACHE_BYTES)
    this.rows = new LRUCache<number, StoredEntry>({ max: ROW_CACHE, maxSize })
    this.keyed = new EntryCache(ROW_CACHE, maxSize)
  }

  private openChangeLog (): SqliteChangeLog {
    if (this.changeLog === null) throw new Error('the SQLite store is not open')
    return this.changeLog
  }

  /** What the entry caches hold, in entries and in the bytes they are counted for (tests, diagnostics). */
  get entryCaches (): { rows: CacheUse, keyed: CacheUse } {
    return {
      rows: { entries: this.rows.size, bytes: this.rows.calculatedSize },
      keyed: { entries: this.keyed.size, bytes: this.keyed.bytes }
    }
  }

  // ---- life cycle ---------------------------------------------------------------------------

  async open (): Promise<void> {
    if (this.db !== null) return
    this.revisions.clear()
    this.openRevision = ++this.lastRevision
    mkdirSync(path.dirname(this.file), { recursive: true })
    const db = new Database(this.file)
    let changeLog: SqliteChangeLog
    let tables: EditorialTables
    try {
      db.pragma('journal_mode = WAL')
      // FULL: each COMMIT is on disk before it returns, so a resolved write survives a power cut.
      db.pragma('synchronous = FULL')
      db.pragma('busy_timeout = 5000')
      db.pragma(`cache_size = -${PAGE_CACHE_KIB}`)
      db.pragma('temp_store = MEMORY')
      registerFunctions(db)
      this.migrate(db)
      // After the entries' migration: a new log is back-filled from them.
      changeLog = new SqliteChangeLog(db, this.changeLogOptions)
      changeLog.open()
      // With the log open, so each row set aside gets its tombstone in the same transaction.
      const at = this.now()
      setAsideUnreadable(db, this.log, at, key => changeLog.record(entryChange({ ...key, locale: key.locale === '' ? null : key.locale }, null, at)))
      tables = new EditorialTables(db)
      // Before anything reads; the log's records in memory catch up with its records at the next read.
      applyLayout({ db, tables, record: change => changeLog.record(change), at, log: this.log }, this.layout)
      this.refreshSearch(db)
    } catch (err) {
      db.close()
      throw err
    }
    this.db = db
    this.changeLog = changeLog
    this.tables = tables
    this.writeBatch = this.batchTransaction(db, changeLog, tables)
    for (const name of db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'entries' AND name LIKE 'ix:%'").pluck().all() as string[]) {
      const collection = name.split(':')[1] as string
      const set = this.indexes.get(collection) ?? new Set()
      set.add(name)
      this.indexes.set(collection, set)
    }
    this.analyzedRows = Number(db.prepare("SELECT value FROM meta WHERE key = 'analyzed_rows'").pluck().get() ?? 0)
    this.scheduleAnalyze()
  }

  async close (): Promise<void> {
    if (this.db === null) return
    await this.builds
    if (this.db === null) return
    if (this.flushTimer !== null) {
      clearImmediate(this.flushTimer)
      this.flush()
    }
    if (this.analyzeTimer !== null) clearImmediate(this.analyzeTimer)
    this.analyzeTimer = null
    this.changeLog?.close()
    this.changeLog = null
    this.tables = null
    this.db.close()
    this.db = null
    this.statements.clear()
    this.counts.clear()
    this.matched.clear()
    this.results.clear()
    this.rows.clear()
    this.keyed.clear()
    this.materializedIds = 0
    this.indexes.clear()
  }

  /** Checks the statistics after the current turn (never inside a write's promise). */
  private scheduleAnalyze (): void {
    if (this.analyzeTimer !== null) return
    this.analyzeTimer = setImmediate(() => {
      this.analyzeTimer = null
      // A build holds the write lock, and analyzes when it is done.
      if (this.building > 0) return
      try {
        this.analyzeIfStale()
      } catch (err) {
        this.log.warn({ err }, 'gathering query planner statistics failed')
      }
    })
  }

  /**
   * The planner's statistics (ANALYZE) are gathered again whenever the number of rows has
   * doubled or halved since the last time: it chooses between a filter's index and the sort's
   * from them. A full ANALYZE costs about a second per million rows; doubling keeps it rare.
   */
  private analyzeIfStale (): void {
    const db = this.database
    this.writesSinceAnalyze = 0
    const rows = db.prepare('SELECT count(*) FROM entries').pluck().get() as number
    if (rows < 1000 && this.analyzedRows < 1000) return
    if (rows <= this.analyzedRows * 2 && rows * 2 >= this.analyzedRows) return
    const started = Date.now()
    analyze(db, null)
    db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('analyzed_rows', ?)").run(String(rows))
    this.analyzedRows = rows
    this.statements.clear()
    this.log.info({ rows, ms: Date.now() - started }, 'query planner statistics gathered')
  }

  private migrate (db: SqliteDatabase): void {
    db.exec(`
      CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS entries (
        id INTEGER PRIMARY KEY,
        environment TEXT NOT NULL,
        collection TEXT NOT NULL,
        locale TEXT NOT NULL,
        slug TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('draft', 'published')),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        data TEXT NOT NULL
      );
      CREATE UNIQUE INDEX IF NOT EXISTS entries_key ON entries (environment, collection, locale, slug);
      CREATE INDEX IF NOT EXISTS entries_status ON entries (environment, collection, locale, status, slug);
      CREATE INDEX IF NOT EXISTS entries_created ON entries (environment, collection, locale, created_at, slug);
      CREATE INDEX IF NOT EXISTS entries_updated ON entries (environment, collection, locale, updated_at, slug);
      CREATE TABLE IF NOT EXISTS entry_search (id INTEGER PRIMARY KEY, search TEXT NOT NULL);
    `)
    // New tables only: a database from before them opens as it is (no storage version change).
    db.exec(EDITORIAL_DDL)
    const meta = db.prepare('SELECT value FROM meta WHERE key = ?').pluck()
    const setMeta = db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)')
    const version = meta.get('schema_version') as string | undefined
    if (version !== undefined && version !== SCHEMA_VERSION) {
      throw new Error(`${DATABASE_FILE} has storage version ${version}; this server understands ${SCHEMA_VERSION}`)
    }
    setMeta.run('schema_version', SCHEMA_VERSION)
  }

  /** The search texts, recomputed when their folding changed (after rows nothing can read are set aside). */
  private refreshSearch (db: SqliteDatabase): void {
    if (db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get('search_version') === SEARCH_VERSION) return
    this.rebuildSearch(db)
    db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run('search_version', SEARCH_VERSION)
  }

  /** Recomputes every search text (after a change of case folding), in batches. */
  private rebuildSearch (db: SqliteDatabase): void {
    const select = db.prepare('SELECT id, data FROM entries WHERE id > ? ORDER BY id LIMIT 1000')
    const upsert = db.prepare('INSERT OR REPLACE INTO entry_search (id, search) VALUES (?, ?)')
    let last = 0
    let count = 0
    db.transaction(() => {
      db.exec('DELETE FROM entry_search WHERE id NOT IN (SELECT id FROM entries)')
      for (;;) {
        const rows = select.all(last) as Array<{ id: number, data: string }>
        if (rows.length === 0) break
        for (const row of rows) {
          upsert.run(row.id, searchText(JSON.parse(row.data)))
          last = row.id
          count++
        }
      }
    })()
    if (count > 0) this.log.info({ entries: count }, 'rebuilt the search text of every entry')
  }

  private get database (): SqliteDatabase {
    if (this.db === null) throw new Error('the SQLite store is not open')
    return this.db
  }

  /** A prepared statement, cached by its text (the text holds no values, only placeholders). */
  private statement (sql: string): Statement {
    let stmt = this.statements.get(sql)
    if (stmt === undefined) {
      stmt = this.database.prepare(sql)
      if (this.statements.size >= STATEMENT_CACHE) this.statements.delete(this.statements.keys().next().value as string)
      this.statements.set(sql, stmt)
    }
    return stmt
  }

  async ensureCollection (collection: string): Promise<void> {
    // Rows need no storage location; the name is still checked like everywhere else.
    checkBucket({ environment: 'default', locale: null }, collection)
  }

  /**
   * Expression indexes over the collection's rows (partial indexes, WHERE collection = '<name>'):
   * one per scalar field lists can filter and sort on (values.ts typing, then slug, so a sort
   * with its tie-break walks the index), the default_sort field in its default direction, and
   * each unique field as findByValue compares it. Indexes made for an earlier version of
   * the schema are dropped. Idempotent: an unchanged schema costs one catalogue lookup. A change
   * is built in a worker thread (sqlite-index-build.ts): reads go on meanwhile, writes wait.
   */
  async prepareCollection (schema: ResolvedSchema): Promise<void> {
    const collection = schema.name
    if (!isCollectionName(collection)) return
    const wanted = wantedIndexes(schema)
    const run = this.builds.then(async () => { await this.applyIndexes(collection, wanted) })
    this.builds = run.catch(() => {})
    await run
  }

  /** The `ix:<collection>:` indexes that exist. */
  private existingIndexes (collection: string): string[] {
    return this.database.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'entries' AND substr(name, 1, ?) = ?")
      .pluck().all(collection.length + 4, `ix:${collection}:`) as string[]
  }

  /** Makes the collection's indexes those of `wanted` (name → CREATE INDEX), in a worker when anything changes. */
  private async applyIndexes (collection: string, wanted: Map<string, string>): Promise<void> {
    const existing = this.existingIndexes(collection)
    const changed = existing.some(name => !wanted.has(name)) || [...wanted.keys()].some(name => !existing.includes(name))
    if (!changed) {
      this.indexes.set(collection, new Set(wanted.keys()))
      return
    }
    const drop = existing.filter(name => !wanted.has(name))
    const create = [...wanted.values()]
    const started = Date.now()
    const rows = this.database.prepare('SELECT count(*) FROM entries').pluck().get() as number
    if (rows < WORKER_BUILD_ROWS && this.analyzedRows === 0) {
      // A small table: built at once (a few ms), cheaper than starting a thread.
      const db = this.database
      db.transaction(() => {
        for (const name of drop) db.exec(`DROP INDEX IF EXISTS "${name}"`)
        for (const sql of create) db.exec(sql)
      })()
      this.indexesBuilt(collection, wanted, started)
      return
    }
    // While it builds, INDEXED BY may name only indexes that exist before and after.
    this.indexes.set(collection, new Set(existing.filter(name => wanted.has(name))))
    this.building++
    try {
      // Statistics let the planner choose between a filter's index and the sort's.
      await buildIndexes({ file: this.file, drop, create, analyze: this.analyzedRows > 0, busyTimeoutMs: BUILD_BUSY_TIMEOUT_MS })
    } catch (err) {
      // Rolled back: the indexes are those of before.
      this.indexes.set(collection, new Set(existing))
      throw err
    } finally {
      this.building--
      if (this.building === 0 && this.queue.length > 0) this.flushTimer ??= setImmediate(() => { this.flush() })
    }
    this.indexesBuilt(collection, wanted, started)
  }

  private indexesBuilt (collection: string, wanted: Map<string, string>, started: number): void {
    this.indexes.set(collection, new Set(wanted.keys()))
    // Plans are made against the indexes that exist, so the prepared statements go.
    this.statements.clear()
    this.log.info({ collection, indexes: wanted.size, ms: Date.now() - started }, 'collection indexes prepared')
  }

  // ---- reads ---------------------------------------------------------------------------------

  async get (scope: Scope, collection: string, slug: string): Promise<StoredEntry | undefined> {
    checkBucket(scope, collection)
    if (!isSlug(slug)) return undefined
    const bucket = bucketText(scope.environment, collection, localeKey(scope))
    const cached = this.keyed.get(bucket, slug)
    if (cached !== undefined) return cached
    const row = this.statement(`SELECT ${ENTRY_COLUMNS} FROM entries WHERE environment = ? AND collection = '${collection}' AND locale = ? AND slug = ?`)
      .get(scope.environment, localeKey(scope), slug) as EntryRow | undefined
    if (row === undefined) return undefined
    const entry = toEntry(row)
    this.keyed.set(bucket, slug, entry, entrySize(row))
    return entry
  }

  async getMany (scope: Scope, collection: string, slugs: readonly string[]): Promise<Map<string, StoredEntry>> {
    checkBucket(scope, collection)
    const out = new Map<string, StoredEntry>()
    const locale = localeKey(scope)
    const bucket = bucketText(scope.environment, collection, locale)
    // From the entry cache (which writes keep exact, as for get); the rest in one query.
    const missing = new Set<string>()
    for (const slug of slugs) {
      if (out.has(slug) || missing.has(slug) || !isSlug(slug)) continue
      const cached = this.keyed.get(bucket, slug)
      if (cached !== undefined) out.set(slug, cached)
      else missing.add(slug)
    }
    if (missing.size === 0) return out
    const rows = this.statement(`SELECT ${ENTRY_COLUMNS} FROM entries WHERE environment = ? AND collection = '${collection}' AND locale = ? AND slug IN (SELECT value FROM json_each(?))`)
      .all(scope.environment, locale, JSON.stringify([...missing])) as EntryRow[]
    for (const row of rows) {
      const entry = toEntry(row)
      this.keyed.set(bucket, row.slug, entry, entrySize(row))
      out.set(row.slug, entry)
    }
    return out
  }

  revision (scope: Scope, collection: string): number {
    return this.revisions.get(bucketText(scope.environment, collection, localeKey(scope))) ?? this.openRevision
  }

  async ping (): Promise<void> {
    // A statement the connection must run: a closed store or a broken database file throws.
    this.statement('SELECT 1').get()
  }

  async contentFingerprint (): Promise<string> {
    // Every write through the store takes a seq; other tools must not write the database.
    return `sqlite:${await this.openChangeLog().latestSeq()}`
  }

  async findByValue (scope: Scope, collection: string, dottedPath: string, value: unknown, excludeSlug: string | null): Promise<string | null> {
    checkBucket(scope, collection)
    if (!isLookupValue(value)) return null
    return this.holder(scope.environment, collection, localeKey(scope), dottedPath, value, excludeSlug)
  }

  /**
   * The slug of another row holding `value` at `dottedPath` (through the unique field's
   * expression index): committed rows, and inside a write's transaction, the batch's earlier writes.
   */
  private holder (environment: string, collection: string, locale: string, dottedPath: string, value: string | number | boolean, excludeSlug: string | null): string | null {
    const field: FieldRef = { name: dottedPath, path: dottedPath.split('.'), system: false, kind: lookupKind(value), array: false }
    const params: Params = [environment, locale]
    const key = keySql(field, params)
    params.push(typeof value === 'boolean' ? (value ? 1 : 0) : value)
    const stmt = this.statement(`SELECT slug FROM entries WHERE environment = ? AND collection = '${collection}' AND locale = ? AND ${key} = ?`).pluck()
    for (const slug of stmt.iterate(...params) as IterableIterator<string>) {
      if (slug !== excludeSlug) return slug
    }
    return null
  }

  async list (scope: Scope, collection: string, query: ListQuery): Promise<ListResult> {
    checkBucket(scope, collection)
    const locale = localeKey(scope)
    const bucket = `${scope.environment}\u0000${locale}`
    const conditionsText = conditionsKey(query)
    const resultKey = `${bucket}\u0000${conditionsText}\u0000${sortKey(query)}`
    const offset = (query.page - 1) * query.perPage
    let state = this.results.get(collection, resultKey)
    // A materialized query needs no SQL at all.
    if (state?.ids != null && query.after === null) return { items: this.entriesById(state.ids.subarray(offset, offset + query.perPage)), total: state.ids.length }

    const params: Params = [scope.environment, locale]
    const conditions = conditionsSql(query, params)
    const where = [`environment = ? AND collection = '${collection}' AND locale = ?`, ...conditions].join(' AND ')
    const counted = this.count(collection, `${bucket}\u0000${conditionsText}`, where, params)
    const total = counted.count
    if (offset >= total) return { items: [], total }
    if (query.after !== null) return this.listAfter(collection, query, { where, params, conditions: conditions.length, bucket: [scope.environment, locale], key: `${bucket}\u0000${conditionsText}`, total })

    const orderParams: Params = []
    const order = orderSql(query.sort, orderParams)
    if (state === undefined) {
      state = { spent: 0, ids: null }
      this.results.set(collection, resultKey, state)
    }
    if (state.spent >= counted.cost && total <= MATERIALIZED_IDS / 4) {
      state.ids = this.materialize(where, order, params, orderParams)
      return { items: this.entriesById(state.ids.subarray(offset, offset + query.perPage)), total: state.ids.length }
    }

    const started = performance.now()
    // SQLite's planner tends to take the index of a filter and sort every match, where walking
    // the sort's index and stopping after the page is cheaper. It cannot know; the counts tell:
    // walking reads about (offset + page) × rows / matches rows, sorting reads every match.
    let hint = ''
    if (conditions.length > 0) {
      const rows = this.count(collection, bucket, `environment = ? AND collection = '${collection}' AND locale = ?`, [scope.environment, locale]).count
      if ((offset + query.perPage) * rows < total * total) {
        const index = this.sortIndex(collection, query.sort)
        if (index !== null) hint = ` INDEXED BY "${index}"`
      }
    }
    const ids = this.statement(`SELECT id FROM entries${hint} WHERE ${where} ORDER BY ${order} LIMIT ? OFFSET ?`).pluck()
      .all(...params, ...orderParams, query.perPage, offset) as number[]
    const items = this.entriesById(ids)
    state.spent += performance.now() - started
    return { items, total }
  }

  /**
   * A keyset page (contract §10): the matches after the position, segment by segment (sql.ts
   * `afterSegments`), walking the sort's index from the position when that is the cheaper plan
   * (as list decides for page 1), so a page deep in a walk costs what the first did. One more
   * row than the page tells whether more follow.
   */
  private listAfter (
    collection: string, query: ListQuery,
    match: { where: string, params: Params, conditions: number, bucket: [string, string], key: string, total: number }
  ): ListResult {
    const orderParams: Params = []
    const order = orderSql(query.sort, orderParams)
    let hint = ''
    const rows = match.conditions === 0
      ? match.total
      : this.count(collection, match.bucket.join('\u0000'), `environment = ? AND collection = '${collection}' AND locale = ?`, match.bucket).count
    if (query.perPage * rows < match.total * match.total) {
      const index = this.sortIndex(collection, query.sort)
      if (index !== null) hint = ` INDEXED BY "${index}"`
    }
    const ids: number[] = []
    for (const segment of afterSegments(query.sort, query.after as KeysetPosition)) {
      const wanted = query.perPage + 1 - ids.length
      if (wanted <= 0) break
      // The last page of a walk reads every segment; one that matches nothing is skipped, not queried.
      if (segment.fixed && !this.anyMatch(collection, `${match.key}\u0000${segment.sql}\u0000${JSON.stringify(segment.params)}`, `${hint} WHERE ${match.where} AND ${segment.sql}`, [...match.params, ...segment.params])) continue
      ids.push(...this.statement(`SELECT id FROM entries${hint} WHERE ${match.where} AND ${segment.sql} ORDER BY ${order} LIMIT ?`).pluck()
        .all(...match.params, ...segment.params, ...orderParams, wanted) as number[])
    }
    const more = ids.length > query.perPage
    return { items: this.entriesById(more ? ids.slice(0, query.perPage) : ids), total: match.total, more }
  }

  /** Whether any entry matches `clause` (an index hint, then WHERE), kept until the next write to the collection. */
  private anyMatch (collection: string, key: string, clause: string, params: Params): boolean {
    let found = this.matched.get(collection, key)
    if (found === undefined) {
      found = this.statement(`SELECT EXISTS (SELECT 1 FROM entries${clause})`).pluck().get(...params) === 1
      this.matched.set(collection, key, found)
    }
    return found
  }

  /** A count, cached until the next write to the collection, with what computing it cost. */
  private count (collection: string, key: string, where: string, params: Params): { count: number, cost: number } {
    let counted = this.counts.get(collection, key)
    if (counted === undefined) {
      const started = performance.now()
      const count = this.statement(`SELECT count(*) FROM entries WHERE ${where}`).pluck().get(...params) as number
      counted = { count, cost: performance.now() - started }
      this.counts.set(collection, key, counted)
    }
    return counted
  }

  /** Every match of a list query, in order, as row ids. */
  private materialize (where: string, order: string, params: Params, orderParams: Params): Float64Array {
    const ids = Float64Array.from(this.statement(`SELECT id FROM entries WHERE ${where} ORDER BY ${order}`).pluck()
      .all(...params, ...orderParams) as number[])
    this.materializedIds += ids.length
    if (this.materializedIds > MATERIALIZED_IDS) {
      // The running sum also counts lists that writes have discarded since: count again.
      this.materializedIds = ids.length
      for (const state of this.results.values()) this.materializedIds += state.ids?.length ?? 0
      if (this.materializedIds > MATERIALIZED_IDS) {
        // Over budget: start again from this one (the others are rebuilt when asked for enough).
        this.results.clear()
        this.materializedIds = ids.length
      }
    }
    return ids
  }

  /** Entries by row id, in the order given: from the row cache, the rest in one query. */
  private entriesById (ids: ArrayLike<number>): StoredEntry[] {
    const out = new Array<StoredEntry>(ids.length)
    let missing: number[] | null = null
    for (let i = 0; i < ids.length; i++) {
      const entry = this.rows.get(ids[i] as number)
      if (entry !== undefined) out[i] = entry
      else (missing ??= []).push(ids[i] as number)
    }
    if (missing !== null) {
      const rows = this.statement(`SELECT id, ${ENTRY_COLUMNS} FROM entries WHERE id IN (SELECT value FROM json_each(?))`)
        .all(JSON.stringify(missing)) as Array<EntryRow & { id: number }>
      const found = new Map<number, StoredEntry>()
      for (const row of rows) {
        const entry = toEntry(row)
        found.set(row.id, entry)
        this.rows.set(row.id, entry, { size: entrySize(row) })
      }
      for (let i = 0; i < ids.length; i++) {
        if (out[i] === undefined) {
          const entry = found.get(ids[i] as number)
          if (entry === undefined) throw new Error('a listed row is gone')
          out[i] = entry
        }
      }
    }
    return out
  }

  /** The index that yields rows in the order of the first sort key (then slug), or null. */
  private sortIndex (collection: string, sort: readonly SortKey[]): string | null {
    const first = sort[0]
    if (first === undefined) return 'entries_key'
    if (first.field.system) {
      return { _slug: 'entries_key', _created_at: 'entries_created', _updated_at: 'entries_updated' }[first.field.name] ?? null
    }
    const key = indexKeySql(first.field.path, first.field.kind)
    const existing = this.indexes.get(collection)
    if (key === null || existing === undefined) return null
    // The index in the sort's own direction keeps the slug tie-break in order; the other one,
    // walked backwards, needs equal keys re-sorted, which SQLite does in small groups.
    const own = indexName(collection, `environment, locale, ${key} ${first.direction === 'desc' ? 'DESC' : 'ASC'}, slug`)
    const other = indexName(collection, `environment, locale, ${key} ${first.direction === 'desc' ? 'ASC' : 'DESC'}, slug`)
    return existing.has(own) ? own : existing.has(other) ? other : null
  }

  async * entries (): AsyncIterable<StoredLocation> {
    // Keyset pages: no cursor stays open while the consumer runs, so it may use the store.
    let last = 0
    for (;;) {
      const rows = this.statement(`SELECT id, environment, collection, locale, ${ENTRY_COLUMNS} FROM entries WHERE id > ? ORDER BY id LIMIT 500`)
        .all(last) as Array<EntryRow & { id: number, environment: string, collection: string, locale: string }>
      if (rows.length === 0) return
      for (const row of rows) {
        last = row.id
        yield { scope: { environment: row.environment, locale: row.locale === '' ? null : row.locale }, collection: row.collection, entry: toEntry(row) }
      }
    }
  }

  // ---- editorial (types/editorial.ts; tables and rules: sqlite-editorial.ts) ------------------
  // Reads are direct; writes go through the write queue as editorial calls, each in its own
  // savepoint of the batch's BEGIN IMMEDIATE transaction: decided at commit against every
  // connection's commits, durable when they resolve, and waiting for an index build as writes do.

  private get editorial (): EditorialTables {
    if (this.tables === null) throw new Error('the SQLite store is not open')
    return this.tables
  }

  async versions (scope: Scope, collection: string, slug: string, keep: number, offset: number, limit: number): Promise<{ items: VersionSummary[], total: number }> {
    return this.editorial.versions(entryKey(scope, collection, slug), keep, offset, limit)
  }

  async version (scope: Scope, collection: string, slug: string, n: number, keep: number): Promise<EntryVersion | undefined> {
    return this.editorial.version(entryKey(scope, collection, slug), n, keep)
  }

  async getDraft (scope: Scope, collection: string, slug: string): Promise<StoredDraft | undefined> {
    return this.editorial.getDraft(entryKey(scope, collection, slug))
  }

  async putDraft (scope: Scope, collection: string, slug: string, data: Record<string, unknown>): Promise<StoredDraft> {
    const key = entryKey(scope, collection, slug)
    assertStoredSlug(slug)
    const at = this.now()
    return await this.editorialCall(tables => tables.putDraft(key, data, at))
  }

  async deleteDraft (scope: Scope, collection: string, slug: string): Promise<boolean> {
    const key = entryKey(scope, collection, slug)
    return await this.editorialCall(tables => tables.clearDraft(key))
  }

  async addSchedule (input: ScheduleInput): Promise<ScheduleRecord> {
    const key = entryKey(input.scope, input.collection, input.slug)
    assertStoredSlug(input.slug)
    const at = this.now()
    return await this.editorialCall(tables => tables.addSchedule(key, input, at))
  }

  async getSchedule (id: string): Promise<ScheduleRecord | undefined> {
    return this.editorial.getSchedule(id)
  }

  async listSchedules (status: ScheduleStatus, filter: ScheduleFilter, offset: number, limit: number): Promise<SchedulePage> {
    return this.editorial.listSchedules(status, filter, offset, limit)
  }

  async deleteSchedule (id: string): Promise<boolean> {
    return await this.editorialCall(tables => tables.deleteSchedule(id))
  }

  async claimSchedules (owner: string, now: string, leaseMs: number, limit: number): Promise<ScheduleRecord[]> {
    return await this.editorialCall(tables => tables.claimSchedules(owner, now, leaseMs, limit))
  }

  async finishSchedule (id: string, owner: string, error: string | null): Promise<boolean> {
    return await this.editorialCall(tables => tables.finishSchedule(id, owner, error))
  }

  async nextScheduleAt (): Promise<string | null> {
    return this.editorial.nextScheduleAt()
  }

  /** Runs `write` in the next write batch, in its own savepoint: its value once committed, or its error. */
  private async editorialCall<T> (write: (tables: EditorialTables) => T): Promise<T> {
    const tables = this.editorial
    let out: { value: T } | undefined
    await this.enqueue({ kind: 'editorial', run: () => { out = { value: write(tables) } } })
    return (out as { value: T }).value
  }

  // ---- writes --------------------------------------------------------------------------------

  async create (scope: Scope, collection: string, input: EntryInput): Promise<StoredWrite> {
    return await this.writeEntry('create', scope, collection, input)
  }

  async update (scope: Scope, collection: string, input: EntryInput): Promise<StoredWrite> {
    return await this.writeEntry('update', scope, collection, input)
  }

  async delete (scope: Scope, collection: string, slug: string): Promise<number | null> {
    checkBucket(scope, collection)
    assertStoredSlug(slug)
    return (await this.enqueue({ kind: 'delete', locale: localeKey(scope), scope, collection, slug, at: this.now() })).seq
  }

  private async writeEntry (kind: 'create' | 'update', scope: Scope, collection: string, input: EntryInput): Promise<StoredWrite> {
    const at = this.now()
    const op = this.writeOperation(kind, scope, collection, input, at)
    const { createdAt = at, seq } = await this.enqueue(op)
    // The data as stored (and as a later read returns it), detached from the caller's object.
    return { entry: frozenEntry(input.slug, input.status, JSON.parse(op.json), createdAt, at), seq: seq as number }
  }

  private writeOperation (kind: 'create' | 'update', scope: Scope, collection: string, input: EntryInput, at: string): EntryWrite {
    checkBucket(scope, collection)
    assertStoredSlug(input.slug)
    if (!isEntryStatus(input.status)) throw new CmsError('BAD_REQUEST', "Status must be 'draft' or 'published'.")
    const json = JSON.stringify(input.data)
    if (typeof json !== 'string') throw new CmsError('BAD_REQUEST', 'Entry data must be a JSON object.')
    const unique = uniqueValues(input)
    const keepVersions = input.keepVersions ?? 0
    if (!Number.isSafeInteger(keepVersions) || keepVersions < 0) throw new RangeError('keepVersions must be a non-negative integer')
    const op: WriteOperation = { kind, locale: localeKey(scope), scope, collection, slug: input.slug, status: input.status, json, search: searchText(input.data), at, unique }
    return { ...op, keepVersions, clearDraft: input.clearDraft === true, expected: kind === 'update' ? expectedText(input.expected) : null }
  }

  private enqueue (op: Operation): Promise<Applied> {
    if (this.db === null) return Promise.reject(new Error('the SQLite store is not open'))
    return new Promise((resolve, reject) => {
      this.queue.push({ op, resolve, reject })
      this.flushTimer ??= setImmediate(() => { this.flush() })
    })
  }

  /** Commits every queued write in one transaction, then settles each promise. */
  private flush (): void {
    this.flushTimer = null
    // An index build holds the write lock: the queue waits for its end (buildIndexes), not the event loop.
    if (this.building > 0) return
    const batch = this.queue
    this.queue = []
    if (batch.length === 0) return
    try {
      (this.writeBatch as (batch: Pending[]) => void)(batch)
    } catch (err) {
      // The COMMIT failed: nothing of the batch is stored.
      this.log.error({ err, writes: batch.length }, 'write transaction failed')
      for (const p of batch) p.reject(err)
      return
    }
    for (const p of batch) {
      const op = p.op
      // Drafts and schedules change no entry: nothing read from entries is stale.
      if (op.kind === 'editorial') continue
      this.counts.invalidate(op.collection)
      this.matched.invalidate(op.collection)
      this.results.invalidate(op.collection)
      if (p.rowId !== undefined) this.rows.delete(p.rowId)
      this.keyed.delete(bucketText(op.scope.environment, op.collection, op.locale), op.slug)
      // Only a write that changed something: not a create or update that failed in its savepoint, nor a delete of nothing.
      if (p.result?.ok === true && p.result.value.seq !== null) {
        this.revisions.set(bucketText(op.scope.environment, op.collection, op.locale), ++this.lastRevision)
      }
    }
    this.writesSinceAnalyze += batch.length
    if (this.writesSinceAnalyze >= Math.max(1000, this.analyzedRows)) this.scheduleAnalyze()
    for (const p of batch) {
      const result = p.result
      if (result === undefined || !result.ok) p.reject(result?.error ?? new Error('write not applied'))
      else p.resolve(result.value)
    }
  }

  private batchTransaction (db: SqliteDatabase, changeLog: SqliteChangeLog, tables: EditorialTables): (batch: Pending[]) => void {
    const apply = this.savepointWrite(db, changeLog, tables)
    const transaction = db.transaction((batch: Pending[]) => {
      for (const p of batch) {
        try {
          p.result = { ok: true, value: apply(p) }
        } catch (error) {
          p.result = { ok: false, error }
          // An I/O error or a full disk ends the whole transaction: let the batch fail.
          if (!db.inTransaction) throw error
        }
      }
    })
    // IMMEDIATE: the write lock is taken at BEGIN, so what each savepoint checks cannot change
    // under it, whoever else has the database open.
    return batch => { transaction.immediate(batch) }
  }

  /** One queued write, run nested inside the batch's transaction: in a savepoint, so its failure undoes only itself. */
  private savepointWrite (db: SqliteDatabase, changeLog: SqliteChangeLog, tables: EditorialTables): (p: Pending) => Applied {
    const insert = db.prepare('INSERT INTO entries (environment, collection, locale, slug, status, created_at, updated_at, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
    // The collection is written into the SQL, never bound: a bound value compared with the
    // partial indexes' `collection = '<name>'` makes SQLite re-plan the statement at every call.
    const update = (collection: string): Statement => this.statement(`UPDATE entries SET status = ?, updated_at = ?, data = ? WHERE environment = ? AND collection = '${collection}' AND locale = ? AND slug = ? RETURNING id, created_at`)
    // An update with a precondition (EntryInput.expected) changes the row only when it, and with
    // a draft read the pending draft, are still exactly as read: the stored texts compared with
    // the texts of what was read (see common.ts ExpectedText). Nothing changed: a missing entry
    // or a changed one (`exists` tells them apart, only then).
    const draftHeld = (collection: string): string =>
      `EXISTS (SELECT 1 FROM drafts d WHERE d.environment = ? AND d.collection = '${collection}' AND d.locale = ? AND d.slug = ? AND d.updated_at = ? AND d.data = ?)`
    const guarded = (collection: string, draft: boolean): Statement => this.statement(`UPDATE entries SET status = ?, updated_at = ?, data = ?
      WHERE environment = ? AND collection = '${collection}' AND locale = ? AND slug = ? AND status = ? AND updated_at = ? AND data = ?${draft ? ` AND ${draftHeld(collection)}` : ''} RETURNING id, created_at`)
    const exists = (collection: string): Statement => this.statement(`SELECT 1 FROM entries WHERE environment = ? AND collection = '${collection}' AND locale = ? AND slug = ?`)
    const updateRow = (op: EntryWrite): { id: number, created_at: string } | undefined => {
      const env = op.scope.environment
      const { expected } = op
      if (expected === null) return update(op.collection).get(op.status, op.at, op.json, env, op.locale, op.slug) as { id: number, created_at: string } | undefined
      const values: unknown[] = [op.status, op.at, op.json, env, op.locale, op.slug, expected.status, expected.updatedAt, expected.json]
      if (expected.draft !== null) values.push(env, op.locale, op.slug, expected.draft.updatedAt, expected.draft.json)
      const row = guarded(op.collection, expected.draft !== null).get(...values) as { id: number, created_at: string } | undefined
      if (row === undefined && exists(op.collection).get(env, op.locale, op.slug) !== undefined) throw entryChanged(op.slug, op.collection)
      return row
    }
    const remove = (collection: string): Statement => this.statement(`DELETE FROM entries WHERE environment = ? AND collection = '${collection}' AND locale = ? AND slug = ? RETURNING id`)
    const setSearch = db.prepare('INSERT OR REPLACE INTO entry_search (id, search) VALUES (?, ?)')
    const removeSearch = db.prepare('DELETE FROM entry_search WHERE id = ?')

    // The unique rule, inside the write's savepoint: committed rows and the batch's earlier writes count.
    const checkUnique = (op: WriteOperation): void => {
      if (op.unique.length === 0) return
      checkUniqueHolders(op.unique.map(([path, value]) => [path, this.holder(op.scope.environment, op.collection, op.locale, path, value, op.slug)]))
    }

    // In the write's savepoint, after its row: a rollback takes the record with it.
    const record = (op: EntryWrite | DeleteOperation, status: EntryStatus | null): number => {
      const key = { environment: op.scope.environment, locale: op.scope.locale, collection: op.collection, slug: op.slug }
      return changeLog.record(entryChange(key, status === null ? null : { status, updatedAt: op.at }, op.at))
    }

    return db.transaction((p: Pending): Applied => {
      const op = p.op
      if (op.kind === 'editorial') {
        op.run()
        return { seq: null }
      }
      const env = op.scope.environment
      switch (op.kind) {
        case 'create': {
          checkUnique(op)
          let id: number | bigint
          try {
            id = insert.run(env, op.collection, op.locale, op.slug, op.status, op.at, op.at, op.json).lastInsertRowid
          } catch (err) {
            if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw slugTaken(op.slug, op.collection)
            throw err
          }
          setSearch.run(id, op.search)
          writeEditorial(tables, op, op.at)
          return { seq: record(op, op.status) }
        }
        case 'update': {
          const row = updateRow(op)
          if (row === undefined) throw entryMissing(op.slug, op.collection)
          // After the row's own change, which the check excludes; a clash undoes the savepoint.
          checkUnique(op)
          p.rowId = row.id
          setSearch.run(row.id, op.search)
          writeEditorial(tables, op, row.created_at)
          return { createdAt: row.created_at, seq: record(op, op.status) }
        }
        case 'delete': {
          const row = remove(op.collection).get(env, op.locale, op.slug) as { id: number } | undefined
          if (row === undefined) return { seq: null }
          p.rowId = row.id
          removeSearch.run(row.id)
          tables.entryDeleted({ environment: env, collection: op.collection, locale: op.locale, slug: op.slug })
          return { seq: record(op, null) }
        }
      }
    })
  }
}

/** In an entry write's savepoint, after its row: its version and the publish of its draft (types/editorial.ts). */
function writeEditorial (tables: EditorialTables, op: EntryWrite, entryCreatedAt: string): void {
  const key = { environment: op.scope.environment, collection: op.collection, locale: op.locale, slug: op.slug }
  if (op.keepVersions > 0) tables.keepVersion(key, op.status, op.json, op.at, entryCreatedAt, op.keepVersions)
  if (op.clearDraft) tables.clearDraft(key)
}

/** The expression indexes a collection's schema asks for: name → CREATE INDEX statement (SqliteStore.prepareCollection). */
function wantedIndexes (schema: ResolvedSchema): Map<string, string> {
  const collection = schema.name
  const wanted = new Map<string, string>()
  for (const { field, direction } of indexedFields(schema)) {
    const key = indexKeySql(field.path, field.kind)
    if (key === null || wanted.size >= MAX_COLLECTION_INDEXES) continue
    const columns = `environment, locale, ${key} ${direction === 'desc' ? 'DESC' : 'ASC'}, slug`
    const name = indexName(collection, columns)
    wanted.set(name, `CREATE INDEX IF NOT EXISTS "${name}" ON entries (${columns}) WHERE collection = '${collection}'`)
  }
  return wanted
}

/** A stable text of a query's sort. */
function sortKey (query: ListQuery): string {
  return JSON.stringify(query.sort.map(s => [s.field.name, s.field.kind, s.direction]))
}

/** What an entry parsed from `row` is counted for in the entry caches (ROW_CACHE_BYTES). */
function entrySize (row: EntryRow): number {
  return row.data.length + ENTRY_OVERHEAD
}

function toEntry (row: EntryRow): StoredEntry {
  return frozenEntry(row.slug, row.status, JSON.parse(row.data) as Record<string, unknown>, row.created_at, row.updated_at)
}

/** The name of a collection's expression index: `ix:<collection>:<hash of its columns>`. */
function indexName (collection: string, columns: string): string {
  return `ix:${collection}:${hash(columns)}`
}

/** A short, stable name part for an index definition (FNV-1a, 32 bits, hex). */
function hash (text: string): string {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h.toString(16).padStart(8, '0')
}
