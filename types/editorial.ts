// The editorial side of a store (contract §13): versions, pending drafts of published entries and
// scheduled actions. Every store implements it (types/store.ts ContentStore extends it), with the
// same rules on each:
// - A version is written by the entry write itself (EntryInput.keepVersions), in the same commit:
//   an answered write always has its version, a failed one never has.
// - A pending draft is removed by the write that publishes it (EntryInput.clearDraft) and by the
//   entry's delete, in the same commit; an entry's delete also removes its pending schedules.
//   The content service also asks for it on any write to an entry that is a draft (such an entry
//   is edited directly, so the pending draft made while it was live is older work).
//   Versions outlive the delete (a later create of the same slug continues the numbering).
// - Everything is keyed by the entry's scope (environment, locale), collection and slug, and moves
//   with the entry when the layout of locales or environments changes (lib/store/layout.ts).
import type { EntryStatus } from './store.js'
import type { Scope } from './scope.js'

/** One kept version of an entry: the entry as a write answered it. */
export interface EntryVersion {
  /** 1 for the entry's first version, one more per version (per environment, locale, collection, slug). */
  version: number
  status: EntryStatus
  /** The entry's data at that version (frozen). */
  data: Record<string, unknown>
  /** When the version was written: the entry's `updated_at` then (ISO 8601 UTC). */
  createdAt: string
  /** The entry's `created_at` then. */
  entryCreatedAt: string
}

/** A version as listed: everything but its data. */
export type VersionSummary = Omit<EntryVersion, 'data'>

/** A pending draft of a published entry (contract §13). */
export interface StoredDraft {
  /** The draft's data (frozen): the fields a publish would store. */
  data: Record<string, unknown>
  /** When the draft was first saved and last saved (ISO 8601 UTC). */
  createdAt: string
  updatedAt: string
}

export type ScheduleAction = 'publish' | 'unpublish'
export type ScheduleStatus = 'pending' | 'failed'

/** A scheduled action on an entry (contract §13). */
export interface ScheduleRecord {
  /** Unique, opaque, URL-safe (the caller makes it: lib/editorial, a random UUID). */
  id: string
  scope: Scope
  collection: string
  slug: string
  action: ScheduleAction
  /** When it is due (ISO 8601 UTC, milliseconds). */
  at: string
  /** When it was made (ISO 8601 UTC). */
  createdAt: string
  status: ScheduleStatus
  /** Set once it failed: what went wrong, in one line. */
  error: string | null
}

export interface ScheduleInput {
  id: string
  scope: Scope
  collection: string
  slug: string
  action: ScheduleAction
  at: string
}

/**
 * Which schedules a list takes: each field given must match, an absent one matches any. `locale`
 * null is the locale of an entry written while locales are off.
 */
export interface ScheduleFilter {
  environment?: string
  locale?: string | null
  collection?: string
  slug?: string
}

export interface SchedulePage {
  items: ScheduleRecord[]
  total: number
}

export interface EditorialStore {
  /**
   * The entry's kept versions, newest first: `limit` of them after skipping `offset`, and how many
   * there are. Only the newest `keep` count (CMS_REVISIONS at read time: a lowered setting hides the
   * older ones at once, and the next write drops them); `keep` 0 → none. Also after the entry's delete.
   */
  versions: (scope: Scope, collection: string, slug: string, keep: number, offset: number, limit: number) => Promise<{ items: VersionSummary[], total: number }>
  /** Version `n` of the entry, or undefined (never kept, dropped, or outside the newest `keep`). */
  version: (scope: Scope, collection: string, slug: string, n: number, keep: number) => Promise<EntryVersion | undefined>

  /** The entry's pending draft, or undefined. */
  getDraft: (scope: Scope, collection: string, slug: string) => Promise<StoredDraft | undefined>
  /**
   * Saves (creates or replaces) the pending draft of a published entry, durably. Decided at commit,
   * as writes are: NOT_FOUND when the entry does not exist, CONFLICT when it is a draft. The entry,
   * its change log, its versions and `revision` do not change.
   */
  putDraft: (scope: Scope, collection: string, slug: string, data: Record<string, unknown>) => Promise<StoredDraft>
  /** Discards the pending draft, durably: whether there was one. */
  deleteDraft: (scope: Scope, collection: string, slug: string) => Promise<boolean>

  /** Stores a pending schedule, durably. NOT_FOUND (decided at commit) when the entry does not exist. */
  addSchedule: (input: ScheduleInput) => Promise<ScheduleRecord>
  /** The schedule, pending or failed; undefined when unknown (or done). */
  getSchedule: (id: string) => Promise<ScheduleRecord | undefined>
  /**
   * Schedules with the given status and matching `filter`, soonest `at` first (then id): `limit`
   * after `offset`, and the total of those matching (the filter applies before the page).
   */
  listSchedules: (status: ScheduleStatus, filter: ScheduleFilter, offset: number, limit: number) => Promise<SchedulePage>
  /** Removes a pending or failed schedule, durably: whether it existed. */
  deleteSchedule: (id: string) => Promise<boolean>
  /**
   * Claims up to `limit` pending schedules due at `now` (at ≤ now) that no live claim holds, for
   * `owner`, until `now + leaseMs`: each is handed to one claimant only, across every process
   * sharing the data (PostgreSQL: `FOR UPDATE SKIP LOCKED`). A claim whose lease ran out (its
   * process died) can be claimed again. Soonest first.
   */
  claimSchedules: (owner: string, now: string, leaseMs: number, limit: number) => Promise<ScheduleRecord[]>
  /**
   * Ends a claimed schedule: `error` null → it is gone; otherwise it is kept as failed with that
   * message. Only the claim's owner ends it (false when the claim was lost or the schedule deleted).
   */
  finishSchedule: (id: string, owner: string, error: string | null) => Promise<boolean>
  /** The `at` of the soonest pending schedule, or null: when the runner should look next. */
  nextScheduleAt: () => Promise<string | null>
}
