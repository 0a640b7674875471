// The content pipeline: create, update (PUT and PATCH), delete, read and list entries, following
// interface.md "Entries" (create rules 1–12, update rules 1–8, delete rules 1–5), "States and
// transitions" and contract §4. Rule 1 (the ContentWrite permission) is the route's, before
// anything else; everything after it is here, each rule a named step, in the order the rules
// give. The editorial workflow of contract §13 (versions, drafts, scheduled publishing) runs
// through the same steps (lib/content/editorial.ts). Framework-free: the content plugin builds it from the registry, the store, the reference
// service, the response cache and the event bus. Rendering is lib/content/render.ts's.
import { seesDrafts, type Caller } from '../auth.js'
import { collectionTag, entryKey as entryCacheKey, listKey as listCacheKey, type ResponseCache } from '../cache.js'
import { notFound, validationFailed } from '../errors.js'
import { encodeAfter, positionOf, queryFingerprint } from '../query/keyset.js'
import { parseListQuery } from '../query/parse.js'
import { checkSlug, isNormalSlug } from '../slug.js'
import { setTimeout as sleep } from 'node:timers/promises'
import { entryMissing, expectUnique, isEntryChanged, slugTaken } from '../store/common.js'
import type { ResolveSpec } from '../references/resolve.js'
import type { ReferenceService } from '../references/service.js'
import type { ContentEvent } from '../../types/events.js'
import type { CollectionModel, SchemaRegistry } from '../../types/schema.js'
import type { Scope } from '../../types/scope.js'
import type { ListQuery } from '../../types/query.js'
import type { StoredDraft } from '../../types/editorial.js'
import type { ContentStore, EntryInput, EntryStatus, ListResult, StoredEntry } from '../../types/store.js'
import {
  bodyObject, bodySlug, bodyStatus, dataOf, entryView, keepStoredValues, orderFields,
  pathSlug, projectFields, type Data, type EntryView
} from './entry.js'
import type { BodyPool } from './body-pool.js'
import type { JsonText, TextBudget } from './json-memo.js'
import { applyMergePatch } from './merge-patch.js'
import { KeyedMutex } from '../mutex.js'
import { DEFAULT_REVISIONS } from '../config.js'
import { Editorial, type UniqueCheck, type VersionPage, type VersionQuery } from './editorial.js'
import { Renderer, type KeepAs, type PageNumbers, type Rendered } from './render.js'

// What the read paths answer; the reply helpers (plugins/content.ts) take the type from here.
export type { Rendered } from './render.js'

/** What the pipeline asks of references (lib/references/service.ts): its write steps and `_resolve`. */
export type ContentReferences = Pick<ReferenceService,
'check' | 'relativeAssetUrls' | 'updateIndex' | 'parseResolve' | 'format' | 'resolve' | 'resolveTexts'>

/** A write's outcome: the stored entry and its response body. */
export interface Written {
  entry: StoredEntry
  body: string
}

/** A change the store has committed: what the steps after the write are given. */
export interface EntryChange {
  operation: 'create' | 'update' | 'delete'
  scope: Scope
  collection: string
  model: CollectionModel
  slug: string
  /** The entry as stored now; null after a delete. */
  entry: StoredEntry | null
  /** The entry before the change; null after a create. */
  previous: StoredEntry | null
  /** The change's position in the store's change log (ContentStore.changes). */
  seq: number
}

/** An entry about to be written (create or update), validated. */
export interface PendingWrite {
  scope: Scope
  collection: string
  model: CollectionModel
  slug: string
  status: EntryStatus
  data: Data
}

/** interface.md "Slug check result". */
export interface SlugCheckResult {
  valid: boolean
  normalized: string
  available: boolean
  error: string | null
}

export const COLLECTION_NOT_FOUND = 'Collection not found.'

/**
 * How long an update is tried again from its reads while the store refuses it because another
 * process wrote the entry (or its draft) since (EntryInput.expected); then the store's 409 is the
 * answer. A bound in time, not in tries: a replica losing every round to another's burst of
 * writes to the same entry gets its turn once the burst drains, however many rounds that takes.
 */
