// The SQLite store's change log: a table in `lectern.db` beside `entries`, one row per entry key
// holding the key's latest change, the seq as its row id. `record` runs inside the store's write
// transaction (in the write's savepoint), so a change and its entry commit together or not at all:
// the log cannot miss a write, nor hold one that did not land, and every record is readable as
// soon as it commits (writes commit on the main thread, so no read sees a transaction half done).
//
// A seq is never reused: the next one is above the highest row and the horizon (the highest seq
// compaction dropped), as the database holds them inside the write's transaction (so connections
// sharing the database, each holding the write lock in turn, hand out seqs in commit order), and a
// seq a rolled-back savepoint took is simply skipped.
import type { Database, Statement } from 'better-sqlite3'
import { RecentChanges } from './recent.js'
import {
  COMPACTION_INTERVAL_MS, changeRecord, checkChange, checkPageArguments, entryChange, resolveChangeLogOptions, retentionCutoff,
  type ChangeLogOptions, type ResolvedChangeLogOptions
} from './common.js'
import type { Change, ChangeFilter, ChangeLog, ChangePage, ChangeRecord, CompactionResult } from '../../../types/changes.js'
import type { EntryStatus } from '../../../types/store.js'

/** The version of the tables below; a database with another one is refused. */
export const CHANGE_LOG_VERSION = 1
/** Entries back-filled per query, so a large table is never read into memory at once. */
const BACKFILL_PAGE = 1000
/** The newest records held in memory for reads (recent.ts; about 200 bytes each). */
const RECENT_RECORDS = 10_000

const DDL = `
  CREATE TABLE IF NOT EXISTS change_log (
    seq INTEGER PRIMARY KEY,
    environment TEXT NOT NULL,
    collection TEXT NOT NULL,
    locale TEXT NOT NULL,
    slug TEXT NOT NULL,
    op TEXT NOT NULL CHECK (op IN ('upsert', 'delete')),
    status TEXT CHECK (status IN ('draft', 'published')),
    at TEXT NOT NULL,
    CHECK ((op = 'delete') = (status IS NULL))
  );
  CREATE UNIQUE INDEX IF NOT EXISTS change_log_key ON change_log (environment, collection, locale, slug);
  CREATE INDEX IF NOT EXISTS change_log_scope ON change_log (environment, locale, seq);
  CREATE INDEX IF NOT EXISTS change_log_tombstones ON change_log (at) WHERE op = 'delete';
  CREATE TABLE IF NOT EXISTS change_log_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
`
const COLUMNS = 'seq, environment, locale, collection, slug, op, status, at'
/**
 * What a read selects: the scope is the filter's, so it is not read back. Read as arrays (raw):
 * a page's cost is mostly the values it materializes, and a sync answer reads one per change.
 */
const READ_COLUMNS = 'seq, collection, slug, op, status, at'
/** Kept when after the baseline, or when it announces a present entry (ChangeFilter `baseline`). */
const BASELINE_SQL = "(seq > ? OR (op = 'upsert' AND (? = 0 OR status = 'published')))"

interface ChangeRow {
  seq: number
  environment: string
  locale: string
  collection: string
  slug: string
  op: 'upsert' | 'delete'
  status: EntryStatus | null
  at: string
}

