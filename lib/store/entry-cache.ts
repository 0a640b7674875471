// Parsed entries by key (environment, collection, locale, slug): least recently used first out,
// bounded in entries and in the bytes they are counted for. Entries are found by bucket, then
// slug: a batch read (getMany, a sync answer's hundred entries) builds one bucket text, not a key
// text per slug, which costs more than the lookup itself (a new string is flattened and hashed).
import { LRUCache } from 'lru-cache'
import type { StoredEntry } from '../../types/store.js'

/** The text of a bucket (environment, collection, locale column: '' when locales are off). */
export function bucketText (environment: string, collection: string, locale: string): string {
  return `${environment}\u0000${collection}\u0000${locale}`
}

export class EntryCache {
  /** Entries by `<bucket>\0<slug>`: the order of use and the bounds. */
  private readonly lru: LRUCache<string, StoredEntry>
  /** Each held entry's key, by bucket and slug. */
  private readonly keys = new Map<string, Map<string, string>>()

  constructor (max: number, maxBytes: number) {
    this.lru = new LRUCache<string, StoredEntry>({
      max,
      maxSize: maxBytes,
      // Evicted or deleted (not replaced by a set of the same key): no longer found by slug.
      dispose: (_entry, key, reason) => { if (reason !== 'set') this.unindex(key) }
    })
  }

  get size (): number {
    return this.lru.size
  }

  /** The bytes the held entries are counted for. */
  get bytes (): number {
    return this.lru.calculatedSize
  }

  get (bucket: string, slug: string): StoredEntry | undefined {
    const key = this.keys.get(bucket)?.get(slug)
    return key === undefined ? undefined : this.lru.get(key)
  }

  /** Holds `entry`, counted for `bytes` (not held when that alone exceeds the bound). */
  set (bucket: string, slug: string, entry: StoredEntry, bytes: number): void {
    const key = `${bucket}\u0000${slug}`
    this.lru.set(key, entry, { size: bytes })
    if (!this.lru.has(key)) return
    let slugs = this.keys.get(bucket)
    if (slugs === undefined) {
      slugs = new Map()
      this.keys.set(bucket, slugs)
    }
    slugs.set(slug, key)
  }

  delete (bucket: string, slug: string): void {
    const key = this.keys.get(bucket)?.get(slug)
    if (key !== undefined) this.lru.delete(key)
  }

  clear (): void {
    this.lru.clear()
    this.keys.clear()
  }

  private unindex (key: string): void {
    const cut = key.lastIndexOf('\u0000')
    const bucket = key.slice(0, cut)
    const slugs = this.keys.get(bucket)
    if (slugs === undefined) return
    slugs.delete(key.slice(cut + 1))
    if (slugs.size === 0) this.keys.delete(bucket)
  }
}
