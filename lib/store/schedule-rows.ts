// A scheduled action as the SQL stores keep it (one row per schedule: SQLite and PostgreSQL), and
// as every store hands it out (types/editorial.ts).
import type { ScheduleRecord, ScheduleStatus } from '../../types/editorial.js'

/** A `schedules` row: the locale column is '' when locales are off. */
export interface ScheduleRow {
  id: string
  environment: string
  collection: string
  locale: string
  slug: string
  action: ScheduleRecord['action']
  at: string
  created_at: string
  status: ScheduleStatus
  error: string | null
}

/** The record of a row, frozen. */
export function scheduleRecord (row: ScheduleRow): ScheduleRecord {
  return Object.freeze({
    id: row.id,
    scope: Object.freeze({ environment: row.environment, locale: row.locale === '' ? null : row.locale }),
    collection: row.collection,
    slug: row.slug,
    action: row.action,
    at: row.at,
    createdAt: row.created_at,
    status: row.status,
    error: row.error
  })
}

/** The order schedules are listed and claimed in: soonest first, then by id. */
export function bySoonest (a: ScheduleRecord, b: ScheduleRecord): number {
  return a.at < b.at ? -1 : a.at > b.at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}
