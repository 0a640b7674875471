// The SQLite store's editorial tables (types/editorial.ts, contract §13), beside `entries` in
// `lectern.db`: `versions` (one row per kept version), `drafts` (one pending draft per entry key)
// and `schedules` (with the claim: owner and lease end). The store calls the write side inside
// its write transaction (sqlite.ts: an entry write's own savepoint, or a queued editorial call),
// so each rule is decided at commit, under the write lock, against every connection's commits.
// Every value is bound; the tables are keyed as `entries` is (locale '' when locales are off).
import type { Database, Statement } from 'better-sqlite3'
import { badRequest, conflict } from '../errors.js'
import { deepFreeze } from '../query/values.js'
import { entryMissing, isEntryStatus } from './common.js'
import { bySoonest, scheduleRecord, scheduleWhere, type ScheduleRow } from './schedule-rows.js'
import type { EntryStatus } from '../../types/store.js'
import type { EntryVersion, ScheduleFilter, ScheduleInput, ScheduleRecord, ScheduleStatus, StoredDraft, VersionSummary } from '../../types/editorial.js'

export const EDITORIAL_DDL = `
  CREATE TABLE IF NOT EXISTS versions (
    environment TEXT NOT NULL,
    collection TEXT NOT NULL,
    locale TEXT NOT NULL,
    slug TEXT NOT NULL,
    version INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('draft', 'published')),
    data TEXT NOT NULL,
    created_at TEXT NOT NULL,
    entry_created_at TEXT NOT NULL,
    PRIMARY KEY (environment, collection, locale, slug, version)
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS drafts (
    environment TEXT NOT NULL,
    collection TEXT NOT NULL,
    locale TEXT NOT NULL,
    slug TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (environment, collection, locale, slug)
  );
  CREATE TABLE IF NOT EXISTS schedules (
    id TEXT PRIMARY KEY,
    environment TEXT NOT NULL,
    collection TEXT NOT NULL,
    locale TEXT NOT NULL,
    slug TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('publish', 'unpublish')),
    at TEXT NOT NULL,
    created_at TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'failed')),
    error TEXT,
    owner TEXT,
    lease_until TEXT
  ) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS schedules_due ON schedules (status, at, id);
  CREATE INDEX IF NOT EXISTS schedules_entry ON schedules (environment, collection, locale, slug);
  -- A list by collection (and slug) in any environment, soonest first (GET /api/schedules?collection=).
  CREATE INDEX IF NOT EXISTS schedules_collection ON schedules (collection, slug, status, at, id);
`

/** An entry's key as the tables hold it: locale '' when locales are off. */
export interface EntryKey {
  environment: string
  collection: string
  locale: string
  slug: string
}

/** The WHERE of one entry key (bound as keyParams gives it). */
export const KEY_SQL = 'environment = ? AND collection = ? AND locale = ? AND slug = ?'
const SCHEDULE_COLUMNS = 'id, environment, collection, locale, slug, action, at, created_at, status, error'
/** Schedule ids: opaque and URL-safe (the caller's random UUIDs). */
const SCHEDULE_ID_RE = /^[A-Za-z0-9_-]{1,128}$/
const STORE_TIME_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

interface VersionRow { version: number, status: EntryStatus, created_at: string, entry_created_at: string, data?: string }
interface DraftRow { data: string, created_at: string, updated_at: string }
export const keyParams = (key: EntryKey): string[] => [key.environment, key.collection, key.locale, key.slug]

function prepare (db: Database): Record<string, Statement> {
  const s = (sql: string): Statement => db.prepare(sql)
  return {
    // One statement: the number is decided from the key's rows in the same commit.
    addVersion: s(`INSERT INTO versions (environment, collection, locale, slug, version, status, data, created_at, entry_created_at)
      SELECT ?, ?, ?, ?, coalesce(max(version), 0) + 1, ?, ?, ?, ? FROM versions WHERE ${KEY_SQL} RETURNING version`).pluck(),
    pruneVersions: s(`DELETE FROM versions WHERE ${KEY_SQL} AND version <= ?`),
    countVersions: s(`SELECT count(*) FROM versions WHERE ${KEY_SQL}`).pluck(),
    listVersions: s(`SELECT version, status, created_at, entry_created_at FROM versions WHERE ${KEY_SQL} ORDER BY version DESC LIMIT ? OFFSET ?`),
    nthVersion: s(`SELECT version FROM versions WHERE ${KEY_SQL} ORDER BY version DESC LIMIT 1 OFFSET ?`).pluck(),
    getVersion: s(`SELECT version, status, data, created_at, entry_created_at FROM versions WHERE ${KEY_SQL} AND version = ?`),
    entryStatus: s(`SELECT status FROM entries WHERE ${KEY_SQL}`).pluck(),
    getDraft: s(`SELECT data, created_at, updated_at FROM drafts WHERE ${KEY_SQL}`),
    putDraft: s(`INSERT INTO drafts (environment, collection, locale, slug, data, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (environment, collection, locale, slug) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at
      RETURNING created_at, updated_at`),
    deleteDraft: s(`DELETE FROM drafts WHERE ${KEY_SQL}`),
    deleteEntrySchedules: s(`DELETE FROM schedules WHERE ${KEY_SQL}`),
    addSchedule: s(`INSERT INTO schedules (id, environment, collection, locale, slug, action, at, created_at, status)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending')`),
    getSchedule: s(`SELECT ${SCHEDULE_COLUMNS} FROM schedules WHERE id = ?`),
    deleteSchedule: s('DELETE FROM schedules WHERE id = ?'),
    claim: s(`UPDATE schedules SET owner = ?, lease_until = ? WHERE id IN (SELECT id FROM schedules
      WHERE status = 'pending' AND at <= ? AND (lease_until IS NULL OR lease_until <= ?) ORDER BY at, id LIMIT ?)
      RETURNING ${SCHEDULE_COLUMNS}`),
    finishDone: s("DELETE FROM schedules WHERE id = ? AND owner = ? AND status = 'pending'"),
    finishFailed: s("UPDATE schedules SET status = 'failed', error = ?, owner = NULL, lease_until = NULL WHERE id = ? AND owner = ? AND status = 'pending'"),
    nextAt: s("SELECT min(at) FROM schedules WHERE status = 'pending'").pluck()
  }
}

