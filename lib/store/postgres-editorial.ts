// The PostgreSQL store's editorial side (types/editorial.ts, contract §13): kept versions, pending
// drafts and scheduled actions, in the tables of postgres-schema.ts (migration 2). lib/store/postgres.ts
// delegates its editorial methods here and adds `versionSql` / `removalSql` to each write's savepoint,
// so a version or a draft's removal commits with the write or not at all.
//
// A draft or schedule is written outside the write queue, in a transaction of its own holding the
// store's write lock, one statement that writes only if the entry is as the rule wants: so it is
// decided against every committed write, and an entry's delete, which takes that lock too, either
// came first (NOT_FOUND) or sees the draft or schedule and removes it (a row lock would not do: a
// delete that is one statement reads the drafts as of its start, before this commit).
import { badRequest, conflict } from '../errors.js'
import { deepFreeze } from '../query/values.js'
import { entryMissing, type StoreLogger } from './common.js'
import { entryChange } from './changes/common.js'
import { recordChange, type Queryable } from './changes/postgres.js'
import { bySoonest, scheduleRecord, scheduleWhere, type ScheduleRow } from './schedule-rows.js'
import { layoutMoves, layoutText, parseLayout, type Layout, type LayoutMove } from './layout.js'
import { assertStoredSlug, checkBucket, isSlug } from './names.js'
import type pg from 'pg'
import type { EntryVersion, ScheduleFilter, ScheduleInput, ScheduleRecord, SchedulePage, ScheduleStatus, StoredDraft, VersionSummary } from '../../types/editorial.js'
import type { Scope } from '../../types/scope.js'
import type { EntryStatus } from '../../types/store.js'

/** What the editorial side needs of its store: one statement (`$1`…) on the pool, a transaction holding the write lock, and the store's clock. */
export interface EditorialDatabase {
  query: (text: string, values: unknown[]) => Promise<pg.QueryResult>
  locked: <T>(work: (client: Queryable) => Promise<T>) => Promise<T>
  now: () => string
}

const KEY_COLUMNS = ['environment', 'collection', 'locale', 'slug'] as const
/** An entry key's columns equal to `$1`…`$4`: environment, collection, locale ('' when locales are off), slug. */
const KEY_SQL = 'environment = $1 AND collection = $2 AND locale = $3 AND slug = $4'
const SCHEDULE_COLUMNS = 'id, environment, collection, locale, slug, action, at, created_at, status, error'

interface VersionRow {
  version: number
  status: EntryStatus
  created_at: string
  entry_created_at: string
  doc?: string
}

const localeKey = (scope: Scope): string => scope.locale ?? ''

/** The key's values, after the names' checks (names.ts) as every store method makes them. */
function entryKey (scope: Scope, collection: string, slug: string): unknown[] {
  checkBucket(scope, collection)
  assertStoredSlug(slug)
  return [scope.environment, collection, localeKey(scope), slug]
}

/** What a write keeps of itself as a version (EntryInput.keepVersions > 0): the entry as written. */
export interface VersionInput {
  keep: number
  status: EntryStatus
  /** The data's JSON text, as the entry row stores it. */
  doc: string
  /** The write's time: the version's created_at (the entry's updated_at). */
  at: string
}

/** The key's columns equal to four `?` placeholders, its values pushed on `params`. */
function keyParams (key: readonly unknown[], params: unknown[]): string {
  params.push(...key)
  return 'environment = ? AND collection = ? AND locale = ? AND slug = ?'
}

/**
 * The CTEs a create or update adds to its statement after its row (`?` placeholders, values pushed
 * on `params`, as changes/postgres.ts records changes), doing something only when the CTE `gate`
 * returned the written row (its `created_at`): with `version`, the entry as written kept as the
 * key's next version (one above its highest, which no pruning drops) and the versions `keep` or
 * more below it dropped (a range of the primary key: nothing while under the limit); with
 * `clearDraft`, the key's draft removed. Null: nothing to add.
 */
