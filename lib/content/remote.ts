// What another server process wrote (contract §12: several replicas on one database), as this one
// learns of it from the cluster bus (lib/cluster/bus.ts): the store's own knowledge of the bucket
// (ContentStore.revision, its caches), the response cache's answers that depend on the
// collection, and the reverse-reference index's entry. Each announcement is acted on in arrival
// order, one at a time, so an entry read for the index is never older than one read before it.
//
// Announcements can be missed (a lost listening connection): `resync` drops every cached answer
// and catches up from the change log, from the last seq heard on, re-reading every entry changed
// since for the index.
import { collectionTag, type ResponseCache } from '../cache.js'
import { isChange } from '../store/changes/common.js'
import type { ReferenceService } from '../references/service.js'
import type { ChangeKey, ChangeRecord } from '../../types/changes.js'
import type { SchemaRegistry } from '../../types/schema.js'
import type { Scope } from '../../types/scope.js'
import type { ContentStore } from '../../types/store.js'

/** The part of a pino logger this uses. */
export interface RemoteLogger {
  info: (obj: object, msg: string) => void
  warn: (obj: object, msg: string) => void
}

export interface RemoteChangesOptions {
  store: Pick<ContentStore, 'get' | 'changes'> & { noteChange?: (environment: string, collection: string, locale: string | null) => void }
  registry: Pick<SchemaRegistry, 'collection'>
  cache: Pick<ResponseCache, 'invalidate' | 'clear'>
  references: Pick<ReferenceService, 'updateIndex'>
  /** Every (environment, locale) content can be in: what a catch-up reads the log of. */
  scopes: readonly Scope[]
  log: RemoteLogger
}

/** Records read per page when catching up. */
const CATCH_UP_PAGE = 1000

/** The change an announcement names (seq and entry key), or null when it is not one. */
export function announcedChange (data: Record<string, unknown>): (ChangeKey & { seq: number }) | null {
  const { seq, environment, locale, collection, slug } = data
  if (!Number.isSafeInteger(seq) || (seq as number) < 1) return null
  // The shape of a change record, with placeholders for what an announcement leaves out.
  if (!isChange({ environment, locale, collection, slug, op: 'delete', status: null, at: '2000-01-01T00:00:00.000Z' })) return null
  return { seq: seq as number, environment: environment as string, locale: locale as string | null, collection: collection as string, slug: slug as string }
}

export class RemoteChanges {
  /** The highest seq heard of: where a catch-up starts. */
  private heard: number
  private queue: Promise<void> = Promise.resolve()

  constructor (private readonly options: RemoteChangesOptions, heardUpTo: number) {
    this.heard = heardUpTo
  }

  /** An announcement of the store's topic: acted on after those before it. */
  changed (data: Record<string, unknown>): Promise<void> {
    const change = announcedChange(data)
    if (change === null) {
      this.options.log.warn({ data }, 'ignored a malformed content announcement')
      return this.queue
    }
    return this.enqueue(async () => { await this.apply(change) })
  }

  /** Announcements may have been missed: every cached answer goes, and the log says what changed. */
  resync (): Promise<void> {
    this.options.cache.clear()
    return this.enqueue(async () => { await this.catchUp() })
  }

  /** Resolves when everything announced so far is acted on (tests, shutdown). */
  async settled (): Promise<void> {
    await this.queue
  }

  private enqueue (task: () => Promise<void>): Promise<void> {
    const run = this.queue.then(task).catch((err: unknown) => {
      this.options.log.warn({ err }, 'acting on another process\'s write failed; its cached answers are dropped')
      this.options.cache.clear()
    })
    this.queue = run
    return run
  }

  private async apply (change: ChangeKey & { seq: number }): Promise<void> {
    const { store, cache } = this.options
    store.noteChange?.(change.environment, change.collection, change.locale)
    cache.invalidate(collectionTag(change.environment, change.collection))
    await this.reindex(change)
    if (change.seq > this.heard) this.heard = change.seq
  }

  /** The reverse-reference index follows the entry as it is now (not as announced: it may have changed again). */
  private async reindex (change: ChangeKey & { seq: number }): Promise<void> {
    const model = this.options.registry.collection(change.collection)
    if (model === null) return
    const scope: Scope = { environment: change.environment, locale: change.locale }
    const entry = await this.options.store.get(scope, change.collection, change.slug) ?? null
    this.options.references.updateIndex({
      operation: entry === null ? 'delete' : 'update',
      scope,
      collection: change.collection,
      model,
      slug: change.slug,
      entry,
      previous: null,
      seq: change.seq
    })
  }

  private async catchUp (): Promise<void> {
    const from = this.heard
    let latest = from
    let count = 0
    for (const scope of this.options.scopes) {
      for (let after = from, more = true; more;) {
        const page = await this.options.store.changes.since(after, CATCH_UP_PAGE, { environment: scope.environment, locale: scope.locale })
        for (const record of page.records) await this.apply(asChange(record))
        count += page.records.length
        after = page.upTo
        more = page.more
        latest = Math.max(latest, page.upTo)
      }
    }
    this.heard = latest
    this.options.log.info({ changes: count, upTo: latest }, 'caught up with other processes\' writes from the change log')
  }
}

function asChange (record: ChangeRecord): ChangeKey & { seq: number } {
  return { seq: record.seq, environment: record.environment, locale: record.locale, collection: record.collection, slug: record.slug }
}
