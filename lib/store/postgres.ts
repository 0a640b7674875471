// The PostgreSQL store (CMS_STORE=postgres): node-postgres over CMS_DATABASE_URL, every table in
// the connection's current schema (postgres-schema.ts), so several Lecterns can share a database.
// A row per entry keyed by (environment, collection, locale — '' when locales are off, slug)
// holds the JSON text as written (`doc`, what reads return, byte for byte), a JSONB copy (`data`,
// what conditions and expression indexes read; postgres-dialect.ts), the folded search text, the
// status and the timestamps. `change_log` holds each entry key's latest change (changes/postgres.ts).
//
// Writes: group commit. A write is queued and the queue is committed as one transaction at the
// end of the event-loop turn, each write in its own savepoint so a failing write fails only its
// own promise. The transaction first takes the store's transaction-level advisory lock (derived
// from current_schema()), so writes of every process sharing the schema are decided one
// transaction after the other, against every committed one: a taken `unique` value is looked up
// inside the savepoint (VALIDATION_FAILED), a create's duplicate slug is the unique index's
// violation (CONFLICT), an update of no row is NOT_FOUND; the change record (and its NOTIFY)
// is written in the same savepoint, its seq handed out under the lock (commit order).
//
// Reads go to the database every time: another process may have written since. A cache of
// entries would hook in at `noteChange`, the place a NOTIFY from another process lands.
// Every call made while the database is unreachable rejects with UNAVAILABLE (503), never hangs:
// connections and queries have time limits, and the pool reconnects by itself.
import { createHash, randomUUID } from 'node:crypto'
import { CHANNEL_SQL } from '../cluster/postgres-bus.js'
import { LRUCache } from 'lru-cache'
import pg from 'pg'
import { CmsError } from '../errors.js'
import { jsonbText, numbered, pgText, postgresDialect } from '../query/postgres-dialect.js'
import { positionOf } from '../query/keyset.js'
import { sqlBuilder, type Params } from '../query/sql.js'
import { searchText } from '../query/values.js'
import {
  expectedText, frozenEntry, isEntryStatus, isLookupValue, silentLogger, timestamps, uniqueValues, type StoreLogger, type StoreOptions,
  indexedFields, type Applied, type Pending as PendingWrite
} from './common.js'
import { decideWrite, holderSql, writeStatement, type PgOperation, type PgWriteOperation, type WriteRow } from './postgres-write.js'
import { assertStoredSlug, checkBucket, isCollectionName, isSlug } from './names.js'
import { storeChangeLogOptions } from './changes/common.js'
import { PostgresChangeLog, type Queryable } from './changes/postgres.js'
import { MIGRATIONS } from './postgres-schema.js'
import { PostgresEditorial, applyLayout } from './postgres-editorial.js'
import { layoutOf } from './layout.js'
import type { ChangeLog } from '../../types/changes.js'
import type { KeysetPosition, ListQuery } from '../../types/query.js'
import type { ResolvedSchema } from '../../types/schema.js'
import type { Scope } from '../../types/scope.js'
import type { ContentStore, EntryInput, EntryStatus, ListResult, StoredEntry, StoredLocation, StoredWrite } from '../../types/store.js'
import type { EntryVersion, ScheduleFilter, ScheduleInput, ScheduleRecord, SchedulePage, ScheduleStatus, StoredDraft, VersionSummary } from '../../types/editorial.js'

const sql = sqlBuilder(postgresDialect)

/** CMS_DATABASE_POOL's default. */
export const DEFAULT_POOL = 10
/** How long a new connection (or a wait for a free one) may take before the call is UNAVAILABLE. */
const CONNECT_TIMEOUT_MS = 5000
/** How long a request's query may run: past it the database is taken as unreachable. */
const QUERY_TIMEOUT_MS = 15_000
/** ping's: readiness must be answered fast. */
const PING_TIMEOUT_MS = 2000
/** Index builds and migrations: a large table takes time. */
const DDL_TIMEOUT_MS = 600_000
/** The first server_version_num with statistics on expressions (PostgreSQL 14). */
const STATISTICS_ON_EXPRESSIONS = 140000
/** Expression indexes per collection at most (as SQLite's): each one costs every write to the collection. */
const MAX_COLLECTION_INDEXES = 24
const ENTRY_COLUMNS = 'slug, status, created_at, updated_at, doc'
const ENTRIES_PAGE = 500
/**
 * The reads by key, prepared (see `prepared`): their one plan, the key's unique index, is what a
 * planner given the values would choose too.
 */
const GET_ENTRY = { name: 'lectern_get_entry', text: `SELECT ${ENTRY_COLUMNS} FROM entries WHERE environment = $1 AND collection = $2 AND locale = $3 AND slug = $4` }
const GET_ENTRIES = { name: 'lectern_get_entries', text: `SELECT ${ENTRY_COLUMNS} FROM entries WHERE environment = $1 AND collection = $2 AND locale = $3 AND slug = ANY($4::text[])` }
/** List counts kept (see `counts`), and page ends (`pageEnds`). */
const COUNTS_KEPT = 1000
/** Writes after which the planner's statistics are gathered again, at least (and at least the rows they were gathered over). */
const ANALYZE_WRITES = 1000

