// The PostgreSQL store's change log: the table `change_log` (postgres-schema.ts), one row per entry
// key holding the key's latest change. A change is recorded by the write's own statement
// (`recordCtes`), in the store's write transaction and the write's savepoint, after the transaction took the store's write lock (a transaction-level
// advisory lock, lib/store/postgres.ts): the seq comes from the counter row `change_log_meta.seq`,
// so seqs are handed out in the order transactions hold that lock, which is their commit order (a
// transaction becomes visible before its locks are released). So no lower seq can commit after a
// higher one is readable, and `since` may read "seq > N" without gaps. A refused write takes no
// seq, a rolled-back savepoint gives its seq back with the counter; a committed seq is never
// handed out again.
import { CONTENT_TOPIC } from '../../cluster/bus.js'
import { numbered } from '../../query/postgres-dialect.js'
import type pg from 'pg'
import {
  COMPACTION_INTERVAL_MS, checkChange, checkPageArguments, resolveChangeLogOptions, retentionCutoff,
  type ChangeLogOptions, type ResolvedChangeLogOptions
} from './common.js'
import type { Change, ChangeFilter, ChangeLog, ChangePage, ChangeRecord, CompactionResult } from '../../../types/changes.js'
import type { EntryStatus } from '../../../types/store.js'

/** A connection (in a transaction) or the pool. */
export interface Queryable {
  query: (text: string, values?: unknown[]) => Promise<pg.QueryResult>
}

/** What the log needs of its store: queries on the pool, and a transaction holding the write lock. */
export interface ChangeLogDatabase {
  query: (text: string, values: unknown[]) => Promise<pg.QueryResult>
  locked: <T>(work: (client: Queryable) => Promise<T>) => Promise<T>
}

/** Kept when after the baseline, or when it announces a present entry (ChangeFilter `baseline`). */
const BASELINE_SQL = "(seq > $4 OR (op = 'upsert' AND ($5 = 0 OR status = 'published')))"

/**
 * A page and the latest seq in one statement (one snapshot): the latest is read with the page, so
 * `upTo` never passes a record the page did not see.
 */
const PAGE_SQL = (collections: boolean): string => `
  SELECT m.value AS latest, c.seq, c.collection, c.slug, c.op, c.status, c.at
  FROM change_log_meta m LEFT JOIN LATERAL (
    SELECT seq, collection, slug, op, status, at FROM change_log
    WHERE environment = $1 AND locale = $2 AND seq > $3 AND ${BASELINE_SQL}${collections ? ' AND collection = ANY($7::text[])' : ''}
    ORDER BY seq LIMIT $6
  ) c ON TRUE
  WHERE m.key = 'seq' ORDER BY c.seq`

interface PageRow {
  latest: string
  seq: string | null
  collection: string
  slug: string
  op: 'upsert' | 'delete'
  status: EntryStatus | null
  at: string
}

/**
 * A change recorded by the write's own statement (lib/store/postgres-write.ts), as two of its CTEs
 * run only when the CTE `gate` returned a row (the write happened): `next` takes the seq from the
 * counter, `rec` replaces the key's record and announces it with a NOTIFY on the channel (sent at
 * commit, dropped with a rolled-back savepoint). A refused write takes no seq, so seqs stay
 * consecutive. `?` placeholders, their values pushed in order.
 */
const RECORD_CTES = (gate: string): string => `
  next AS (UPDATE change_log_meta SET value = value + 1 WHERE key = 'seq' AND EXISTS (SELECT 1 FROM ${gate}) RETURNING value),
  rec AS (INSERT INTO change_log (seq, environment, locale, collection, slug, op, status, at)
    SELECT value, ?, ?, ?, ?, ?, ?, ? FROM next
    ON CONFLICT (environment, collection, locale, slug) DO UPDATE SET seq = excluded.seq, op = excluded.op, status = excluded.status, at = excluded.at
    RETURNING seq, pg_notify(?, json_build_object('o', ?::text, 't', ?::text,
      'd', json_build_object('seq', seq, 'environment', environment, 'locale', ?::text, 'collection', collection, 'slug', slug))::text))`

/** RECORD_CTES for `change`, its values pushed on `params` (`announce`: the channel and this process's mark). */
function changeCtes (gate: string, change: Change, announce: { channel: string, origin: string }, params: unknown[]): string {
  checkChange(change)
  params.push(change.environment, change.locale ?? '', change.collection, change.slug, change.op, change.status, change.at,
    announce.channel, announce.origin, CONTENT_TOPIC, change.locale)
  return RECORD_CTES(gate)
}

/**
 * Records a change as a statement of its own in `client`'s transaction, which holds the store's
 * write lock, and returns its seq: a layout move's at open (postgres-editorial.ts).
 */
