// Announcing the content changes a crash left stored but never recorded in the outbox (issue 28
// item 9). A write commits to the store, then its event is recorded in the outbox, another
// database: a kill between the two leaves a change no receiver will hear of. The outbox notes
// the seq of every change it records (outbox.ts), so at start the change log's records it never
// noted are announced then: every stored change is announced at least once.
//
// What a replayed event can say is what the log keeps: the entry's latest change (op, status,
// seq). `content.created` when the entry was never updated since it was created, else
// `content.updated`, or `content.deleted`; `previous_status` is null, the log keeping no earlier
// state.
import type { ChangeLog, ChangeRecord } from '../../types/changes.js'
import type { ContentEvent } from '../../types/events.js'
import type { Scope } from '../../types/scope.js'
import type { StoredEntry } from '../../types/store.js'

/** Where the changes come from: the store's log, the scopes to read it in, and the entries. */
export interface ChangeSource {
  log: ChangeLog
  /** Every (environment, locale) the server serves: a log read is within one. */
  scopes: readonly Scope[]
  entry: (scope: Scope, collection: string, slug: string) => Promise<StoredEntry | undefined>
}

/** Records a page of the log read holds. */
const PAGE = 500

export interface Unannounced {
  /** Records above the floor the outbox never noted, in seq order within each scope. */
  missing: ChangeRecord[]
  /** The highest seq at or below which every record read is announced: the floor may move there. */
  floor: number
}

/** The log's records above `floor` in every scope, split into those not announced and the new floor. */
export async function unannounced (source: ChangeSource, floor: number, isAnnounced: (seq: number) => boolean): Promise<Unannounced> {
  const missing: ChangeRecord[] = []
  let next = Infinity
  for (const { environment, locale } of source.scopes) {
    let firstMissing: number | null = null
    let after = floor
    for (let more = true; more;) {
      const page = await source.log.since(after, PAGE, { environment, locale })
      for (const record of page.records) {
        if (isAnnounced(record.seq)) continue
        missing.push(record)
        firstMissing ??= record.seq
      }
      after = page.upTo
      more = page.more
    }
    next = Math.min(next, firstMissing === null ? after : firstMissing - 1)
  }
  return { missing, floor: Number.isFinite(next) ? Math.max(next, floor) : floor }
}

/** The event a record announces, from the record and the entry as it is now. */
export async function replayedEvent (source: ChangeSource, record: ChangeRecord): Promise<ContentEvent> {
  const { environment, locale, collection, slug, seq } = record
  const base = { collection, slug, locale, environment, seq, previous_status: null }
  if (record.op === 'delete') return { event: 'content.deleted', ...base, status: null }
  const entry = await source.entry({ environment, locale }, collection, slug)
  const created = entry !== undefined && entry.createdAt === entry.updatedAt
  return { event: created ? 'content.created' : 'content.updated', ...base, status: record.status }
}
