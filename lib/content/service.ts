// The content pipeline: create, update (PUT and PATCH), delete, read and list entries, following
// interface.md "Entries" (create rules 1–12, update rules 1–8, delete rules 1–5), "States and
// transitions" and contract §4. Rule 1 (the ContentWrite permission) is the route's, before
// anything else; everything after it is here, in the order the rules give. Framework-free: the
// content plugin builds it from the registry, the store and the event bus.
import { seesDrafts, type Caller } from '../auth.js'
import { collectionTag, entryKey as entryCacheKey, listKey as listCacheKey, type ResponseCache } from '../cache.js'
import { conflict, notFound, validationFailed } from '../errors.js'
import { etagOf } from '../etag.js'
import { parseListQuery } from '../query/parse.js'
import { checkSlug, isNormalSlug } from '../slug.js'
import type { ResolveSpec } from '../references/resolve.js'
import type { ReferenceService } from '../references/service.js'
import type { ContentEvent } from '../../types/events.js'
import type { CollectionModel, SchemaRegistry } from '../../types/schema.js'
import type { Scope } from '../../types/scope.js'
import type { ContentStore, EntryStatus, StoredEntry } from '../../types/store.js'
import {
  bodyObject, bodySlug, bodyStatus, dataOf, entryView, keepStoredValues, orderFields,
  pathSlug, projectFields, valueAt, type Data, type EntryView
} from './entry.js'
import { WriteHooks, type PendingWrite } from './hooks.js'
import { BodyPool } from './body-pool.js'
import { JsonMemo, TextBudget, writeJsonText, type JsonText } from './json-memo.js'
import { DEFAULT_TEXT_CACHE_BYTES } from '../config.js'
import { applyMergePatch } from './merge-patch.js'
import { KeyedMutex } from './mutex.js'

/** A response body serialized once, as the UTF-8 bytes that are sent, with its ETag. */
export interface Rendered {
  body: Buffer
  etag: string
  /**
   * Set when the body lives in pooled memory (a large read the cache does not keep): to be
   * called once the bytes have been handed to the socket, after which `body` must not be read.
   */
  release?: () => void
}

/** Read-side extensions, set by the references and cache plugins. */
export interface ReadExtensions {
  /** Reference formatting and `_resolve` (plugins/references.ts). */
  references: Pick<ReferenceService, 'parseResolve' | 'format' | 'resolve' | 'resolveTexts'> | null
  /** The response cache (plugins/cache.ts). */
  cache: ResponseCache | null
}

/** A write's outcome: the stored entry and its response body. */
export interface Written {
  entry: StoredEntry
  body: string
}

/** interface.md "Slug check result". */
export interface SlugCheckResult {
  valid: boolean
  normalized: string
  available: boolean
  error: string | null
}

export const COLLECTION_NOT_FOUND = 'Collection not found.'

export interface ContentServiceOptions {
  registry: Pick<SchemaRegistry, 'collection'>
  store: ContentStore
  emit: (event: ContentEvent) => void
  /** Bounds the texts kept per stored entry (CMS_TEXT_CACHE_BYTES); the references service shares it. */
  texts?: TextBudget
  /** Memory for large bodies that are sent and not kept (CMS_BODY_POOL_BYTES). */
  bodies?: BodyPool
}

export class ContentService {
  /** Write hooks other plugins register into (references, response cache): see hooks.ts. */
  readonly hooks = new WriteHooks()
  /** Read extensions (references, response cache): see ReadExtensions. */
  readonly reads: ReadExtensions = { references: null, cache: null }
  private readonly registry: ContentServiceOptions['registry']
  private readonly store: ContentStore
  private readonly emit: ContentServiceOptions['emit']
  private readonly collectionLocks = new KeyedMutex()
  private readonly entryLocks = new KeyedMutex()
  /** The budget of every text kept per stored entry (json-memo.ts TextBudget). */
  readonly texts: TextBudget
  /** The JSON text of each stored entry's view, kept once read twice (json-memo.ts). */
  private readonly viewTexts: JsonMemo<StoredEntry>
  /** Memory for large bodies that are sent and not kept. */
  private readonly bodies: BodyPool