export function versionCtes (gate: string, key: readonly unknown[], version: VersionInput | null, clearDraft: boolean, params: unknown[]): string | null {
  const ctes: string[] = []
  if (version !== null) {
    params.push(...key)
    const highest = `SELECT coalesce(max(version), 0) + 1 FROM entry_versions WHERE ${keyParams(key, params)}`
    params.push(version.status, version.doc, version.at)
    ctes.push(`kept AS (INSERT INTO entry_versions (environment, collection, locale, slug, version, status, doc, created_at, entry_created_at)
      SELECT ?, ?, ?, ?, (${highest}), ?, ?, ?, created_at FROM ${gate} RETURNING version)`)
    ctes.push(`pruned AS (DELETE FROM entry_versions WHERE ${keyParams(key, params)} AND version <= (SELECT version FROM kept) - ?::int)`)
    params.push(version.keep)
  }
  if (clearDraft) ctes.push(`cleared AS (DELETE FROM entry_drafts WHERE ${keyParams(key, params)} AND EXISTS (SELECT 1 FROM ${gate}))`)
  return ctes.length === 0 ? null : ctes.join(',\n')
}

/** The CTEs a delete adds to its statement: when the CTE `gate` returned the deleted row, the entry's draft and schedules go too (its versions stay). */
export function removalCtes (gate: string, key: readonly unknown[], params: unknown[]): string {
  return `draft_gone AS (DELETE FROM entry_drafts WHERE ${keyParams(key, params)} AND EXISTS (SELECT 1 FROM ${gate})),
    schedules_gone AS (DELETE FROM schedules WHERE ${keyParams(key, params)} AND EXISTS (SELECT 1 FROM ${gate}))`
}

export class PostgresEditorial {
  constructor (private readonly db: EditorialDatabase) {}

  // ---- versions ------------------------------------------------------------------------------

  async versions (scope: Scope, collection: string, slug: string, keep: number, offset: number, limit: number): Promise<{ items: VersionSummary[], total: number }> {
    checkBucket(scope, collection)
    if (!isSlug(slug) || keep <= 0) return { items: [], total: 0 }
    const key = [scope.environment, collection, localeKey(scope), slug]
    // Only the newest `keep` count: the page never reaches past them.
    const from = Math.max(0, offset)
    const take = Math.max(0, Math.min(limit, keep - from))
    const { rows } = await this.db.query(`SELECT t.total, v.version, v.status, v.created_at, v.entry_created_at
      FROM (SELECT count(*)::int AS total FROM (SELECT 1 FROM entry_versions WHERE ${KEY_SQL} ORDER BY version DESC LIMIT $5) k) t
      LEFT JOIN LATERAL (SELECT version, status, created_at, entry_created_at FROM entry_versions WHERE ${KEY_SQL}
        ORDER BY version DESC LIMIT $6 OFFSET $7) v ON TRUE
      ORDER BY v.version DESC`, [...key, keep, take, from])
    const total = (rows[0] as { total: number } | undefined)?.total ?? 0
    const items = (rows as Array<VersionRow | { version: null }>).filter((row): row is VersionRow => row.version !== null).map(toSummary)
    return { items, total }
  }

  async version (scope: Scope, collection: string, slug: string, n: number, keep: number): Promise<EntryVersion | undefined> {
    checkBucket(scope, collection)
    if (!isSlug(slug) || keep <= 0 || !Number.isSafeInteger(n) || n <= 0) return undefined
    const key = [scope.environment, collection, localeKey(scope), slug]
    const { rows } = await this.db.query(`SELECT version, status, created_at, entry_created_at, doc FROM entry_versions
      WHERE ${KEY_SQL} AND version = $5
        AND version >= (SELECT min(version) FROM (SELECT version FROM entry_versions WHERE ${KEY_SQL} ORDER BY version DESC LIMIT $6) k)`,
    [...key, n, keep])
    const row = rows[0] as Required<VersionRow> | undefined
    return row === undefined ? undefined : Object.freeze({ ...toSummary(row), data: parseDoc(row.doc) })
  }

  // ---- drafts --------------------------------------------------------------------------------

  async getDraft (scope: Scope, collection: string, slug: string): Promise<StoredDraft | undefined> {
    checkBucket(scope, collection)
    if (!isSlug(slug)) return undefined
    const { rows } = await this.db.query(`SELECT doc, created_at, updated_at FROM entry_drafts WHERE ${KEY_SQL}`,
      [scope.environment, collection, localeKey(scope), slug])
    const row = rows[0] as { doc: string, created_at: string, updated_at: string } | undefined
    return row === undefined ? undefined : toDraft(row.doc, row.created_at, row.updated_at)
  }

