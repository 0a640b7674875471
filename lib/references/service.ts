// References as the content pipeline uses them (interface.md "References", create rules 9–11,
// update rules 6–7, delete rule 3, "Reverse-reference index", contract §4 `_resolve`): the
// steps of the write pipeline (the reference check, relative asset URLs, the index update), the
// read side (formatting and `_resolve`) and the reverse-reference index. Framework-free:
// plugins/references.ts builds it, and the content plugin hands it to the pipeline.
import { notFound } from '../errors.js'
import { pathSlug } from '../content/entry.js'
import type { EntryChange } from '../content/service.js'
import { JsonMemo, TextBudget, type JsonText } from '../content/json-memo.js'
import { DEFAULT_TEXT_CACHE_BYTES } from '../config.js'
import type { CollectionModel, SchemaRegistry } from '../../types/schema.js'
import type { Scope } from '../../types/scope.js'
import type { ContentStore, StoredEntry } from '../../types/store.js'
import { assetUrlBase, relativizeAssetUrls } from './asset-urls.js'
import { buildIndex, outgoingReferences } from './build.js'
import { checkReferences } from './check.js'
import { formatReferences, planOf, type Data, type ReferencePlan } from './plan.js'
import {
  ResolvedTexts, parseResolve, resolveEntries, resolveRootTexts, type EntryView, type Resolved, type ResolveContext, type ResolveSpec
} from './resolve.js'
import type { Referrer, ReverseIndex } from './reverse-index.js'

export interface ReferenceServiceOptions {
  registry: Pick<SchemaRegistry, 'collection' | 'collections'>
  store: Pick<ContentStore, 'getMany' | 'entries' | 'revision'>
  /** CMS_PUBLIC_URL, without a trailing slash. */
  publicUrl: string
  /** CMS_ENVIRONMENTS (empty when off). */
  environments: readonly string[]
  /** The environment used when environments are off. */
  defaultEnvironment: string
  /**
   * Bounds the texts kept per stored entry (CMS_TEXT_CACHE_BYTES), the `_resolve` ones here and
   * the views' in the content pipeline's renderer, which is handed the same budget (`texts`).
   */
  texts?: TextBudget
}

export class ReferenceService {
  private readonly registry: ReferenceServiceOptions['registry']
  private readonly store: ReferenceServiceOptions['store']
  private readonly publicUrl: string
  private readonly environments: readonly string[]
  private readonly defaultEnvironment: string
  /** The budget of every text kept per stored entry (json-memo.ts TextBudget), shared with the content pipeline. */
  readonly texts: TextBudget
  private index: ReverseIndex | null = null
  private onIndexChange: () => void = () => {}
  /** Per collection, the signature of its reference fields the index was built with. */
  private indexedPlans = new Map<string, string>()
  /** The JSON texts of entries embedded as leaves by `_resolve`. */
  private readonly leafTexts: JsonMemo<StoredEntry>
  /** The resolved JSON texts of root entries (resolve.ts ResolvedTexts). */
  private readonly rootTexts: ResolvedTexts
  /** Index rebuilds after schema changes, one after the other. */
  private rebuilds: Promise<unknown> = Promise.resolve()
  /** While a rebuild reads the stored entries: the changes made meanwhile, applied again after it. */
  private readonly changedDuringRebuild = new Set<EntryChange[]>()

  constructor (options: ReferenceServiceOptions) {
    this.registry = options.registry
    this.store = options.store
    this.publicUrl = options.publicUrl
    this.environments = options.environments
    this.defaultEnvironment = options.defaultEnvironment
    this.texts = options.texts ?? new TextBudget(DEFAULT_TEXT_CACHE_BYTES)
    this.leafTexts = new JsonMemo(this.texts)
    this.rootTexts = new ResolvedTexts(this.texts)
  }

  /** The reference plan of a content collection; null when unknown or reusable. */
  planOf (collection: string): ReferencePlan | null {
    const model = this.registry.collection(collection)
    return model === null ? null : planOf(model)
  }

  // ---- writes --------------------------------------------------------------------------------

  /** The reference check (create rule 9, update rule 6): one message per missing target. */
  async check (scope: Scope, model: CollectionModel, data: Data): Promise<string[]> {
    return await checkReferences(planOf(model), data, scope, {
      hasCollection: c => this.registry.collection(c) !== null,
      getMany: (s, c, slugs) => this.store.getMany(s, c, slugs)
    })
  }