interface EntryRow {
  slug: string
  status: EntryStatus
  created_at: string
  updated_at: string
  doc: string
}

type Pending = PendingWrite<PgOperation>

/** What open learns of the schema it works in: the names its locks and announcements are derived from. */
interface Identity {
  schema: string
  /** server_version_num: what the server can do (statistics on expressions: 14 and later). */
  version: number
  writeLock: string
  channel: string
}

const localeKey = (scope: Scope): string => scope.locale ?? ''

/**
 * Whether an error says the database cannot be reached (rather than that a statement failed): a
 * socket error, a time limit, SQLSTATE class 08 (connection), 57P01-03 (shutdown, starting), 53300 (too many connections).
 */
export function isUnreachable (err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  if (typeof code === 'string' && (/^(08|57P0[123]|53300)/.test(code) || /^E[A-Z]+$/.test(code))) return true
  const message = err instanceof Error ? err.message : ''
  return /Connection terminated|timeout exceeded when trying to connect|Query read timeout|connection error|not queryable/i.test(message)
}

/** The error a caller gets: UNAVAILABLE (503, its text hidden) when the database is unreachable, else the error itself. */
function storeError (err: unknown): unknown {
  return isUnreachable(err) ? new CmsError('UNAVAILABLE', 'The database is unavailable.') : err
}

export class PostgresStore implements ContentStore {
  readonly kind = 'postgres' as const
  private pool: pg.Pool | null = null
  private identity: Identity | null = null
  private changeLog: PostgresChangeLog | null = null
  private readonly log: StoreLogger
  private readonly now: () => string
  private readonly poolSize: number
  readonly changes: ChangeLog = {
    since: async (afterSeq, limit, filter) => await this.guard(async () => await this.openChangeLog().since(afterSeq, limit, filter)),
    latestSeq: async () => await this.guard(async () => await this.openChangeLog().latestSeq()),
    horizon: async () => await this.guard(async () => await this.openChangeLog().horizon()),
    compact: async () => await this.guard(async () => await this.openChangeLog().compact())
  }

  private queue: Pending[] = []
  private flushTimer: NodeJS.Immediate | null = null
  /** The batches, one after the other: writes sent in order commit in order. */
  private flushing: Promise<void> = Promise.resolve()
  private readonly revisions = new Map<string, number>()
  private lastRevision = 0
  private openRevision = 0
  /**
   * Counts of list queries, each with its bucket's revision when it was read: valid while that
   * revision stands, which every write to the bucket moves (this process's at commit, another's
   * when its announcement is heard: noteChange). A count whose bucket moved while it was read is
   * not kept.
   */
  private readonly counts = new LRUCache<string, { revision: number, count: number }>({ max: COUNTS_KEPT })
  /** Where numbered pages ended (`page`), each with its bucket's revision then, as `counts`. */
  private readonly pageEnds = new LRUCache<string, { revision: number, position: KeysetPosition }>({ max: COUNTS_KEPT })
  /** Rows written since the planner's statistics were last gathered (ANALYZE), and rows then. */
  private writesSinceAnalyze = 0
  private analyzedRows = 0
  private analyzing = false
  /** The calls on the database under way: close lets them finish (a read sent before close answers). */
  private readonly inFlight = new Set<Promise<void>>()
  /** Whether the last call found the database unreachable (logged once per outage). */
  private down = false

  constructor (protected readonly options: StoreOptions) {
    if (options.databaseUrl === undefined || options.databaseUrl === '') throw new Error('the PostgreSQL store needs a database URL (CMS_DATABASE_URL)')
    this.poolSize = options.databasePool ?? DEFAULT_POOL
    this.log = options.log ?? silentLogger
    this.now = timestamps(options)
  }

  /** The database (read when the store opens: a test's store learns its schema's URL then). */
  private get url (): string {
    return this.options.databaseUrl as string
  }

  // ---- life cycle ---------------------------------------------------------------------------

  async open (): Promise<void> {
    if (this.pool !== null) return
    const pool = new pg.Pool({
      connectionString: this.url,
      max: this.poolSize,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      query_timeout: this.options.queryTimeoutMs ?? QUERY_TIMEOUT_MS,
      keepAlive: true,
      // A write's statements go out together (applyInSavepoint); each still gets its own result.
      // A statement past query_timeout then ends its connection (node-postgres cannot take one
      // answer out of a pipeline): see `checkedOut` for what that means to a connection in use.
      pipeline: true,
      application_name: 'lectern'
    })
    // An idle connection the server drops (a restart) must not crash the process: the pool replaces it.
    pool.on('error', err => { this.unreachable(err) })
    try {
      const identity = await this.whoAmI(pool)
      const announce = { channel: identity.channel, origin: this.options.origin ?? randomUUID() }
      const ddl = await this.ddlClient()
      try {
        // §14: the stored content moved to the settings' layout under the migration lock, before anything reads.
        await migrate(ddl, identity.schema, this.log, async () => {
          await applyLayout(ddl, { layout: layoutOf(this.options), transaction: async work => await inLockedTransaction(ddl, identity.writeLock, work), announce, now: this.now, log: this.log })
        })
      } finally {
        await ddl.end()
      }
      this.pool = pool
      this.identity = identity
      const changeLog = new PostgresChangeLog(
        { query: async (text, values) => await this.run(text, values), locked: async work => await this.locked(work) },
        announce, storeChangeLogOptions(this.options))
      this.changeLog = changeLog
      await changeLog.open()
    } catch (err) {
      this.pool = null
      this.identity = null
      this.changeLog = null
      await pool.end()
      throw storeError(err)
    }
    this.revisions.clear()
    this.openRevision = ++this.lastRevision
  }

