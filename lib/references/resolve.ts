// `_resolve` (contract §4): reference fields replaced by the entries they name, level by level.
//
// - `1` / `true`: every reference field, one level; `<n>` (2..5): n levels; a reference that
//   would revisit an entry already on the path from the root is left as its slug.
// - `<field>,<field>`: only those reference fields (schema paths, dotted into nested objects),
//   one level.
// - A target that is gone, or a draft the caller may not see, resolves to null (a single
//   reference) or is left out (a multiple reference, an item of an array of references).
// - Relative asset paths in the entry and in every resolved entry become absolute URLs.
//
// Entries are loaded breadth first with one batched read per (collection, level), whatever the
// number of entries and references (no query per reference; the collections of a level are read
// at once); then each root is built, synchronously, from what was loaded.
import { badRequest } from '../errors.js'
import type { EntryView } from '../content/entry.js'
import type { Scope } from '../../types/scope.js'
import type { StoredEntry } from '../../types/store.js'
import { jsonText, placeholder, spliceJson, type JsonText } from '../content/json-memo.js'
import { expandAssetUrls, type AssetUrlBase } from './asset-urls.js'
import {
  OMIT, forEachReference, formatReference, isPlainObject, setOwn,
  type Data, type PlanNode, type RefNode, type ReferencePlan
} from './plan.js'

const EMPTY_FIELDS: ReadonlyMap<string, PlanNode> = new Map()

export const MAX_RESOLVE_DEPTH = 5

export interface ResolveSpec {
  /** Levels to resolve, 1..5. */
  depth: number
  /** Only these reference fields (schema paths), or null for all. */
  fields: ReadonlySet<string> | null
  /** A canonical form (`1`, `3`, `author,tags`): equal for equal requests, for cache keys. */
  key: string
}

const USAGE = '_resolve must be 1, true, a depth from 2 to 5, or a comma list of reference fields'

/**
 * Parses a `_resolve` value against the collection's reference fields. Null when absent (or
 * `0` / `false`, which ask for no resolution); a 400 naming `_resolve` when it is not valid.
 */
export function parseResolve (raw: unknown, plan: ReferencePlan, collection: string): ResolveSpec | null {
  if (raw === undefined) return null
  if (typeof raw !== 'string') throw badRequest(`${USAGE}; it may be given once.`)
  const value = raw.trim()
  const lower = value.toLowerCase()
  if (value === '0' || lower === 'false') return null
  if (value === '1' || lower === 'true') return { depth: 1, fields: null, key: '1' }
  if (/^\d+$/.test(value)) {
    const depth = Number(value)
    if (depth < 1 || depth > MAX_RESOLVE_DEPTH) throw badRequest(`_resolve: the depth must be from 1 to ${MAX_RESOLVE_DEPTH}, got ${value}.`)
    return { depth, fields: null, key: String(depth) }
  }
  const fields = value.split(',').map(f => f.trim()).filter(f => f !== '')
  if (fields.length === 0) throw badRequest(`${USAGE}.`)
  for (const field of fields) {
    if (!plan.paths.has(field)) {
      const known = [...plan.paths]
      throw badRequest(`_resolve: '${field}' is not a reference field of '${collection}'` +
        (known.length === 0 ? ' (it has none).' : ` (reference fields: ${known.join(', ')}).`))
    }
  }
  const unique = [...new Set(fields)].sort()
  return { depth: 1, fields: new Set(unique), key: unique.join(',') }
}

export type { EntryView }

export interface ResolveContext {
  scope: Scope
  /** The caller sees drafts (interface.md visibility rules); otherwise drafts resolve as missing. */
  seesDrafts: boolean
  /** The reference plan of a content collection; null for an unknown or reusable one. */
  planOf: (collection: string) => ReferencePlan | null
  getMany: (scope: Scope, collection: string, slugs: readonly string[]) => Promise<Map<string, StoredEntry>>
  assets: AssetUrlBase
  /**
   * When given, an embedded entry that is a leaf (its own references left as slugs) comes as a
   * placeholder (json-memo.ts): the n-th one placed stands for `texts[n]`, the JSON text this
   * function gives for it (made with `build`, or kept from an earlier read).
   */
  leafJson?: (entry: StoredEntry, plan: ReferencePlan, build: () => EntryView) => string
  /**
   * With `leafJson`: the stored entries the roots are the views of (same order), and where their
   * resolved texts are kept. Then the answer is Resolved.rootTexts, each root's JSON text: kept
   * from an earlier read when every entry it embedded (or found missing) is still the same
   * object, made otherwise (and kept). `revision` is the store's (ContentStore.revision, in
   * this scope): each kept text notes those of the collections it embeds, as they were when it
   * was last found current (see resolveRootTexts).
   */
  rootTexts?: RootTexts
}