  /** Create rule 10, and updates alike: absolute asset URLs made relative. */
  relativeAssetUrls (scope: Scope, data: Data): Data {
    return relativizeAssetUrls(data, this.publicUrl, scope.environment)
  }

  /** Create rule 11, update rule 7, delete rule 3: the index follows a committed change. */
  updateIndex (change: EntryChange): void {
    const index = this.index
    if (index === null || change.scope.environment !== this.defaultEnvironment) return
    applyToIndex(index, change)
    for (const changes of this.changedDuringRebuild) changes.push(change)
    this.onIndexChange()
  }

  // ---- reads ---------------------------------------------------------------------------------

  /** `_resolve` of a request, checked against the collection's reference fields (400 naming it). */
  parseResolve (raw: unknown, model: CollectionModel): ResolveSpec | null {
    return parseResolve(raw, planOf(model), model.schema.name)
  }

  /** An entry view with its references formatted per schema (single slug or array). */
  format<T extends Data> (model: CollectionModel, view: T): T {
    return formatReferences(planOf(model), view) as T
  }

  /** `_resolve` on views of `collection`'s entries, built whole; also expands asset URLs. */
  resolve (views: readonly EntryView[], collection: string, spec: ResolveSpec, scope: Scope, seesDrafts: boolean): Promise<Resolved> {
    return resolveEntries(views, collection, spec, this.context(scope, seesDrafts))
  }

  /**
   * `_resolve` on `entries` of `collection` (their views made by `view`, projected as
   * `projection` names), as each root's whole resolved JSON text (resolve.ts resolveRootTexts):
   * kept per root until what it embeds changes, with the embedded leaf entries spliced in as
   * texts kept per stored entry (for its plan and asset URL base), so an entry is serialized
   * once, not per read. Null when the texts cannot be used: call `resolve` instead.
   */
  resolveTexts (
    entries: readonly StoredEntry[], view: (entry: StoredEntry) => EntryView, collection: string, spec: ResolveSpec,
    scope: Scope, seesDrafts: boolean, projection: string
  ): Promise<{ texts: JsonText[], collections: Set<string> } | null> {
    const ctx = this.context(scope, seesDrafts)
    const base = `${ctx.assets.publicUrl}\u0000${ctx.assets.environmentParam ?? ''}`
    // Handed on, not awaited here: one promise less on every `_resolve` read.
    return resolveRootTexts(entries, view, collection, spec, {
      ...ctx,
      leafJson: (entry, plan, build) => this.leafTexts.json(entry, plan, base, build),
      rootTexts: {
        kept: this.rootTexts,
        variant: `${spec.key}\u0000${seesDrafts ? 'd' : 'p'}\u0000${projection}\u0000${base}`,
        revision: c => this.store.revision(scope, c)
      }
    })
  }

  private context (scope: Scope, seesDrafts: boolean): ResolveContext {
    return {
      scope,
      seesDrafts,
      planOf: (c: string) => this.planOf(c),
      getMany: (s: Scope, c: string, slugs: readonly string[]) => this.store.getMany(s, c, slugs),
      assets: assetUrlBase(this.publicUrl, this.environments, scope.environment)
    }
  }

  // ---- the reverse-reference index -----------------------------------------------------------

  /** Whether the index is kept: not with environments (interface.md). */
  get indexEnabled (): boolean {
    return this.environments.length === 0
  }

  /**
   * GET /api/content/<c>/<slug>/referrers: the referrer records of every locale. The slug is
   * normalized like any path slug (400 when it is not valid). An unknown
   * or reusable collection is not found (like every content endpoint); an entry nobody
   * references, or any entry when environments are on, has none. A re-index after a schema
   * change (schemasChanged) that is still reading the stored entries is waited for, so the
   * answer follows every schema change made before it.
   */
  async referrers (collection: string, slug: string): Promise<Referrer[]> {
    if (this.registry.collection(collection) === null) throw notFound(`Collection '${collection}' not found.`)
    const normalized = pathSlug(slug)
    await this.rebuilds
    return this.index?.referrers(collection, normalized) ?? []
  }