  /** The current schema, and the lock key and NOTIFY channel derived from it (so schemas sharing a database stay apart). */
  private async whoAmI (pool: pg.Pool): Promise<Identity> {
    const { rows } = await pool.query(`SELECT current_schema() AS schema,
      hashtextextended('lectern:write:' || current_schema(), 0)::text AS write_lock,
      ${CHANNEL_SQL} AS channel, current_setting('server_version_num')::int AS version`)
    const row = rows[0] as { schema: string | null, write_lock: string | null, channel: string | null, version: number }
    if (row.schema === null || row.write_lock === null || row.channel === null) throw new Error('the database connection has no current schema: check search_path')
    return { schema: row.schema, writeLock: row.write_lock, channel: row.channel, version: row.version }
  }

  async close (): Promise<void> {
    const pool = this.pool
    if (pool === null) return
    // Writes issued before close are committed first.
    if (this.flushTimer !== null) {
      clearImmediate(this.flushTimer)
      this.flushTimer = null
      this.flushing = this.flushing.then(async () => { await this.flush() })
    }
    await this.flushing
    while (this.inFlight.size > 0) await Promise.all(this.inFlight)
    this.changeLog?.close()
    this.changeLog = null
    this.pool = null
    this.identity = null
    await pool.end()
  }

  private openChangeLog (): PostgresChangeLog {
    if (this.changeLog === null) throw new Error('the PostgreSQL store is not open')
    return this.changeLog
  }

  private openPool (): pg.Pool {
    if (this.pool === null) throw new Error('the PostgreSQL store is not open')
    return this.pool
  }

  // ---- database access ----------------------------------------------------------------------

  /** Runs a call against the database: unreachable becomes UNAVAILABLE, and a success ends an outage. */
  private async guard<T> (call: () => Promise<T>): Promise<T> {
    const running = this.track(call())
    try {
      const result = await running
      if (this.down) {
        this.down = false
        this.log.info({}, 'the database is reachable again')
      }
      return result
    } catch (err) {
      if (isUnreachable(err)) this.unreachable(err)
      throw storeError(err)
    }
  }

  /** Keeps a call in `inFlight` until it settles: close waits for it before it ends the pool. */
  private track<T> (promise: Promise<T>): Promise<T> {
    const settledCall = promise.then(() => {}, () => {})
    this.inFlight.add(settledCall)
    void settledCall.then(() => { this.inFlight.delete(settledCall) })
    return promise
  }

  private unreachable (err: unknown): void {
    if (this.down) return
    this.down = true
    // The code and message only: never the URL, which holds the password.
    this.log.warn({ code: (err as { code?: unknown }).code, reason: err instanceof Error ? err.message : String(err) }, 'the database is unreachable')
  }

  /** One statement on a pooled connection, with `?` placeholders numbered. */
  private async query (text: string, values: unknown[] = []): Promise<pg.QueryResult> {
    return await this.run(numbered(text, values), values)
  }

  /** One statement on a pooled connection, numbered already (`$1`…). */
  private async run (text: string, values: unknown[] = []): Promise<pg.QueryResult> {
    return await this.guard(async () => await this.openPool().query(text, values))
  }

  /** One of the statements below, prepared once per connection (node-postgres `name`): parsed and planned once, not per call. */
  private async prepared (statement: { name: string, text: string }, values: unknown[]): Promise<pg.QueryResult> {
    return await this.guard(async () => await this.openPool().query({ ...statement, values }))
  }

  /**
   * A transaction holding the store's write lock (pg_advisory_xact_lock, released at its end):
   * every process sharing the schema writes one such transaction at a time.
   */
  private async locked<T> (work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return await this.checkedOut(async client => await inLockedTransaction(client, this.identity?.writeLock, work))
  }

  /**
   * `work` on a connection of the pool, kept from the other calls until it is done; a connection
   * that failed is not reused. While it is checked out the pool no longer listens to it, so this
   * does: a connection ended under `work` (the server went away, or a statement ran past
   * query_timeout, which ends a pipelining connection) emits an error that, unheard, would end
   * the process. Heard, it fails `work`'s statements, as any lost connection does.
   */
  private async checkedOut<T> (work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return await this.guard(async () => {
      const client = await this.openPool().connect()
      let failed = false
      const lost = (err: Error): void => {
        failed = true
        this.unreachable(err)
      }
      client.on('error', lost)
      try {
        return await work(client)
      } catch (err) {
        failed = true
        throw err
      } finally {
        client.removeListener('error', lost)
        client.release(failed)
      }
    })
  }