  constructor (options: ContentServiceOptions) {
    this.registry = options.registry
    this.store = options.store
    this.emit = options.emit
    this.texts = options.texts ?? new TextBudget(DEFAULT_TEXT_CACHE_BYTES)
    this.viewTexts = new JsonMemo(this.texts)
    this.bodies = options.bodies ?? new BodyPool()
  }

  /** The collection's model; 404 for an unknown or reusable collection. */
  model (collection: string): CollectionModel {
    const model = this.registry.collection(collection)
    if (model === null) throw notFound(`Collection '${collection}' not found.`)
    return model
  }

  // ---- reads -------------------------------------------------------------------------------

  /**
   * Single-entry GET: 404 for a missing entry and for a draft the caller may not see;
   * `_resolve` (contract §4). Single-entry rule 4 and visibility rule 4: only published
   * entries are cached, keyed by (environment, collection, slug, `_resolve`, locale), and by
   * the caller's visibility too with `_resolve`, since resolved drafts depend on it.
   */
  get (scope: Scope, collection: string, slug: string, caller: Caller, query: { _resolve?: unknown } = {}): Rendered {
    const model = this.model(collection)
    const normalized = pathSlug(slug)
    const { references, cache } = this.reads
    const resolve = references === null ? null : references.parseResolve(query._resolve, model)
    const sees = seesDrafts(caller)
    const key = cache?.enabled === true ? entryCacheKey(scope, collection, normalized, resolve?.key ?? null, sees) : null
    if (key !== null) {
      const hit = cache?.get(key)
      if (hit !== undefined) return hit
    }
    const entry = this.store.get(scope, collection, normalized)
    if (entry === undefined || (entry.status === 'draft' && !sees)) throw entryNotFound(collection, normalized)
    const tags = [collectionTag(scope.environment, collection)]
    let json: string
    if (resolve !== null && references !== null) {
      // Resolution formats the references itself.
      const resolved = this.resolved(references, [entry], entryView, { collection, spec: resolve, scope, sees, projection: '' })
      json = resolved.texts?.[0]?.json ?? JSON.stringify(resolved.views[0] ?? this.view(model, entry))
      for (const c of resolved.collections) tags.push(collectionTag(scope.environment, c))
    } else {
      json = this.viewJson(model, entry)
    }
    return this.render(json, entry.status === 'published' ? key : null, tags)
  }

  /**
   * The cached answer of a list GET, or undefined; what `list` would answer from the cache.
   * Routes ask it first thing (content.cachedReply), before the query is validated, so a hit
   * costs a key and a lookup. The key holds the raw query string, and a query string that fails
   * validation or parsing is never stored, so a hit means the same string was valid before.
   */
  cachedList (scope: Scope, collection: string, queryString: string, caller: Caller): Rendered | undefined {
    const cache = this.reads.cache
    if (cache?.enabled !== true || this.registry.collection(collection) === null) return undefined
    return cache.lookup(listCacheKey(scope, collection, queryString, seesDrafts(caller)))
  }

  /**
   * The cached answer of a single-entry GET, or undefined (see cachedList). Only without
   * `_resolve`, which is parsed on the full path, and for a slug already in normal form.
   */
  cachedEntry (scope: Scope, collection: string, slug: string, caller: Caller, rawQuery: Record<string, unknown>): Rendered | undefined {
    const cache = this.reads.cache
    if (cache?.enabled !== true || rawQuery._resolve !== undefined || !scopeParamsValid(rawQuery)) return undefined
    if (!isNormalSlug(slug) || this.registry.collection(collection) === null) return undefined
    return cache.lookup(entryCacheKey(scope, collection, slug, null, seesDrafts(caller)))
  }

