// The reverse-reference index (interface.md "Reverse-reference index"): which entries reference
// which. Kept as the forward lists (referrer → what it references), which is what a write
// replaces and what is saved, plus the reverse map the referrers endpoint reads.
//
// An entry is identified by (collection, slug, locale); references never cross locales
// (create rule 9), so a referrer's locale is its target's. The index is only kept when
// environments are off, so the environment is always the default one.

/** interface.md "Referrer". */
export interface Referrer {
  collection: string
  slug: string
  field: string
  locale: string | null
}

/** One reference held by an entry: its field (schema path) and its target. */
export interface OutgoingReference {
  field: string
  collection: string
  slug: string
}

export interface EntryId {
  collection: string
  slug: string
  locale: string | null
}

const SEP = '\u0000'
const entryKey = (id: EntryId): string => `${id.collection}${SEP}${id.slug}${SEP}${id.locale ?? ''}`
/** Targets are keyed without the locale: the endpoint answers for every locale at once. */
const targetKey = (collection: string, slug: string): string => `${collection}${SEP}${slug}`

interface Target {
  collection: string
  slug: string
  referrers: Map<string, Referrer>
}

interface ForwardRecord {
  id: EntryId
  refs: OutgoingReference[]
}

/** The saved form: one row per referrer, `[collection, slug, locale, [[field, collection, slug], ...]]`. */
export type SavedRow = [string, string, string | null, Array<[string, string, string]>]

/** A deleted entry that is still named by others: `[collection, slug, locale]`. */
export type SavedId = [string, string, string | null]

export interface SavedIndex {
  format: 'lectern-references'
  version: 1
  referrers: SavedRow[]
  deleted: SavedId[]
}

const compareText = (a: string, b: string): number => a < b ? -1 : a > b ? 1 : 0

function compareReferrers (a: Referrer, b: Referrer): number {
  return compareText(a.collection, b.collection) || compareText(a.slug, b.slug) ||
    compareText(a.locale ?? '', b.locale ?? '') || compareText(a.field, b.field)
}

export class ReverseIndex {
  private readonly forward = new Map<string, ForwardRecord>()
  /** target (collection, slug) → its referrers: (referrer key + field) → the referrer record. */
  private readonly reverse = new Map<string, Target>()
  /**
   * Deleted entries that others still reference (their data still names the slug). Hidden from
   * referrers() (delete rule 3: removed as a referenced entry) until an entry with that slug is
   * created again, when the references hold again. This keeps the index equal to a rebuild
   * from the stored entries, which only counts references to entries that exist.
   */
  private readonly deleted = new Set<string>()

  /** Number of entries that reference something. */
  get size (): number {
    return this.forward.size
  }

  /**
   * Replaces what `id` references (create, update: "rebuilt for this entry"). Duplicates (the
   * same target twice in one field) are recorded once. An empty list removes the entry.
   */
  set (id: EntryId, refs: readonly OutgoingReference[]): void {
    this.removeReferrer(id)
    if (refs.length === 0) return
    const key = entryKey(id)
    const seen = new Set<string>()
    const kept: OutgoingReference[] = []
    for (const ref of refs) {
      const k = `${ref.field}${SEP}${ref.collection}${SEP}${ref.slug}`
      if (seen.has(k)) continue
      seen.add(k)
      kept.push({ field: ref.field, collection: ref.collection, slug: ref.slug })
      const tk = targetKey(ref.collection, ref.slug)
      let target = this.reverse.get(tk)
      if (target === undefined) {
        target = { collection: ref.collection, slug: ref.slug, referrers: new Map() }
        this.reverse.set(tk, target)
      }
      target.referrers.set(`${key}${SEP}${ref.field}`, { collection: id.collection, slug: id.slug, field: ref.field, locale: id.locale })
    }
    this.forward.set(key, { id: { collection: id.collection, slug: id.slug, locale: id.locale }, refs: kept })
  }

  /** Forgets what `id` references. */
  removeReferrer (id: EntryId): void {
    const key = entryKey(id)
    const record = this.forward.get(key)
    if (record === undefined) return
    this.forward.delete(key)
    for (const ref of record.refs) {
      const tk = targetKey(ref.collection, ref.slug)
      const target = this.reverse.get(tk)
      if (target === undefined) continue
      target.referrers.delete(`${key}${SEP}${ref.field}`)
      if (target.referrers.size === 0) this.reverse.delete(tk)
      if (!this.isReferenced({ collection: ref.collection, slug: ref.slug, locale: id.locale })) {
        this.deleted.delete(entryKey({ collection: ref.collection, slug: ref.slug, locale: id.locale }))
      }
    }
  }

  /** Delete rule 3: `id` no longer counts as referenced (its referrers' data still names it). */
  removeReferenced (id: EntryId): void {
    if (this.isReferenced(id)) this.deleted.add(entryKey(id))
  }

