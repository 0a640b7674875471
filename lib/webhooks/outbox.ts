// The webhook outbox: one SQLite database, <dataDir>/outbox.db, whatever CMS_STORE says. It is
// infrastructure, not content: it holds deliveries (pending, then finished for the history),
// never entries. A delivery is written in the event listener, before the API reply is sent,
// so a crash or a restart loses nothing that was acknowledged (at-least-once delivery).
// It also remembers which content changes (by change-log seq) it has recorded: every seq at or
// below a floor, and each seq above it, so a start can announce the changes a crash left stored
// but unrecorded (replay.ts).
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import Database from '../sqlite-driver.js'
import type { EventName } from '../../types/events.js'
import { FLOOR_MARK, attemptValues, isoTime, toDeliveryRecord, type DeliveryRow } from './delivery-rows.js'

export type DeliveryStatus = 'pending' | 'delivered' | 'failed'
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'delivered', 'failed']

export interface NewDelivery {
  id: string
  event: EventName
  url: string
  /** The serialized payload: the exact bytes every attempt sends. */
  body: string
}

/** What the worker needs to make an attempt. */
export interface DueDelivery {
  id: string
  event: EventName
  url: string
  body: string
  attempts: number
}

export interface DeliveryRecord {
  /** The delivery's place in the history: grows with every delivery recorded. */
  seq: number
  id: string
  event: EventName
  url: string
  status: DeliveryStatus
  attempts: number
  lastStatus: number | null
  lastError: string | null
  createdAt: string
  updatedAt: string
  /** Epoch milliseconds; null once finished. */
  nextAttemptAt: number | null
}

/** Where a page of the history starts: after `offset` deliveries, or after the delivery of `afterSeq`. */
export type DeliveryPosition = { offset: number } | { afterSeq: number }

/** The result of one attempt, as the outbox records it. */
export interface AttemptRecord {
  status: DeliveryStatus
  lastStatus: number | null
  lastError: string | null
  /** When to try again (pending only). */
  nextAttemptAt: number | null
}

/**
 * The outbox as the service uses it, whichever database holds it: the data dir's SQLite (Outbox,
 * through SqliteOutboxStore) or PostgreSQL's schema, shared by replicas (postgres-outbox.ts).
 * Both keep the same rows with the same meaning; only the shared one claims what it hands out.
 */
export interface OutboxStore {
  /** Outbox.enqueue: false when nothing was recorded (the seq's change was recorded already). */
  enqueue: (deliveries: NewDelivery[], now: number, seq: number | null) => Promise<boolean>
  announcedFloor: () => Promise<number | null>
  /** The seqs recorded above `floor` (few: the floor follows them). */
  announcedAbove: (floor: number) => Promise<Set<number>>
  advanceFloor: (floor: number) => Promise<void>
  /** Due deliveries, handed to this process alone until it records an attempt (or its claim lapses). */
  due: (now: number, limit: number, exclude: readonly string[]) => Promise<DueDelivery[]>
  nextDueAt: (exclude: readonly string[]) => Promise<number | null>
  recordAttempt: (id: string, result: AttemptRecord, now: number) => Promise<void>
  abandonExcept: (urls: readonly string[], reason: string, now: number) => Promise<number>
  prune: (keep: number) => Promise<number>
  get: (id: string) => Promise<DeliveryRecord | undefined>
  list: (status: DeliveryStatus | null, limit: number, from: DeliveryPosition) => Promise<{ items: DeliveryRecord[], total: number }>
  close: () => void
  readonly open: boolean
  /**
   * Shared by processes: the worker looks for work at least this often (another process may have
   * died holding some, or recorded some it cannot send). Null: one process only.
   */
  readonly sharedPollMs: number | null
}

const SCHEMA_VERSION = 2

const SCHEMA = `
CREATE TABLE IF NOT EXISTS deliveries (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  event TEXT NOT NULL,
  url TEXT NOT NULL,
  body TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  last_status INTEGER,
  last_error TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  next_attempt_at INTEGER
);
CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries (status, next_attempt_at, seq);
CREATE INDEX IF NOT EXISTS deliveries_status ON deliveries (status, seq);
CREATE TABLE IF NOT EXISTS announced (seq INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS marks (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
`

export class Outbox {
  private readonly db: Database.Database
  private readonly statements
  private readonly insertMany: (deliveries: NewDelivery[], now: number, seq: number | null) => boolean
  private readonly raiseFloor: (floor: number) => void
  private readonly page: (status: DeliveryStatus | null, limit: number, from: DeliveryPosition) => { items: DeliveryRecord[], total: number }