  /**
   * List GET: `{ items, total, page, per_page, pages }`; callers without drafts see published
   * only; `_resolve` on every item. List rule 3: cached per (environment, collection, query,
   * locale, caller's visibility), the query as `queryString`, the raw string it was parsed from
   * (see listKey).
   */
  list (scope: Scope, collection: string, rawQuery: Record<string, unknown>, queryString: string, caller: Caller): Rendered {
    const model = this.model(collection)
    const sees = seesDrafts(caller)
    const { references, cache } = this.reads
    const key = cache?.enabled === true ? listCacheKey(scope, collection, queryString, sees) : null
    if (key !== null) {
      const hit = cache?.get(key)
      if (hit !== undefined) return hit
    }
    const query = parseListQuery(rawQuery, model.schema, { seesDrafts: sees })
    const resolve = references === null ? null : references.parseResolve(rawQuery._resolve, model)
    const result = this.store.list(scope, collection, query)
    const tags = [collectionTag(scope.environment, collection)]
    const page: PageNumbers = { total: result.total, page: query.page, per_page: query.perPage, pages: Math.ceil(result.total / query.perPage) }
    if (resolve !== null && references !== null) {
      // Resolution formats the references itself.
      const view = (entry: StoredEntry): EntryView => projectFields(entryView(entry), query.fields)
      const projection = query.fields === null ? '' : query.fields.join(',')
      const resolved = this.resolved(references, result.items, view, { collection, spec: resolve, scope, sees, projection })
      for (const c of resolved.collections) tags.push(collectionTag(scope.environment, c))
      if (resolved.texts !== null) return this.renderList(resolved.texts, page, key, tags)
      return this.render(JSON.stringify({ items: resolved.views, ...page }), key, tags)
    }
    if (query.fields === null) return this.renderList(result.items.map(entry => this.viewText(model, entry)), page, key, tags)
    return this.render(JSON.stringify({ items: result.items.map(entry => projectFields(this.view(model, entry), query.fields)), ...page }), key, tags)
  }

  /** The response view of a stored entry, references formatted per schema. */
  private view (model: CollectionModel, entry: StoredEntry): EntryView {
    const view = entryView(entry)
    return this.reads.references === null ? view : this.reads.references.format(model, view)
  }

  /** JSON.stringify(this.view(model, entry)), made once per stored entry and model. */
  private viewJson (model: CollectionModel, entry: StoredEntry): string {
    return this.viewText(model, entry).json
  }

  /** viewJson with its UTF-8 length. */
  private viewText (model: CollectionModel, entry: StoredEntry): JsonText {
    return this.viewTexts.text(entry, model, '', () => this.view(model, entry))
  }

  /**
   * `_resolve` on `entries` (their views made by `view`, projected as `projection` says): each
   * root as its kept resolved text. Should the data hold a look-alike of the placeholders those
   * texts are spliced with, `texts` is null and the roots are resolved whole, as `views`.
   */
  private resolved (
    references: Pick<ReferenceService, 'resolve' | 'resolveTexts'>, entries: readonly StoredEntry[], view: (entry: StoredEntry) => EntryView,
    target: { collection: string, spec: ResolveSpec, scope: Scope, sees: boolean, projection: string }
  ): { texts: readonly JsonText[] | null, views: EntryView[], collections: Set<string> } {
    const { collection, spec, scope, sees, projection } = target
    const resolved = references.resolveTexts(entries, view, collection, spec, scope, sees, projection)
    if (resolved !== null) return { texts: resolved.texts, views: [], collections: resolved.collections }
    // Also for a collection without a reference plan, which content collections always have.
    const whole = references.resolve(entries.map(view), collection, spec, scope, sees)
    return { texts: null, views: whole.views, collections: whole.collections }
  }

  /**
   * Encodes a read's JSON once and hashes those bytes, which are also the ones sent (and kept):
   * with a cache key, under it, depending on `tags`. Rendering and storing follow the store read
   * in the same synchronous run, so a write's `written` hook (after it is durable) always
   * discards what came before it.
   */
  private render (json: string, key: string | null, tags: readonly string[]): Rendered {
    if (!this.keeps(key)) {
      // Sent once and never kept: a large body goes into reused memory (lib/content/body-pool.ts).
      const pooled = this.bodies.encode(json)
      if (pooled !== null) return { body: pooled.bytes, etag: etagOf(pooled.bytes), release: pooled.release }
    }
    return this.rendered(Buffer.from(json), key, tags)
  }