  // ---- the shared pool, for the other services kept in the database ---------------------------

  /**
   * One parameterized statement (`$1`…) on the store's pool, for services kept in the same schema
   * (sync key, webhook outbox, asset records): they share CMS_DATABASE_POOL rather than open pools.
   * Unreachable rejects with UNAVAILABLE (503), as every store call does.
   */
  async execute (text: string, values: unknown[] = []): Promise<pg.QueryResult> {
    return await this.run(text, values)
  }

  /**
   * `work` in one transaction on a pooled connection (committed when it resolves, rolled back when
   * it throws), without the store's write lock: a service takes its own advisory lock if it needs one.
   */
  async transaction<T> (work: (client: Queryable) => Promise<T>): Promise<T> {
    return await this.checkedOut(async client => {
      await client.query('BEGIN')
      try {
        const result = await work(client)
        await client.query('COMMIT')
        return result
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {})
        throw err
      }
    })
  }

  /** A connection of its own for DDL (migrations, index builds), whose statements may take long. */
  private async ddlClient (): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, query_timeout: DDL_TIMEOUT_MS, keepAlive: true, application_name: 'lectern' })
    client.on('error', err => { this.unreachable(err) })
    await client.connect()
    return client
  }

  // ---- collections ---------------------------------------------------------------------------

  async ensureCollection (collection: string): Promise<void> {
    // Rows need no storage location; the name is still checked like everywhere else.
    checkBucket({ environment: 'default', locale: null }, collection)
  }

  /**
   * Partial expression indexes over the collection's rows (WHERE collection = '<name>'), on the
   * key expressions the builder writes (so the planner matches them): as SQLite's, its scalar
   * fields, the default_sort field in its default direction, its unique fields. Stale ones are
   * dropped. Under the write lock, so processes preparing at once do not race on the catalogue.
   * Beside them, statistics on each key expression (CREATE STATISTICS): the planner ignores a
   * partial index's own, so without them it guesses how many rows a filter matches (0.5% for any
   * value) and picks the wrong index (PostgreSQL 14 and later: 13 has no statistics on expressions).
   */
  async prepareCollection (schema: ResolvedSchema): Promise<void> {
    const collection = schema.name
    if (!isCollectionName(collection)) return
    // One call for close to wait for, its steps included.
    await this.guard(async () => {
      const { indexes, statistics } = wantedIndexes(schema)
      let made = await this.applyDdl(collection, 'index', indexes)
      if ((this.identity?.version ?? 0) >= STATISTICS_ON_EXPRESSIONS) made += await this.applyDdl(collection, 'statistics', statistics)
      // New statistics are empty until gathered; an index on rows already there wants them now.
      if (made > 0) this.analyzeSoon()
    })
  }

  /** Makes the collection's indexes (or statistics) those of `wanted` (name → CREATE statement), on a connection of its own; returns how many it made. */
  private async applyDdl (collection: string, kind: 'index' | 'statistics', wanted: Map<string, string>): Promise<number> {
    const prefix = kind === 'index' ? indexPrefix(collection) : statisticsPrefix(collection)
    const { rows } = await this.query(kind === 'index'
      ? "SELECT indexname AS name FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'entries' AND starts_with(indexname, ?)"
      : 'SELECT stxname AS name FROM pg_statistic_ext WHERE stxnamespace = current_schema()::regnamespace AND starts_with(stxname, ?)', [prefix])
    const existing = rows.map(row => (row as { name: string }).name)
    const drop = existing.filter(name => !wanted.has(name))
    const create = [...wanted].filter(([name]) => !existing.includes(name)).map(([, ddl]) => ddl)
    if (drop.length === 0 && create.length === 0) return 0
    const started = Date.now()
    const client = await this.ddlClient()
    try {
      await inLockedTransaction(client, this.identity?.writeLock, async db => {
        for (const name of drop) await db.query(`DROP ${kind === 'index' ? 'INDEX' : 'STATISTICS'} IF EXISTS "${name}"`)
        for (const ddl of create) await db.query(ddl)
      })
    } finally {
      await client.end()
    }
    this.log.info({ collection, [kind]: wanted.size, ms: Date.now() - started }, `collection ${kind} prepared`)
    return create.length
  }

  // ---- reads ---------------------------------------------------------------------------------

  async get (scope: Scope, collection: string, slug: string): Promise<StoredEntry | undefined> {
    checkBucket(scope, collection)
    if (!isSlug(slug)) return undefined
    const { rows } = await this.prepared(GET_ENTRY, [scope.environment, collection, localeKey(scope), slug])
    const row = rows[0] as EntryRow | undefined
    return row === undefined ? undefined : toEntry(row)
  }

  async getMany (scope: Scope, collection: string, slugs: readonly string[]): Promise<Map<string, StoredEntry>> {
    checkBucket(scope, collection)
    const out = new Map<string, StoredEntry>()
    const wanted = [...new Set(slugs.filter(slug => isSlug(slug)))]
    if (wanted.length === 0) return out
    const { rows } = await this.prepared(GET_ENTRIES, [scope.environment, collection, localeKey(scope), wanted])
    for (const row of rows as EntryRow[]) out.set(row.slug, toEntry(row))
    return out
  }

  async findByValue (scope: Scope, collection: string, dottedPath: string, value: unknown, excludeSlug: string | null): Promise<string | null> {
    checkBucket(scope, collection)
    if (!isLookupValue(value)) return null
    return await this.holder(this.openQueryable(), scope.environment, collection, localeKey(scope), dottedPath, value, excludeSlug)
  }

  private openQueryable (): Queryable {
    return { query: async (text, values) => await this.run(text, values) }
  }

  /** The slug of another row holding `value` at `dottedPath` (through the unique field's expression index), as `db` sees them. */
  private async holder (db: Queryable, environment: string, collection: string, locale: string, dottedPath: string, value: string | number | boolean, excludeSlug: string | null): Promise<string | null> {
    const params: Params = []
    const text = `SELECT ${holderSql({ environment, collection, locale }, dottedPath, value, excludeSlug, params)} AS slug`
    const { rows } = await db.query(numbered(text, params), params)
    return (rows[0] as { slug: string | null } | undefined)?.slug ?? null
  }

  async list (scope: Scope, collection: string, query: ListQuery): Promise<ListResult> {
    checkBucket(scope, collection)
    // One call for close to wait for, however many statements it takes.
    return await this.guard(async () => await this.listNow(scope, collection, query))
  }

  private async listNow (scope: Scope, collection: string, query: ListQuery): Promise<ListResult> {
    const params: Params = [scope.environment, collection, localeKey(scope)]
    const where = ['environment = ? AND collection = ? AND locale = ?', ...sql.conditionsSql(query, params)].join(' AND ')
    const counting = this.count(scope, collection, where, params)
    if (query.after !== null) {
      const rows = await this.rowsAfter(query, query.after, where, params, query.perPage + 1)
      // One more row than the page tells whether more follow.
      const more = rows.length > query.perPage
      return { items: (more ? rows.slice(0, query.perPage) : rows).map(toEntry), total: await counting, more }
    }
    return { items: await this.page(scope, collection, query, where, params), total: await counting }
  }

  /**
   * A numbered page's rows. Where the page before it ended is known (this store served it, and
   * the bucket has not been written since: its revision), the page is read as a keyset page from
   * there, so a pull reading page after page reads each row once, rather than walking every row
   * before the page again (OFFSET, and the sort key of each of them computed).
   */
  private async page (scope: Scope, collection: string, query: ListQuery, where: string, params: Params): Promise<StoredEntry[]> {
    const revision = this.revision(scope, collection)
    const orderParams: Params = []
    const order = sql.orderSql(query.sort, orderParams)
    const offset = (query.page - 1) * query.perPage
    const endKey = (at: number): string => `${where}\u0000${JSON.stringify(params)}\u0000${order}\u0000${JSON.stringify(orderParams)}\u0000${at}`
    const from = offset > 0 ? this.pageEnds.get(endKey(offset)) : undefined
    const rows = from?.revision === revision
      ? await this.rowsAfter(query, from.position, where, params, query.perPage)
      : (await this.query(`SELECT ${ENTRY_COLUMNS} FROM entries WHERE ${where} ORDER BY ${order} LIMIT ? OFFSET ?`, [...params, ...orderParams, query.perPage, offset])).rows as EntryRow[]
    const items = rows.map(toEntry)
    const last = items.at(-1)
    if (last !== undefined && this.revision(scope, collection) === revision) {
      this.pageEnds.set(endKey(offset + items.length), { revision, position: positionOf(last, query.sort) })
    }
    return items
  }

  private async count (scope: Scope, collection: string, where: string, params: Params): Promise<number> {
    const revision = this.revision(scope, collection)
    const key = `${where}\u0000${JSON.stringify(params)}`
    const kept = this.counts.get(key)
    if (kept !== undefined && kept.revision === revision) return kept.count
    const { rows } = await this.query(`SELECT count(*) AS n FROM entries WHERE ${where}`, params)
    const count = Number((rows[0] as { n: string }).n)
    if (this.revision(scope, collection) === revision) this.counts.set(key, { revision, count })
    return count
  }

  /** Up to `wanted` matches after the position (contract §10), segment by segment (sql.ts `afterSegments`). */
  private async rowsAfter (query: ListQuery, position: KeysetPosition, where: string, params: Params, wanted: number): Promise<EntryRow[]> {
    const orderParams: Params = []
    const order = sql.orderSql(query.sort, orderParams)
    const rows: EntryRow[] = []
    for (const segment of sql.afterSegments(query.sort, position)) {
      const missing = wanted - rows.length
      if (missing <= 0) break
      const values = [...params, ...segment.params, ...orderParams, missing]
      rows.push(...(await this.query(`SELECT ${ENTRY_COLUMNS} FROM entries WHERE ${where} AND ${segment.sql} ORDER BY ${order} LIMIT ?`, values)).rows as EntryRow[])
    }
    return rows
  }

  async * entries (): AsyncIterable<StoredLocation> {
    // Keyset pages: no cursor stays open while the consumer runs, so it may use the store.
    let last = '0'
    for (;;) {
      const { rows } = await this.query(`SELECT id, environment, collection, locale, ${ENTRY_COLUMNS} FROM entries WHERE id > ?::bigint ORDER BY id LIMIT ?`, [last, ENTRIES_PAGE])
      if (rows.length === 0) return
      for (const row of rows as Array<EntryRow & { id: string, environment: string, collection: string, locale: string }>) {
        last = row.id
        yield { scope: { environment: row.environment, locale: row.locale === '' ? null : row.locale }, collection: row.collection, entry: toEntry(row) }
      }
    }
  }

  revision (scope: Scope, collection: string): number {
    return this.revisions.get(bucketKey(scope.environment, collection, localeKey(scope))) ?? this.openRevision
  }

  /**
   * Marks (environment, collection, locale) as written: revision() moves on. The store calls it
   * for its own writes; the listener of other processes' NOTIFYs (next step) calls it for theirs,
   * and it is where a cache of entries would be invalidated.
   */
  noteChange (environment: string, collection: string, locale: string | null): void {
    this.revisions.set(bucketKey(environment, collection, locale ?? ''), ++this.lastRevision)
  }

  /**
   * Gathers the planner's statistics (ANALYZE) in the background once the writes since the last
   * time reach the rows counted then: after a bulk load the planner knows how many rows a
   * filter's value matches (autovacuum's own analyze may come a minute or more later).
   */
  private analyzeSoon (): void {
    if (this.analyzing) return
    this.analyzing = true
    this.writesSinceAnalyze = 0
    void this.run('ANALYZE entries').then(async () => {
      const { rows } = await this.run('SELECT count(*) AS n FROM entries')
      this.analyzedRows = Number((rows[0] as { n: string }).n)
    }).catch((err: unknown) => { this.log.warn({ err }, 'gathering query planner statistics failed') })
      .finally(() => { this.analyzing = false })
  }

  async ping (): Promise<void> {
    // Readiness is answered fast; the query itself stops at QUERY_TIMEOUT_MS.
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => { reject(new CmsError('UNAVAILABLE', 'The database did not answer in time.')) }, PING_TIMEOUT_MS)
    })
    try {
      await Promise.race([this.query('SELECT 1'), late])
    } finally {
      clearTimeout(timer)
    }
  }

  async contentFingerprint (): Promise<string> {
    // Every write takes a seq in the log, whichever process made it.
    return `postgres:${await this.changes.latestSeq()}`
  }

  // ---- editorial (types/editorial.ts): postgres-editorial.ts --------------------------------

  private readonly editorial = new PostgresEditorial({
    query: async (text, values) => await this.run(text, values),
    locked: async work => await this.locked(work),
    now: () => this.now()
  })

  async versions (scope: Scope, collection: string, slug: string, keep: number, offset: number, limit: number): Promise<{ items: VersionSummary[], total: number }> {
    return await this.editorial.versions(scope, collection, slug, keep, offset, limit)
  }

  async version (scope: Scope, collection: string, slug: string, n: number, keep: number): Promise<EntryVersion | undefined> {
    return await this.editorial.version(scope, collection, slug, n, keep)
  }

  async getDraft (scope: Scope, collection: string, slug: string): Promise<StoredDraft | undefined> {
    return await this.editorial.getDraft(scope, collection, slug)
  }

  async putDraft (scope: Scope, collection: string, slug: string, data: Record<string, unknown>): Promise<StoredDraft> {
    return await this.editorial.putDraft(scope, collection, slug, data)
  }

  async deleteDraft (scope: Scope, collection: string, slug: string): Promise<boolean> {
    return await this.editorial.deleteDraft(scope, collection, slug)
  }

  async addSchedule (input: ScheduleInput): Promise<ScheduleRecord> {
    return await this.editorial.addSchedule(input)
  }

  async getSchedule (id: string): Promise<ScheduleRecord | undefined> {
    return await this.editorial.getSchedule(id)
  }

  async listSchedules (status: ScheduleStatus, filter: ScheduleFilter, offset: number, limit: number): Promise<SchedulePage> {
    return await this.editorial.listSchedules(status, filter, offset, limit)
  }

  async deleteSchedule (id: string): Promise<boolean> {
    return await this.editorial.deleteSchedule(id)
  }

  async claimSchedules (owner: string, now: string, leaseMs: number, limit: number): Promise<ScheduleRecord[]> {
    return await this.editorial.claimSchedules(owner, now, leaseMs, limit)
  }

  async finishSchedule (id: string, owner: string, error: string | null): Promise<boolean> {
    return await this.editorial.finishSchedule(id, owner, error)
  }

  async nextScheduleAt (): Promise<string | null> {
    return await this.editorial.nextScheduleAt()
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
    const op = writeOperation(kind, scope, collection, input, at)
    const { createdAt = at, seq } = await this.enqueue(op)
    // The data as stored (and as a later read returns it), detached from the caller's object.
    return { entry: frozenEntry(input.slug, input.status, JSON.parse(op.json), createdAt, at), seq: seq as number }
  }

  private async enqueue (op: PgOperation): Promise<Applied> {
    if (this.pool === null) throw new Error('the PostgreSQL store is not open')
    return await new Promise((resolve, reject) => {
      this.queue.push({ op, resolve, reject })
      this.flushTimer ??= setImmediate(() => {
        this.flushTimer = null
        this.flushing = this.flushing.then(async () => { await this.flush() })
      })
    })
  }

  /** Commits every queued write in one transaction, then settles each promise. */
  private async flush (): Promise<void> {
    const batch = this.queue
    this.queue = []
    if (batch.length === 0) return
    try {
      await this.locked(async client => { await this.applyAll(client, batch) })
    } catch (err) {
      // The transaction failed as a whole (the database went away, or COMMIT failed): nothing of it is stored.
      this.log.error({ err: storeError(err), writes: batch.length }, 'write transaction failed')
      for (const p of batch) p.reject(storeError(err))
      return
    }
    this.openChangeLog().written()
    for (const p of batch) {
      // Only a write that changed something: not one refused in its savepoint, nor a delete of nothing.
      if (p.result?.ok === true && p.result.value.seq !== null) this.noteChange(p.op.scope.environment, p.op.collection, p.op.scope.locale)
    }
    this.writesSinceAnalyze += batch.length
    if (this.writesSinceAnalyze >= Math.max(ANALYZE_WRITES, this.analyzedRows)) this.analyzeSoon()
    for (const p of batch) {
      const result = p.result
      if (result === undefined || !result.ok) p.reject(result?.error ?? new Error('write not applied'))
      else p.resolve(result.value)
    }
  }

  /**
   * Every write of the batch, each in its savepoint (SAVEPOINT, its one statement, RELEASE), all
   * sent at once (node-postgres `pipeline`: one round trip): a refusal writes nothing and is no
   * error (postgres-write.ts), so no write waits for the one before. A statement that fails
   * otherwise aborts the transaction until its savepoint is rolled back: it alone fails, and the
   * writes sent after it, refused by the aborted transaction, are sent again.
   */
  private async applyAll (client: pg.PoolClient, batch: Pending[]): Promise<void> {
    let rest = batch
    while (rest.length > 0) {
      const sent = rest.map(p => this.send(client, p))
      const failed = await decideSent(rest, sent)
      if (failed === -1) return
      unwrap(await settled(client.query('ROLLBACK TO SAVEPOINT write')))
      unwrap(await settled(client.query('RELEASE SAVEPOINT write')))
      rest = rest.slice(failed + 1)
    }
  }

  /**
   * Sends one write's savepoint, statement and release, without waiting for them. The statement
   * is prepared once per connection and text (node-postgres `name`): after a few runs PostgreSQL
   * keeps its generic plan, so a write is not planned again each time (planning took about as
   * long as running it).
   */
  private send (client: pg.PoolClient, p: Pending): Sent {
    const { text, values } = writeStatement(p.op, (gate, change, params) => this.openChangeLog().recordCtes(gate, change, params))
    return {
      savepoint: settled(client.query('SAVEPOINT write')),
      statement: settled(client.query({ name: `lectern_write_${shortHash(text)}`, text: numbered(text, values), values })),
      release: settled(client.query('RELEASE SAVEPOINT write'))
    }
  }
}

