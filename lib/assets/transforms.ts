// Image transforms (contract §7) with sharp, each variant computed once and cached on disk.
//
// A variant is keyed by the asset (environment + path), the normalized parameters and the
// source's modification time and size. The cache lives under `<data>/cache/transforms`:
//
//   <environment>/<sha256(path)[:32]>/<mtime µs>-<size>/w400-h0-cover-qd.webp
//
// so one asset's variants are one directory (dropped on delete or invalidation), and replacing
// the source changes the signature directory: the old variants are never served again and are
// pruned when the first new one is written. Variants are written to a temp file, fsync'd and
// renamed into place. Concurrent requests for one missing variant share one computation (an
// in-flight promise per cache file), and at most `concurrency` sharp pipelines run at once.
import { hash, randomUUID } from 'node:crypto'
import type { ReadStream } from 'node:fs'
import { mkdir, open, readdir, rename, rm } from 'node:fs/promises'
import path from 'node:path'
import { LRUCache } from 'lru-cache'
import { loadSharp } from './sharp.js'
import { badRequest, CmsError, notFound, unsupportedMediaType } from '../errors.js'
import { Limiter } from './concurrency.js'
import { fsyncDir, fsyncFile } from '../durable.js'
import { DECODABLE_IMAGES } from './inspect.js'
import type { AssetLibrary, LocatedAsset } from './library.js'
import { isInside, isMissing, parseAssetRecordPath } from './paths.js'
import type { AssetLogger } from './types.js'

export const FITS = ['cover', 'contain', 'fill', 'inside', 'outside'] as const
export type Fit = (typeof FITS)[number]
export const OUTPUT_FORMATS = ['webp', 'avif', 'jpeg', 'png'] as const
export type OutputFormat = (typeof OUTPUT_FORMATS)[number]
export const MAX_DIMENSION = 4000

/** Decompression-bomb guard: sources above this many pixels are refused (415) before decoding. */
export const DEFAULT_PIXEL_LIMIT = 80_000_000
/** Variants waiting for a free sharp slot beyond this answer 503 rather than queue without end. */
export const DEFAULT_MAX_QUEUE = 64

/** `Cache-Control` of a variant: its URL changes whenever its bytes could (the ETag covers the source). */
export const VARIANT_CACHE_CONTROL = 'public, max-age=31536000, immutable'

const MIME: Record<OutputFormat, string> = { webp: 'image/webp', avif: 'image/avif', jpeg: 'image/jpeg', png: 'image/png' }
const EXTENSION: Record<OutputFormat, string> = { webp: 'webp', avif: 'avif', jpeg: 'jpg', png: 'png' }

export interface TransformRequest {
  w?: number
  h?: number
  fit?: Fit
  format?: OutputFormat | 'auto'
  q?: number
}

/** The parameters with every default made explicit: equal variants get equal keys. */
export interface NormalizedTransform {
  w: number | null
  h: number | null
  fit: Fit
  format: OutputFormat
  q: number | null
}

function dimension (value: unknown, name: string): number | null {
  if (value === undefined) return null
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_DIMENSION) {
    throw badRequest(`${name} must be a whole number from 1 to ${MAX_DIMENSION}.`)
  }
  return value
}

/**
 * Checks the bounds (the route schema does too; this is the authority) and makes the defaults
 * explicit: `fit` matters only with both sides, `q` not for PNG, `auto` picks from `Accept`.
 */
export function normalizeTransform (request: TransformRequest, sourceMime: string, accept: string | undefined): NormalizedTransform {
  const w = dimension(request.w, 'w')
  const h = dimension(request.h, 'h')
  if (request.fit !== undefined && !(FITS as readonly string[]).includes(request.fit)) {
    throw badRequest(`fit must be one of ${FITS.join(', ')}.`)
  }
  const requested = request.format
  if (requested !== undefined && requested !== 'auto' && !(OUTPUT_FORMATS as readonly string[]).includes(requested)) {
    throw badRequest(`format must be one of ${OUTPUT_FORMATS.join(', ')} or auto.`)
  }
  if (request.q !== undefined && (!Number.isInteger(request.q) || request.q < 1 || request.q > 100)) {
    throw badRequest('q must be a whole number from 1 to 100.')
  }
  const format = requested === undefined
    ? formatOfSource(sourceMime)
    : requested === 'auto' ? (negotiateFormat(accept) ?? formatOfSource(sourceMime)) : requested
  return {
    w,
    h,
    fit: w !== null && h !== null ? (request.fit ?? 'cover') : 'cover',
    format,
    q: format === 'png' ? null : (request.q ?? null)
  }
}