  /**
   * render() for a list answer, `{ items, total, page, per_page, pages }`, with the items given
   * as their JSON texts: the bytes JSON.stringify would give, written straight into the body's
   * memory (sized exactly) without serializing the items again or joining them first.
   */
  private renderList (items: readonly JsonText[], page: PageNumbers, key: string | null, tags: readonly string[]): Rendered {
    const head = '{"items":['
    const tail = `],"total":${page.total},"page":${page.page},"per_page":${page.per_page},"pages":${page.pages}}`
    let size = head.length + tail.length + Math.max(0, items.length - 1)
    for (const item of items) size += item.bytes
    const pooled = this.keeps(key) ? null : this.bodies.alloc(size)
    const body = pooled?.bytes ?? Buffer.allocUnsafe(size)
    // The envelope is ASCII: the numbers are integers.
    let at = body.write(head, 0, 'latin1')
    for (let i = 0; i < items.length; i++) {
      if (i > 0) body[at++] = COMMA
      at = writeJsonText(body, at, items[i] as JsonText)
    }
    // Every byte is written (allocUnsafe memory may hold old data): a length that does not add up is a bug, never sent.
    if (at + body.write(tail, at, 'latin1') !== size) throw new Error(`list body: ${size} bytes computed, ${at + tail.length} written`)
    if (pooled !== null) return { body, etag: etagOf(body), release: pooled.release }
    return this.rendered(body, key, tags)
  }

  /** Whether a read with this cache key is kept (the cache is on and the read is cacheable). */
  private keeps (key: string | null): boolean {
    return key !== null && this.reads.cache?.enabled === true
  }

  /** The rendered body with its ETag, kept under `key` when the cache keeps it. */
  private rendered (body: Buffer, key: string | null, tags: readonly string[]): Rendered {
    const rendered = { body, etag: etagOf(body) }
    if (key !== null && this.keeps(key)) this.reads.cache?.set(key, rendered, tags)
    return rendered
  }

  /** interface.md "Slug check", rules 1–6. Never throws for bad input: the answer says what is wrong. */
  slugCheck (scope: Scope, collection: string, slug: unknown, exclude: unknown): SlugCheckResult {
    const check = checkSlug(slug ?? '')
    const result: SlugCheckResult = { valid: check.valid, normalized: check.normalized, available: false, error: check.error }
    // Rule 3.
    if (this.registry.collection(collection) === null) return { ...result, error: COLLECTION_NOT_FOUND }
    // Rule 2.
    if (!check.valid || check.normalized === '') return result
    // Rule 4: the entry being edited may keep its own slug.
    const excluded = typeof exclude === 'string' ? exclude.trim() : ''
    if (excluded !== '' && excluded === check.normalized) return { ...result, available: true }
    // Rule 5: drafts count, since a create with that slug would conflict.
    return { ...result, available: this.store.get(scope, collection, check.normalized) === undefined }
  }

  // ---- writes ------------------------------------------------------------------------------

  /** POST: create rules 2–12. */
  async create (scope: Scope, collection: string, body: unknown): Promise<Written> {
    const model = this.model(collection) // rule 2
    const input = bodyObject(body)
    const slug = bodySlug(input._slug) // rule 3
    const status = bodyStatus(input, 'published') // rule 4
    let data = model.applyDefaults(dataOf(input)) // rule 5
    data = model.normalize(data) // rule 6
    const problems = model.validate(data) // rule 7
    if (problems.length > 0) throw validationFailed(problems)

    return await this.entryLocks.run(entryKey(scope, collection, slug), async () => {
      const write: PendingWrite = { operation: 'create', scope, collection, model, slug, status, data, previous: null }
      const issued = await this.collectionLocks.run(collectionKey(scope, collection), async () => {
        // Rule 8. The entry's own slug is excluded: if it exists, the answer is the 409 below.
        this.checkUnique(scope, collection, model, data, slug)
        if (this.store.get(scope, collection, slug) !== undefined) {
          throw conflict(`An entry with the slug '${slug}' already exists in '${collection}'.`)
        }
        return await this.issue(write) // rules 9–10
      })
      return await this.finish(write, issued) // rules 10–12
    })
  }

