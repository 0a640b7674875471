// The webhook outbox in PostgreSQL (CMS_STORE=postgres): the rows and meaning of outbox.ts, in the
// store's schema and on the store's pool, shared by every replica. What sharing adds:
// - a claim: `due` hands a delivery to one replica (FOR UPDATE SKIP LOCKED) for a lease; recording
//   its attempt ends the claim, and a claim that lapses (its replica died) is taken over;
// - the seq of a change is noted in the transaction of its deliveries, under a unique key, so a
//   change is recorded once whichever replica records it first: its writer, or another's start
//   replaying the log (service.ts catchUp), which may meet a change its writer is recording at
//   that moment. Chosen over a grace period, which a slow writer could outlast;
// - every replica's worker looks at the outbox every SHARED_POLL_MS: a replica that died leaves
//   pending deliveries (or lapsed claims) that no event will wake anyone for.
import type { AttemptRecord, DeliveryPosition, DeliveryRecord, DeliveryStatus, DueDelivery, NewDelivery, OutboxStore } from './outbox.js'
import { FLOOR_MARK, attemptValues, isoTime, toDeliveryRecord, type DeliveryRow } from './delivery-rows.js'

/** A connection in a transaction, or the pool: what node-postgres answers, in the part used. */
interface Queryable {
  query: (text: string, values?: unknown[]) => Promise<{ rows: unknown[], rowCount: number | null }>
}

/** What the outbox needs of the store (PostgresStore's `execute` and `transaction`). */
export interface OutboxDatabase {
  execute: (text: string, values?: unknown[]) => Promise<{ rows: unknown[], rowCount: number | null }>
  transaction: <T>(work: (client: Queryable) => Promise<T>) => Promise<T>
}

