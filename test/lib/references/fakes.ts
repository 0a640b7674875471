// Small stand-ins for the references tests: entries kept per (environment, locale, collection),
// frozen like the real stores', with every batched read recorded.
import type { Scope } from '../../../types/scope.js'
import type { EntryStatus, StoredEntry, StoredLocation } from '../../../types/store.js'

export function deepFreeze<T> (value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v)
    Object.freeze(value)
  }
  return value
}

export const SCOPE: Scope = { environment: 'default', locale: null }

export function entry (slug: string, data: Record<string, unknown>, status: EntryStatus = 'published'): StoredEntry {
  return deepFreeze({ slug, status, data, createdAt: '2024-01-01T00:00:00.000Z', updatedAt: '2024-01-02T00:00:00.000Z' })
}

export class Entries {
  /** Every getMany: `<collection>:<slugs sorted>`. */
  readonly reads: string[] = []
  private readonly buckets = new Map<string, Map<string, StoredEntry>>()
  /** ContentStore.revision: per bucket, bumped by every put and remove. */
  private readonly revisions = new Map<string, number>()
  private lastRevision = 0

  private key (scope: Scope, collection: string): string {
    return `${scope.environment}\u0000${scope.locale ?? ''}\u0000${collection}`
  }

  put (collection: string, e: StoredEntry, scope: Scope = SCOPE): this {
    const k = this.key(scope, collection)
    let bucket = this.buckets.get(k)
    if (bucket === undefined) { bucket = new Map(); this.buckets.set(k, bucket) }
    bucket.set(e.slug, e)
    this.revisions.set(k, ++this.lastRevision)
    return this
  }

  remove (collection: string, slug: string, scope: Scope = SCOPE): void {
    this.buckets.get(this.key(scope, collection))?.delete(slug)
    this.revisions.set(this.key(scope, collection), ++this.lastRevision)
  }

  revision = (scope: Scope, collection: string): number => this.revisions.get(this.key(scope, collection)) ?? 0

  getMany = async (scope: Scope, collection: string, slugs: readonly string[]): Promise<Map<string, StoredEntry>> => {
    this.reads.push(`${collection}:${[...slugs].sort().join(',')}`)
    const out = new Map<string, StoredEntry>()
    const bucket = this.buckets.get(this.key(scope, collection))
    for (const slug of slugs) {
      const e = bucket?.get(slug)
      if (e !== undefined) out.set(slug, e)
    }
    return out
  }

  async * entries (): AsyncIterable<StoredLocation> {
    for (const [k, bucket] of this.buckets) {
      const [environment = '', locale = '', collection = ''] = k.split('\u0000')
      for (const e of bucket.values()) yield { scope: { environment, locale: locale === '' ? null : locale }, collection, entry: e }
    }
  }
}