  /** PUT: update rules 2–8; the body replaces the entry's fields. */
  async update (scope: Scope, collection: string, pathSlugValue: string, body: unknown): Promise<Written> {
    const model = this.model(collection)
    const slug = pathSlug(pathSlugValue)
    const input = bodyObject(body)
    // Rule 2: `_slug` is ignored (the path names the entry); `_status` is checked.
    const status = Object.hasOwn(input, '_status') ? bodyStatus(input, 'published') : null
    const data = model.normalize(dataOf(input)) // rule 3
    return await this.entryLocks.run(entryKey(scope, collection, slug), async () => {
      const previous = this.existing(scope, collection, slug) // rule 4
      return await this.replace(scope, collection, model, previous, status ?? previous.status, data)
    })
  }

  /**
   * PATCH: the body is a JSON merge patch (RFC 7396) applied to the stored entry (its data and
   * `_status`); the result then goes through every PUT rule.
   */
  async patch (scope: Scope, collection: string, pathSlugValue: string, body: unknown): Promise<Written> {
    const model = this.model(collection)
    const slug = pathSlug(pathSlugValue)
    const patch = bodyObject(body)
    // As for PUT, a bad `_status` is a 400 before the entry is looked up; `null` removes the
    // member, and an absent `_status` keeps the stored one.
    const status = Object.hasOwn(patch, '_status') && patch._status !== null ? bodyStatus(patch, 'published') : null
    const changes = dataOf(patch)
    return await this.entryLocks.run(entryKey(scope, collection, slug), async () => {
      const previous = this.existing(scope, collection, slug)
      const merged = applyMergePatch(previous.data, changes) as Data
      return await this.replace(scope, collection, model, previous, status ?? previous.status, model.normalize(merged))
    })
  }

  /** DELETE: delete rules 2–5; a missing entry is a 404 (contract §2). */
  async remove (scope: Scope, collection: string, pathSlugValue: string): Promise<void> {
    const model = this.model(collection) // rule 2
    const slug = pathSlug(pathSlugValue)
    await this.entryLocks.run(entryKey(scope, collection, slug), async () => {
      const previous = this.existing(scope, collection, slug)
      if (!await this.store.delete(scope, collection, slug)) throw entryNotFound(collection, slug)
      // Rules 3–4: the reverse-reference index and the response cache, once the change is durable.
      await this.hooks.runWritten({ operation: 'delete', scope, collection, model, slug, entry: null, previous })
      this.emit(contentEvent('content.deleted', scope, collection, slug))
    })
  }

  // ---- the shared tail of the write pipeline ----------------------------------------------
  //
  // Two locks. The entry lock (environment, locale, collection, slug) is held from the read of
  // the stored entry until the write is durable and announced, so writes to one entry apply in
  // order and none is lost (PATCH merges into the result of the one before). The collection
  // lock (environment, collection) is held only while the checks run and the write is handed
  // to the store: the store counts writes in flight in its duplicate and unique checks, so
  // the next writer's checks see this write, while the durable commit (fsync) is shared by
  // every write in flight instead of being paid once per request in a queue.

  private existing (scope: Scope, collection: string, slug: string): StoredEntry {
    const entry = this.store.get(scope, collection, slug)
    if (entry === undefined) throw entryNotFound(collection, slug)
    return entry
  }

