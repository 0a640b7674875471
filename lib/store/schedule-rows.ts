// A scheduled action as the SQL stores keep it (one row per schedule: SQLite and PostgreSQL), and
// as every store hands it out (types/editorial.ts).
import type { ScheduleFilter, ScheduleRecord, ScheduleStatus } from '../../types/editorial.js'

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

/**
 * The WHERE of a list of schedules (types/editorial.ts listSchedules): the status and each field
 * the filter gives, every value bound through `bind` (which returns the dialect's placeholder).
 * The terms come in one order, so a filter's shape always gives the same text.
 */
export function scheduleWhere (status: ScheduleStatus, filter: ScheduleFilter, bind: (value: string) => string): string {
  const terms = [`status = ${bind(status)}`]
  if (filter.environment !== undefined) terms.push(`environment = ${bind(filter.environment)}`)
  if (filter.collection !== undefined) terms.push(`collection = ${bind(filter.collection)}`)
  // The locale column is '' for an entry written while locales are off.
  if (filter.locale !== undefined) terms.push(`locale = ${bind(filter.locale ?? '')}`)
  if (filter.slug !== undefined) terms.push(`slug = ${bind(filter.slug)}`)
  return terms.join(' AND ')
}