  /** An entry was created: references to its slug that were kept from before hold again. */
  restore (id: EntryId): void {
    this.deleted.delete(entryKey(id))
  }

  /** Delete rule 3: removed both as a referrer and as a referenced entry. */
  remove (id: EntryId): void {
    this.removeReferrer(id)
    this.removeReferenced(id)
  }

  private isReferenced (id: EntryId): boolean {
    const target = this.reverse.get(targetKey(id.collection, id.slug))
    if (target === undefined) return false
    for (const r of target.referrers.values()) if (r.locale === id.locale) return true
    return false
  }

  /** Drops every record held by `collection` (a collection whose schema went away). */
  removeCollection (collection: string): void {
    for (const record of [...this.forward.values()]) {
      if (record.id.collection === collection) this.removeReferrer(record.id)
    }
  }

  /** The entries that reference (collection, slug), in every locale where it exists, sorted. */
  referrers (collection: string, slug: string): Referrer[] {
    const target = this.reverse.get(targetKey(collection, slug))
    if (target === undefined) return []
    const out: Referrer[] = []
    for (const r of target.referrers.values()) {
      if (this.deleted.size > 0 && this.deleted.has(entryKey({ collection, slug, locale: r.locale }))) continue
      out.push({ ...r })
    }
    return out.sort(compareReferrers)
  }

  /** Every referrer with what it references. */
  * records (): Iterable<{ id: EntryId, refs: readonly OutgoingReference[] }> {
    for (const record of this.forward.values()) yield { id: { ...record.id }, refs: record.refs.map(r => ({ ...r })) }
  }

  /** Every (collection, slug, locale) some entry references, deleted or not. */
  * targets (): Iterable<EntryId> {
    for (const target of this.reverse.values()) {
      const locales = new Set<string | null>()
      for (const r of target.referrers.values()) locales.add(r.locale)
      for (const locale of locales) yield { collection: target.collection, slug: target.slug, locale }
    }
  }

  /** What `id` references, as recorded. */
  referencesOf (id: EntryId): OutgoingReference[] {
    return (this.forward.get(entryKey(id))?.refs ?? []).map(r => ({ ...r }))
  }

  toJSON (): SavedIndex {
    const rows: SavedRow[] = []
    for (const { id, refs } of this.forward.values()) {
      rows.push([id.collection, id.slug, id.locale, refs.map(r => [r.field, r.collection, r.slug])])
    }
    const deleted: SavedId[] = []
    for (const key of this.deleted) {
      const [collection, slug, locale] = key.split(SEP) as [string, string, string]
      deleted.push([collection, slug, locale === '' ? null : locale])
    }
    return { format: 'lectern-references', version: 1, referrers: rows, deleted }
  }

  /** A deep comparison of what two indexes record (tests, and rebuild checks). */
  equals (other: ReverseIndex): boolean {
    const canonical = (index: ReverseIndex): string => {
      const saved = index.toJSON()
      const rows = saved.referrers.map(([c, s, l, refs]) => JSON.stringify([c, s, l, refs.map(r => JSON.stringify(r)).sort()])).sort()
      return JSON.stringify([rows, saved.deleted.map(d => JSON.stringify(d)).sort()])
    }
    return canonical(this) === canonical(other)
  }

  /** An index from its saved form; throws on anything malformed (the caller rebuilds). */
  static fromJSON (saved: unknown): ReverseIndex {
    if (typeof saved !== 'object' || saved === null) throw new Error('not an object')
    const s = saved as Partial<SavedIndex>
    if (s.format !== 'lectern-references' || s.version !== 1 || !Array.isArray(s.referrers) || !Array.isArray(s.deleted)) {
      throw new Error('unknown format')
    }
    const index = new ReverseIndex()
    const isName = (v: unknown): v is string => typeof v === 'string' && v !== '' && !v.includes(SEP)
    const isLocale = (v: unknown): v is string | null => v === null || isName(v)
    for (const row of s.referrers as unknown[]) {
      if (!Array.isArray(row) || row.length !== 4) throw new Error('malformed row')
      const [collection, slug, locale, refs] = row as unknown[]
      if (!isName(collection) || !isName(slug) || !isLocale(locale) || !Array.isArray(refs)) throw new Error('malformed row')
      const out: OutgoingReference[] = []
      for (const ref of refs as unknown[]) {
        if (!Array.isArray(ref) || ref.length !== 3 || !ref.every(isName)) throw new Error('malformed reference')
        const [field, target, targetSlug] = ref as [string, string, string]
        out.push({ field, collection: target, slug: targetSlug })
      }
      index.set({ collection, slug, locale }, out)
    }
    for (const id of s.deleted as unknown[]) {
      if (!Array.isArray(id) || id.length !== 3 || !isName(id[0]) || !isName(id[1]) || !isLocale(id[2])) throw new Error('malformed id')
      index.removeReferenced({ collection: id[0], slug: id[1], locale: id[2] })
    }
    return index
  }
}