/** The output format for "the source's format": itself when sharp writes it here, else PNG. */
export function formatOfSource (mime: string): OutputFormat {
  switch (mime) {
    case 'image/jpeg': return 'jpeg'
    case 'image/webp': return 'webp'
    case 'image/avif': return 'avif'
    default: return 'png'
  }
}

/** AVIF when `Accept` names it (q > 0), else WebP when it names that, else null. Wildcards do not count. */
export function negotiateFormat (accept: string | undefined): 'avif' | 'webp' | null {
  if (accept === undefined) return null
  const accepted = new Set<string>()
  for (const part of accept.split(',')) {
    const [type, ...params] = part.trim().toLowerCase().split(';')
    const q = params.map(p => p.trim()).find(p => p.startsWith('q='))
    if (q !== undefined && !(Number(q.slice(2)) > 0)) continue
    if (type !== undefined) accepted.add(type.trim())
  }
  if (accepted.has('image/avif')) return 'avif'
  if (accepted.has('image/webp')) return 'webp'
  return null
}

/** A variant resolved to its cache file and headers, before anything is computed. */
export interface Variant {
  environment: string
  source: LocatedAsset
  params: NormalizedTransform
  /** The cache file (absolute). */
  file: string
  etag: string
  mime: string
  /** The answer depends on `Accept` (format=auto). */
  varyAccept: boolean
}

/** Bytes of small variants kept in memory (0 turns it off). */
export const DEFAULT_MEMORY_BYTES = 32 * 1024 * 1024
/** Variants larger than this are always streamed from disk. */
const MEMORY_ENTRY_MAX = 512 * 1024

export interface TransformServiceOptions {
  library: AssetLibrary
  /** `<data>/cache/transforms` */
  cacheDir: string
  /** Simultaneous sharp pipelines. */
  concurrency: number
  pixelLimit?: number
  maxQueue?: number
  /** Bytes of the in-memory LRU of small variants; default DEFAULT_MEMORY_BYTES. */
  memoryBytes?: number
  log: AssetLogger
}

export interface TransformStats {
  /** Variants encoded by sharp. */
  computed: number
  /** Variants served from the cache (memory or disk) without computing them. */
  hits: number
  /** Requests that waited for a computation another request had started. */
  shared: number
}

// One-shot hashing runs in native code without a Hash object per call (this is on the hot path).
const sha = (value: string): string => hash('sha256', value, 'hex')

export class TransformService {
  readonly stats: TransformStats = { computed: 0, hits: 0, shared: 0 }
  readonly cacheDir: string
  private readonly tempDir: string
  private readonly library: AssetLibrary
  private readonly limiter: Limiter
  private readonly pixelLimit: number
  private readonly maxQueue: number
  private readonly log: AssetLogger
  private readonly inflight = new Map<string, Promise<void>>()
  /** Recently served small variants by cache file; the file stays the source of truth. */
  private readonly memory: LRUCache<string, Buffer>
  private readonly memoryEntryMax: number

  constructor (options: TransformServiceOptions) {
    this.library = options.library
    this.cacheDir = options.cacheDir
    // Beside the cache, not in it: a flush renames the cache away without touching work in progress.
    this.tempDir = path.join(path.dirname(options.cacheDir), '.transforms-tmp')
    this.limiter = new Limiter(options.concurrency)
    this.pixelLimit = options.pixelLimit ?? DEFAULT_PIXEL_LIMIT
    this.maxQueue = options.maxQueue ?? DEFAULT_MAX_QUEUE
    this.log = options.log
    this.memoryEntryMax = MEMORY_ENTRY_MAX
    const maxSize = Math.max(1, options.memoryBytes ?? DEFAULT_MEMORY_BYTES)
    this.memory = new LRUCache<string, Buffer>({
      maxSize,
      maxEntrySize: Math.min(MEMORY_ENTRY_MAX, maxSize),
      sizeCalculation: body => Math.max(1, body.length)
    })
  }

