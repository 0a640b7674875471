// GET /api/sync (contract §9): a change feed over the store's change log (types/changes.ts),
// read as lib/store/changes/common.ts says a sync reader does. A run starts at `initial=true`
// with the log's latest seq as its baseline and position 0; each answer reads the records after
// the cursor's position, reads the entries they name as they are now, and turns each record into
// an item (`announcedOp`): an upsert carrying the entry's GET body, a delete, or nothing (an
// initial run meeting an entry absent since before it started). The next cursor is the page's
// `upTo`; the log's rules (one record per entry, in seq order, readable only once every lower seq
// is over) make a run with writes racing it skip nothing.
import { LRUCache } from 'lru-cache'
import { seesDrafts, type Caller } from '../auth.js'
import { badRequest, CmsError } from '../errors.js'
import { announcedOp, cursorState } from '../store/changes/common.js'
import { writeJsonText, type JsonText } from '../content/json-memo.js'
import type { BodyPool, PooledBody } from '../content/body-pool.js'
import { decodeSyncCursor, encodeSyncCursor, type SyncCursor } from './cursor.js'
import { parseSyncRequest, type SyncRequestContext } from './request.js'
import type { ChangeFilter, ChangeRecord } from '../../types/changes.js'
import type { CollectionModel, SchemaRegistry } from '../../types/schema.js'
import type { ContentStore, StoredEntry } from '../../types/store.js'

export interface SyncServiceOptions {
  store: Pick<ContentStore, 'changes' | 'getMany'>
  registry: Pick<SchemaRegistry, 'collection'>
  /** An entry's body exactly as GET /api/content/<c>/<slug> answers it without `_resolve`, with its UTF-8 length. */
  entryText: (model: CollectionModel, entry: StoredEntry) => JsonText
  /** The HMAC key of cursors (secret.ts). */
  secret: Uint8Array
  /**
   * Characters of answers kept in all (default DEFAULT_KEPT_CHARS); 0 keeps none. The plugin
   * takes them from the response cache's budget, and keeps none when that cache is off.
   */
  keptChars?: number
  /** Memory for answers sent once and not kept (the content pipeline's pool); without it, each answer gets a fresh buffer. */
  bodies?: BodyPool
}

/** An answer's UTF-8 bytes; `release`, when set, gives its pooled memory back once the bytes are sent (see PooledBody). */
export interface SyncAnswer {
  body: Buffer
  release?: () => void
}

export const cursorExpired = (): CmsError =>
  new CmsError('CURSOR_EXPIRED', 'The sync cursor is older than the change log keeps (or does not belong to it); start again with initial=true.')

/** An answer kept for the same request while nothing it depends on has changed (see SyncService.read). */
interface KeptAnswer {
  body: Buffer
  /** The log's latest seq and horizon when it was made: every content write moves the first, compaction the second. */
  latest: number
  horizon: number
  /** The model of each collection its records named (null: not a current collection then); a schema write replaces it. */
  models: Map<string, CollectionModel | null>
}

const ANSWER_HEAD = '{"items":['
const CLOSE: JsonText = { json: '}', bytes: 1 }

function asciiText (json: string): JsonText {
  return { json, bytes: json.length }
}

/** The UTF-8 length of `head`, the texts and `tail` (`head` and `tail` are ASCII). */
function joinedSize (head: string, texts: readonly JsonText[], tail: string): number {
  let size = head.length + tail.length
  for (const text of texts) size += text.bytes
  return size
}

/**
 * `head`, the texts and `tail` as one body of UTF-8 bytes, written once into `body` (of the exact
 * size, see joinedSize): the kept entry texts are copied, not joined into a string and encoded
 * again to be sent. `head` and `tail` are ASCII.
 */