/** The statements of an open log, prepared once. */
function prepare (db: Database): Record<'upsert' | 'latest' | 'getMeta' | 'setMeta' | 'page' | 'pageIn' | 'newer' | 'newest' | 'dataVersion' | 'countExpired' | 'dropExpired', Statement> {
  return {
    upsert: db.prepare(`INSERT INTO change_log (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (environment, collection, locale, slug) DO UPDATE SET seq = excluded.seq, op = excluded.op, status = excluded.status, at = excluded.at`),
    latest: db.prepare(`SELECT max(coalesce((SELECT max(seq) FROM change_log), 0),
      coalesce((SELECT value FROM change_log_meta WHERE key = 'horizon'), 0))`).pluck(),
    getMeta: db.prepare('SELECT value FROM change_log_meta WHERE key = ?').pluck(),
    setMeta: db.prepare('INSERT OR REPLACE INTO change_log_meta (key, value) VALUES (?, ?)'),
    page: db.prepare(`SELECT ${READ_COLUMNS} FROM change_log WHERE environment = ? AND locale = ? AND seq > ? AND ${BASELINE_SQL}
      ORDER BY seq LIMIT ?`).raw(),
    pageIn: db.prepare(`SELECT ${READ_COLUMNS} FROM change_log WHERE environment = ? AND locale = ? AND seq > ? AND ${BASELINE_SQL}
      AND collection IN (SELECT value FROM json_each(?)) ORDER BY seq LIMIT ?`).raw(),
    // What the records held in memory (RecentChanges) are refreshed and loaded from.
    newer: db.prepare(`SELECT ${COLUMNS} FROM change_log WHERE seq > ? ORDER BY seq LIMIT ?`),
    newest: db.prepare(`SELECT ${COLUMNS} FROM change_log ORDER BY seq DESC LIMIT ?`),
    // Changes when another connection commits (never for this one's own commits): no table read.
    dataVersion: db.prepare('PRAGMA data_version').pluck(),
    countExpired: db.prepare("SELECT count(*) AS dropped, max(seq) AS top FROM change_log WHERE op = 'delete' AND at < ?"),
    dropExpired: db.prepare("DELETE FROM change_log WHERE op = 'delete' AND at < ?")
  }
}

/** A row of READ_COLUMNS, as a raw statement gives it. */
type ReadRow = [seq: number, collection: string, slug: string, op: 'upsert' | 'delete', status: EntryStatus | null, at: string]

/** The record of a row read in the filter's scope. */
function scopedRecord ([seq, collection, slug, op, status, at]: ReadRow, filter: ChangeFilter): ChangeRecord {
  return Object.freeze({ seq, environment: filter.environment, locale: filter.locale, collection, slug, op, status, at })
}

function toRecord (row: ChangeRow): ChangeRecord {
  return changeRecord(row.seq, { ...row, locale: row.locale === '' ? null : row.locale })
}

export class SqliteChangeLog implements ChangeLog {
  private readonly options: ResolvedChangeLogOptions
  private statements: ReturnType<typeof prepare> | null = null
  private last = 0
  private horizonSeq = 0
  private lastCompactionCheck = 0
  private compactionTimer: NodeJS.Immediate | null = null
  /**
   * The newest records, in memory: a read from a position they cover (an incremental sync) costs
   * no query. Brought up to the table before each read when this log has recorded since (`stale`)
   * or another connection has committed (`dataVersion`); loaded anew at open and after compaction.
   */
  private readonly recent = new RecentChanges(RECENT_RECORDS)
  private stale = true
  private dataVersion = 0
  /** Set while a turn of the event loop has checked `dataVersion` (observe). */
  private observed = false
  /**
   * The latest seq and the horizon, read once and kept until this log records or compacts, or
   * another connection commits: a sync answer asks for them on every request.
   */
  private counted: { latest: number, horizon: number } | null = null

  constructor (private readonly db: Database, options: ChangeLogOptions) {
    this.options = resolveChangeLogOptions(options)
  }

  // ---- life cycle ---------------------------------------------------------------------------

  /**
   * Creates the tables when they are new, back-filling a record for every entry already stored
   * (in the same transaction: all or nothing), checks their version, and drops expired
   * tombstones. Call it in the store's open, after its own migration (it reads `entries`).
   */
  open (): void {
    if (this.statements !== null) return
    const db = this.db
    let backfilled = 0
    db.transaction(() => {
      db.exec(DDL)
      this.statements = prepare(db)
      const version = this.meta('version')
      if (version !== undefined && version !== CHANGE_LOG_VERSION) {
        throw new Error(`the change log has version ${version}; this server understands ${CHANGE_LOG_VERSION}`)
      }
      this.horizonSeq = this.meta('horizon') ?? 0
      this.last = this.latest()
      if (version === undefined) {
        backfilled = this.reconcile()
        this.stmt.setMeta.run('version', CHANGE_LOG_VERSION)
      }
    })()
    if (backfilled > 0) this.options.log.info({ records: backfilled }, 'change log back-filled from the stored entries')
    this.lastCompactionCheck = this.options.clock().getTime()
    this.dataVersion = this.stmt.dataVersion.get() as number
    this.compactNow()
    this.load()
  }

  /** Stops a compaction that is due; the store closes the database. */
  close (): void {
    if (this.compactionTimer !== null) clearImmediate(this.compactionTimer)
    this.compactionTimer = null
    this.statements = null
    this.counted = null
  }

