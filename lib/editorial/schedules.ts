// Scheduled actions at the API (contract §13): make one for an entry, list them, cancel one. The
// runner (scheduler.ts) carries them out; the store keeps them (types/editorial.ts).
import { randomUUID } from 'node:crypto'
import { badRequest, notFound, validationFailed } from '../errors.js'
import { pageParameter, perPageParameter } from '../query/parse.js'
import { pathSlug } from '../content/entry.js'
import type { EditorialStore, ScheduleAction, ScheduleFilter, ScheduleRecord, ScheduleStatus } from '../../types/editorial.js'
import type { Scope } from '../../types/scope.js'

/** A schedule as the API answers it. */
export interface ScheduleView {
  id: string
  action: ScheduleAction
  at: string
  collection: string
  slug: string
  locale: string | null
  environment: string
  status: ScheduleStatus
  created_at: string
  /** Why it failed (one line); null while pending. */
  error: string | null
}

export interface SchedulePageView {
  items: ScheduleView[]
  total: number
  page: number
  per_page: number
  pages: number
}

export interface ScheduleRequest {
  action: ScheduleAction
  at: string
}

export interface ScheduleListQuery {
  status?: ScheduleStatus | undefined
  page?: unknown
  perPage?: unknown
  /** Only this environment's; null: every environment's. */
  environment: string | null
  /** Only this locale's (null: entries written while locales are off); undefined: every locale's. */
  locale?: string | null | undefined
  /** Only this collection's (404 when it is not a content collection); undefined: every collection's. */
  collection?: string | undefined
  /** Only this entry's, its slug as a path gives it (400 when not a slug); only with `collection`. */
  slug?: string | undefined
}

export interface ScheduleServiceOptions {
  store: Pick<EditorialStore, 'addSchedule' | 'listSchedules' | 'deleteSchedule'>
  /** Throws NOT_FOUND for an unknown collection (the content pipeline's check). */
  checkCollection: (collection: string) => void
  /** Called once a schedule is stored (the runner looks again: it may be due before its next look). */
  added: () => void
  now?: () => number
}

/**
 * An ISO 8601 date and time with seconds optional, a fraction optional and a time zone required
 * (without one the instant would depend on the server's zone).
 */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d{1,9})?)?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/i

export class ScheduleService {
  private readonly store: ScheduleServiceOptions['store']
  private readonly checkCollection: ScheduleServiceOptions['checkCollection']
  private readonly added: () => void
  private readonly now: () => number

  constructor (options: ScheduleServiceOptions) {
    this.store = options.store
    this.checkCollection = options.checkCollection
    this.added = options.added
    this.now = options.now ?? Date.now
  }

  /** POST .../schedule: 404 unknown collection or entry, 422 a time that is unparseable or past. */
  async create (scope: Scope, collection: string, pathSlugValue: string, request: ScheduleRequest): Promise<ScheduleView> {
    this.checkCollection(collection)
    const slug = pathSlug(pathSlugValue)
    const at = dueTime(request.at, this.now())
    const record = await this.store.addSchedule({ id: randomUUID(), scope, collection, slug, action: request.action, at })
    this.added()
    return scheduleView(record)
  }

  /** GET /api/schedules: pending (default) or failed ones, soonest first; the filter applies in the store, before the page. */
  async list (query: ScheduleListQuery): Promise<SchedulePageView> {
    const page = pageParameter(query.page)
    const perPage = perPageParameter(query.perPage)
    const filter = this.listFilter(query)
    const { items, total } = await this.store.listSchedules(query.status ?? 'pending', filter, (page - 1) * perPage, perPage)
    return { items: items.map(scheduleView), total, page, per_page: perPage, pages: Math.ceil(total / perPage) }
  }

  /** The store's filter of a list: 400 a slug without its collection or not a slug, 404 an unknown collection (as on the entry routes). */
  private listFilter (query: ScheduleListQuery): ScheduleFilter {
    const filter: ScheduleFilter = {}
    if (query.environment !== null) filter.environment = query.environment
    if (query.locale !== undefined) filter.locale = query.locale
    if (query.slug !== undefined && query.collection === undefined) throw badRequest('Parameter \'slug\' needs \'collection\': a slug names an entry within its collection.')
    if (query.collection !== undefined) {
      this.checkCollection(query.collection)
      filter.collection = query.collection
    }
    if (query.slug !== undefined) filter.slug = pathSlug(query.slug)
    return filter
  }

  /** DELETE /api/schedules/:id: 404 when unknown (or already done). */
  async remove (id: string): Promise<void> {
    if (!await this.store.deleteSchedule(id)) throw notFound(`Schedule '${id}' not found.`)
  }
}

/** `at` as stored (UTC, milliseconds): 422 when it is not a date-time with a zone, or is past. */
export function dueTime (value: string, now: number): string {
  const time = isDateTime(value) ? Date.parse(value) : NaN
  if (Number.isNaN(time)) throw validationFailed(['at: must be an ISO 8601 date-time with a time zone, such as 2030-01-31T09:00:00Z'])
  if (time < now) throw validationFailed(['at: must not be in the past'])
  return new Date(time).toISOString()
}

/** Whether `value` is a date-time DATE_TIME accepts on a day the calendar has (Date.parse rolls 30 February over). */
function isDateTime (value: string): boolean {
  const match = DATE_TIME.exec(value)
  if (match === null) return false
  const [year, month, day] = match.slice(1, 4).map(Number) as [number, number, number]
  const date = new Date(Date.UTC(year, month - 1, day))
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day
}

export function scheduleView (record: ScheduleRecord): ScheduleView {
  return {
    id: record.id,
    action: record.action,
    at: record.at,
    collection: record.collection,
    slug: record.slug,
    locale: record.scope.locale,
    environment: record.scope.environment,
    status: record.status,
    created_at: record.createdAt,
    error: record.error
  }
}