export interface RootTexts {
  entries: readonly StoredEntry[]
  kept: ResolvedTexts
  variant: string
  revision: (collection: string) => number
}

/** A target a resolved root looked up, and what it found: the same object must be there for the text to hold. */
type Dependency = [collection: string, slug: string, entry: StoredEntry | null]

/** The plans a resolved root was built with (its own and its targets'): a schema change to any of them makes it anew. */
type PlanUse = [collection: string, plan: ReferencePlan | null]

/** A collection a resolved root looked in, and the store's revision of it when the text was last found current. */
type Revision = [collection: string, revision: number]

/** A root's resolved text (with its UTF-8 length), and what it depends on. */
interface KeptText extends JsonText {
  variant: string
  plans: PlanUse[]
  deps: Dependency[]
  revs: Revision[]
}

/** Resolved texts of root entries, each with what it depends on (see ResolveContext.rootTexts). */
export class ResolvedTexts {
  private readonly texts = new WeakMap<StoredEntry, KeptText>()

  get (entry: StoredEntry, variant: string): KeptText | undefined {
    const kept = this.texts.get(entry)
    return kept !== undefined && kept.variant === variant ? kept : undefined
  }

  set (entry: StoredEntry, kept: KeptText): void {
    this.texts.set(entry, kept)
  }
}

export interface Resolved {
  views: EntryView[]
  /** Every collection whose entries were looked up: what the answer depends on besides the roots. */
  collections: Set<string>
  /** With `leafJson`: the texts of the placeholders in `views`, in the order JSON.stringify meets them. */
  texts: string[]
  /**
   * With `rootTexts`: each root's resolved JSON text (then `views` is empty), or null when one
   * could not be spliced (the data holds a placeholder look-alike: resolve without texts).
   */
  rootTexts?: JsonText[] | null
}

interface Pending {
  plan: ReferencePlan
  data: Data
  fields: ReadonlySet<string> | null
}

/** A loaded target: the entry (null when missing or hidden) and, once built, its leaf view or text. */
interface Slot {
  entry: StoredEntry | null
  leaf: EntryView | null
  text: string | null
}

/** The entries on the path from a root, innermost first. */
interface PathStep {
  collection: string
  slug: string
  parent: PathStep | null
}

function onPath (path: PathStep | null, collection: string, slug: string): boolean {
  for (let p = path; p !== null; p = p.parent) if (p.slug === slug && p.collection === collection) return true
  return false
}

type RefMapper = (node: RefNode, value: unknown) => unknown

/**
 * One pass over an object: the values of reference fields (and of the objects and arrays that
 * hold them) go through `fn`, every other value has its asset paths expanded. Copy on write,
 * unless `owned`, when the object is the caller's own new copy and is changed in place.
 */
function mapEntry (fields: ReadonlyMap<string, PlanNode>, obj: Data, base: AssetUrlBase, fn: RefMapper, owned: boolean): Data {
  let out: Data | null = owned ? obj : null
  const keys = Object.keys(obj)
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string
    const value = obj[key]
    const node = fields.get(key)
    const next = node === undefined ? expandAssetUrls(value, base) : mapNode(node, value, base, fn)
    if (next !== value) {
      out ??= { ...obj }
      setOwn(out, key, next === OMIT ? null : next)
    }
  }
  return out ?? obj
}