export const UPDATE_RETRY_MS = 5000

/**
 * The wait before an update's try `attempt + 1`: random below a cap that doubles from 2 ms up to
 * 64 ms (full jitter), so replicas racing for one entry drift apart rather than collide again.
 */
export function updateRetryDelay (attempt: number): number {
  return Math.random() * Math.min(64, 2 ** attempt)
}

export interface ContentServiceOptions {
  registry: Pick<SchemaRegistry, 'collection'>
  store: ContentStore
  /** The reference check, asset URLs, the reverse-reference index and `_resolve` (plugins/references.ts). */
  references: ContentReferences
  /** The response cache (plugins/cache.ts), on or off. */
  cache: ResponseCache
  emit: (event: ContentEvent) => void
  /** Bounds the views' texts kept per stored entry (CMS_TEXT_CACHE_BYTES): the reference service's `texts`. */
  texts: TextBudget
  /** Memory for large bodies that are sent and not kept (CMS_BODY_POOL_BYTES). */
  bodies: BodyPool
  /** CMS_REVISIONS: versions kept per entry (contract §13); 0 keeps none. Default 50, the setting's. */
  revisions?: number
  /** How long a refused update is tried again (see UPDATE_RETRY_MS, the default). */
  updateRetryMs?: number
}

export class ContentService {
  private readonly registry: ContentServiceOptions['registry']
  private readonly store: ContentStore
  private readonly references: ContentReferences
  private readonly cache: ResponseCache
  private readonly emit: ContentServiceOptions['emit']
  private readonly renderer: Renderer
  private readonly revisions: number
  private readonly updateRetryMs: number
  /** Versions, drafts and the scheduler's publish and unpublish (contract §13), over the steps below. */
  private readonly editorial: Editorial
  /**
   * Orders the writes to one entry (environment, locale, collection, slug) in this process: held
   * from the read of the stored entry until the write is committed and announced, so none is lost
   * (PATCH merges into the result of the write before) and none is ever retried. Across processes
   * sharing a database the store decides instead: each update names what it was built from
   * (EntryInput.expected), a stale one is refused, and `retried` runs it again from its reads.
   */
  private readonly entryLocks = new KeyedMutex()

  /** Memory for large bodies sent once (CMS_BODY_POOL_BYTES), shared with the sync answers (plugins/sync.ts). */
  readonly bodies: BodyPool

  constructor (options: ContentServiceOptions) {
    this.bodies = options.bodies
    this.registry = options.registry
    this.store = options.store
    this.references = options.references
    this.cache = options.cache
    this.emit = options.emit
    this.renderer = new Renderer({ cache: options.cache, references: options.references, texts: options.texts, bodies: options.bodies })
    this.revisions = options.revisions ?? DEFAULT_REVISIONS
    this.updateRetryMs = options.updateRetryMs ?? UPDATE_RETRY_MS
    this.editorial = new Editorial(this.store, this.revisions, {
      model: collection => this.model(collection),
      locked: async (scope, collection, slug, task) => await this.updating(scope, collection, slug, task),
      newData: (model, data) => this.newData(model, data),
      checkUpdate: async (previous, write, unique) => await this.checkUpdate(previous, write, unique),
      commitUpdate: async (previous, write, published) => await this.commitUpdate(previous, write, published),
      insert: async write => await this.insert(write),
      storedInput: write => this.storedInput(write),
      view: (model, entry) => this.renderer.view(model, entry)
    })
  }

  /** The collection's model; 404 for an unknown or reusable collection. */
  model (collection: string): CollectionModel {
    const model = this.registry.collection(collection)
    if (model === null) throw notFound(`Collection '${collection}' not found.`)
    return model
  }

  // ---- writes ------------------------------------------------------------------------------

  /** POST: create rules 2–12. */
  async create (scope: Scope, collection: string, body: unknown): Promise<Written> {
    const model = this.model(collection) // rule 2
    const input = bodyObject(body)
    const slug = bodySlug(input._slug) // rule 3
    const status = bodyStatus(input, 'published') // rule 4
    const data = this.newData(model, dataOf(input)) // rules 5–7
    return await this.entryLocks.run(entryKey(scope, collection, slug), async () => {
      return await this.insert({ scope, collection, model, slug, status, data })
    })
  }