  constructor (readonly file: string) {
    mkdirSync(path.dirname(file), { recursive: true })
    this.db = new Database(file)
    try {
      this.db.pragma('journal_mode = WAL')
      // FULL: a delivery recorded before the reply survives a power loss, not only a crash.
      this.db.pragma('synchronous = FULL')
      this.db.pragma('busy_timeout = 5000')
      const version = this.db.pragma('user_version', { simple: true }) as number
      if (version > SCHEMA_VERSION) {
        throw new Error(`the webhook outbox ${path.basename(file)} was written by a newer version (schema ${version})`)
      }
      this.db.exec(SCHEMA)
      this.db.pragma(`user_version = ${SCHEMA_VERSION}`)
    } catch (err) {
      this.db.close()
      throw err
    }

    const db = this.db
    this.statements = {
      insert: db.prepare<[string, string, string, string, string, string, number]>(
        `INSERT INTO deliveries (id, event, url, body, status, attempts, created_at, updated_at, next_attempt_at)
         VALUES (?, ?, ?, ?, 'pending', 0, ?, ?, ?)`),
      due: db.prepare<[number, string, number], DueDelivery>(
        `SELECT id, event, url, body, attempts FROM deliveries
         WHERE status = 'pending' AND next_attempt_at <= ? AND id NOT IN (SELECT value FROM json_each(?))
         ORDER BY next_attempt_at, seq LIMIT ?`),
      // ORDER BY ... LIMIT 1 rather than MIN(): it walks the index and stops at the first match.
      nextDue: db.prepare<[string], { at: number }>(
        `SELECT next_attempt_at AS at FROM deliveries
         WHERE status = 'pending' AND id NOT IN (SELECT value FROM json_each(?))
         ORDER BY next_attempt_at LIMIT 1`),
      attempt: db.prepare<[string, number | null, string | null, number | null, string, string]>(
        `UPDATE deliveries SET status = ?, attempts = attempts + 1, last_status = ?, last_error = ?,
           next_attempt_at = ?, updated_at = ?
         WHERE id = ? AND status = 'pending'`),
      abandon: db.prepare<[string, string, string]>(
        `UPDATE deliveries SET status = 'failed', last_error = ?, next_attempt_at = NULL, updated_at = ?
         WHERE status = 'pending' AND url NOT IN (SELECT value FROM json_each(?))`),
      prune: db.prepare<[number]>(
        `DELETE FROM deliveries WHERE status != 'pending' AND seq <= (
           SELECT seq FROM deliveries WHERE status != 'pending' ORDER BY seq DESC LIMIT 1 OFFSET ?)`),
      get: db.prepare<[string], DeliveryRow>('SELECT * FROM deliveries WHERE id = ?'),
      listAll: db.prepare<[number, number], DeliveryRow>('SELECT * FROM deliveries ORDER BY seq DESC LIMIT ? OFFSET ?'),
      // Keyset pages (contract §10): walking the primary key, or (status, seq), from the position down.
      listAllAfter: db.prepare<[number, number], DeliveryRow>('SELECT * FROM deliveries WHERE seq < ? ORDER BY seq DESC LIMIT ?'),
      countAll: db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM deliveries'),
      listByStatus: db.prepare<[string, number, number], DeliveryRow>(
        'SELECT * FROM deliveries WHERE status = ? ORDER BY seq DESC LIMIT ? OFFSET ?'),
      listByStatusAfter: db.prepare<[string, number, number], DeliveryRow>(
        'SELECT * FROM deliveries WHERE status = ? AND seq < ? ORDER BY seq DESC LIMIT ?'),
      countByStatus: db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM deliveries WHERE status = ?'),
      announce: db.prepare<[number]>('INSERT OR IGNORE INTO announced (seq) VALUES (?)'),
      isAnnounced: db.prepare<[number], { seq: number }>('SELECT seq FROM announced WHERE seq = ?'),
      announcedAbove: db.prepare<[number], { seq: number }>('SELECT seq FROM announced WHERE seq > ?'),
      dropAnnounced: db.prepare<[number]>('DELETE FROM announced WHERE seq <= ?'),
      getMark: db.prepare<[string], { value: number }>('SELECT value FROM marks WHERE name = ?'),
      setMark: db.prepare<[string, number]>('INSERT INTO marks (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value')
    }
    // The change's seq in the same transaction as its deliveries: recorded means announced.
    // A seq already noted was announced already (a replay racing the write's own event): nothing more.
    this.insertMany = db.transaction((deliveries: NewDelivery[], now: number, seq: number | null) => {
      if (seq !== null && this.statements.announce.run(seq).changes === 0) return false
      const at = isoTime(now)
      for (const d of deliveries) this.statements.insert.run(d.id, d.event, d.url, d.body, at, at, now)
      return true
    })
    this.raiseFloor = db.transaction((floor: number) => {
      this.statements.dropAnnounced.run(floor)
      this.statements.setMark.run(FLOOR_MARK, floor)
    })
    // One read transaction, so the page and its total describe the same moment.
    this.page = db.transaction((status: DeliveryStatus | null, limit: number, from: DeliveryPosition) => {
      const rows = this.rows(status, limit, from)
      const s = this.statements
      const total = (status === null ? s.countAll.get() : s.countByStatus.get(status))?.n ?? 0
      return { items: rows.map(toDeliveryRecord), total }
    })
  }