function mapNode (node: PlanNode, value: unknown, base: AssetUrlBase, fn: RefMapper): unknown {
  if (node.kind === 'ref') return fn(node, value)
  if (node.kind === 'object') return isPlainObject(value) ? mapEntry(node.fields, value, base, fn, false) : expandAssetUrls(value, base)
  if (!Array.isArray(value)) return expandAssetUrls(value, base)
  let out: unknown[] | null = null
  for (let i = 0; i < value.length; i++) {
    const next = mapNode(node.item, value[i], base, fn)
    if (next !== value[i]) out ??= value.slice(0, i)
    if (out !== null && next !== OMIT) out.push(next)
  }
  return out ?? value
}

function viewOf (entry: StoredEntry): EntryView {
  return { _slug: entry.slug, _status: entry.status, _created_at: entry.createdAt, _updated_at: entry.updatedAt, ...entry.data }
}

/** What loadTargets reads with: the scope, the plans, and `stamp`, called for each collection before its first read. */
interface Loader extends Pick<ResolveContext, 'scope' | 'seesDrafts' | 'planOf' | 'getMany'> {
  stamp: (collection: string) => unknown
}

/**
 * Loads the targets of `frontier` breadth first, `depth` levels: one batched read per
 * (collection, level), the collections of a level read at once; entries already loaded are not
 * read again. Adds every collection looked in to `collections`; returns collection → slug → what
 * was loaded (null for a missing entry or a draft the caller may not see).
 */
async function loadTargets (frontier: Pending[], depth: number, loader: Loader, collections: Set<string>): Promise<Map<string, Map<string, Slot>>> {
  const loaded = new Map<string, Map<string, Slot>>()
  for (let level = 0; level < depth && frontier.length > 0; level++) {
    const wanted = wantedTargets(frontier, loaded, collections)
    for (const target of wanted.keys()) loader.stamp(target)
    const batches = [...wanted].filter(([, slugs]) => slugs.size > 0)
    const found = await Promise.all(batches.map(async ([target, slugs]) =>
      loader.planOf(target) === null ? new Map<string, StoredEntry>() : await loader.getMany(loader.scope, target, [...slugs])))
    const next: Pending[] = []
    batches.forEach(([target, slugs], i) => {
      const plan = loader.planOf(target)
      let bucket = loaded.get(target)
      if (bucket === undefined) { bucket = new Map(); loaded.set(target, bucket) }
      for (const slug of slugs) {
        const entry = found[i]?.get(slug)
        const visible = entry !== undefined && (entry.status === 'published' || loader.seesDrafts) ? entry : null
        bucket.set(slug, { entry: visible, leaf: null, text: null })
        if (visible !== null && plan !== null && plan.refs.length > 0 && level + 1 < depth) {
          next.push({ plan, data: visible.data, fields: null })
        }
      }
    })
    frontier = next
  }
  return loaded
}

/** The slugs `frontier` references and `loaded` lacks, per target collection (each one added to `collections`). */
function wantedTargets (frontier: Pending[], loaded: Map<string, Map<string, Slot>>, collections: Set<string>): Map<string, Set<string>> {
  const wanted = new Map<string, Set<string>>()
  // References mostly run to one collection after another: its sets are looked up once per run.
  let target: string | null = null
  let done: Map<string, Slot> | undefined
  let slugs = new Set<string>()
  const want = (node: RefNode, slug: string): void => {
    if (node.collection !== target) {
      target = node.collection
      collections.add(target)
      done = loaded.get(target)
      const known = wanted.get(target)
      if (known === undefined) { slugs = new Set(); wanted.set(target, slugs) } else slugs = known
    }
    if (done?.has(slug) !== true) slugs.add(slug)
  }
  for (const item of frontier) {
    const fields = item.fields
    forEachReference(item.plan, item.data, fields === null ? want : (node, slug) => { if (fields.has(node.field)) want(node, slug) })
  }
  return wanted
}

