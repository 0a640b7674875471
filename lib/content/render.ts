// Rendering content reads: an entry's view and its JSON text (kept per stored entry), a response
// body serialized once as the UTF-8 bytes that are sent, its ETag, pooled memory for large bodies
// that are not kept, and keeping a body in the response cache. The read paths of
// lib/content/service.ts read the store and hand what they read here.
import { type ResponseCache } from '../cache.js'
import { etagOf } from '../etag.js'
import type { ReferenceService } from '../references/service.js'
import type { CollectionModel } from '../../types/schema.js'
import type { StoredEntry } from '../../types/store.js'
import type { BodyPool } from './body-pool.js'
import { entryView, type EntryView } from './entry.js'
import { JsonMemo, writeJsonText, type JsonText, type TextBudget } from './json-memo.js'

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

/** The numbers of a list answer (contract §4), which follow its `items`. */
export interface PageNumbers {
  total: number
  /** null for a keyset page (`_after`, contract §10). */
  page: number | null
  per_page: number
  pages: number
  /** The keyset cursor of the page after this one, or null on the last page (contract §10): base64url text. */
  next: string | null
}

/**
 * Where a rendered read is kept: its cache key, the collections it depends on (cache tags), and
 * the cache's mark taken before the store reads it was rendered from (ResponseCache.set).
 */
export interface KeepAs {
  key: string
  tags: readonly string[]
  since: number
}

export interface RendererOptions {
  cache: ResponseCache
  /** Reference formatting of views (plugins/references.ts). */
  references: Pick<ReferenceService, 'format'>
  /** Bounds the views' texts kept per stored entry (CMS_TEXT_CACHE_BYTES), shared with `_resolve`'s. */
  texts: TextBudget
  /** Memory for large bodies that are sent and not kept (CMS_BODY_POOL_BYTES). */
  bodies: BodyPool
}

const COMMA = 0x2c

export class Renderer {
  private readonly cache: ResponseCache
  private readonly references: RendererOptions['references']
  /** The JSON text of each stored entry's view, kept once made twice (json-memo.ts). */
  private readonly viewTexts: JsonMemo<StoredEntry>
  /** Memory for large bodies that are sent and not kept. */
  private readonly bodies: BodyPool

  constructor (options: RendererOptions) {
    this.cache = options.cache
    this.references = options.references
    this.viewTexts = new JsonMemo(options.texts)
    this.bodies = options.bodies
  }

  /** The response view of a stored entry, references formatted per schema. */
  view (model: CollectionModel, entry: StoredEntry): EntryView {
    return this.references.format(model, entryView(entry))
  }

  /** JSON.stringify(this.view(model, entry)), kept per stored entry and model (within the text budget). */
  viewJson (model: CollectionModel, entry: StoredEntry): string {
    return this.viewText(model, entry).json
  }

  /** viewJson with its UTF-8 length. */
  viewText (model: CollectionModel, entry: StoredEntry): JsonText {
    return this.viewTexts.text(entry, model, '', () => this.view(model, entry))
  }

  /**
   * Encodes a read's JSON once and hashes those bytes, which are also the ones sent (and kept,
   * as `keep` says, unless a write to what it depends on was discarded since `keep.since`).
   */
  render (json: string, keep: KeepAs | null): Rendered {
    if (!this.keeps(keep)) {
      // Sent once and never kept: a large body goes into reused memory (lib/content/body-pool.ts).
      const pooled = this.bodies.encode(json)
      if (pooled !== null) return { body: pooled.bytes, etag: etagOf(pooled.bytes), release: pooled.release }
    }
    return this.rendered(Buffer.from(json), keep)
  }

  /**
   * render() for a list answer, `{ items, total, page, per_page, pages }`, with the items given
   * as their JSON texts: the bytes JSON.stringify would give, written straight into the body's
   * memory (sized exactly) without serializing the items again or joining them first.
   */
  renderList (items: readonly JsonText[], page: PageNumbers, keep: KeepAs | null): Rendered {
    const head = '{"items":['
    const tail = `],"total":${page.total},"page":${String(page.page)},"per_page":${page.per_page},"pages":${page.pages},"next":${JSON.stringify(page.next)}}`
    let size = head.length + tail.length + Math.max(0, items.length - 1)
    for (const item of items) size += item.bytes
    const pooled = this.keeps(keep) ? null : this.bodies.alloc(size)
    const body = pooled?.bytes ?? Buffer.allocUnsafe(size)
    // The envelope is ASCII: the numbers are integers, the cursor base64url.
    let at = body.write(head, 0, 'latin1')
    for (let i = 0; i < items.length; i++) {
      if (i > 0) body[at++] = COMMA
      at = writeJsonText(body, at, items[i] as JsonText)
    }
    // Every byte is written (allocUnsafe memory may hold old data): a length that does not add up is a bug, never sent.
    if (at + body.write(tail, at, 'latin1') !== size) throw new Error(`list body: ${size} bytes computed, ${at + tail.length} written`)
    if (pooled !== null) return { body, etag: etagOf(body), release: pooled.release }
    return this.rendered(body, keep)
  }

  /** Whether a read is kept (the cache is on and the read is cacheable). */
  private keeps (keep: KeepAs | null): keep is KeepAs {
    return keep !== null && this.cache.enabled
  }

  /** The rendered body with its ETag, kept when the cache keeps it. */
  private rendered (body: Buffer, keep: KeepAs | null): Rendered {
    const rendered = { body, etag: etagOf(body) }
    if (this.keeps(keep)) this.cache.set(keep.key, rendered, keep.tags, keep.since)
    return rendered
  }
}