interface Sent {
  savepoint: Promise<Settled<unknown>>
  statement: Promise<Settled<pg.QueryResult>>
  release: Promise<Settled<unknown>>
}

/**
 * Sets each write's result from its statement's row, in order, up to the first statement that
 * failed (not a refusal: an error). Returns that write's index, once every statement sent with it
 * has answered, or -1. An unreachable database throws: the batch ends.
 */
async function decideSent (batch: Pending[], sent: Sent[]): Promise<number> {
  for (let i = 0; i < batch.length; i++) {
    const p = batch[i] as Pending
    const { savepoint, statement, release } = sent[i] as Sent
    const outcome = await statement
    if (!outcome.ok) {
      if (isUnreachable(outcome.error)) throw outcome.error
      p.result = { ok: false, error: outcome.error }
      await Promise.all(sent.slice(i).flatMap(s => [s.savepoint, s.statement, s.release]))
      return i
    }
    unwrap(await savepoint)
    try {
      p.result = { ok: true, value: decideWrite(p.op, outcome.value.rows[0] as WriteRow) }
    } catch (error) {
      p.result = { ok: false, error }
    }
    unwrap(await release)
  }
  return -1
}

type Settled<T> = { ok: true, value: T } | { ok: false, error: unknown }

/** A promise that never rejects (so a pipelined statement's failure is never unhandled): its outcome. */
async function settled<T> (promise: Promise<T>): Promise<Settled<T>> {
  try {
    return { ok: true, value: await promise }
  } catch (error) {
    return { ok: false, error }
  }
}