/** Resolves the references of `roots` (entries of `collection`, as views) per `spec`. */
export async function resolveEntries (
  roots: readonly EntryView[], collection: string, spec: ResolveSpec, ctx: ResolveContext
): Promise<Resolved> {
  const plans = new Map<string, ReferencePlan | null>()
  const planOf = (c: string): ReferencePlan | null => {
    let plan = plans.get(c)
    if (plan === undefined) { plan = ctx.planOf(c); plans.set(c, plan) }
    return plan
  }
  const rootPlan = planOf(collection)
  const leafJson = ctx.leafJson
  /** While a root text is made: what it looks up, and the collections it looks in (with those on its path). */
  let deps: Dependency[] | null = null
  let looked: string[] = []
  const collections = new Set<string>()
  const texts: string[] = []
  if (rootPlan === null) return { views: roots.map(v => expandAssetUrls(v, ctx.assets)), collections, texts }

  // Stamped before any read (see ContentStore.revision), once per collection per request.
  const revisionOf = ctx.rootTexts === undefined ? null : memo(ctx.rootTexts.revision)
  const loaded = await loadTargets(roots.map(data => ({ plan: rootPlan, data, fields: spec.fields })), spec.depth, {
    ...ctx, planOf, stamp: revisionOf ?? (() => 0)
  }, collections)

  // ---- building: each root, following its own path so cycles stop ----

  const buildEntry = (target: string, entry: StoredEntry, levelsLeft: number, path: PathStep | null): EntryView => {
    const plan = planOf(target)
    const view = viewOf(entry)
    const fn: RefMapper = levelsLeft === 0 ? formatReference : (node, value) => resolveValue(node, value, levelsLeft, path)
    return mapEntry(plan?.fields ?? EMPTY_FIELDS, view, ctx.assets, fn, true) as EntryView
  }

  const resolveSlug = (node: RefNode, slug: unknown, levelsLeft: number, path: PathStep | null): unknown => {
    if (typeof slug !== 'string') return slug
    const target = node.collection
    if (deps !== null && !looked.includes(target)) looked.push(target)
    if (onPath(path, target, slug)) return slug
    const slot = loaded.get(target)?.get(slug)
    deps?.push([target, slug, slot?.entry ?? null])
    if (slot === undefined || slot.entry === null) return OMIT
    // A leaf (no level left) looks the same on every path: built once, shared.
    if (levelsLeft === 1) {
      const entry = slot.entry
      const plan = leafJson === undefined ? null : planOf(target)
      if (leafJson === undefined || plan === null) {
        slot.leaf ??= buildEntry(target, entry, 0, null)
        return slot.leaf
      }
      // Built in the order JSON.stringify walks the answer, so the n-th placeholder is met n-th.
      slot.text ??= leafJson(entry, plan, () => buildEntry(target, entry, 0, null))
      texts.push(slot.text)
      return placeholder(texts.length - 1)
    }
    return buildEntry(target, slot.entry, levelsLeft - 1, { collection: target, slug, parent: path })
  }

  const resolveValue = (node: RefNode, raw: unknown, levelsLeft: number, path: PathStep | null): unknown => {
    const value = formatReference(node, raw)
    if (value === null || value === undefined) return value
    if (node.multiple && Array.isArray(value)) {
      const out: unknown[] = []
      for (const slug of value) {
        const resolved = resolveSlug(node, slug, levelsLeft, path)
        if (resolved !== OMIT) out.push(resolved)
      }
      return out
    }
    // OMIT becomes null for a single reference field, and drops an item of an array of references.
    return resolveSlug(node, value, levelsLeft, path)
  }

  const buildRoot = (root: EntryView): EntryView => {
    const path: PathStep = { collection, slug: root._slug, parent: null }
    const fn: RefMapper = spec.fields === null
      ? (node, value) => resolveValue(node, value, spec.depth, path)
      : (node, value) => spec.fields?.has(node.field) === true ? resolveValue(node, value, spec.depth, path) : formatReference(node, value)
    return mapEntry(rootPlan.fields, root, ctx.assets, fn, false) as EntryView
  }

  const rootTexts = ctx.rootTexts
  if (rootTexts === undefined || leafJson === undefined) return { views: roots.map(buildRoot), collections, texts }

  const samePlan = (use: PlanUse): boolean => planOf(use[0]) === use[1]
  let depCollection: string | null = null
  let depBucket: Map<string, Slot> | undefined
  const current = (dep: Dependency): boolean => {
    if (dep[0] !== depCollection) { depCollection = dep[0]; depBucket = loaded.get(depCollection) }
    return (depBucket?.get(dep[1])?.entry ?? null) === dep[2]
  }
  const stamp = revisionOf as (collection: string) => number
  const out: JsonText[] = []
  for (let i = 0; i < roots.length; i++) {
    const entry = rootTexts.entries[i] as StoredEntry
    const kept = rootTexts.kept.get(entry, rootTexts.variant)
    if (kept !== undefined && kept.plans.every(samePlan) && kept.deps.every(current)) {
      kept.revs = kept.revs.map(([c]) => [c, stamp(c)])
      out.push(kept)
      continue
    }
    // Built alone, so its placeholders are numbered from 0 and what it looked up is its own.
    texts.length = 0
    const built: Dependency[] = deps = []
    looked = []
    const json = spliceJson(JSON.stringify(buildRoot(roots[i] as EntryView)), texts)
    deps = null
    if (json === null) return { views: [], collections, texts: [], rootTexts: null }
    const revs = looked.map((c): Revision => [c, stamp(c)])
    // Every plan this request consulted so far: a superset of this root's, which only costs a check.
    const made: KeptText = { variant: rootTexts.variant, plans: [...plans], deps: built, revs, ...jsonText(json) }
    rootTexts.kept.set(entry, made)
    out.push(made)
  }
  return { views: [], collections, texts: [], rootTexts: out }
}