  /** Prepares the directories; temp files a crash left behind are removed. */
  async open (): Promise<void> {
    await rm(this.tempDir, { recursive: true, force: true })
    await mkdir(this.tempDir, { recursive: true })
    await mkdir(this.cacheDir, { recursive: true })
  }

  /** Waits for the computations in progress. */
  async close (): Promise<void> {
    await Promise.allSettled([...this.inflight.values()])
  }

  /**
   * Resolves a request to its variant (404 for a missing asset, 415 for one that is not an image
   * sharp can decode or is too large, 400 for bad parameters) without computing it, so a
   * matching `If-None-Match` can be answered at once.
   */
  async prepare (environment: string, rawPath: string, request: TransformRequest, accept: string | undefined): Promise<Variant> {
    const source = await this.library.locate(environment, rawPath)
    const { meta } = source
    if (!DECODABLE_IMAGES.has(meta.mime)) throw unsupportedMediaType(`The asset is not an image that can be transformed (${meta.mime}).`)
    if (meta.width !== null && meta.height !== null && meta.width * meta.height > this.pixelLimit) {
      throw unsupportedMediaType(`The image has more than ${this.pixelLimit} pixels and cannot be transformed.`)
    }
    const params = normalizeTransform(request, meta.mime, accept)
    const signature = `${Math.round(source.stat.mtimeMs * 1000)}-${source.stat.size}`
    const name = `w${params.w ?? 0}-h${params.h ?? 0}-${params.fit}-q${params.q ?? 'd'}.${EXTENSION[params.format]}`
    const file = path.join(this.assetDir(environment, meta.path), signature, name)
    return {
      environment,
      source,
      params,
      file,
      etag: `"${sha(`${environment}\0${meta.path}\0${signature}\0${name}`).slice(0, 32)}"`,
      mime: MIME[params.format],
      varyAccept: request.format === 'auto'
    }
  }

  /**
   * The variant's bytes, computed first when missing. Small variants (the common thumbnails) are
   * kept in a bounded in-memory LRU in front of the disk cache, so a hot variant costs no file
   * I/O; larger ones are streamed from their cache file.
   */
  async read (variant: Variant): Promise<{ body: Buffer | ReadStream, size: number }> {
    const remembered = this.memory.get(variant.file)
    if (remembered !== undefined) {
      this.stats.hits++
      return { body: remembered, size: remembered.length }
    }
    for (let attempt = 0; ; attempt++) {
      try {
        const handle = await open(variant.file, 'r')
        let streaming = false
        try {
          const { size } = await handle.stat()
          if (attempt === 0) this.stats.hits++
          if (size > this.memoryEntryMax) {
            streaming = true
            // The stream closes the handle when it ends or is destroyed.
            return { body: handle.createReadStream(), size }
          }
          const body = await handle.readFile()
          this.memory.set(variant.file, body)
          return { body, size: body.length }
        } finally {
          if (!streaming) await handle.close()
        }
      } catch (err) {
        // A flush can remove the file between its computation and this open: compute it again.
        if (!isMissing(err) || attempt >= 2) throw err
      }
      await this.ensure(variant)
    }
  }

  /** Computes the variant unless it exists; one computation per cache file at a time. */
  private async ensure (variant: Variant): Promise<void> {
    const pending = this.inflight.get(variant.file)
    if (pending !== undefined) {
      this.stats.shared++
      return await pending
    }
    const computation = this.compute(variant).finally(() => { this.inflight.delete(variant.file) })
    this.inflight.set(variant.file, computation)
    await computation
  }

  private async compute (variant: Variant): Promise<void> {
    if (this.limiter.full && this.limiter.pending >= this.maxQueue) {
      throw new CmsError('UNAVAILABLE', 'Too many image transforms are waiting; try again shortly.')
    }
    await this.limiter.run(async () => {
      // Another request may have written it between this one's miss and now.
      if (await present(variant.file)) return
      const temp = path.join(this.tempDir, `${randomUUID()}.${EXTENSION[variant.params.format]}`)
      try {
        await this.encode(variant, temp)
        await fsyncFile(temp)
        await this.place(temp, variant.file)
      } finally {
        await rm(temp, { force: true })
      }
    })
    await this.prune(variant.file)
  }

