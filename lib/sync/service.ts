// GET /api/sync (contract §9): a change feed over the store's change log (types/changes.ts),
// read as lib/store/changes/common.ts says a sync reader does. A run starts at `initial=true`
// with the log's latest seq as its baseline and position 0; each answer reads the records after
// the cursor's position, reads the entries they name as they are now, and turns each record into
// an item (`announcedOp`): an upsert carrying the entry's GET body, a delete, or nothing (an
// initial run meeting an entry absent since before it started). The next cursor is the page's
// `upTo`; the log's rules (one record per entry, in seq order, readable only once every lower seq
// is over) make a run with writes racing it skip nothing.
import { seesDrafts, type Caller } from '../auth.js'
import { badRequest, CmsError } from '../errors.js'
import { announcedOp, cursorState } from '../store/changes/common.js'
import { decodeSyncCursor, encodeSyncCursor, type SyncCursor } from './cursor.js'
import { parseSyncRequest, type SyncRequestContext } from './request.js'
import type { ChangeFilter, ChangeRecord } from '../../types/changes.js'
import type { CollectionModel, SchemaRegistry } from '../../types/schema.js'
import type { ContentStore, StoredEntry } from '../../types/store.js'

export interface SyncServiceOptions {
  store: Pick<ContentStore, 'changes' | 'getMany'>
  registry: Pick<SchemaRegistry, 'collection'>
  /** An entry's body exactly as GET /api/content/<c>/<slug> answers it without `_resolve`. */
  entryJson: (model: CollectionModel, entry: StoredEntry) => string
  /** The HMAC key of cursors (secret.ts). */
  secret: Uint8Array
}

export const cursorExpired = (): CmsError =>
  new CmsError('CURSOR_EXPIRED', 'The sync cursor is older than the change log keeps (or does not belong to it); start again with initial=true.')

export class SyncService {
  constructor (private readonly options: SyncServiceOptions) {}

  /** One answer, as its JSON text: `{ items, cursor, more }`. */
  async read (query: Record<string, unknown>, caller: Caller, scopeOf: SyncRequestContext['scopeOf']): Promise<string> {
    const context: SyncRequestContext = { seesDrafts: seesDrafts(caller), scopeOf, isCollection: name => this.options.registry.collection(name) !== null }
    const request = parseSyncRequest(query, context)
    const cursor = request.kind === 'initial'
      ? { ...request.scope, collections: request.collections, publishedOnly: request.publishedOnly, seq: 0, baseline: await this.options.store.changes.latestSeq() }
      : await this.current(request.cursor, context.seesDrafts)
    const filter: ChangeFilter = { environment: cursor.environment, locale: cursor.locale }
    if (cursor.collections !== null) filter.collections = cursor.collections
    if (cursor.baseline !== undefined) filter.baseline = { seq: cursor.baseline, publishedOnly: cursor.publishedOnly }
    const page = await this.options.store.changes.since(cursor.seq, request.perPage, filter)
    const items = await this.items(page.records, cursor)
    const next: SyncCursor = { ...cursor, seq: page.upTo }
    // Past its start, an initial run reads as an incremental one: every record left is above the baseline.
    if (!page.more || page.upTo >= (cursor.baseline ?? 0)) delete next.baseline
    return `{"items":[${items.join(',')}],"cursor":${JSON.stringify(encodeSyncCursor(next, this.options.secret))},"more":${String(page.more)}}`
  }

  /** A cursor to go on from: 400 when malformed or not for this caller, 410 when the log no longer covers it. */
  private async current (text: string, seesDrafts: boolean): Promise<SyncCursor> {
    const cursor = decodeSyncCursor(text, this.options.secret)
    if (cursor === null) throw badRequest('Invalid value for \'cursor\': not a cursor this server gave; start with initial=true.')
    if (!cursor.publishedOnly && !seesDrafts) throw badRequest('Invalid value for \'cursor\': this run includes drafts; send the API key it was started with.')
    const changes = this.options.store.changes
    const [horizon, latest] = await Promise.all([changes.horizon(), changes.latestSeq()])
    if (cursorState(cursor, { horizon, latest }) === 'expired') throw cursorExpired()
    return cursor
  }

  /** The items of a page of records, in seq order: the entries read now, one batch per collection. */
  private async items (records: readonly ChangeRecord[], cursor: SyncCursor): Promise<string[]> {
    const scope = { environment: cursor.environment, locale: cursor.locale }
    const byCollection = new Map<string, string[]>()
    for (const record of records) {
      const slugs = byCollection.get(record.collection)
      if (slugs === undefined) byCollection.set(record.collection, [record.slug])
      else slugs.push(record.slug)
    }
    const current = new Map<string, { model: CollectionModel, entries: Map<string, StoredEntry> }>()
    for (const [collection, slugs] of byCollection) {
      // Only current collections: a deleted or now-reusable schema's entries are not announced.
      const model = this.options.registry.collection(collection)
      if (model !== null) current.set(collection, { model, entries: await this.options.store.getMany(scope, collection, slugs) })
    }
    const view = { publishedOnly: cursor.publishedOnly, baseline: cursor.baseline }
    const items: string[] = []
    for (const record of records) {
      const found = current.get(record.collection)
      if (found === undefined) continue
      const entry = found.entries.get(record.slug)
      const op = announcedOp(record, entry?.status, view)
      if (op === null) continue
      const head = `{"op":"${op}","collection":${JSON.stringify(record.collection)},"slug":${JSON.stringify(record.slug)},"seq":${record.seq}`
      items.push(op === 'upsert' ? `${head},"entry":${this.options.entryJson(found.model, entry as StoredEntry)}}` : `${head}}`)
    }
    return items
  }
}