  /** Create rules 5–7: defaults and auto values, then normalization, then validation. */
  private newData (model: CollectionModel, body: Data): Data {
    const data = model.normalize(model.applyDefaults(body)) // rules 5–6
    checkValid(model.validate(data)) // rule 7
    return data
  }

  /** Create rules 8–12 of a validated entry; runs under the entry's lock. */
  private async insert (write: PendingWrite): Promise<Written> {
    const { scope, collection, model, slug } = write
    await this.checkReferences(write, async () => { await this.expectNewAndUnique(write) }) // rules 8–9
    const { entry, seq } = await this.store.create(scope, collection, this.storedInput(write)) // rule 10
    const change: EntryChange = { operation: 'create', scope, collection, model, slug, entry, previous: null, seq }
    this.discardCachedResponses(change) // rule 10
    this.references.updateIndex(change) // rule 11
    return this.announce(change, entry) // rule 12
  }

  /** PUT: update rules 2–8; the body replaces the entry's fields. */
  async update (scope: Scope, collection: string, pathSlugValue: string, body: unknown): Promise<Written> {
    const model = this.model(collection)
    const slug = pathSlug(pathSlugValue)
    const input = bodyObject(body)
    // Rule 2: `_slug` is ignored (the path names the entry); `_status` is checked.
    const status = Object.hasOwn(input, '_status') ? bodyStatus(input, 'published') : null
    const data = model.normalize(dataOf(input)) // rule 3
    return await this.updating(scope, collection, slug, async () => {
      const previous = await this.existing(scope, collection, slug) // rule 4
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
    return await this.updating(scope, collection, slug, async () => {
      const previous = await this.existing(scope, collection, slug)
      const merged = applyMergePatch(previous.data, changes) as Data
      return await this.replace(scope, collection, model, previous, status ?? previous.status, model.normalize(merged))
    })
  }

  /**
   * Runs an update's `task` (its reads, checks and write) under the entry's lock, and again from
   * its reads while the store refuses the write as built on what another process changed since
   * (EntryChanged), for up to `updateRetryMs`. Only the write that committed goes on to the cache,
   * the index and the event: a refused one did nothing.
   */
  private async updating<T> (scope: Scope, collection: string, slug: string, task: () => Promise<T>): Promise<T> {
    return await this.entryLocks.run(entryKey(scope, collection, slug), async () => {
      const deadline = Date.now() + this.updateRetryMs
      for (let attempt = 1; ; attempt++) {
        try {
          return await task()
        } catch (err) {
          const delay = updateRetryDelay(attempt)
          if (!isEntryChanged(err) || Date.now() + delay >= deadline) throw err
          await sleep(delay)
        }
      }
    })
  }

  /** Update rules 5–8, shared by PUT and PATCH; runs under the entry's lock. */
  private async replace (
    scope: Scope, collection: string, model: CollectionModel, previous: StoredEntry, status: EntryStatus, body: Data
  ): Promise<Written> {
    const write = await this.checkUpdate(previous, { scope, collection, model, slug: previous.slug, status, data: body }, 'in the write')
    return await this.commitUpdate(previous, write, null)
  }

  /**
   * Update rules 5–6: the write as validated, `write.data` being the body (normalized). The unique
   * rule is decided `in the write` by the store (read ahead only before a failed reference check),
   * or `now` for what the store writes without deciding it (a pending draft).
   */
  private async checkUpdate (previous: StoredEntry, write: PendingWrite, unique: UniqueCheck): Promise<PendingWrite> {
    const { model } = write
    // Readonly and auto fields the body leaves out keep their stored value (contract §4).
    const data = keepStoredValues(write.data, previous.data, model.keptOnUpdate)
    // Rules 5–6: readonly changes and schema errors are reported together, one message each.
    checkValid([...model.readonlyViolations(previous.data, data), ...model.validate(data)])
    const checked: PendingWrite = { ...write, data }
    if (unique === 'now') await this.expectUnique(checked) // rule 6
    await this.checkReferences(checked, async () => { if (unique === 'in the write') await this.expectUnique(checked) }) // rule 6
    return checked
  }

  /**
   * Update rules 7–8 of a validated write built from `previous`; `published`: the pending draft it
   * publishes (contract §13), null when none. The store writes it only if the entry, and that
   * draft, are still as read (EntryInput.expected; else EntryChanged, and `updating` retries). A
   * write to an entry that is a draft also drops a pending draft made while it was live: a draft
   * entry is edited directly (PUT .../draft answers 409), so that edit is the newer work, and a
   * later publish must not bring the older draft back over it. Unpublishing (published → draft)
   * keeps it, so a scheduled publish can still apply it.
   */
  private async commitUpdate (previous: StoredEntry, write: PendingWrite, published: StoredDraft | null): Promise<Written> {
    const { scope, collection, model, slug } = write
    const dropDraft = published !== null || previous.status === 'draft'
    const expected = published === null ? { entry: previous } : { entry: previous, draft: published }
    const { entry, seq } = await this.store.update(scope, collection, { ...this.storedInput(write), ...(dropDraft ? { clearDraft: true } : {}), expected }) // rule 7
    const change: EntryChange = { operation: 'update', scope, collection, model, slug, entry, previous, seq }
    this.discardCachedResponses(change) // rule 7
    this.references.updateIndex(change) // rule 7
    return this.announce(change, entry) // rule 8
  }

  /** DELETE: delete rules 2–5; a missing entry is a 404 (rule 5, contract §2). */
  async remove (scope: Scope, collection: string, pathSlugValue: string): Promise<void> {
    const model = this.model(collection) // rule 2
    const slug = pathSlug(pathSlugValue)
    await this.entryLocks.run(entryKey(scope, collection, slug), async () => {
      const previous = await this.existing(scope, collection, slug) // rule 5
      const seq = await this.store.delete(scope, collection, slug) // rule 4
      if (seq === null) throw entryMissing(slug, collection)
      const change: EntryChange = { operation: 'delete', scope, collection, model, slug, entry: null, previous, seq }
      // Rule 3 once the delete has committed: the index must not drop an entry a failed delete kept.
      this.references.updateIndex(change) // rule 3
      this.discardCachedResponses(change) // rule 4
      this.emit(contentEvent(change)) // rule 4
    })
  }

  // ---- the editorial workflow (contract §13: lib/content/editorial.ts) ----------------------

  /** `GET .../versions`: the kept versions, newest first (`_page`, `_per_page`). */
  async versions (scope: Scope, collection: string, slug: string, query: VersionQuery): Promise<VersionPage> {
    return await this.editorial.versions(scope, collection, slug, query)
  }

  /** `GET .../versions/<n>`: the entry as it was at version `n` (its JSON body). */
  async version (scope: Scope, collection: string, slug: string, n: number): Promise<string> {
    return await this.editorial.version(scope, collection, slug, n)
  }

  /** `POST .../versions/<n>/restore`: an update with that version (a create when the entry was deleted since). */
  async restore (scope: Scope, collection: string, slug: string, n: number): Promise<Written> {
    return await this.editorial.restore(scope, collection, slug, n)
  }

  /** `PUT .../draft`: saves the pending draft of a published entry (its JSON body). */
  async putDraft (scope: Scope, collection: string, slug: string, body: unknown): Promise<string> {
    return await this.editorial.putDraft(scope, collection, slug, body)
  }

  /** `GET .../draft`: the pending draft as an entry (its JSON body). */
  async getDraft (scope: Scope, collection: string, slug: string): Promise<string> {
    return await this.editorial.getDraft(scope, collection, slug)
  }

  /** `DELETE .../draft`: discards the pending draft. */
  async deleteDraft (scope: Scope, collection: string, slug: string): Promise<void> {
    await this.editorial.deleteDraft(scope, collection, slug)
  }

  /** `POST .../draft/publish`: the pending draft becomes the live entry. */
  async publishDraft (scope: Scope, collection: string, slug: string): Promise<Written> {
    return await this.editorial.publishDraft(scope, collection, slug)
  }

  /** A scheduled publish: the pending draft applied, or a draft entry published; null when there is nothing to do. */
  async publish (scope: Scope, collection: string, slug: string): Promise<Written | null> {
    return await this.editorial.publish(scope, collection, slug)
  }

  /** A scheduled unpublish: a published entry made a draft; null when it is a draft already. */
  async unpublish (scope: Scope, collection: string, slug: string): Promise<Written | null> {
    return await this.editorial.unpublish(scope, collection, slug)
  }

  // ---- the steps of the write pipeline -----------------------------------------------------

  /** The entry to update or delete (update rule 4, delete rule 5): 404 when there is none. */
  private async existing (scope: Scope, collection: string, slug: string): Promise<StoredEntry> {
    const entry = await this.store.get(scope, collection, slug)
    if (entry === undefined) throw entryMissing(slug, collection)
    return entry
  }

  /**
   * Create rule 8, and the duplicate slug (contract §2), as the store would decide them now: a
   * unique value another entry holds (422), then a taken slug (409). The store decides both,
   * atomically and in that order, in the write (rule 10); this read ahead only answers them
   * before a failed reference check (see checkReferences).
   */
  private async expectNewAndUnique (write: PendingWrite): Promise<void> {
    await this.expectUnique(write)
    if (await this.store.get(write.scope, write.collection, write.slug) !== undefined) throw slugTaken(write.slug, write.collection)
  }

  /** Create rule 8, update rule 6, read ahead of the write (see expectNewAndUnique). */
  private async expectUnique (write: PendingWrite): Promise<void> {
    await expectUnique(this.store, write.scope, write.collection, { slug: write.slug, status: write.status, data: write.data, unique: write.model.uniqueFields })
  }

  /**
   * Create rule 9, update rule 6: every reference names an existing entry of its locale. The
   * rules listed before it (`earlier`: unique values, a taken slug) are read ahead only when a
   * reference fails, so that their answer comes first, in the order of the rules. A write whose
   * references hold needs no read ahead: the store decides those rules in the write itself, in the
   * same order, atomically (on PostgreSQL the read ahead was two round trips per create).
   */
  private async checkReferences (write: PendingWrite, earlier: () => Promise<void>): Promise<void> {
    const errors = await this.references.check(write.scope, write.model, write.data)
    if (errors.length === 0) return
    await earlier()
    checkValid(errors)
  }

  /**
   * What the store is handed (create rule 10, update rule 7): absolute asset URLs made relative,
   * fields in schema order, the unique fields the store decides in the write, and how many
   * versions it keeps (contract §13: every create, update, patch, restore and draft publish).
   */
  private storedInput (write: PendingWrite): EntryInput {
    const data = orderFields(write.model.schema.fields, this.references.relativeAssetUrls(write.scope, write.data))
    return { slug: write.slug, status: write.status, data, unique: write.model.uniqueFields, keepVersions: this.revisions }
  }

  /** Create rule 10, update rule 7, delete rule 4: the collection's cached responses go. */
  private discardCachedResponses (change: EntryChange): void {
    this.cache.invalidate(collectionTag(change.scope.environment, change.collection))
  }

  /** Create rule 12, update rule 8: the event, and the answer, the stored entry as a read shows it. */
  private announce (change: EntryChange, entry: StoredEntry): Written {
    this.emit(contentEvent(change))
    // Serialized, not kept (viewJson): a text is kept when the entry is read, so that entries
    // written in bulk and never read take no memory for it.
    return { entry, body: JSON.stringify(this.renderer.view(change.model, entry)) }
  }

  // ---- reads -------------------------------------------------------------------------------

  /**
   * Single-entry GET: 404 for a missing entry and for a draft the caller may not see;
   * `_resolve` (contract §4). Single-entry rule 4 and visibility rule 4: only published
   * entries are cached, keyed by (environment, collection, slug, `_resolve`, locale), and by
   * the caller's visibility too with `_resolve`, since resolved drafts depend on it.
   */
  async get (scope: Scope, collection: string, slug: string, caller: Caller, query: { _resolve?: unknown } = {}): Promise<Rendered> {
    const model = this.model(collection)
    const normalized = pathSlug(slug)
    const resolve = this.references.parseResolve(query._resolve, model)
    const sees = seesDrafts(caller)
    const key = this.cache.enabled ? entryCacheKey(scope, collection, normalized, resolve?.key ?? null, sees) : null
    if (key !== null) {
      const hit = this.cache.get(key)
      if (hit !== undefined) return hit
    }
    const since = this.cache.mark()
    const entry = await this.store.get(scope, collection, normalized)
    if (entry === undefined || (entry.status === 'draft' && !sees)) throw entryMissing(normalized, collection)
    const tags = [collectionTag(scope.environment, collection)]
    let json: string
    if (resolve !== null) {
      // Resolution formats the references itself.
      const resolved = await this.resolved([entry], entryView, { collection, spec: resolve, scope, sees, projection: '' })
      json = resolved.texts?.[0]?.json ?? JSON.stringify(resolved.views[0] ?? this.renderer.view(model, entry))
      for (const c of resolved.collections) tags.push(collectionTag(scope.environment, c))
    } else {
      json = this.renderer.viewJson(model, entry)
    }
    return this.renderer.render(json, key !== null && entry.status === 'published' ? { key, tags, since } : null)
  }

  /** An entry's body exactly as the single-entry GET answers it without `_resolve` (what /api/sync's upserts carry), with its UTF-8 length. */
  entryText (model: CollectionModel, entry: StoredEntry): JsonText {
    return this.renderer.viewText(model, entry)
  }

  /**
   * The cached answer of a list GET, or undefined; what `list` would answer from the cache.
   * Routes ask it first thing (content.cachedReply), before the query is validated, so a hit
   * costs a key and a lookup, and no store read: it stays synchronous. The key holds the raw
   * query string, and a query string that fails validation or parsing is never stored, so a
   * hit means the same string was valid before.
   */
  cachedList (scope: Scope, collection: string, queryString: string, caller: Caller): Rendered | undefined {
    if (!this.cache.enabled || this.registry.collection(collection) === null) return undefined
    return this.cache.lookup(listCacheKey(scope, collection, queryString, seesDrafts(caller)))
  }

  /**
   * The cached answer of a single-entry GET, or undefined (see cachedList). Only without
   * `_resolve`, which is parsed on the full path, and for a slug already in normal form.
   */
  cachedEntry (scope: Scope, collection: string, slug: string, caller: Caller, rawQuery: Record<string, unknown>): Rendered | undefined {
    if (!this.cache.enabled || rawQuery._resolve !== undefined || !scopeParamsValid(rawQuery)) return undefined
    if (!isNormalSlug(slug) || this.registry.collection(collection) === null) return undefined
    return this.cache.lookup(entryCacheKey(scope, collection, slug, null, seesDrafts(caller)))
  }

  /**
   * List GET: `{ items, total, page, per_page, pages }`; callers without drafts see published
   * only; `_resolve` on every item. List rule 3: cached per (environment, collection, query,
   * locale, caller's visibility), the query as `queryString`, the raw string it was parsed from
   * (see listKey).
   */
  async list (scope: Scope, collection: string, rawQuery: Record<string, unknown>, queryString: string, caller: Caller): Promise<Rendered> {
    const model = this.model(collection)
    const sees = seesDrafts(caller)
    const key = this.cache.enabled ? listCacheKey(scope, collection, queryString, sees) : null
    if (key !== null) {
      const hit = this.cache.get(key)
      if (hit !== undefined) return hit
    }
    const cursorContext = `${scope.environment}\u0000${scope.locale ?? ''}\u0000${collection}`
    const query = parseListQuery(rawQuery, model.schema, { seesDrafts: sees, cursorContext })
    const resolve = this.references.parseResolve(rawQuery._resolve, model)
    const since = this.cache.mark()
    const result = await this.store.list(scope, collection, query)
    const tags = [collectionTag(scope.environment, collection)]
    const keep = (): KeepAs | null => key === null ? null : { key, tags, since }
    const page = pageNumbers(query, result, cursorContext)
    if (resolve !== null) {
      // Resolution formats the references itself.
      const view = (entry: StoredEntry): EntryView => projectFields(entryView(entry), query.fields)
      const projection = query.fields === null ? '' : query.fields.join(',')
      const resolved = await this.resolved(result.items, view, { collection, spec: resolve, scope, sees, projection })
      for (const c of resolved.collections) tags.push(collectionTag(scope.environment, c))
      if (resolved.texts !== null) return this.renderer.renderList(resolved.texts, page, keep())
      return this.renderer.render(JSON.stringify({ items: resolved.views, ...page }), keep())
    }
    if (query.fields === null) return this.renderer.renderList(result.items.map(entry => this.renderer.viewText(model, entry)), page, keep())
    const items = result.items.map(entry => projectFields(this.renderer.view(model, entry), query.fields))
    return this.renderer.render(JSON.stringify({ items, ...page }), keep())
  }

  /**
   * `_resolve` on `entries` (their views made by `view`, projected as `projection` says): each
   * root as its kept resolved text. Should the data hold a look-alike of the placeholders those
   * texts are spliced with, `texts` is null and the roots are resolved whole, as `views`.
   */
  private async resolved (
    entries: readonly StoredEntry[], view: (entry: StoredEntry) => EntryView,
    target: { collection: string, spec: ResolveSpec, scope: Scope, sees: boolean, projection: string }
  ): Promise<{ texts: readonly JsonText[] | null, views: EntryView[], collections: Set<string> }> {
    const { collection, spec, scope, sees, projection } = target
    const resolved = await this.references.resolveTexts(entries, view, collection, spec, scope, sees, projection)
    if (resolved !== null) return { texts: resolved.texts, views: [], collections: resolved.collections }
    // Also for a collection without a reference plan, which content collections always have.
    const whole = await this.references.resolve(entries.map(view), collection, spec, scope, sees)
    return { texts: null, views: whole.views, collections: whole.collections }
  }

  /** interface.md "Slug check", rules 1–6. Never throws for bad input: the answer says what is wrong. */
  async slugCheck (scope: Scope, collection: string, slug: unknown, exclude: unknown): Promise<SlugCheckResult> {
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
    return { ...result, available: await this.store.get(scope, collection, check.normalized) === undefined }
  }
}

/**
 * A list answer's numbers (contract §4) and `next`, the keyset cursor of its last item (§10), null
 * when no match follows: the store says so for a keyset page, the total for a numbered one.
 */
function pageNumbers (query: ListQuery, result: ListResult, cursorContext: string): PageNumbers {
  const offset = query.after === null ? (query.page - 1) * query.perPage : 0
  const last = result.items.at(-1)
  const more = result.more ?? offset + result.items.length < result.total
  const next = more && last !== undefined ? encodeAfter(queryFingerprint(cursorContext, query), positionOf(last, query.sort)) : null
  return { total: result.total, page: query.after === null ? query.page : null, per_page: query.perPage, pages: Math.ceil(result.total / query.perPage), next }
}

/** One VALIDATION_FAILED for every problem found (the contract: one message per problem). */
function checkValid (problems: string[]): void {
  if (problems.length > 0) throw validationFailed(problems)
}

/** `_locale` and `_environment` absent or given once: what the route's validation accepts. */
function scopeParamsValid (query: Record<string, unknown>): boolean {
  const { _locale: locale, _environment: environment } = query
  return (locale === undefined || typeof locale === 'string') && (environment === undefined || typeof environment === 'string')
}

function entryKey (scope: Scope, collection: string, slug: string): string {
  return `${scope.environment}\u0000${scope.locale ?? ''}\u0000${collection}\u0000${slug}`
}

/** Contract §6: the change's seq, and the entry's status after and before it (an unpublish is an update from published to draft). */
function contentEvent (change: EntryChange): ContentEvent {
  const event = change.operation === 'create' ? 'content.created' : change.operation === 'update' ? 'content.updated' : 'content.deleted'
  return {
    event,
    collection: change.collection,
    slug: change.slug,
    locale: change.scope.locale,
    environment: change.scope.environment,
    seq: change.seq,
    status: change.entry?.status ?? null,
    previous_status: change.previous?.status ?? null
  }
}