function unwrap<T> (outcome: Settled<T>): T {
  if (!outcome.ok) throw outcome.error
  return outcome.value
}

function writeOperation (kind: 'create' | 'update', scope: Scope, collection: string, input: EntryInput, at: string): PgWriteOperation {
  checkBucket(scope, collection)
  assertStoredSlug(input.slug)
  if (!isEntryStatus(input.status)) throw new CmsError('BAD_REQUEST', "Status must be 'draft' or 'published'.")
  const json = JSON.stringify(input.data)
  if (typeof json !== 'string') throw new CmsError('BAD_REQUEST', 'Entry data must be a JSON object.')
  return {
    kind,
    locale: localeKey(scope),
    scope,
    collection,
    slug: input.slug,
    status: input.status,
    json,
    jsonb: jsonbText(input.data, json),
    search: pgText(searchText(input.data)),
    at,
    unique: uniqueValues(input),
    keepVersions: input.keepVersions ?? 0,
    clearDraft: input.clearDraft === true,
    expected: kind === 'update' ? expectedText(input.expected) : null
  }
}

/**
 * Applies the migrations a database lacks, then `then`, under a session advisory lock: processes
 * starting together wait for one another.
 */
async function migrate (client: pg.Client, schema: string, log: StoreLogger, then: () => Promise<void>): Promise<void> {
  await client.query("SELECT pg_advisory_lock(hashtextextended('lectern:migrate:' || current_schema(), 0))")
  try {
    await client.query('CREATE TABLE IF NOT EXISTS lectern_migrations (version int PRIMARY KEY, applied_at text NOT NULL)')
    const { rows } = await client.query('SELECT coalesce(max(version), 0) AS version FROM lectern_migrations')
    const current = Number((rows[0] as { version: number }).version)
    const latest = MIGRATIONS.at(-1)?.version ?? 0
    if (current > latest) throw new Error(`the database schema ${schema} has layout version ${current}; this server understands ${latest}`)
    for (const migration of MIGRATIONS) {
      if (migration.version <= current) continue
      await client.query('BEGIN')
      try {
        await client.query(migration.sql)
        await client.query('INSERT INTO lectern_migrations (version, applied_at) VALUES ($1, $2)', [migration.version, new Date().toISOString()])
        await client.query('COMMIT')
      } catch (err) {
        await client.query('ROLLBACK')
        throw err
      }
      log.info({ schema, version: migration.version }, 'database migrated')
    }
    await then()
  } finally {
    await client.query("SELECT pg_advisory_unlock(hashtextextended('lectern:migrate:' || current_schema(), 0))")
  }
}