function checkCount (value: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${what} must be a non-negative integer`)
}

function checkStoreTime (value: string, what: string): void {
  if (typeof value !== 'string' || !STORE_TIME_RE.test(value) || Number.isNaN(Date.parse(value))) throw badRequest(`${what} must be an ISO 8601 UTC time with milliseconds.`)
}

/** A list's statements, for one shape of filter (which fields it gives). */
interface ListStatements {
  page: Statement
  count: Statement
}

export class EditorialTables {
  private readonly stmt: Record<string, Statement>
  /** The list statements by their WHERE: one per shape of filter (at most 16), prepared when first used. */
  private readonly lists = new Map<string, ListStatements>()

  /** Prepares the statements; the tables exist (EDITORIAL_DDL, run by the store's migration). */
  constructor (private readonly db: Database) {
    this.stmt = prepare(db)
  }

  private get (name: string): Statement {
    return this.stmt[name] as Statement
  }

  // ---- inside an entry write's savepoint -----------------------------------------------------

  /** Stores a version of what the write stored, numbered after the key's highest, and drops those past `keep`. */
  keepVersion (key: EntryKey, status: EntryStatus, json: string, at: string, entryCreatedAt: string, keep: number): void {
    const version = this.addVersion(key, status, json, at, entryCreatedAt)
    // Most writes of an entry with fewer than `keep` versions have nothing to drop.
    if (version > keep) this.get('pruneVersions').run(...keyParams(key), version - keep)
  }

  /** Stores a version numbered one above the key's highest (whatever is kept): its number. */
  addVersion (key: EntryKey, status: EntryStatus, json: string, at: string, entryCreatedAt: string): number {
    return this.get('addVersion').get(...keyParams(key), status, json, at, entryCreatedAt, ...keyParams(key)) as number
  }

  /** The write published the draft (EntryInput.clearDraft). */
  clearDraft (key: EntryKey): boolean {
    return this.get('deleteDraft').run(...keyParams(key)).changes > 0
  }

  /** The entry was deleted: its draft and schedules go with it (its versions stay). */
  entryDeleted (key: EntryKey): void {
    this.get('deleteDraft').run(...keyParams(key))
    this.get('deleteEntrySchedules').run(...keyParams(key))
  }

  // ---- versions -------------------------------------------------------------------------------

  versions (key: EntryKey, keep: number, offset: number, limit: number): { items: VersionSummary[], total: number } {
    checkCount(keep, 'keep')
    checkCount(offset, 'offset')
    checkCount(limit, 'limit')
    if (keep === 0) return { items: [], total: 0 }
    const total = Math.min(keep, this.get('countVersions').get(...keyParams(key)) as number)
    const take = Math.min(limit, total - offset)
    if (take <= 0) return { items: [], total }
    const rows = this.get('listVersions').all(...keyParams(key), take, offset) as VersionRow[]
    return { items: rows.map(row => Object.freeze(versionSummary(row))), total }
  }

  version (key: EntryKey, n: number, keep: number): EntryVersion | undefined {
    checkCount(keep, 'keep')
    if (keep === 0 || !Number.isSafeInteger(n)) return undefined
    const row = this.get('getVersion').get(...keyParams(key), n) as VersionRow | undefined
    if (row === undefined) return undefined
    // Only the newest `keep` are seen: the keep-th newest is the oldest one visible.
    const oldest = this.get('nthVersion').get(...keyParams(key), keep - 1) as number | undefined
    if (oldest !== undefined && n < oldest) return undefined
    return Object.freeze({ ...versionSummary(row), data: deepFreeze(JSON.parse(row.data as string) as Record<string, unknown>) })
  }

  // ---- drafts -----------------------------------------------------------------------------------

  getDraft (key: EntryKey): StoredDraft | undefined {
    const row = this.get('getDraft').get(...keyParams(key)) as DraftRow | undefined
    return row === undefined ? undefined : toDraft(row)
  }

  /** Saves the draft of a published entry (in a write transaction: decided at commit). */
  putDraft (key: EntryKey, data: Record<string, unknown>, at: string): StoredDraft {
    const json = JSON.stringify(data)
    if (typeof json !== 'string' || data === null || typeof data !== 'object' || Array.isArray(data)) throw badRequest('Draft data must be a JSON object.')
    const status = this.get('entryStatus').get(...keyParams(key)) as EntryStatus | undefined
    if (status === undefined) throw entryMissing(key.slug, key.collection)
    if (status === 'draft') throw conflict(`Entry '${key.slug}' is a draft: edit it directly.`)
    const row = this.get('putDraft').get(...keyParams(key), json, at, at) as { created_at: string, updated_at: string }
    return toDraft({ data: json, created_at: row.created_at, updated_at: row.updated_at })
  }

  // ---- schedules --------------------------------------------------------------------------------

  /** Stores a pending schedule of an existing entry (in a write transaction: decided at commit). */
  addSchedule (key: EntryKey, input: ScheduleInput, at: string): ScheduleRecord {
    if (typeof input.id !== 'string' || !SCHEDULE_ID_RE.test(input.id)) throw badRequest('Invalid schedule id.')
    if (input.action !== 'publish' && input.action !== 'unpublish') throw badRequest("Action must be 'publish' or 'unpublish'.")
    checkStoreTime(input.at, 'at')
    if (!isEntryStatus(this.get('entryStatus').get(...keyParams(key)))) throw entryMissing(key.slug, key.collection)
    try {
      this.get('addSchedule').run(input.id, ...keyParams(key), input.action, input.at, at)
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') throw conflict(`A schedule with the id '${input.id}' already exists.`)
      throw err
    }
    return this.getSchedule(input.id) as ScheduleRecord
  }

  getSchedule (id: string): ScheduleRecord | undefined {
    const row = this.get('getSchedule').get(id) as ScheduleRow | undefined
    return row === undefined ? undefined : scheduleRecord(row)
  }

  listSchedules (status: ScheduleStatus, filter: ScheduleFilter, offset: number, limit: number): { items: ScheduleRecord[], total: number } {
    checkCount(offset, 'offset')
    checkCount(limit, 'limit')
    const params: string[] = []
    const where = scheduleWhere(status, filter, value => { params.push(value); return '?' })
    const { page, count } = this.listStatements(where)
    const rows = page.all(...params, limit, offset) as ScheduleRow[]
    return { items: rows.map(scheduleRecord), total: count.get(...params) as number }
  }

  private listStatements (where: string): ListStatements {
    let statements = this.lists.get(where)
    if (statements === undefined) {
      statements = {
        page: this.db.prepare(`SELECT ${SCHEDULE_COLUMNS} FROM schedules WHERE ${where} ORDER BY at, id LIMIT ? OFFSET ?`),
        count: this.db.prepare(`SELECT count(*) FROM schedules WHERE ${where}`).pluck()
      }
      this.lists.set(where, statements)
    }
    return statements
  }

  deleteSchedule (id: string): boolean {
    return this.get('deleteSchedule').run(id).changes > 0
  }

  /** Claims due, unclaimed (or expired) pending schedules for `owner` (in a write transaction: one claimant each). */
  claimSchedules (owner: string, now: string, leaseMs: number, limit: number): ScheduleRecord[] {
    checkStoreTime(now, 'now')
    checkCount(leaseMs, 'leaseMs')
    checkCount(limit, 'limit')
    if (typeof owner !== 'string' || owner === '') throw new TypeError('owner must be a non-empty string')
    const until = new Date(Date.parse(now) + leaseMs).toISOString()
    const rows = this.get('claim').all(owner, until, now, now, limit) as ScheduleRow[]
    // RETURNING follows no order.
    return rows.map(scheduleRecord).sort(bySoonest)
  }

  finishSchedule (id: string, owner: string, error: string | null): boolean {
    const result = error === null ? this.get('finishDone').run(id, owner) : this.get('finishFailed').run(error, id, owner)
    return result.changes > 0
  }

  nextScheduleAt (): string | null {
    return (this.get('nextAt').get() as string | null) ?? null
  }
}

function versionSummary (row: VersionRow): VersionSummary {
  return { version: row.version, status: row.status, createdAt: row.created_at, entryCreatedAt: row.entry_created_at }
}

function toDraft (row: DraftRow): StoredDraft {
  return Object.freeze({ data: deepFreeze(JSON.parse(row.data) as Record<string, unknown>), createdAt: row.created_at, updatedAt: row.updated_at })
}