  // ---- writes --------------------------------------------------------------------------------

  /**
   * Records a change and returns its seq. Call it inside the write's transaction (the store's
   * savepoint), after the entry row is written: a rollback takes the record with it.
   */
  record (change: Change): number {
    const stmt = this.stmt
    checkChange(change)
    const seq = Math.max(this.last, this.latest()) + 1
    this.last = seq
    this.counted = null
    this.stale = true
    stmt.upsert.run(seq, change.environment, change.locale ?? '', change.collection, change.slug, change.op, change.status, change.at)
    this.compactIfDue()
    return seq
  }

  /**
   * Brings the log up to date with the `entries` table (back-fill, in the order entries were
   * stored; a tombstone for each recorded entry that is gone). Returns how many records it wrote.
   * Runs at creation; records written with each write keep the log exact after that.
   */
  reconcile (): number {
    const db = this.db
    if (db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'entries'").get() === undefined) return 0
    const now = this.options.clock().toISOString()
    const missing = db.prepare(`SELECT e.id, e.environment, e.collection, e.locale, e.slug, e.status, e.updated_at FROM entries e
      LEFT JOIN change_log c ON c.environment = e.environment AND c.collection = e.collection AND c.locale = e.locale AND c.slug = e.slug
      WHERE e.id > ? AND (c.seq IS NULL OR c.op <> 'upsert' OR c.status <> e.status OR c.at <> e.updated_at) ORDER BY e.id LIMIT ?`)
    const gone = db.prepare(`SELECT ${COLUMNS} FROM change_log c WHERE op = 'upsert' AND NOT EXISTS (SELECT 1 FROM entries e
      WHERE e.environment = c.environment AND e.collection = c.collection AND e.locale = c.locale AND e.slug = c.slug) ORDER BY seq`)
    return db.transaction(() => {
      let count = 0
      for (let after = 0; ;) {
        const rows = missing.all(after, BACKFILL_PAGE) as Array<{ id: number, environment: string, collection: string, locale: string, slug: string, status: EntryStatus, updated_at: string }>
        if (rows.length === 0) break
        for (const row of rows) {
          const key = { environment: row.environment, collection: row.collection, locale: row.locale === '' ? null : row.locale, slug: row.slug }
          this.record(entryChange(key, { status: row.status, updatedAt: row.updated_at }, now))
          after = row.id
          count++
        }
      }
      for (const row of gone.all() as ChangeRow[]) {
        this.record(entryChange(toRecord(row), null, now))
        count++
      }
      return count
    })()
  }

  // ---- reads ---------------------------------------------------------------------------------

  async since (afterSeq: number, limit: number, filter: ChangeFilter): Promise<ChangePage> {
    checkPageArguments(afterSeq, limit)
    const recent = this.recentFrom(afterSeq)
    let records: ChangeRecord[]
    let more: boolean
    if (recent !== null) {
      ({ records, more } = recent.page(afterSeq, limit, filter))
    } else {
      records = this.read(afterSeq, limit + 1, filter)
      more = records.length > limit
      if (more) records.pop()
    }
    // Past the last record read too: the log may have moved on since.
    const upTo = more ? (records.at(-1) as ChangeRecord).seq : Math.max(afterSeq, records.at(-1)?.seq ?? 0, this.counters().latest)
    return { records, more, upTo }
  }

  /** Up to `count` records after `afterSeq` in the filter's scope, collections and baseline, read from their rows. */
  private read (afterSeq: number, count: number, filter: ChangeFilter): ChangeRecord[] {
    const stmt = this.stmt
    const baseline = filter.baseline === undefined ? [0, 0] : [filter.baseline.seq, filter.baseline.publishedOnly ? 1 : 0]
    const scope = [filter.environment, filter.locale ?? '', afterSeq, ...baseline]
    const rows = (filter.collections === undefined
      ? stmt.page.all(...scope, count)
      : stmt.pageIn.all(...scope, JSON.stringify(filter.collections), count)) as ReadRow[]
    return rows.map(row => scopedRecord(row, filter))
  }

  /**
   * The records in memory, brought up to the table, when they cover a read after `afterSeq`;
   * else null. Never inside a write's transaction, whose records may yet be rolled back.
   */
  private recentFrom (afterSeq: number): RecentChanges | null {
    if (this.db.inTransaction) return null
    this.observe()
    if (this.stale) {
      this.stale = false
      const rows = this.stmt.newer.all(this.recent.latest, RECENT_RECORDS + 1) as ChangeRow[]
      if (rows.length > RECENT_RECORDS) this.load()
      else this.recent.add(rows.map(toRecord))
    }
    return this.recent.covers(afterSeq) ? this.recent : null
  }

  /**
   * Notices another connection's commits: the counters are read again, and the records in
   * memory brought up to the table (loaded anew when its compaction moved the horizon, which
   * drops tombstones they may hold).
   */
  private observe (): void {
    // Once per turn of the event loop (every request of a turn reads the log as of its first
    // check): another connection's commit is seen from the next turn on.
    if (this.observed) return
    this.observed = true
    setImmediate(() => { this.observed = false })
    const version = this.stmt.dataVersion.get() as number
    if (version === this.dataVersion) return
    this.dataVersion = version
    this.counted = null
    this.stale = true
    const horizon = this.meta('horizon') ?? 0
    if (horizon !== this.horizonSeq) {
      this.horizonSeq = horizon
      this.load()
    }
  }

  /** Holds the newest records of the table anew (half the capacity: room for the writes to come). */
  private load (): void {
    const held = RECENT_RECORDS / 2
    const rows = this.stmt.newest.all(held + 1) as ChangeRow[]
    // Every record above the newest one left out is held.
    this.recent.reset(rows.length > held ? (rows[held] as ChangeRow).seq : 0)
    this.recent.add(rows.slice(0, held).reverse().map(toRecord))
    this.stale = false
  }

  async latestSeq (): Promise<number> {
    return this.counters().latest
  }

  async horizon (): Promise<number> {
    return this.counters().horizon
  }

  /** The latest seq and horizon: kept (see `counted`), else read now. */
  private counters (): { latest: number, horizon: number } {
    if (!this.db.inTransaction) this.observe()
    if (this.counted !== null) return this.counted
    const counted = { latest: this.latest(), horizon: this.meta('horizon') ?? 0 }
    // Inside a write's transaction, what is read may yet be rolled back: not kept.
    if (!this.db.inTransaction) this.counted = counted
    return counted
  }

  // ---- compaction ----------------------------------------------------------------------------

  async compact (): Promise<CompactionResult> {
    return this.compactNow()
  }

  /** Drops expired tombstones and moves the horizon, in one transaction. */
  private compactNow (): CompactionResult {
    const stmt = this.stmt
    const cutoff = retentionCutoff(this.options.clock(), this.options.retentionDays)
    const result = this.db.transaction((): CompactionResult => {
      const { dropped, top } = stmt.countExpired.get(cutoff) as { dropped: number, top: number | null }
      if (dropped === 0 || top === null) return { dropped: 0, horizon: this.horizonSeq }
      stmt.dropExpired.run(cutoff)
      const horizon = Math.max(this.horizonSeq, top)
      stmt.setMeta.run('horizon', horizon)
      return { dropped, horizon }
    })()
    this.horizonSeq = result.horizon
    this.counted = null
    if (result.dropped > 0) this.load()
    if (result.dropped > 0) this.options.log.info({ dropped: result.dropped, horizon: result.horizon }, 'change log compacted')
    return result
  }

  /** At most hourly, after the current write transaction (never inside it): compaction. */
  private compactIfDue (): void {
    const now = this.options.clock().getTime()
    if (this.compactionTimer !== null || now - this.lastCompactionCheck < COMPACTION_INTERVAL_MS) return
    this.lastCompactionCheck = now
    this.compactionTimer = setImmediate(() => {
      this.compactionTimer = null
      try {
        this.compactNow()
      } catch (err) {
        this.options.log.warn({ err }, 'change log compaction failed')
      }
    })
  }

  // ---- helpers -------------------------------------------------------------------------------

  private get stmt (): ReturnType<typeof prepare> {
    if (this.statements === null) throw new Error('the change log is not open')
    return this.statements
  }

  private meta (key: string): number | undefined {
    return this.stmt.getMeta.get(key) as number | undefined
  }

  /** Every committed change is readable: the highest seq stored or dropped, as the database holds them now. */
  private latest (): number {
    return this.stmt.latest.get() as number
  }
}
