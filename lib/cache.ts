// The response cache (interface.md list rule 3, single-entry rule 4, visibility rule 4;
// CMS_CACHE_MAX): rendered responses, kept as their bytes and their ETag, so a hit costs a map
// lookup and no serialization or hashing.
//
// Keys:
//   lists    (environment, collection, raw query string, locale, visibility)
//   entries  (environment, collection, slug, `_resolve`, locale [, visibility with `_resolve`])
// Visibility is whether the caller sees drafts. A list for a caller who sees drafts may hold
// drafts, so it is never served to one who does not. Only published entries are stored; a
// published entry reads the same for everyone, except with `_resolve`, whose embedded entries
// depend on what the caller may see: there the visibility is part of the key too.
//
// Invalidation: every cached response depends on (environment, collection) tags: its own
// collection, and with `_resolve` every collection the resolution looked entries up in. A
// write to a collection discards every response tagged with it, at once (tags map to keys),
// so memory is freed and no stale answer can come back. Store reads are asynchronous, so a
// response may be rendered from reads made before a write that was discarded while they ran:
// `mark` before reading and `set(..., since)` after rendering keep such a response out.
import { LRUCache } from 'lru-cache'
import type { Scope } from '../types/scope.js'

/** A rendered response: the exact body and its ETag. */
export interface CachedBody {
  body: Buffer
  etag: string
}

interface Stored extends CachedBody {
  tags: readonly string[]
}

export interface ResponseCacheOptions {
  /** Most responses kept (CMS_CACHE_MAX); 0 turns the cache off. */
  max: number
  /** Most bytes of bodies kept, whatever `max` says (a page of 1000 entries is large). */
  maxBytes?: number
}

export interface CacheStats {
  hits: number
  misses: number
  stores: number
  discarded: number
}

const SEP = '\u0000'
export const DEFAULT_MAX_BYTES = 128 * 1024 * 1024
/** Per-entry overhead counted besides the body: the key, the tag sets, the record. */
const OVERHEAD = 256

/** The tag of a collection in an environment: what a write discards. */
export function collectionTag (environment: string, collection: string): string {
  return `${environment}${SEP}${collection}`
}

/**
 * A list's key. The query is keyed as the raw query string the client sent: the same string
 * always parses to the same query, so it names the answer as well as any canonical form would,
 * and a hit costs no parsing or sorting. Like an HTTP cache keyed on the URL, the same
 * parameters in another order or encoding are kept apart.
 */
export function listKey (scope: Scope, collection: string, queryString: string, seesDrafts: boolean): string {
  return `L${SEP}${scope.environment}${SEP}${scope.locale ?? ''}${SEP}${collection}${SEP}${seesDrafts ? 'd' : 'p'}${SEP}${queryString}`
}

/** `resolve` is the canonical `_resolve` value or null; with one, visibility is keyed too. */
export function entryKey (scope: Scope, collection: string, slug: string, resolve: string | null, seesDrafts: boolean): string {
  const r = resolve === null ? '' : `${resolve}${SEP}${seesDrafts ? 'd' : 'p'}`
  return `E${SEP}${scope.environment}${SEP}${scope.locale ?? ''}${SEP}${collection}${SEP}${slug}${SEP}${r}`
}

export class ResponseCache {
  readonly enabled: boolean
  readonly stats: CacheStats = { hits: 0, misses: 0, stores: 0, discarded: 0 }
  private readonly lru: LRUCache<string, Stored> | null
  /** tag → keys of the responses that depend on it. */
  private readonly byTag = new Map<string, Set<string>>()
  /** Counts discards: `mark` hands out its value, and each tag (and clear) remembers its last one. */
  private clock = 0
  /** tag → the clock of its last discard: one number per (environment, collection) written. */
  private readonly discardedAt = new Map<string, number>()
  private clearedAt = 0

  constructor (options: ResponseCacheOptions) {
    this.enabled = options.max > 0
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES
    this.lru = this.enabled
      ? new LRUCache<string, Stored>({
        max: options.max,
        maxSize: maxBytes,
        // One response may take at most an eighth of the budget: no single page evicts all.
        maxEntrySize: Math.max(OVERHEAD + 1, Math.floor(maxBytes / 8)),
        sizeCalculation: (value, key) => value.body.length + key.length + OVERHEAD,
        dispose: (value, key) => { this.untag(key, value.tags) }
      })
      : null
  }

  get size (): number {
    return this.lru?.size ?? 0
  }

  /** Like get, but only a hit is counted: a miss is counted by the get that follows it (ContentService.cached*). */
  lookup (key: string): CachedBody | undefined {
    const hit = this.lru?.get(key)
    if (hit !== undefined) this.stats.hits++
    return hit
  }

  get (key: string): CachedBody | undefined {
    if (this.lru === null) return undefined
    const hit = this.lru.get(key)
    if (hit === undefined) this.stats.misses++
    else this.stats.hits++
    return hit
  }

  /** Now, for `set`: take it before the store reads a response is rendered from. */
  mark (): number {
    return this.clock
  }

  /**
   * Keeps a rendered response that depends on `tags`, unless one of them was discarded (or the
   * cache cleared) after `since`, the mark taken before its reads: those may predate the write
   * that discarded it. A write made durable before the mark is in the reads; one made durable
   * after the response is kept discards it.
   */
  set (key: string, body: CachedBody, tags: readonly string[], since = this.clock): void {
    if (this.lru === null || this.discardedSince(tags, since)) return
    const stored: Stored = { body: body.body, etag: body.etag, tags: [...new Set(tags)] }
    this.lru.set(key, stored)
    // A body over the per-entry limit is not kept.
    if (this.lru.peek(key) !== stored) return
    this.stats.stores++
    for (const tag of stored.tags) {
      let keys = this.byTag.get(tag)
      if (keys === undefined) { keys = new Set(); this.byTag.set(tag, keys) }
      keys.add(key)
    }
  }

  /** Discards every response that depends on `tag` (a write to that collection). */
  invalidate (tag: string): number {
    if (this.lru !== null) this.discardedAt.set(tag, ++this.clock)
    const keys = this.byTag.get(tag)
    if (keys === undefined || this.lru === null) return 0
    this.byTag.delete(tag)
    let n = 0
    for (const key of keys) if (this.lru.delete(key)) n++
    this.stats.discarded += n
    return n
  }

  /** Discards everything (a schema changed: models, and so bodies, may differ). */
  clear (): void {
    if (this.lru === null) return
    this.clearedAt = ++this.clock
    this.discardedAt.clear()
    this.stats.discarded += this.lru.size
    this.lru.clear()
    this.byTag.clear()
  }

  private discardedSince (tags: readonly string[], since: number): boolean {
    if (this.clearedAt > since) return true
    for (const tag of tags) if ((this.discardedAt.get(tag) ?? 0) > since) return true
    return false
  }

  private untag (key: string, tags: readonly string[]): void {
    for (const tag of tags) {
      const keys = this.byTag.get(tag)
      if (keys === undefined) continue
      keys.delete(key)
      if (keys.size === 0) this.byTag.delete(tag)
    }
  }
}