  /** Under the write lock, one statement: the draft written only when the entry is published. */
  async putDraft (scope: Scope, collection: string, slug: string, data: Record<string, unknown>): Promise<StoredDraft> {
    const key = entryKey(scope, collection, slug)
    const doc = JSON.stringify(data)
    if (typeof doc !== 'string' || data === null || typeof data !== 'object' || Array.isArray(data)) throw badRequest('Draft data must be a JSON object.')
    const { rows } = await this.db.locked(async client => await client.query(`WITH e AS (SELECT status FROM entries WHERE ${KEY_SQL}),
      put AS (INSERT INTO entry_drafts (environment, collection, locale, slug, doc, created_at, updated_at)
        SELECT $1, $2, $3, $4, $5, $6, $6 FROM e WHERE e.status = 'published'
        ON CONFLICT (environment, collection, locale, slug) DO UPDATE SET doc = excluded.doc, updated_at = excluded.updated_at
        RETURNING created_at, updated_at)
      SELECT e.status, put.created_at, put.updated_at FROM e LEFT JOIN put ON TRUE`, [...key, doc, this.db.now()]))
    const row = rows[0] as { status: EntryStatus, created_at: string | null, updated_at: string | null } | undefined
    if (row === undefined) throw entryMissing(slug, collection)
    if (row.created_at === null || row.updated_at === null) throw conflict(`Entry '${slug}' is a draft: edit it directly.`)
    return toDraft(doc, row.created_at, row.updated_at)
  }

  /**
   * Under the write lock, as putDraft: a discard then comes wholly before or after another
   * process's publish of that draft, whose statement checks the draft it read is still there
   * (EntryInput.expected). Without it, a discard committed while the publish ran went live.
   */
  async deleteDraft (scope: Scope, collection: string, slug: string): Promise<boolean> {
    checkBucket(scope, collection)
    if (!isSlug(slug)) return false
    const { rowCount } = await this.db.locked(async client => await client.query(`DELETE FROM entry_drafts WHERE ${KEY_SQL}`, [scope.environment, collection, localeKey(scope), slug]))
    return (rowCount ?? 0) > 0
  }

  // ---- schedules -----------------------------------------------------------------------------

  /** Under the write lock, one statement: stored only when the entry exists. */
  async addSchedule (input: ScheduleInput): Promise<ScheduleRecord> {
    const key = entryKey(input.scope, input.collection, input.slug)
    let rows: unknown[]
    try {
      ({ rows } = await this.db.locked(async client => await client.query(`INSERT INTO schedules (id, environment, collection, locale, slug, action, at, created_at, status)
        SELECT $5, $1, $2, $3, $4, $6, $7, $8, 'pending' WHERE EXISTS (SELECT 1 FROM entries WHERE ${KEY_SQL}) RETURNING ${SCHEDULE_COLUMNS}`,
      [...key, input.id, input.action, input.at, this.db.now()])))
    } catch (err) {
      if ((err as { code?: unknown }).code === '23505') throw conflict(`A schedule with the id '${input.id}' already exists.`)
      throw err
    }
    const row = rows[0] as ScheduleRow | undefined
    if (row === undefined) throw entryMissing(input.slug, input.collection)
    return scheduleRecord(row)
  }

  async getSchedule (id: string): Promise<ScheduleRecord | undefined> {
    const { rows } = await this.db.query(`SELECT ${SCHEDULE_COLUMNS} FROM schedules WHERE id = $1`, [id])
    const row = rows[0] as ScheduleRow | undefined
    return row === undefined ? undefined : scheduleRecord(row)
  }

  async listSchedules (status: ScheduleStatus, filter: ScheduleFilter, offset: number, limit: number): Promise<SchedulePage> {
    const params: unknown[] = []
    const bind = (value: unknown): string => `$${params.push(value)}`
    const where = scheduleWhere(status, filter, bind)
    // The total and the page in one statement (one snapshot); the WHERE's values are bound once, used twice.
    const { rows } = await this.db.query(`SELECT t.total, s.* FROM
      (SELECT count(*)::int AS total FROM schedules WHERE ${where}) t
      LEFT JOIN LATERAL (SELECT ${SCHEDULE_COLUMNS} FROM schedules WHERE ${where}
        ORDER BY at, id LIMIT ${bind(Math.max(0, limit))} OFFSET ${bind(Math.max(0, offset))}) s ON TRUE
      ORDER BY s.at, s.id`, params)
    const total = (rows[0] as { total: number } | undefined)?.total ?? 0
    const items = (rows as Array<ScheduleRow | { id: null }>).filter((row): row is ScheduleRow => row.id !== null).map(scheduleRecord)
    return { items, total }
  }

