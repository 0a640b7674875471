// What every change log implementation shares (types/changes.ts): the checks of a change, the
// keys, retention, the filter of a read, and the rules a sync reader follows (which op an item
// gets, whether a cursor has expired). The SQLite query mirrors `matchesChangeFilter`.
import { isEntryStatus, silentLogger, type StoreLogger } from '../common.js'
import { isCollectionName, isScopeName, isSlug } from '../names.js'
import type { Change, ChangeFilter, ChangeKey, ChangeRecord } from '../../../types/changes.js'
import type { EntryStatus } from '../../../types/store.js'

const DAY_MS = 86_400_000
/** How often, at most, a log looks for tombstones past the retention period on its own. */
export const COMPACTION_INTERVAL_MS = 3_600_000
/** The stores' timestamps (common.ts `timestamps`): compared as text, so one fixed form. */
const STORE_TIME_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

export interface ChangeLogOptions {
  /** CMS_SYNC_RETENTION_DAYS: tombstones are kept at least this many days. */
  retentionDays: number
  /** The time of compaction (tests pass their own); the system clock by default. */
  clock?: () => Date
  log?: StoreLogger
}

export interface ResolvedChangeLogOptions {
  retentionDays: number
  clock: () => Date
  log: StoreLogger
}

export function resolveChangeLogOptions (options: ChangeLogOptions): ResolvedChangeLogOptions {
  const days = options.retentionDays
  if (!Number.isSafeInteger(days) || days < 1) throw new RangeError('retentionDays must be a positive integer')
  return { retentionDays: days, clock: options.clock ?? (() => new Date()), log: options.log ?? silentLogger }
}

/** One text per entry key. '' stands for "no locale": never a valid locale name. */
export function changeKeyText (key: ChangeKey): string {
  return `${key.environment}\u0000${key.collection}\u0000${key.locale ?? ''}\u0000${key.slug}`
}

/** One text per (environment, locale): every read is within one. */
export function changeScopeText (environment: string, locale: string | null): string {
  return `${environment}\u0000${locale ?? ''}`
}

/** Whether a value is a well-formed change: safe names, an op and a status that agree, a store time. */
export function isChange (value: unknown): value is Change {
  if (value === null || typeof value !== 'object') return false
  const c = value as Record<string, unknown>
  return isScopeName(c.environment) && (c.locale === null || isScopeName(c.locale)) && isCollectionName(c.collection) &&
    isSlug(c.slug) && typeof c.at === 'string' && STORE_TIME_RE.test(c.at) &&
    ((c.op === 'upsert' && isEntryStatus(c.status)) || (c.op === 'delete' && c.status === null))
}

/** Throws unless `change` is well formed: a log must never hold a record it cannot read back. */
export function checkChange (change: Change): void {
  if (!isChange(change)) throw new TypeError(`not a valid change: ${JSON.stringify(change)}`)
}

/** The record of a change: a frozen copy holding the change's fields only. */
export function changeRecord (seq: number, change: Change): ChangeRecord {
  const { environment, locale, collection, slug, op, status, at } = change
  return Object.freeze({ seq, environment, locale, collection, slug, op, status, at })
}

/** The change that records an entry as it is: an upsert with its status and updatedAt, or a delete at `now`. */
export function entryChange (key: ChangeKey, entry: { status: EntryStatus, updatedAt: string } | null, now: string): Change {
  const { environment, locale, collection, slug } = key
  return entry === null
    ? { environment, locale, collection, slug, op: 'delete', status: null, at: now }
    : { environment, locale, collection, slug, op: 'upsert', status: entry.status, at: entry.updatedAt }
}

/** Whether a record says exactly what the entry is (the same op, status and updatedAt). */
export function recordMatchesEntry (record: Change, entry: { status: EntryStatus, updatedAt: string }): boolean {
  return record.op === 'upsert' && record.status === entry.status && record.at === entry.updatedAt
}

/** Tombstones whose `at` is before this (ISO text) are past the retention period. */
export function retentionCutoff (now: Date, retentionDays: number): string {
  return new Date(now.getTime() - retentionDays * DAY_MS).toISOString()
}

export function isExpiredTombstone (record: Change, cutoff: string): boolean {
  return record.op === 'delete' && record.at < cutoff
}

/** Throws a RangeError unless `afterSeq` is a position and `limit` a page size. */
export function checkPageArguments (afterSeq: number, limit: number): void {
  if (!Number.isSafeInteger(afterSeq) || afterSeq < 0) throw new RangeError('afterSeq must be a non-negative integer')
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('limit must be a positive integer')
}

/**
 * Whether a record belongs to a read with this filter, scope aside (the caller reads one scope).
 * `collections` is the filter's list as a set, made once per read.
 */
export function matchesChangeFilter (record: ChangeRecord, filter: ChangeFilter, collections: ReadonlySet<string> | null): boolean {
  if (collections !== null && !collections.has(record.collection)) return false
  const baseline = filter.baseline
  if (baseline === undefined || record.seq > baseline.seq) return true
  return !(record.op === 'delete' || (baseline.publishedOnly && record.status === 'draft'))
}

/** What a sync run shows. */
export interface SyncView {
  /** `_status=published` (drafts are absent from it). */
  publishedOnly: boolean
  /** An initial run's start (ChangeFilter `baseline`); undefined for an incremental run. */
  baseline?: number
}

/**
 * The op a sync item gets for a record (§9): 'upsert' (with the entry's body as read now) when
 * the entry exists now and is in the view, else 'delete', or null (left out) when an initial run
 * meets an absent entry at or below its start. `current` is the entry's status as read now,
 * undefined when there is no entry. The record's own op is not trusted for presence: the entry
 * decides, so a record whose write did not land, or that a later change is about to replace,
 * announces what the client will find.
 */
export function announcedOp (record: ChangeRecord, current: EntryStatus | undefined, view: SyncView): 'upsert' | 'delete' | null {
  if (current !== undefined && (!view.publishedOnly || current === 'published')) return 'upsert'
  return view.baseline !== undefined && record.seq <= view.baseline ? null : 'delete'
}

/** A sync cursor's position: how far the client has read, and its initial run's start if it is in one. */
export interface SyncPosition {
  seq: number
  baseline?: number
}

/**
 * Whether a cursor can go on: 'expired' (410 CURSOR_EXPIRED) when compaction has dropped a
 * tombstone the client has not seen (one above its position; in an initial run, above its start
 * too, since tombstones at or below the start are left out anyway), or when the cursor is ahead
 * of the log (a log restored from an older backup, or another store's cursor).
 */
export function cursorState (position: SyncPosition, log: { horizon: number, latest: number }): 'current' | 'expired' {
  if (position.seq > log.latest) return 'expired'
  return log.horizon > Math.max(position.seq, position.baseline ?? 0) ? 'expired' : 'current'
}