export async function recordChange (client: Queryable, change: Change, announce: { channel: string, origin: string }): Promise<number> {
  const params: unknown[] = []
  const text = `WITH moved AS (SELECT 1), ${changeCtes('moved', change, announce, params)} SELECT seq FROM rec`
  const { rows } = await client.query(numbered(text, params), params)
  return Number((rows[0] as { seq: string }).seq)
}

export class PostgresChangeLog implements ChangeLog {
  private readonly options: ResolvedChangeLogOptions
  private lastCompactionCheck = 0
  private compactionTimer: NodeJS.Timeout | null = null

  /**
   * `announce`: the cluster bus's channel and this process's mark on what it sends (lib/cluster:
   * the payload's form is postgres-bus.ts `payload`), so other processes hear each change.
   */
  constructor (private readonly db: ChangeLogDatabase, private readonly announce: { channel: string, origin: string }, options: ChangeLogOptions) {
    this.options = resolveChangeLogOptions(options)
  }

  /** Drops expired tombstones (the store calls it at open). */
  async open (): Promise<void> {
    this.lastCompactionCheck = this.options.clock().getTime()
    await this.compact()
  }

  close (): void {
    if (this.compactionTimer !== null) clearTimeout(this.compactionTimer)
    this.compactionTimer = null
  }

  /**
   * The CTEs `next` and `rec` that record `change` in the write's statement when the CTE `gate`
   * has a row (see RECORD_CTES); the statement reads its seq as `(SELECT seq FROM rec)`, null
   * when the write did not happen. Its values are pushed on `params`.
   */
  recordCtes (gate: string, change: Change, params: unknown[]): string {
    return changeCtes(gate, change, this.announce, params)
  }

  /** Called after each write transaction: compaction, at most hourly. */
  written (): void {
    this.compactIfDue()
  }

  async since (afterSeq: number, limit: number, filter: ChangeFilter): Promise<ChangePage> {
    checkPageArguments(afterSeq, limit)
    const baseline = filter.baseline === undefined ? [0, 0] : [filter.baseline.seq, filter.baseline.publishedOnly ? 1 : 0]
    const values: unknown[] = [filter.environment, filter.locale ?? '', afterSeq, ...baseline, limit + 1]
    if (filter.collections !== undefined) values.push(filter.collections)
    const { rows } = await this.db.query(PAGE_SQL(filter.collections !== undefined), values) as pg.QueryResult<PageRow>
    const latest = Number(rows[0]?.latest ?? 0)
    const records: ChangeRecord[] = []
    for (const row of rows) {
      if (row.seq === null) continue
      records.push(Object.freeze({
        seq: Number(row.seq), environment: filter.environment, locale: filter.locale, collection: row.collection, slug: row.slug, op: row.op, status: row.status, at: row.at
      }))
    }
    const more = records.length > limit
    if (more) records.pop()
    const upTo = more ? (records.at(-1) as ChangeRecord).seq : Math.max(afterSeq, records.at(-1)?.seq ?? 0, latest)
    return { records, more, upTo }
  }

  async latestSeq (): Promise<number> {
    return await this.meta('seq')
  }

  async horizon (): Promise<number> {
    return await this.meta('horizon')
  }

  /** Drops expired tombstones and moves the horizon, under the write lock (a re-create may replace a tombstone meanwhile). */
  async compact (): Promise<CompactionResult> {
    const cutoff = retentionCutoff(this.options.clock(), this.options.retentionDays)
    const result = await this.db.locked(async client => {
      const { rows } = await client.query(`WITH dropped AS (DELETE FROM change_log WHERE op = 'delete' AND at < $1 RETURNING seq)
        SELECT count(*)::int AS dropped, max(seq) AS top FROM dropped`, [cutoff])
      const { dropped, top } = rows[0] as { dropped: number, top: string | null }
      const moved = await client.query("UPDATE change_log_meta SET value = greatest(value, $1::bigint) WHERE key = 'horizon' RETURNING value", [top ?? 0])
      return { dropped, horizon: Number((moved.rows[0] as { value: string }).value) }
    })
    if (result.dropped > 0) this.options.log.info({ dropped: result.dropped, horizon: result.horizon }, 'change log compacted')
    return result
  }

  /** At most hourly, after the current write transaction: compaction. */
  private compactIfDue (): void {
    const now = this.options.clock().getTime()
    if (this.compactionTimer !== null || now - this.lastCompactionCheck < COMPACTION_INTERVAL_MS) return
    this.lastCompactionCheck = now
    this.compactionTimer = setTimeout(() => {
      this.compactionTimer = null
      this.compact().catch((err: unknown) => { this.options.log.warn({ err }, 'change log compaction failed') })
    }, 0)
  }

  private async meta (key: 'seq' | 'horizon'): Promise<number> {
    const { rows } = await this.db.query('SELECT value FROM change_log_meta WHERE key = $1', [key])
    return Number((rows[0] as { value: string }).value)
  }
}