  async deleteSchedule (id: string): Promise<boolean> {
    const { rowCount } = await this.db.query('DELETE FROM schedules WHERE id = $1', [id])
    return (rowCount ?? 0) > 0
  }

  /**
   * Due, pending and unclaimed (or past their lease), locked with SKIP LOCKED: a schedule another
   * claimant is taking is skipped, and one it took meanwhile fails the recheck of the WHERE on its
   * new row (READ COMMITTED), so each goes to one claimant.
   */
  async claimSchedules (owner: string, now: string, leaseMs: number, limit: number): Promise<ScheduleRecord[]> {
    if (limit <= 0) return []
    const lease = new Date(Date.parse(now) + leaseMs).toISOString()
    const { rows } = await this.db.query(`UPDATE schedules SET owner = $1, lease_until = $2 WHERE id IN (
        SELECT id FROM schedules WHERE status = 'pending' AND at <= $3 AND (owner IS NULL OR lease_until <= $3)
        ORDER BY at, id LIMIT $4 FOR UPDATE SKIP LOCKED)
      RETURNING ${SCHEDULE_COLUMNS}`, [owner, lease, now, limit])
    // RETURNING keeps no order: soonest first, as listed.
    return (rows as ScheduleRow[]).map(scheduleRecord).sort(bySoonest)
  }

  async finishSchedule (id: string, owner: string, error: string | null): Promise<boolean> {
    const { rowCount } = error === null
      ? await this.db.query("DELETE FROM schedules WHERE id = $1 AND owner = $2 AND status = 'pending'", [id, owner])
      : await this.db.query(`UPDATE schedules SET status = 'failed', error = $3, owner = NULL, lease_until = NULL
          WHERE id = $1 AND owner = $2 AND status = 'pending'`, [id, owner, error])
    return (rowCount ?? 0) > 0
  }

  async nextScheduleAt (): Promise<string | null> {
    const { rows } = await this.db.query("SELECT min(at) AS at FROM schedules WHERE status = 'pending'", [])
    return (rows[0] as { at: string | null }).at
  }
}

function parseDoc (doc: string): Record<string, unknown> {
  return deepFreeze(JSON.parse(doc) as Record<string, unknown>)
}

function toSummary (row: VersionRow): VersionSummary {
  return Object.freeze({ version: Number(row.version), status: row.status, createdAt: row.created_at, entryCreatedAt: row.entry_created_at })
}

function toDraft (doc: string, createdAt: string, updatedAt: string): StoredDraft {
  return Object.freeze({ data: parseDoc(doc), createdAt, updatedAt })
}

// ---- the layout over time (contract §14), at open ---------------------------------------------

/** What the layout step needs of the opening store. */
export interface LayoutContext {
  /** The layout the settings give now (layout.ts `layoutOf`). */
  layout: Layout
  /** `work` in one transaction holding the store's write lock, on the migration's connection. */
  transaction: <T>(work: (client: Queryable) => Promise<T>) => Promise<T>
  /** The change log's announcement (changes/postgres.ts `recordChange`). */
  announce: { channel: string, origin: string }
  now: () => string
  log: StoreLogger
}

/** What one move relabelled. */
interface MoveCounts {
  entries: number
  displaced: number
  versions: number
  drafts: number
  schedules: number
}

/**
 * Brings the stored content to the layout of the settings (layout.ts `layoutMoves`) and remembers
 * that layout, in one transaction holding the write lock. Called at open under the migration lock,
 * before anything reads: replicas starting together move once (the next finds the layout remembered).
 * No extra announcement to the other replicas is needed: a layout change is a restart of every replica
 * with the new settings, so none was serving the old layout meanwhile (the change records' own NOTIFYs
 * only invalidate what a running one cached).
 */
export async function applyLayout (client: Queryable, context: LayoutContext): Promise<void> {
  const { rows } = await client.query("SELECT value FROM lectern_meta WHERE key = 'layout'")
  const stored = (rows[0] as { value: string } | undefined)?.value
  const text = layoutText(context.layout)
  if (stored === text) return
  const moves = layoutMoves(parseLayout(stored), context.layout)
  const counts = await context.transaction(async db => {
    const done: MoveCounts[] = []
    for (const move of moves) done.push(await applyMove(db, move, context))
    await db.query(`INSERT INTO lectern_meta (key, value) VALUES ('layout', $1)
      ON CONFLICT (key) DO UPDATE SET value = excluded.value`, [text])
    return done
  })
  if (moves.length > 0) context.log.info({ moves: moves.map((move, i) => ({ ...move, ...counts[i] })) }, 'stored content moved to the new layout')
}