  private async encode (variant: Variant, temp: string): Promise<void> {
    const { params, source } = variant
    this.stats.computed++
    const sharp = await loadSharp()
    let image = sharp(source.file, { limitInputPixels: this.pixelLimit, failOn: 'error' })
      .autoOrient()
      .resize({
        width: params.w ?? undefined,
        height: params.h ?? undefined,
        fit: params.fit,
        // A variant is never larger than its source: asking for more gives the source size.
        withoutEnlargement: true
      })
    const quality = params.q ?? undefined
    switch (params.format) {
      case 'webp': image = image.webp({ quality }); break
      case 'avif': image = image.avif({ quality }); break
      // JPEG has no alpha: transparent areas become white, not black.
      case 'jpeg': image = image.flatten({ background: '#ffffff' }).jpeg({ quality }); break
      case 'png': image = image.png(); break
    }
    try {
      await image.toFile(temp)
    } catch (err) {
      // The source went away (a delete racing this request).
      if (err instanceof Error && /input file is missing/i.test(err.message)) throw notFound('Asset not found.')
      if (isDecodeError(err)) throw unsupportedMediaType('The image cannot be decoded.')
      throw err
    }
  }

  /** Renames into place, creating the directories; retried when a flush removes them meanwhile. */
  private async place (temp: string, file: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await mkdir(path.dirname(file), { recursive: true })
        await rename(temp, file)
        await fsyncDir(path.dirname(file))
        return
      } catch (err) {
        if (!isMissing(err) || attempt >= 2) throw err
      }
    }
  }

  /** Drops the variants of earlier versions of the source (other signature directories). */
  private async prune (file: string): Promise<void> {
    const signatureDir = path.dirname(file)
    const assetDir = path.dirname(signatureDir)
    let names: string[]
    try {
      names = await readdir(assetDir)
    } catch (err) {
      if (isMissing(err)) return
      throw err
    }
    for (const name of names) {
      if (name !== path.basename(signatureDir)) await rm(path.join(assetDir, name), { recursive: true, force: true })
    }
  }

  private assetDir (environment: string, relative: string): string {
    return path.join(this.cacheDir, environment, sha(relative).slice(0, 32))
  }

  /** Drops every variant of one asset; returns how many files were removed. */
  async invalidateAsset (environment: string, relative: string): Promise<number> {
    const dir = this.assetDir(environment, relative)
    for (const key of [...this.memory.keys()]) if (isInside(dir, key)) this.memory.delete(key)
    return await this.drop(dir)
  }

  /** Drops the variants of the asset at a record path (`/api/assets/...`); BAD_REQUEST for an unsafe path. */
  async invalidatePath (environment: string, recordPath: string): Promise<number> {
    return await this.invalidateAsset(environment, parseAssetRecordPath(recordPath))
  }

  /** Drops every variant of every asset in every environment. */
  async invalidateAll (): Promise<number> {
    this.memory.clear()
    return await this.drop(this.cacheDir)
  }

  /** Moves `dir` aside first (so new variants never mix with the doomed ones), then counts and removes it. */
  private async drop (dir: string): Promise<number> {
    const trash = path.join(this.tempDir, `flush-${randomUUID()}`)
    try {
      await rename(dir, trash)
    } catch (err) {
      if (isMissing(err)) return 0
      throw err
    }
    if (dir === this.cacheDir) await mkdir(this.cacheDir, { recursive: true })
    let removed = 0
    try {
      const entries = await readdir(trash, { recursive: true, withFileTypes: true })
      removed = entries.filter(e => e.isFile()).length
    } finally {
      await rm(trash, { recursive: true, force: true }).catch((err: unknown) => {
        this.log.warn({ err }, 'could not remove flushed transform variants')
      })
    }
    return removed
  }
}

async function present (file: string): Promise<boolean> {
  try {
    const handle = await open(file, 'r')
    await handle.close()
    return true
  } catch (err) {
    if (isMissing(err)) return false
    throw err
  }
}

/** sharp's errors for input it cannot (or will not) decode, as opposed to I/O failures. */
function isDecodeError (err: unknown): boolean {
  const message = err instanceof Error ? err.message : ''
  return /pixel limit|unsupported image format|corrupt|premature end|bad seek|not a known file format|load_buffer|load: |Input file|VipsForeignLoad|read error|invalid/i.test(message)
}