/** `fn` asked once per key. */
function memo<T> (fn: (key: string) => T): (key: string) => T {
  const known = new Map<string, T>()
  return key => {
    let value = known.get(key)
    if (value === undefined && !known.has(key)) { value = fn(key); known.set(key, value) }
    return value as T
  }
}

/**
 * Each root's resolved JSON text, as Resolved.rootTexts (see ResolveContext.rootTexts), and the
 * collections those texts embed from; null when a root's text cannot be spliced (resolve the
 * views whole instead) or the collection has no reference plan.
 *
 * A kept text still holds without reading anything when the plans it was built with are the
 * current ones and the store has taken no write to any collection it embeds from since it was
 * last found current (ContentStore.revision): it embeds exactly what a new build would. Only
 * the other roots are resolved (their targets loaded and compared entry by entry, so a write to
 * an entry a text does not embed only costs it that check), and only those need their view.
 */
export async function resolveRootTexts (
  entries: readonly StoredEntry[], view: (entry: StoredEntry) => EntryView, collection: string, spec: ResolveSpec,
  ctx: Omit<ResolveContext, 'leafJson' | 'rootTexts'> & { leafJson: NonNullable<ResolveContext['leafJson']>, rootTexts: Omit<RootTexts, 'entries'> }
): Promise<{ texts: JsonText[], collections: Set<string> } | null> {
  const { kept, variant } = ctx.rootTexts
  const planOf = memo(ctx.planOf)
  const revisionOf = memo(ctx.rootTexts.revision)
  // The texts of a page mostly name the same one or two collections: the last answer is at hand.
  let revFor: string | null = null
  let rev = 0
  let planFor: string | null = null
  let plan: ReferencePlan | null = null
  const holds = (text: KeptText): boolean => {
    for (const [c, n] of text.revs) {
      if (c !== revFor) { revFor = c; rev = revisionOf(c) }
      if (rev !== n) return false
    }
    for (const [c, p] of text.plans) {
      if (c !== planFor) { planFor = c; plan = planOf(c) }
      if (plan !== p) return false
    }
    return true
  }
  const texts: JsonText[] = new Array<JsonText>(entries.length)
  const collections = new Set<string>()
  const stale: number[] = []
  for (let i = 0; i < entries.length; i++) {
    const text = kept.get(entries[i] as StoredEntry, variant)
    if (text !== undefined && holds(text)) {
      texts[i] = text
      for (const [c] of text.revs) collections.add(c)
    } else {
      stale.push(i)
    }
  }
  if (stale.length === 0) return { texts, collections }
  const roots = stale.length === entries.length ? entries : stale.map(i => entries[i] as StoredEntry)
  const resolved = await resolveEntries(roots.map(view), collection, spec, { ...ctx, rootTexts: { ...ctx.rootTexts, entries: roots } })
  if (resolved.rootTexts === undefined || resolved.rootTexts === null) return null
  for (let n = 0; n < stale.length; n++) texts[stale[n] as number] = resolved.rootTexts[n] as JsonText
  for (const c of resolved.collections) collections.add(c)
  return { texts, collections }
}