/** How long a claim lasts: well past an attempt's time limit, so a live replica never loses one. */
export const CLAIM_LEASE_MS = 60_000
/** How often a replica looks for work another may have left. */
export const SHARED_POLL_MS = 10_000

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS webhook_deliveries (
    seq bigserial PRIMARY KEY,
    id text NOT NULL UNIQUE,
    event text NOT NULL,
    url text NOT NULL,
    body text NOT NULL,
    status text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts integer NOT NULL DEFAULT 0,
    last_status integer,
    last_error text,
    created_at text NOT NULL,
    updated_at text NOT NULL,
    next_attempt_at bigint,
    claimed_until bigint
  )`,
  'CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at, seq)',
  'CREATE INDEX IF NOT EXISTS webhook_deliveries_status ON webhook_deliveries (status, seq)',
  'CREATE TABLE IF NOT EXISTS webhook_announced (seq bigint PRIMARY KEY)',
  'CREATE TABLE IF NOT EXISTS webhook_marks (name text PRIMARY KEY, value bigint NOT NULL)'
]

// bigint comes back as text from node-postgres: these columns are read as numbers (all below 2^53).
const RECORD_COLUMNS = `seq::float8 AS seq, id, event, url, status, attempts, last_status, last_error, created_at, updated_at,
  next_attempt_at::float8 AS next_attempt_at`

export class PostgresOutbox implements OutboxStore {
  readonly sharedPollMs = SHARED_POLL_MS
  private closed = false

  private constructor (private readonly db: OutboxDatabase, private readonly leaseMs: number) {}

  /** Makes the tables if missing; replicas starting together take turns (an advisory lock). */
  static async open (db: OutboxDatabase, leaseMs = CLAIM_LEASE_MS): Promise<PostgresOutbox> {
    await db.transaction(async client => {
      await client.query("SELECT pg_advisory_xact_lock(hashtextextended('lectern:outbox:' || current_schema(), 0))")
      for (const statement of SCHEMA) await client.query(statement)
    })
    return new PostgresOutbox(db, leaseMs)
  }

  async enqueue (deliveries: NewDelivery[], now: number, seq: number | null): Promise<boolean> {
    if (deliveries.length === 0) return false
    return await this.db.transaction(async client => {
      if (seq !== null) {
        const noted = await client.query('INSERT INTO webhook_announced (seq) VALUES ($1) ON CONFLICT (seq) DO NOTHING', [seq])
        if (noted.rowCount === 0) return false
      }
      const at = isoTime(now)
      await client.query(
        `INSERT INTO webhook_deliveries (id, event, url, body, status, attempts, created_at, updated_at, next_attempt_at)
         SELECT d.id, d.event, d.url, d.body, 'pending', 0, $5, $5, $6
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS d (id, event, url, body, n) ORDER BY d.n`,
        [deliveries.map(d => d.id), deliveries.map(d => d.event), deliveries.map(d => d.url), deliveries.map(d => d.body), at, now])
      return true
    })
  }

  async announcedFloor (): Promise<number | null> {
    const { rows } = await this.db.execute('SELECT value::float8 AS value FROM webhook_marks WHERE name = $1', [FLOOR_MARK])
    return (rows[0] as { value: number } | undefined)?.value ?? null
  }

  async announcedAbove (floor: number): Promise<Set<number>> {
    const { rows } = await this.db.execute('SELECT seq::float8 AS seq FROM webhook_announced WHERE seq > $1', [floor])
    return new Set((rows as Array<{ seq: number }>).map(r => r.seq))
  }

  /** Never down: GREATEST keeps the higher of two replicas' floors whatever the order they land in. */
  async advanceFloor (floor: number): Promise<void> {
    await this.db.transaction(async client => {
      await client.query(
        `INSERT INTO webhook_marks (name, value) VALUES ($1, $2)
         ON CONFLICT (name) DO UPDATE SET value = GREATEST(webhook_marks.value, excluded.value)`, [FLOOR_MARK, floor])
      await client.query('DELETE FROM webhook_announced WHERE seq <= $1', [floor])
    })
  }

  async due (now: number, limit: number, exclude: readonly string[]): Promise<DueDelivery[]> {
    if (limit <= 0) return []
    const { rows } = await this.db.execute(
      `UPDATE webhook_deliveries SET claimed_until = $1 WHERE id IN (
         SELECT id FROM webhook_deliveries
         WHERE status = 'pending' AND next_attempt_at <= $2 AND (claimed_until IS NULL OR claimed_until <= $2)
           AND NOT (id = ANY($3::text[]))
         ORDER BY next_attempt_at, seq LIMIT $4 FOR UPDATE SKIP LOCKED)
       RETURNING id, event, url, body, attempts, next_attempt_at::float8 AS at, seq::float8 AS seq`,
      [now + this.leaseMs, now, exclude, limit])
    // RETURNING has no order of its own: oldest due first, as the SQLite outbox gives them.
    const claimed = rows as Array<DueDelivery & { at: number, seq: number }>
    claimed.sort((a, b) => a.at - b.at || a.seq - b.seq)
    return claimed.map(({ id, event, url, body, attempts }) => ({ id, event, url, body, attempts }))
  }

  /** The earliest time a pending delivery may be claimed: its due time, or its claim's end. */
  async nextDueAt (exclude: readonly string[]): Promise<number | null> {
    const { rows } = await this.db.execute(
      `SELECT min(GREATEST(next_attempt_at, COALESCE(claimed_until, 0)))::float8 AS at FROM webhook_deliveries
       WHERE status = 'pending' AND NOT (id = ANY($1::text[]))`, [exclude])
    return (rows[0] as { at: number | null } | undefined)?.at ?? null
  }

  async recordAttempt (id: string, result: AttemptRecord, now: number): Promise<void> {
    await this.db.execute(
      `UPDATE webhook_deliveries SET status = $1, attempts = attempts + 1, last_status = $2, last_error = $3,
         next_attempt_at = $4, updated_at = $5, claimed_until = NULL
       WHERE id = $6 AND status = 'pending'`,
      attemptValues(id, result, now))
  }

  async abandonExcept (urls: readonly string[], reason: string, now: number): Promise<number> {
    const { rowCount } = await this.db.execute(
      `UPDATE webhook_deliveries SET status = 'failed', last_error = $1, next_attempt_at = NULL, claimed_until = NULL, updated_at = $2
       WHERE status = 'pending' AND NOT (url = ANY($3::text[]))`, [reason, isoTime(now), urls])
    return rowCount ?? 0
  }

  async prune (keep: number): Promise<number> {
    const { rowCount } = await this.db.execute(
      `DELETE FROM webhook_deliveries WHERE status <> 'pending' AND seq <= (
         SELECT seq FROM webhook_deliveries WHERE status <> 'pending' ORDER BY seq DESC LIMIT 1 OFFSET $1)`, [keep])
    return rowCount ?? 0
  }

  async get (id: string): Promise<DeliveryRecord | undefined> {
    const { rows } = await this.db.execute(`SELECT ${RECORD_COLUMNS} FROM webhook_deliveries WHERE id = $1`, [id])
    const row = rows[0] as DeliveryRow | undefined
    return row === undefined ? undefined : toDeliveryRecord(row)
  }

  /** One REPEATABLE READ transaction, so the page and its total describe the same moment. */
  async list (status: DeliveryStatus | null, limit: number, from: DeliveryPosition): Promise<{ items: DeliveryRecord[], total: number }> {
    const where: string[] = []
    const values: unknown[] = []
    if (status !== null) where.push(`status = $${values.push(status)}`)
    if ('afterSeq' in from) where.push(`seq < $${values.push(from.afterSeq)}`)
    const filter = where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`
    const countFilter = status === null ? '' : 'WHERE status = $1'
    const offset = 'offset' in from ? from.offset : 0
    const pageSql = `SELECT ${RECORD_COLUMNS} FROM webhook_deliveries ${filter} ORDER BY seq DESC LIMIT $${values.length + 1} OFFSET $${values.length + 2}`
    return await this.db.transaction(async client => {
      await client.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ')
      const page = await client.query(pageSql, [...values, limit, offset])
      const count = await client.query(`SELECT count(*)::int AS n FROM webhook_deliveries ${countFilter}`, status === null ? [] : [status])
      return { items: (page.rows as DeliveryRow[]).map(toDeliveryRecord), total: (count.rows[0] as { n: number }).n }
    })
  }

  /** The pool is the store's, closed with it. */
  close (): void {
    this.closed = true
  }

  get open (): boolean {
    return !this.closed
  }
}