function joinTexts (body: Buffer, head: string, texts: readonly JsonText[], tail: string): Buffer {
  let at = body.write(head, 0, 'latin1')
  for (const text of texts) at = writeJsonText(body, at, text)
  // Every byte is written (allocUnsafe and pooled memory may hold old data): a length that does not add up is a bug, never sent.
  if (at + body.write(tail, at, 'latin1') !== body.length) throw new Error(`sync body: ${body.length} bytes computed, ${at + tail.length} written`)
  return body
}

/** Kept answers, at most, and their characters in all by default: an answer of 1,000 entries is about 1 MB. */
const KEPT_ANSWERS = 256
export const DEFAULT_KEPT_CHARS = 16 * 1024 * 1024

export class SyncService {
  /**
   * Answers by request (the cursor's text, or an initial run's scope, and `_per_page`). An answer
   * is a function of the log (its latest seq and horizon), the entries (every write moves the
   * latest seq) and the collections' models, so it is kept until one of those changes: builds
   * and pollers asking with the same cursor (most often: "anything new?", answered with nothing)
   * cost two reads of the log's counters.
   */
  private readonly answers: LRUCache<string, KeptAnswer> | null
  /** The longest answer kept: a sixteenth of the budget, so one answer never fills it. */
  private readonly keptAnswerChars: number

  constructor (private readonly options: SyncServiceOptions) {
    const keptChars = options.keptChars ?? DEFAULT_KEPT_CHARS
    this.answers = keptChars > 0 ? new LRUCache({ max: KEPT_ANSWERS, maxSize: keptChars, sizeCalculation: kept => kept.body.length + 1 }) : null
    this.keptAnswerChars = keptChars / 16
  }

  /** One answer, as its JSON's UTF-8 bytes: `{ items, cursor, more }`. */
  async read (query: Record<string, unknown>, caller: Caller, scopeOf: SyncRequestContext['scopeOf']): Promise<SyncAnswer> {
    const sees = seesDrafts(caller)
    const request = parseSyncRequest(query, { seesDrafts: sees, scopeOf, isCollection: name => this.options.registry.collection(name) !== null })
    const changes = this.options.store.changes
    const [horizon, latest] = await Promise.all([changes.horizon(), changes.latestSeq()])
    const cursor = request.kind === 'initial'
      ? { ...request.scope, collections: request.collections, publishedOnly: request.publishedOnly, seq: 0, baseline: latest }
      : this.current(request.cursor, sees, { horizon, latest }, scopeOf)
    const key = request.kind === 'initial' ? JSON.stringify([cursor, request.perPage]) : `${request.cursor}\u0000${request.perPage}`
    const kept = this.answers?.get(key)
    if (kept !== undefined && kept.latest === latest && kept.horizon === horizon && this.modelsCurrent(kept.models)) return { body: kept.body }
    const answer = await this.answer(cursor, request.perPage)
    if (answer.release === undefined && this.keeps(answer.body.length)) this.answers?.set(key, { body: answer.body, models: answer.models, latest, horizon })
    return answer.release === undefined ? { body: answer.body } : { body: answer.body, release: answer.release }
  }

  /** Whether an answer of `bytes` is kept for the next same request (never when none are kept). */
  private keeps (bytes: number): boolean {
    return this.answers !== null && bytes < this.keptAnswerChars
  }

  /** An answer made afresh: the records after the cursor's position, as items, and the next cursor. */
  private async answer (cursor: SyncCursor, perPage: number): Promise<SyncAnswer & { models: Map<string, CollectionModel | null> }> {
    const filter: ChangeFilter = { environment: cursor.environment, locale: cursor.locale }
    if (cursor.collections !== null) filter.collections = cursor.collections
    if (cursor.baseline !== undefined) filter.baseline = { seq: cursor.baseline, publishedOnly: cursor.publishedOnly }
    const page = await this.options.store.changes.since(cursor.seq, perPage, filter)
    const { items, models } = await this.items(page.records, cursor)
    const next: SyncCursor = { ...cursor, seq: page.upTo }
    // Past its start, an initial run reads as an incremental one: every record left is above the baseline.
    if (!page.more || page.upTo >= (cursor.baseline ?? 0)) delete next.baseline
    const tail = `],"cursor":${JSON.stringify(encodeSyncCursor(next, this.options.secret))},"more":${String(page.more)}}`
    const size = joinedSize(ANSWER_HEAD, items, tail)
    // Sent once and never kept: a large answer goes into reused memory (lib/content/body-pool.ts).
    const pooled: PooledBody | null = this.keeps(size) ? null : this.options.bodies?.alloc(size) ?? null
    const body = joinTexts(pooled?.bytes ?? Buffer.allocUnsafe(size), ANSWER_HEAD, items, tail)
    return pooled === null ? { body, models } : { body, models, release: pooled.release }
  }

