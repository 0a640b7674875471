// What the two outbox stores share above their SQL (outbox.ts on SQLite, postgres-outbox.ts on
// PostgreSQL): the deliveries row as both select it, the record it maps to, the values an attempt
// writes and the name of the announced floor's mark. Each store's SQL stays in its own file.
import type { EventName } from '../../types/events.js'
import type { AttemptRecord, DeliveryRecord, DeliveryStatus } from './outbox.js'

/** The mark below which (inclusive) every change of the log was recorded. */
export const FLOOR_MARK = 'announced_floor'

/** A row of the deliveries table, as both stores select it (seq and next_attempt_at as numbers). */
export interface DeliveryRow {
  seq: number
  id: string
  event: EventName
  url: string
  status: DeliveryStatus
  attempts: number
  last_status: number | null
  last_error: string | null
  created_at: string
  updated_at: string
  next_attempt_at: number | null
}

export const toDeliveryRecord = (r: DeliveryRow): DeliveryRecord => ({
  seq: r.seq,
  id: r.id,
  event: r.event,
  url: r.url,
  status: r.status,
  attempts: r.attempts,
  lastStatus: r.last_status,
  lastError: r.last_error,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  nextAttemptAt: r.next_attempt_at
})

/** A time as the outbox keeps it in created_at and updated_at. */
export const isoTime = (ms: number): string => new Date(ms).toISOString()

/**
 * What recording an attempt binds, in the order both stores' UPDATE takes it: status,
 * last_status, last_error, next_attempt_at (kept while pending only), updated_at, then the id.
 */
export function attemptValues (id: string, result: AttemptRecord, now: number): [DeliveryStatus, number | null, string | null, number | null, string, string] {
  return [result.status, result.lastStatus, result.lastError, result.status === 'pending' ? result.nextAttemptAt : null, isoTime(now), id]
}