  /**
   * Records the deliveries of one event in one transaction, due at once, with the seq of the
   * content change it announces (null for other events). Durable when it returns. False when
   * nothing was recorded: no deliveries, or the seq's change was recorded already.
   */
  enqueue (deliveries: NewDelivery[], now: number, seq: number | null = null): boolean {
    return deliveries.length > 0 && this.insertMany(deliveries, now, seq)
  }

  /** The seqs noted above the floor. */
  announcedAbove (floor: number): Set<number> {
    return new Set(this.statements.announcedAbove.all(floor).map(r => r.seq))
  }

  /** The seq at or below which every change was recorded; null for an outbox that never kept one. */
  announcedFloor (): number | null {
    return this.statements.getMark.get(FLOOR_MARK)?.value ?? null
  }

  /** Whether the change of `seq` was recorded (at or below the floor, or recorded above it). */
  isAnnounced (seq: number): boolean {
    const floor = this.announcedFloor()
    return (floor !== null && seq <= floor) || this.statements.isAnnounced.get(seq) !== undefined
  }

  /** Moves the floor up to `floor` (never down), forgetting the seqs it now covers. */
  advanceFloor (floor: number): void {
    if (floor > (this.announcedFloor() ?? -1)) this.raiseFloor(floor)
  }

  /** Up to `limit` pending deliveries due at `now`, oldest due first, skipping those in `exclude`. */
  due (now: number, limit: number, exclude: readonly string[]): DueDelivery[] {
    if (limit <= 0) return []
    return this.statements.due.all(now, JSON.stringify(exclude), limit)
  }

  /** The earliest next-attempt time of a pending delivery not in `exclude`, or null. */
  nextDueAt (exclude: readonly string[]): number | null {
    return this.statements.nextDue.get(JSON.stringify(exclude))?.at ?? null
  }

  /** Records the outcome of an attempt on a pending delivery (attempts + 1). */
  recordAttempt (id: string, result: AttemptRecord, now: number): void {
    this.statements.attempt.run(...attemptValues(id, result, now))
  }

  /** Marks failed every pending delivery whose URL is not in `urls`; returns how many. */
  abandonExcept (urls: readonly string[], reason: string, now: number): number {
    return this.statements.abandon.run(reason, isoTime(now), JSON.stringify(urls)).changes
  }

  /** Keeps the newest `keep` finished deliveries; pending ones are never pruned. */
  prune (keep: number): number {
    return this.statements.prune.run(keep).changes
  }

  get (id: string): DeliveryRecord | undefined {
    const row = this.statements.get.get(id)
    return row === undefined ? undefined : toDeliveryRecord(row)
  }

  /** Newest first: `limit` from an offset, or after a delivery's `seq` (keyset paging). */
  list (status: DeliveryStatus | null, limit: number, from: DeliveryPosition): { items: DeliveryRecord[], total: number } {
    return this.page(status, limit, from)
  }

  private rows (status: DeliveryStatus | null, limit: number, from: DeliveryPosition): DeliveryRow[] {
    const s = this.statements
    if ('afterSeq' in from) {
      return status === null ? s.listAllAfter.all(from.afterSeq, limit) : s.listByStatusAfter.all(status, from.afterSeq, limit)
    }
    return status === null ? s.listAll.all(limit, from.offset) : s.listByStatus.all(status, limit, from.offset)
  }

  close (): void {
    if (this.db.open) this.db.close()
  }

  get open (): boolean {
    return this.db.open
  }
}

/** The SQLite outbox behind the async interface: each call runs at once, durable when it returns. */
export class SqliteOutboxStore implements OutboxStore {
  readonly sharedPollMs = null
  constructor (readonly outbox: Outbox) {}
  async enqueue (deliveries: NewDelivery[], now: number, seq: number | null): Promise<boolean> { return this.outbox.enqueue(deliveries, now, seq) }
  async announcedFloor (): Promise<number | null> { return this.outbox.announcedFloor() }
  async announcedAbove (floor: number): Promise<Set<number>> { return this.outbox.announcedAbove(floor) }
  async advanceFloor (floor: number): Promise<void> { this.outbox.advanceFloor(floor) }
  async due (now: number, limit: number, exclude: readonly string[]): Promise<DueDelivery[]> { return this.outbox.due(now, limit, exclude) }
  async nextDueAt (exclude: readonly string[]): Promise<number | null> { return this.outbox.nextDueAt(exclude) }
  async recordAttempt (id: string, result: AttemptRecord, now: number): Promise<void> { this.outbox.recordAttempt(id, result, now) }
  async abandonExcept (urls: readonly string[], reason: string, now: number): Promise<number> { return this.outbox.abandonExcept(urls, reason, now) }
  async prune (keep: number): Promise<number> { return this.outbox.prune(keep) }
  async get (id: string): Promise<DeliveryRecord | undefined> { return this.outbox.get(id) }
  async list (status: DeliveryStatus | null, limit: number, from: DeliveryPosition): Promise<{ items: DeliveryRecord[], total: number }> { return this.outbox.list(status, limit, from) }
  close (): void { this.outbox.close() }
  get open (): boolean { return this.outbox.open }
}
