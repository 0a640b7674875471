// The editorial workflow of contract §13 on top of the content pipeline: kept versions (list, read,
// restore), pending drafts of published entries (save, read, discard, publish), and the publish and
// unpublish a scheduled action runs. Every write here goes through the pipeline's own steps
// (lib/content/service.ts), under the entry's lock, so a restore or a publish follows every update
// rule (validation against the current schema, unique, references, cache, change feed, event, a new
// version). A pending draft is validated as an update but written beside the entry: no event, no
// version, no change to the live entry, its cache or the change feed until it is published.
import { notFound, conflict } from '../errors.js'
import { pageParameter, perPageParameter } from '../query/parse.js'
import { entryMissing } from '../store/common.js'
import type { EntryVersion, StoredDraft } from '../../types/editorial.js'
import type { CollectionModel } from '../../types/schema.js'
import type { Scope } from '../../types/scope.js'
import type { ContentStore, EntryInput, EntryStatus, StoredEntry } from '../../types/store.js'
import { bodyObject, bodyStatus, dataOf, pathSlug, type Data, type EntryView } from './entry.js'
import type { PendingWrite, Written } from './service.js'

/** What the workflow asks of the content pipeline: its steps, each one as the pipeline runs it. */
/**
 * Where the unique rule is decided: by the store `in the write` (an entry write; read ahead only
 * before a failed reference check), or `now` (a pending draft, which the store writes without it).
 */
export type UniqueCheck = 'in the write' | 'now'

export interface WriteSteps {
  /** The collection's model; 404 for an unknown or reusable collection. */
  model: (collection: string) => CollectionModel
  /**
   * Runs `task` holding the entry's lock, as every write does, and again from its reads when the
   * store refuses its update as built on a stale read (another process wrote in between).
   */
  locked: <T>(scope: Scope, collection: string, slug: string, task: () => Promise<T>) => Promise<T>
  /** Create rules 5–7: defaults and auto values, normalization, validation (422). */
  newData: (model: CollectionModel, data: Data) => Data
  /** Create rules 8–12 of a validated entry (under the lock). */
  insert: (write: PendingWrite) => Promise<Written>
  /** Update rules 5–6 (readonly, schema, unique, references): the write as validated. */
  checkUpdate: (previous: StoredEntry, write: PendingWrite, unique: UniqueCheck) => Promise<PendingWrite>
  /**
   * Update rules 7–8 of a validated write built from `previous`; `published`: the pending draft it
   * publishes as read (removed in the write's commit; a draft saved since refuses the write), or null.
   */
  commitUpdate: (previous: StoredEntry, write: PendingWrite, published: StoredDraft | null) => Promise<Written>
  /** What the store is handed for a write: its data as stored (relative asset URLs, schema order). */
  storedInput: (write: PendingWrite) => EntryInput
  /** The response view of an entry, references formatted per schema. */
  view: (model: CollectionModel, entry: StoredEntry) => EntryView
}

/** A kept version as listed (contract §13). */
export interface VersionItem {
  version: number
  status: EntryStatus
  created_at: string
}

/** `GET .../versions`: newest first. */
export interface VersionPage {
  items: VersionItem[]
  total: number
  page: number
  per_page: number
  pages: number
}

/** The paging parameters of the versions list, as received (checked like every list's). */
export interface VersionQuery {
  _page?: unknown
  _per_page?: unknown
}

export class Editorial {
  /**
   * @param store the store, for the editorial reads and the draft's own writes
   * @param keep CMS_REVISIONS: how many versions are kept (and listed) per entry
   * @param steps the pipeline's steps every entry write goes through
   */
  constructor (private readonly store: ContentStore, private readonly keep: number, private readonly steps: WriteSteps) {}

  // ---- versions ----------------------------------------------------------------------------