/**
 * One relabelling, in its dimension's column. A clash (the target label holds the slug too): the
 * moved entry wins; the target's entry is kept as the key's next version and the moved key's
 * versions are numbered after it (after the target's highest, whenever the target key has any);
 * the moved draft replaces the target's. Schedules all move. Each moved entry's key gets a
 * tombstone, then its new key an upsert.
 */
async function applyMove (db: Queryable, move: LayoutMove, context: LayoutContext): Promise<MoveCounts> {
  // The column is the dimension's own name (a union type, never input); the labels are bound.
  const column = move.dimension
  const same = (a: string, b: string): string => KEY_COLUMNS.filter(c => c !== column).map(c => `${a}.${c} = ${b}.${c}`).join(' AND ')
  const labels = [move.from, move.to]
  const displaced = await db.query(`INSERT INTO entry_versions (environment, collection, locale, slug, version, status, doc, created_at, entry_created_at)
    SELECT t.environment, t.collection, t.locale, t.slug,
      coalesce((SELECT max(v.version) FROM entry_versions v WHERE ${same('v', 't')} AND v.${column} = t.${column}), 0) + 1,
      t.status, t.doc, t.updated_at, t.created_at
    FROM entries t JOIN entries m ON ${same('m', 't')} AND m.${column} = $1 WHERE t.${column} = $2`, labels)
  const versions = await db.query(`UPDATE entry_versions v SET ${column} = $2,
      version = v.version + coalesce((SELECT max(t.version) FROM entry_versions t WHERE ${same('t', 'v')} AND t.${column} = $2), 0)
    WHERE v.${column} = $1`, labels)
  await db.query(`DELETE FROM entry_drafts t WHERE t.${column} = $2 AND (
      EXISTS (SELECT 1 FROM entries m WHERE ${same('m', 't')} AND m.${column} = $1)
      OR EXISTS (SELECT 1 FROM entry_drafts m WHERE ${same('m', 't')} AND m.${column} = $1))`, labels)
  const drafts = await db.query(`UPDATE entry_drafts SET ${column} = $2 WHERE ${column} = $1`, labels)
  const schedules = await db.query(`UPDATE schedules SET ${column} = $2 WHERE ${column} = $1`, labels)
  await db.query(`DELETE FROM entries t USING entries m WHERE t.${column} = $2 AND m.${column} = $1 AND ${same('m', 't')}`, labels)
  const moved = await db.query(`UPDATE entries SET ${column} = $2 WHERE ${column} = $1
    RETURNING environment, collection, locale, slug, status, updated_at`, labels)
  await recordMoves(db, move, moved.rows as MovedRow[], context)
  return {
    entries: moved.rowCount ?? 0,
    displaced: displaced.rowCount ?? 0,
    versions: versions.rowCount ?? 0,
    drafts: drafts.rowCount ?? 0,
    schedules: schedules.rowCount ?? 0
  }
}

interface MovedRow {
  environment: string
  collection: string
  locale: string
  slug: string
  status: EntryStatus
  updated_at: string
}

/** Each moved entry, in key order: a tombstone at its old key, then an upsert at its new one (fresh seqs, under the write lock). */
async function recordMoves (db: Queryable, move: LayoutMove, rows: MovedRow[], context: LayoutContext): Promise<void> {
  const at = context.now()
  const ordered = [...rows].sort((a, b) => compareText(rowKey(a), rowKey(b)))
  for (const row of ordered) {
    const to = { environment: row.environment, collection: row.collection, locale: row.locale === '' ? null : row.locale, slug: row.slug }
    const from = move.dimension === 'environment' ? { ...to, environment: move.from } : { ...to, locale: move.from === '' ? null : move.from }
    await recordChange(db, entryChange(from, null, at), context.announce)
    await recordChange(db, entryChange(to, { status: row.status, updatedAt: row.updated_at }, at), context.announce)
  }
}

const rowKey = (row: MovedRow): string => `${row.environment}\u0000${row.collection}\u0000${row.locale}\u0000${row.slug}`

function compareText (a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