  /** Update rules 5–8, shared by PUT and PATCH; runs under the entry lock. */
  private async replace (
    scope: Scope, collection: string, model: CollectionModel, previous: StoredEntry, status: EntryStatus, body: Data
  ): Promise<Written> {
    // Readonly and auto fields the body leaves out keep their stored value (contract §4).
    const data = keepStoredValues(body, previous.data, model.keptOnUpdate)
    // Rules 5–6: readonly changes and schema errors are reported together, one message each.
    const problems = [...model.readonlyViolations(previous.data, data), ...model.validate(data)]
    if (problems.length > 0) throw validationFailed(problems)
    const write: PendingWrite = { operation: 'update', scope, collection, model, slug: previous.slug, status, data, previous }
    const issued = await this.collectionLocks.run(collectionKey(scope, collection), async () => {
      this.checkUnique(scope, collection, model, data, previous.slug)
      return await this.issue(write)
    })
    return await this.finish(write, issued)
  }

  /** Unique fields (create rule 8, update rule 6): within the collection, locale and environment. */
  private checkUnique (scope: Scope, collection: string, model: CollectionModel, data: Data, slug: string): void {
    const problems: string[] = []
    for (const path of model.uniqueFields) {
      const value = valueAt(data, path)
      if (value === undefined || value === null || typeof value === 'object') continue
      const other = this.store.findByValue(scope, collection, path, value, slug)
      if (other !== null) problems.push(`${path}: must be unique; the entry '${other}' already has this value`)
    }
    if (problems.length > 0) throw validationFailed(problems)
  }

  /**
   * Create rules 9–10 / update rule 6–7, under the collection lock: the reference check, the
   * prepare hooks, and the write handed to the store. The store's promise is returned unawaited
   * (wrapped, so the lock does not wait for it) and settles once the write is durable.
   */
  private async issue (write: PendingWrite): Promise<{ stored: Promise<StoredEntry> }> {
    const problems = await this.hooks.runChecks(write)
    if (problems.length > 0) throw validationFailed(problems)
    const prepared = await this.hooks.runPrepare(write)
    const input = { slug: write.slug, status: write.status, data: orderFields(write.model.schema.fields, prepared) }
    const stored = write.operation === 'create'
      ? this.store.create(write.scope, write.collection, input)
      : this.store.update(write.scope, write.collection, input)
    // Awaited by finish() right after the lock is released; this only marks it handled meanwhile.
    stored.catch(() => {})
    return { stored }
  }

  /** Create rules 10–12 / update rules 7–8, under the entry lock: durable, hooks, event, answer. */
  private async finish (write: PendingWrite, issued: { stored: Promise<StoredEntry> }): Promise<Written> {
    const entry = await issued.stored
    const { scope, collection, slug } = write
    await this.hooks.runWritten({ operation: write.operation, scope, collection, model: write.model, slug, entry, previous: write.previous })
    this.emit(contentEvent(write.operation === 'create' ? 'content.created' : 'content.updated', scope, collection, slug))
    // Serialized, not kept (viewJson): a text is kept when the entry is read, so that entries
    // written in bulk and never read take no memory for it.
    return { entry, body: JSON.stringify(this.view(write.model, entry)) }
  }
}

/** The numbers of a list answer (contract §4), which follow its `items`. */
interface PageNumbers {
  total: number
  page: number
  per_page: number
  pages: number
}

const COMMA = 0x2c

/** `_locale` and `_environment` absent or given once: what the route's validation accepts. */
function scopeParamsValid (query: Record<string, unknown>): boolean {
  const { _locale: locale, _environment: environment } = query
  return (locale === undefined || typeof locale === 'string') && (environment === undefined || typeof environment === 'string')
}

function collectionKey (scope: Scope, collection: string): string {
  return `${scope.environment}\u0000${collection}`
}

function entryKey (scope: Scope, collection: string, slug: string): string {
  return `${scope.environment}\u0000${scope.locale ?? ''}\u0000${collection}\u0000${slug}`
}

function entryNotFound (collection: string, slug: string): Error {
  return notFound(`Entry '${slug}' not found in '${collection}'.`)
}

function contentEvent (event: ContentEvent['event'], scope: Scope, collection: string, slug: string): ContentEvent {
  return { event, collection, slug, locale: scope.locale, environment: scope.environment }
}