  /**
   * The entry's kept versions, newest first, paged as lists are. Also after the entry's delete;
   * an entry that exists lists none when none is kept (CMS_REVISIONS=0). A slug that names no
   * entry and no kept version is a 404, as on every entry route.
   */
  async versions (scope: Scope, collection: string, slugValue: string, query: VersionQuery): Promise<VersionPage> {
    this.steps.model(collection)
    const slug = pathSlug(slugValue)
    const page = pageParameter(query._page)
    const perPage = perPageParameter(query._per_page)
    const { items, total } = await this.store.versions(scope, collection, slug, this.keep, (page - 1) * perPage, perPage)
    if (total === 0 && await this.store.get(scope, collection, slug) === undefined) throw entryMissing(slug, collection)
    return {
      items: items.map(v => ({ version: v.version, status: v.status, created_at: v.createdAt })),
      total,
      page,
      per_page: perPage,
      pages: Math.ceil(total / perPage)
    }
  }

  /** Version `n` as the single-entry GET shows an entry, `_updated_at` being the version's time, plus `_version`. */
  async version (scope: Scope, collection: string, slugValue: string, n: number): Promise<string> {
    const model = this.steps.model(collection)
    const slug = pathSlug(slugValue)
    const kept = await this.kept(scope, collection, slug, n)
    const view = this.steps.view(model, { slug, status: kept.status, data: kept.data, createdAt: kept.entryCreatedAt, updatedAt: kept.createdAt })
    return JSON.stringify(withVersion(view, n))
  }

  /**
   * An update with version `n`'s data and status, through every update rule; when the entry was
   * deleted since, it is created again through the create rules (a `content.created`).
   */
  async restore (scope: Scope, collection: string, slugValue: string, n: number): Promise<Written> {
    const model = this.steps.model(collection)
    const slug = pathSlug(slugValue)
    return await this.steps.locked(scope, collection, slug, async () => {
      const kept = await this.kept(scope, collection, slug, n)
      const previous = await this.store.get(scope, collection, slug)
      if (previous === undefined) {
        const data = this.steps.newData(model, structuredClone(kept.data))
        return await this.steps.insert({ scope, collection, model, slug, status: kept.status, data })
      }
      return await this.update(previous, { scope, collection, model, slug, status: kept.status, data: kept.data }, null)
    })
  }

  private async kept (scope: Scope, collection: string, slug: string, n: number): Promise<EntryVersion> {
    const kept = await this.store.version(scope, collection, slug, n, this.keep)
    if (kept === undefined) throw notFound(`Version ${n} of entry '${slug}' not found in '${collection}'.`)
    return kept
  }

  // ---- drafts of published entries ---------------------------------------------------------

  /**
   * Saves the pending draft of a published entry: the body replaces the fields as a PUT's does
   * (`_slug` ignored, `_status` checked and ignored: a draft is published as published), and is
   * validated as an update. 404 for a missing entry, 409 for a draft entry (edit it directly).
   */
  async putDraft (scope: Scope, collection: string, slugValue: string, body: unknown): Promise<string> {
    const model = this.steps.model(collection)
    const slug = pathSlug(slugValue)
    const input = bodyObject(body)
    bodyStatus(input, 'published')
    const data = model.normalize(dataOf(input))
    return await this.steps.locked(scope, collection, slug, async () => {
      const previous = await this.existing(scope, collection, slug)
      if (previous.status === 'draft') throw conflict(`Entry '${slug}' in '${collection}' is a draft: edit it directly.`)
      const write = await this.steps.checkUpdate(previous, { scope, collection, model, slug, status: 'published', data }, 'now')
      const draft = await this.store.putDraft(scope, collection, slug, this.steps.storedInput(write).data)
      return JSON.stringify(this.draftView(model, previous, draft))
    })
  }

  /** The pending draft as an entry (`_status: "draft"`, `_updated_at` its last save); 404 when none. */
  async getDraft (scope: Scope, collection: string, slugValue: string): Promise<string> {
    const model = this.steps.model(collection)
    const slug = pathSlug(slugValue)
    const draft = await this.pendingDraft(scope, collection, slug)
    const entry = await this.existing(scope, collection, slug)
    return JSON.stringify(this.draftView(model, entry, draft))
  }

  /** Discards the pending draft; 404 when none. */
  async deleteDraft (scope: Scope, collection: string, slugValue: string): Promise<void> {
    this.steps.model(collection)
    const slug = pathSlug(slugValue)
    await this.steps.locked(scope, collection, slug, async () => {
      if (!await this.store.deleteDraft(scope, collection, slug)) throw draftMissing(slug, collection)
    })
  }