/** `work` in a transaction holding the store's write lock (pg_advisory_xact_lock, released when it ends). */
async function inLockedTransaction<C extends Queryable, T> (client: C, writeLock: string | undefined, work: (client: C) => Promise<T>): Promise<T> {
  if (writeLock === undefined) throw new Error('the PostgreSQL store is not open')
  await client.query('BEGIN')
  try {
    await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [writeLock])
    const result = await work(client)
    await client.query('COMMIT')
    return result
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {})
    throw err
  }
}

/**
 * The expression indexes a collection's schema asks for (the fields: common.ts `indexedFields`)
 * and the statistics on their keys: name → CREATE statement.
 */
function wantedIndexes (schema: ResolvedSchema): { indexes: Map<string, string>, statistics: Map<string, string> } {
  const collection = schema.name
  const indexes = new Map<string, string>()
  const statistics = new Map<string, string>()
  for (const { field, direction } of indexedFields(schema)) {
    const key = sql.indexKeySql(field.path, field.kind)
    if (key === null || indexes.size >= MAX_COLLECTION_INDEXES) continue
    // The order ORDER BY writes (sql.ts `orderSql`), nulls included, so the index yields it.
    const columns = `environment, locale, (${key}) ${direction === 'desc' ? 'DESC NULLS LAST' : 'ASC NULLS FIRST'}, slug`
    const name = `${indexPrefix(collection)}${shortHash(columns)}`
    // DDL takes no parameters: the collection is a checked name (names.ts), the key our own expression.
    indexes.set(name, `CREATE INDEX IF NOT EXISTS "${name}" ON entries (${columns}) WHERE collection = '${collection}'`)
    const stats = `${statisticsPrefix(collection)}${shortHash(key)}`
    statistics.set(stats, `CREATE STATISTICS IF NOT EXISTS "${stats}" ON (${key}) FROM entries`)
  }
  return { indexes, statistics }
}

/** The names of a collection's indexes start with this (PostgreSQL names are at most 63 bytes: the collection is hashed). */
function indexPrefix (collection: string): string {
  return `lx_${shortHash(collection)}_`
}

/** The names of the statistics on a collection's keys start with this. */
function statisticsPrefix (collection: string): string {
  return `lxs_${shortHash(collection)}_`
}

function shortHash (text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16)
}

function bucketKey (environment: string, collection: string, locale: string): string {
  return `${environment}\u0000${collection}\u0000${locale}`
}

function toEntry (row: EntryRow): StoredEntry {
  return frozenEntry(row.slug, row.status, JSON.parse(row.doc) as Record<string, unknown>, row.created_at, row.updated_at)
}