  /**
   * The title of each referring entry, for the admin's "Used by": its collection's
   * `display_field` (a string or number) in its own locale, read in one batch per collection and
   * locale. Null when there is none, or when the entry is a draft the caller may not see.
   */
  async referrerTitles (referrers: readonly Referrer[], seesDrafts: boolean): Promise<Array<string | null>> {
    const batches = new Map<string, { scope: Scope, collection: string, slugs: string[] }>()
    for (const r of referrers) {
      const id = JSON.stringify([r.locale, r.collection])
      const batch = batches.get(id) ?? { scope: { locale: r.locale, environment: this.defaultEnvironment }, collection: r.collection, slugs: [] }
      batch.slugs.push(r.slug)
      batches.set(id, batch)
    }
    const found = new Map<string, Map<string, StoredEntry>>()
    for (const [id, batch] of batches) found.set(id, await this.store.getMany(batch.scope, batch.collection, batch.slugs))
    return referrers.map(r => {
      const entry = found.get(JSON.stringify([r.locale, r.collection]))?.get(r.slug)
      const field = this.registry.collection(r.collection)?.schema.display_field
      if (entry === undefined || field == null || (entry.status === 'draft' && !seesDrafts)) return null
      const value = Object.hasOwn(entry.data, field) ? entry.data[field] : undefined
      return typeof value === 'string' || typeof value === 'number' ? String(value) : null
    })
  }

  /** A digest of every collection's reference fields: an index built for others is outdated. */
  signature (): string {
    return JSON.stringify([...this.currentPlans()].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0))
  }

  private currentPlans (): Map<string, string> {
    const out = new Map<string, string>()
    for (const model of this.registry.collections()) {
      const plan = planOf(model)
      if (plan.refs.length > 0) out.set(model.schema.name, JSON.stringify(plan.refs.map(r => [r.field, r.collection, r.multiple])))
    }
    return out
  }

  /** The index from every stored entry (at start, when the saved one cannot be used). */
  async buildIndex (): Promise<ReverseIndex> {
    return await buildIndex(this.store.entries(), c => this.planOf(c), this.defaultEnvironment)
  }

  /** Keeps `index` up to date from now on; `onChange` runs after each change (to save it). */
  useIndex (index: ReverseIndex, onChange: () => void): void {
    this.index = index
    this.onIndexChange = onChange
    this.indexedPlans = this.currentPlans()
  }

  /**
   * A schema was written or deleted: collections whose reference fields changed are indexed
   * again from their stored entries (a field that stopped being a reference no longer counts;
   * a new one counts for entries that already hold values). True when the index changed.
   * Rebuilds run one after the other, in the order of the schema changes.
   */
  async schemasChanged (): Promise<boolean> {
    // Changes from now on are kept for this re-index, whose read of the stored entries may come
    // after them or miss them: they are applied again once its result is in.
    const during: EntryChange[] = []
    this.changedDuringRebuild.add(during)
    const run = this.rebuilds.then(async () => {
      try {
        return await this.reindexChangedPlans(during)
      } finally {
        this.changedDuringRebuild.delete(during)
      }
    })
    this.rebuilds = run.catch(() => {})
    return await run
  }

  private async reindexChangedPlans (during: readonly EntryChange[]): Promise<boolean> {
    const index = this.index
    if (index === null) return false
    const now = this.currentPlans()
    const changed = new Set<string>()
    for (const [collection, sig] of now) if (this.indexedPlans.get(collection) !== sig) changed.add(collection)
    for (const collection of this.indexedPlans.keys()) if (!now.has(collection)) changed.add(collection)
    this.indexedPlans = now
    if (changed.size === 0) return false
    // One pass over the stored entries: the changed collections' references, and which targets exist.
    const partial = await buildIndex(this.store.entries(), c => changed.has(c) ? this.planOf(c) : null, this.defaultEnvironment)
    // From here on synchronous: no change can come in before `during` is applied.
    for (const collection of changed) index.removeCollection(collection)
    for (const record of partial.records()) index.set(record.id, record.refs)
    for (const target of partial.targets()) {
      if (partial.referrers(target.collection, target.slug).every(r => r.locale !== target.locale)) index.removeReferenced(target)
    }
    for (const change of during) applyToIndex(index, change)
    this.onIndexChange()
    return true
  }
}

/** One committed change in the index: an entry's outgoing references, and whether it exists. */
function applyToIndex (index: ReverseIndex, change: EntryChange): void {
  const id = { collection: change.collection, slug: change.slug, locale: change.scope.locale }
  if (change.operation === 'delete' || change.entry === null) {
    index.remove(id)
  } else {
    index.set(id, outgoingReferences(planOf(change.model), change.entry.data))
    if (change.operation === 'create') index.restore(id)
  }
}