  /** The pending draft becomes the live entry: an update to `published` with its data, the draft gone in the same commit; 404 when none. */
  async publishDraft (scope: Scope, collection: string, slugValue: string): Promise<Written> {
    const model = this.steps.model(collection)
    const slug = pathSlug(slugValue)
    return await this.steps.locked(scope, collection, slug, async () => {
      const draft = await this.pendingDraft(scope, collection, slug)
      const previous = await this.existing(scope, collection, slug)
      return await this.update(previous, { scope, collection, model, slug, status: 'published', data: draft.data }, draft)
    })
  }

  // ---- what a scheduled action runs --------------------------------------------------------

  /**
   * Publishes the entry: applies its pending draft when there is one (as publishDraft), else makes
   * a draft entry published; null when it is published with no pending draft (nothing to do), so
   * a run repeated after a crash writes nothing twice. 404 for a missing entry.
   */
  async publish (scope: Scope, collection: string, slugValue: string): Promise<Written | null> {
    const model = this.steps.model(collection)
    const slug = pathSlug(slugValue)
    return await this.steps.locked(scope, collection, slug, async () => {
      const previous = await this.existing(scope, collection, slug)
      const draft = await this.store.getDraft(scope, collection, slug)
      const write = { scope, collection, model, slug, status: 'published' as const }
      if (draft !== undefined) return await this.update(previous, { ...write, data: draft.data }, draft)
      if (previous.status === 'draft') return await this.update(previous, { ...write, data: previous.data }, null)
      return null
    })
  }

  /** Makes a published entry a draft (a `content.updated`); null when it is a draft already. 404 for a missing entry. */
  async unpublish (scope: Scope, collection: string, slugValue: string): Promise<Written | null> {
    const model = this.steps.model(collection)
    const slug = pathSlug(slugValue)
    return await this.steps.locked(scope, collection, slug, async () => {
      const previous = await this.existing(scope, collection, slug)
      if (previous.status === 'draft') return null
      return await this.update(previous, { scope, collection, model, slug, status: 'draft', data: previous.data }, null)
    })
  }

  // ---- steps -------------------------------------------------------------------------------

  /** Every update rule on `write`, whose data (stored or kept, so frozen) is copied and normalized first (update rule 3). */
  private async update (previous: StoredEntry, write: PendingWrite, published: StoredDraft | null): Promise<Written> {
    const data = write.model.normalize(structuredClone(write.data))
    return await this.steps.commitUpdate(previous, await this.steps.checkUpdate(previous, { ...write, data }, 'in the write'), published)
  }

  private async existing (scope: Scope, collection: string, slug: string): Promise<StoredEntry> {
    const entry = await this.store.get(scope, collection, slug)
    if (entry === undefined) throw entryMissing(slug, collection)
    return entry
  }

  private async pendingDraft (scope: Scope, collection: string, slug: string): Promise<StoredDraft> {
    const draft = await this.store.getDraft(scope, collection, slug)
    if (draft === undefined) throw draftMissing(slug, collection)
    return draft
  }

  /** A draft as an entry: the entry's slug and creation time, the draft's data and last save. */
  private draftView (model: CollectionModel, entry: StoredEntry, draft: StoredDraft): EntryView {
    return this.steps.view(model, { slug: entry.slug, status: 'draft', data: draft.data, createdAt: entry.createdAt, updatedAt: draft.updatedAt })
  }
}

function draftMissing (slug: string, collection: string): Error {
  return notFound(`Entry '${slug}' in '${collection}' has no pending draft.`)
}

/** The view with `_version` after the system fields. Rest and spread define properties: no key reaches a prototype. */
export function withVersion (view: EntryView, version: number): EntryView & { _version: number } {
  const { _slug: slug, _status: status, _created_at: createdAt, _updated_at: updatedAt, ...data } = view
  return { _slug: slug, _status: status, _created_at: createdAt, _updated_at: updatedAt, _version: version, ...data }
}