  private modelsCurrent (models: ReadonlyMap<string, CollectionModel | null>): boolean {
    for (const [collection, model] of models) if (this.options.registry.collection(collection) !== model) return false
    return true
  }

  /**
   * A cursor to go on from: 400 when malformed or not for this caller, 410 when the log no longer
   * covers it. Its scope is resolved again as a request's would be (contract §14): a cursor made
   * while locales (or environments) were off goes on in the default one once they are on, where
   * that content now is (its move is in the log above the cursor), and the reverse.
   */
  private current (text: string, seesDrafts: boolean, log: { horizon: number, latest: number }, scopeOf: SyncRequestContext['scopeOf']): SyncCursor {
    const cursor = decodeSyncCursor(text, this.options.secret)
    if (cursor === null) throw badRequest('Invalid value for \'cursor\': not a cursor this server gave; start with initial=true.')
    if (!cursor.publishedOnly && !seesDrafts) throw badRequest('Invalid value for \'cursor\': this run includes drafts; send the API key it was started with.')
    if (cursorState(cursor, log) === 'expired') throw cursorExpired()
    return { ...cursor, ...scopeOf({ _environment: cursor.environment, _locale: cursor.locale ?? undefined }) }
  }

  /** The items of a page of records, in seq order: the entries read now, one batch per collection. */
  private async items (records: readonly ChangeRecord[], cursor: SyncCursor): Promise<{ items: JsonText[], models: Map<string, CollectionModel | null> }> {
    const scope = { environment: cursor.environment, locale: cursor.locale }
    const byCollection = new Map<string, string[]>()
    for (const record of records) {
      const slugs = byCollection.get(record.collection)
      if (slugs === undefined) byCollection.set(record.collection, [record.slug])
      else slugs.push(record.slug)
    }
    const current = new Map<string, { model: CollectionModel, entries: Map<string, StoredEntry> }>()
    const models = new Map<string, CollectionModel | null>()
    for (const [collection, slugs] of byCollection) {
      // Only current collections: a deleted or now-reusable schema's entries are not announced.
      const model = this.options.registry.collection(collection)
      models.set(collection, model)
      if (model !== null) current.set(collection, { model, entries: await this.options.store.getMany(scope, collection, slugs) })
    }
    const view = { publishedOnly: cursor.publishedOnly, baseline: cursor.baseline }
    // Each item as its texts in order (its head, then for an upsert the entry's kept text and `}`).
    const items: JsonText[] = []
    for (const record of records) {
      const found = current.get(record.collection)
      if (found === undefined) continue
      const entry = found.entries.get(record.slug)
      const op = announcedOp(record, entry?.status, view)
      if (op === null) continue
      // Collection names and slugs are ASCII names (lib/store/names.ts): no escaping, a byte per character.
      const head = `${items.length === 0 ? '' : ','}{"op":"${op}","collection":"${record.collection}","slug":"${record.slug}","seq":${record.seq}`
      if (op === 'delete') {
        items.push(asciiText(`${head}}`))
        continue
      }
      items.push(asciiText(`${head},"entry":`), this.options.entryText(found.model, entry as StoredEntry), CLOSE)
    }
    return { items, models }
  }
}
