// The asset library (contract §7): uploads streamed to disk, the metadata repository, lookups
// for serving and transforming, deletes, and the asset events. Framework-free: the assets plugin
// builds one and routes call it.
import { createWriteStream, type Stats } from 'node:fs'
import { lstat, mkdir, realpath, rename, rm, stat, unlink } from 'node:fs/promises'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'
import { LRUCache } from 'lru-cache'
import type { Readable } from 'node:stream'
import { badRequest, CmsError, conflict, notFound, payloadTooLarge } from '../errors.js'
import { normalizeFileName } from '../slug.js'
import type { AssetEvent } from '../../types/events.js'
import { KeyedMutex } from '../mutex.js'
// Asset lists page as content lists do (contract §7: the same envelope).
import { pageParameter, perPageParameter } from '../query/parse.js'
import { afterParameter, encodeAfter, listFingerprint, type KeyKind } from '../query/keyset.js'
import { fsyncDir, fsyncFile, tempPathFor } from '../durable.js'
import { detectMime, inspectFile, type Inspection } from './inspect.js'
import {
  ASSETS_PREFIX, AssetRoots, isInside, isMissing, joinAssetPath, MAX_NAME_LENGTH, normalizeFolder,
  parseAssetPath, realInside, splitAssetPath
} from './paths.js'
import type { AssetRepository, OpenResult } from './repository.js'
import { inspectAsset, listAssetFiles, type AssetFile } from './scan.js'
import type { AssetListQuery, AssetLogger, AssetMeta, AssetRecord } from './types.js'

/** A part of a multipart upload, shaped like @fastify/multipart's parts (no import of it here). */
export type UploadPart =
  | { type: 'file', fieldname: string, filename: string, file: Readable & { truncated?: boolean } }
  | { type: 'field', fieldname: string, value: unknown, valueTruncated?: boolean }

export interface AssetLibraryOptions {
  repository: AssetRepository
  roots: AssetRoots
  /** Without a trailing slash. */
  publicUrl: string
  /** The configured environments (empty when off); the first is the default. */
  environments: readonly string[]
  /** Largest file in bytes (CMS_UPLOAD_LIMIT). */
  uploadLimit: number
  emit: (event: AssetEvent) => void
  log: AssetLogger
  /** How long `locate` trusts what it found on disk; 0 checks every time. Default 1000 ms. */
  locateTtlMs?: number
  /** Other processes write the assets directory too (replicas on PostgreSQL, contract §12). */
  sharedFiles?: boolean
}

export const DEFAULT_LOCATE_TTL_MS = 1000
/**
 * With a shared assets directory, how long a temp file must have been left untouched before a
 * start removes it: an upload in progress on another replica writes its temp file as the body
 * arrives, and commits it within moments of the last byte.
 */
export const SHARED_TEMP_MIN_AGE_MS = 15 * 60_000

/** An asset resolved to a real file inside its environment's directory. */
export interface LocatedAsset {
  meta: AssetMeta
  /** The real path of the environment's directory. */
  root: string
  /** The file relative to `root`, with '/' separators. */
  relative: string
  /** The real absolute path of the file. */
  file: string
  stat: Stats
}

export interface AssetPage {
  items: AssetRecord[]
  total: number
  /** null on a keyset page (`_after`). */
  page: number | null
  per_page: number
  pages: number
  /** The cursor of the page after this one (contract §10), null on the last page. */
  next: string | null
}

export interface ListParameters {
  folder?: string
  mime?: string
  q?: string
  /** As numbers, or as the query string has them (checked as every list checks them). */
  page?: number | string | undefined
  perPage?: number | string | undefined
  /** `_after`: the `next` of an earlier answer of the same query. */
  after?: string | undefined
}

/** The kinds of an asset's position in the list order (AssetPosition): its time, then its ordinal. */
const POSITION_KINDS: readonly KeyKind[] = ['string', 'integer']

/** Types a browser may render as an active document: served with a sandboxing CSP. */
const ACTIVE_CONTENT = /^(image\/svg\+xml|application\/xml|text\/xml|text\/html|application\/xhtml\+xml)$|\+xml$/

/** Headers for serving a file of this (detected) type: its type, no sniffing, and no scripts. */
export function servingHeaders (mime: string): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': mime, 'x-content-type-options': 'nosniff' }
  if (ACTIVE_CONTENT.test(mime)) headers['content-security-policy'] = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
  return headers
}

type RemoveHook = (environment: string, relative: string) => Promise<unknown>

interface Staged {
  temp: string
  name: string
  inspection?: Inspection
}

export class AssetLibrary {
  readonly repository: AssetRepository
  readonly roots: AssetRoots
  private readonly options: AssetLibraryOptions
  /** Name allocation, renames and deletes are serialized per (environment, folder). */
  private readonly locks = new KeyedMutex()
  private readonly removeHooks: RemoveHook[] = []
  private readonly realRoots = new Map<string, string>()
  private readonly located: LRUCache<string, LocatedAsset>

  constructor (options: AssetLibraryOptions) {
    this.options = options
    this.repository = options.repository
    this.roots = options.roots
    const ttl = options.locateTtlMs ?? DEFAULT_LOCATE_TTL_MS
    this.located = new LRUCache<string, LocatedAsset>({ max: 10_000, ttl: Math.max(ttl, 0), ttlAutopurge: false })
  }

  /**
   * Opens the metadata, rebuilding it from the disk when missing (logged), after sweeping the
   * temp files a crash left; then reconciles it with the files (see `reconcile`).
   */
  async open (): Promise<OpenResult> {
    const { files, tempRemoved } = await listAssetFiles(this.roots, this.options.log, this.options.sharedFiles === true ? SHARED_TEMP_MIN_AGE_MS : 0)
    if (tempRemoved > 0) this.options.log.warn({ count: tempRemoved }, 'assets: removed temp files of interrupted uploads')
    let scanned = false
    const result = await this.repository.open(async () => {
      scanned = true
      const metas: AssetMeta[] = []
      for (const file of files) metas.push(await inspectAsset(file))
      return metas
    })
    if (result.rebuilt !== null) {
      this.options.log.info({ store: this.repository.kind, reason: result.rebuilt, assets: result.count },
        'asset metadata was missing: rebuilt it from the files on disk')
    }
    if (scanned) return result
    return { ...result, count: result.count + await this.reconcile(files) }
  }

  /**
   * Makes the records match the files after a crash (or a change made while stopped): a record
   * whose file is gone is dropped (a crash inside a delete, which removes the file first, ends
   * with the delete done), and a file no record lists is registered as the rebuild would (a
   * crash inside an upload, after the rename, keeps the file: nothing on disk is destroyed).
   * Logged when it changed anything. Returns the change in the number of records.
   */
  private async reconcile (files: readonly AssetFile[]): Promise<number> {
    const onDisk = new Map(files.map(f => [lockKey(f.environment, f.path), f]))
    let dropped = 0
    for (const environment of this.roots.names) {
      for (const meta of await this.allRecords(environment)) {
        if (onDisk.delete(lockKey(environment, meta.path))) continue
        // Not met by the walk (a folder deeper than it goes, say): only a file that is really gone counts.
        if (await exists(this.roots.lexical(environment, meta.path))) continue
        await this.repository.remove(environment, meta.path)
        dropped++
      }
    }
    for (const file of onDisk.values()) await this.repository.insert(await inspectAsset(file))
    if (dropped > 0 || onDisk.size > 0) {
      this.options.log.warn({ dropped, registered: onDisk.size }, 'assets: reconciled the metadata with the files on disk (records of missing files dropped, unlisted files registered)')
    }
    return onDisk.size - dropped
  }

  /** Every record of an environment, read a page at a time. */
  private async allRecords (environment: string): Promise<AssetMeta[]> {
    const out: AssetMeta[] = []
    for (let page = 1; ; page++) {
      const { items, total } = await this.repository.list(environment, { page, perPage: 1000 })
      out.push(...items)
      if (items.length === 0 || out.length >= total) return out
    }
  }

  async close (): Promise<void> {
    await this.repository.close()
  }

  /** Runs after every delete (the transform cache drops the asset's variants). */
  onRemove (hook: RemoveHook): void {
    this.removeHooks.push(hook)
  }

  /** The asset record of contract §7. */
  record (meta: AssetMeta): AssetRecord {
    const assetPath = ASSETS_PREFIX + meta.path
    const { environments, publicUrl } = this.options
    const suffix = environments.length > 0 && meta.environment !== environments[0]
      ? `?_environment=${encodeURIComponent(meta.environment)}`
      : ''
    return {
      path: assetPath,
      url: publicUrl + assetPath + suffix,
      name: meta.name,
      folder: meta.folder,
      size: meta.size,
      mime: meta.mime,
      width: meta.width,
      height: meta.height,
      created_at: meta.createdAt
    }
  }

  /**
   * A page of the environment's assets, newest first: numbered (`_page`) or after a cursor
   * (`_after`, contract §10), whose position is the last item's time and insertion ordinal, so a
   * walk meets every asset there throughout exactly once whatever is uploaded or deleted meanwhile.
   */
  async list (environment: string, parameters: ListParameters): Promise<AssetPage> {
    const page = pageParameter(parameters.page)
    const perPage = perPageParameter(parameters.perPage)
    const query: AssetListQuery = { page, perPage }
    if (parameters.folder !== undefined) query.folder = normalizeFolder(parameters.folder)
    const mime = parameters.mime?.trim().toLowerCase()
    if (mime !== undefined && mime !== '') query.mime = mime
    const q = parameters.q?.trim()
    if (q !== undefined && q !== '') query.q = q
    const fingerprint = listFingerprint(['assets', environment, query.folder ?? null, query.mime ?? null, query.q ?? null])
    const after = afterParameter(parameters.after, parameters.page, fingerprint, POSITION_KINDS)
    if (after !== null) query.after = { createdAt: after.keys[0] as string, ordinal: after.keys[1] as number }
    const { items, total, next } = await this.repository.list(environment, query)
    const last = items.at(-1)
    return {
      items: items.map(m => this.record(m)),
      total,
      page: after === null ? page : null,
      per_page: perPage,
      pages: Math.ceil(total / perPage),
      next: next === null || last === undefined ? null : encodeAfter(fingerprint, { keys: [next.createdAt, next.ordinal], slug: last.path })
    }
  }

  /**
   * Stores every `file` part of an upload (into the `folder` field's folder, if any). Each file is
   * streamed to a hidden temp file and renamed into place only once the whole request was read
   * and every file was within the limit, so a failed upload leaves no file behind.
   */
  async upload (environment: string, parts: AsyncIterable<UploadPart>): Promise<AssetRecord[]> {
    const staged: Staged[] = []
    let folder: string | undefined
    let committed = false
    try {
      for await (const part of bodyParts(parts)) {
        if (part.type === 'field') {
          folder = this.folderField(part, folder)
          continue
        }
        if (part.fieldname !== 'file') {
          part.file.resume()
          throw badRequest(`Unexpected file part '${part.fieldname}': files are sent as 'file' parts.`)
        }
        const name = uploadName(part.filename)
        // Into the target folder when it is known already; else the root, renamed across later.
        const dir = await this.ensureFolder(environment, folder ?? '')
        const entry: Staged = { temp: tempPathFor(dir, 'upload'), name }
        staged.push(entry)
        await this.receive(part.file, entry.temp)
      }
      if (staged.length === 0) throw badRequest("The upload has no 'file' part.")
      for (const entry of staged) entry.inspection = await inspectFile(entry.temp, entry.name)
      const metas = await this.commit(environment, folder ?? '', staged)
      committed = true
      for (const meta of metas) {
        this.options.emit({ event: 'asset.created', path: ASSETS_PREFIX + meta.path, environment, size: meta.size, mime: meta.mime })
      }
      return metas.map(m => this.record(m))
    } catch (err) {
      throw asUploadError(err, this.options.uploadLimit)
    } finally {
      if (!committed) await Promise.all(staged.map(async entry => { await rm(entry.temp, { force: true }) }))
    }
  }

  private folderField (part: Extract<UploadPart, { type: 'field' }>, current: string | undefined): string {
    if (part.fieldname !== 'folder') {
      throw badRequest(`Unexpected form field '${part.fieldname}': only 'file' parts and a 'folder' field are accepted.`)
    }
    if (current !== undefined) throw badRequest('The folder field may be given once.')
    if (part.valueTruncated === true || typeof part.value !== 'string') throw badRequest('The folder field must be a short text value.')
    return normalizeFolder(part.value)
  }

  /** Streams one file part to `temp` (never buffered whole) and flushes it to disk. */
  private async receive (stream: Readable & { truncated?: boolean }, temp: string): Promise<void> {
    const file = createWriteStream(temp, { flags: 'wx', mode: 0o644 })
    // A pipeline destroys both streams with the first error: which one failed first tells
    // whether the body ended inside the file (the client's) or the disk failed (ours).
    // The body may have failed already, while the folder was being made.
    let first: 'body' | 'disk' | undefined = stream.destroyed ? 'body' : undefined
    stream.once('error', () => { first ??= 'body' })
    file.once('error', () => { first ??= 'disk' })
    try {
      await pipeline(stream, file)
    } catch (err) {
      throw first === 'body' ? malformedUpload(err) : err
    }
    // Busboy stops at the limit and marks the stream truncated rather than failing it.
    if (stream.truncated === true) throw tooLarge(this.options.uploadLimit)
    await fsyncFile(temp)
  }

  /** Gives each staged file a free name in the folder, renames it into place and records it. */
  private async commit (environment: string, folder: string, staged: Staged[]): Promise<AssetMeta[]> {
    return await this.locks.run(lockKey(environment, folder), async () => {
      const dir = await this.ensureFolder(environment, folder)
      const taken = new Set<string>()
      const done: AssetMeta[] = []
      try {
        for (const entry of staged) {
          const name = await this.freeName(environment, folder, dir, entry.name, taken)
          taken.add(name)
          const target = path.join(dir, name)
          await rename(entry.temp, target)
          const meta: AssetMeta = {
            environment,
            path: joinAssetPath(folder, name),
            folder,
            name,
            size: (await stat(target)).size,
            mime: entry.inspection?.mime ?? 'application/octet-stream',
            width: entry.inspection?.width ?? null,
            height: entry.inspection?.height ?? null,
            createdAt: new Date().toISOString()
          }
          done.push(meta)
          this.forget(environment, meta.path)
          await this.repository.insert(meta)
        }
        await fsyncDir(dir)
        return done
      } catch (err) {
        // All or nothing: files already renamed into place go again.
        for (const meta of done) {
          await this.repository.remove(environment, meta.path).catch(() => {})
          await rm(path.join(dir, meta.name), { force: true })
        }
        throw err
      }
    })
  }

  /** `name`, else `stem-1.ext`, `stem-2.ext`, ...: free in the metadata, on disk and in this upload. */
  private async freeName (environment: string, folder: string, dir: string, name: string, taken: Set<string>): Promise<string> {
    const dot = name.lastIndexOf('.')
    const stem = dot > 0 ? name.slice(0, dot) : name
    const ext = dot > 0 ? name.slice(dot) : ''
    for (let n = 0; n <= 9999; n++) {
      const candidate = n === 0 ? name : `${stem}-${n}${ext}`
      if (taken.has(candidate)) continue
      if (await this.repository.get(environment, joinAssetPath(folder, candidate)) !== undefined) continue
      if (await exists(path.join(dir, candidate))) continue
      return candidate
    }
    throw conflict(`No free name is left for '${name}' in this folder.`)
  }

  /**
   * The directory of `folder` in the environment, created one segment at a time without ever
   * following a symbolic link, so nothing is created or written outside the assets directory.
   */
  private async ensureFolder (environment: string, folder: string): Promise<string> {
    const root = this.roots.dir(environment)
    await mkdir(root, { recursive: true })
    let dir = root
    if (folder === '') return dir
    for (const segment of folder.split('/')) {
      dir = path.join(dir, segment)
      try {
        await mkdir(dir)
      } catch (err) {
        if ((err as { code?: string }).code !== 'EEXIST') throw err
      }
      const st = await lstat(dir)
      if (!st.isDirectory()) throw badRequest(`The folder '${folder}' is not a directory inside the assets directory.`)
    }
    return dir
  }

  /**
   * The asset's real file, or NOT_FOUND (no record, no file, or a link out of the directory).
   *
   * Where the file really is and its stat are remembered for `locateTtlMs` (1 s by default), like
   * a web server's open-file cache: a hot image costs no file-system round trip per request.
   * Every upload and delete goes through this library and forgets the path at once, so only a
   * file changed behind the API's back is noticed up to a second late.
   */
  async locate (environment: string, rawPath: string): Promise<LocatedAsset> {
    const relative = parseAssetPath(rawPath)
    const key = lockKey(environment, relative)
    const remembered = this.located.get(key)
    if (remembered !== undefined) return remembered
    const meta = await this.repository.get(environment, relative)
    if (meta === undefined) throw notFound(`Asset '${relative}' not found.`)
    const lexical = this.roots.lexical(environment, relative)
    // Both at once: stat follows the same links realpath resolves, and the answer is used only
    // when the real path is inside the directory.
    const [real, st] = await Promise.all([
      realInside(this.roots.dir(environment), lexical, await this.realRoot(environment)),
      stat(lexical).catch((err: unknown) => { if (isMissing(err)) return null; throw err })
    ])
    // Deleted meanwhile? Checked after the awaits so a delete's forget() cannot be overtaken.
    if (real === null || st === null || !st.isFile() || await this.repository.get(environment, relative) === undefined) {
      throw notFound(`Asset '${relative}' not found.`)
    }
    const located = { meta, root: real.root, relative: path.relative(real.root, real.file).split(path.sep).join('/'), file: real.file, stat: st }
    if (this.located.ttl > 0) this.located.set(key, located)
    return located
  }

  /** Forgets what `locate` remembers about a path (after a change made outside the API). */
  forget (environment: string, relative: string): void {
    this.located.delete(lockKey(environment, relative))
  }

  /** Forgets everything `locate` remembers (another process's changes may have been missed). */
  forgetAll (): void {
    this.located.clear()
  }

  /**
   * The real path of an environment's directory, resolved once: it is configuration, not
   * something a request can change (the files and folders inside are checked every time).
   */
  private async realRoot (environment: string): Promise<string | undefined> {
    const known = this.realRoots.get(environment)
    if (known !== undefined) return known
    try {
      const real = await realpath(this.roots.dir(environment))
      this.realRoots.set(environment, real)
      return real
    } catch (err) {
      if (isMissing(err)) return undefined
      throw err
    }
  }

  /**
   * Deletes an asset: its file, its record and (through the remove hooks) its transform variants.
   * A file present on disk without a record is deleted too; NOT_FOUND when there is neither.
   */
  async remove (environment: string, rawPath: string): Promise<void> {
    const relative = parseAssetPath(rawPath)
    const { folder } = splitAssetPath(relative)
    const removed = await this.locks.run(lockKey(environment, folder), async () => {
      const meta = await this.repository.get(environment, relative)
      const file = await this.fileInside(environment, relative)
      if (meta === undefined && file === null) return null
      const size = meta?.size ?? file?.stat.size ?? 0
      const mime = meta?.mime ?? (file === null ? 'application/octet-stream' : await detectMime(file.path, relative))
      if (file !== null) {
        await unlink(file.path).catch((err: unknown) => { if (!isMissing(err)) throw err })
        await fsyncDir(path.dirname(file.path))
      }
      if (meta !== undefined) await this.repository.remove(environment, relative)
      this.forget(environment, relative)
      return { size, mime }
    })
    if (removed === null) throw notFound(`Asset '${relative}' not found.`)
    for (const hook of this.removeHooks) {
      try {
        await hook(environment, relative)
      } catch (err) {
        this.options.log.error({ err, path: relative }, 'could not drop the variants of a deleted asset')
      }
    }
    this.options.emit({ event: 'asset.deleted', path: ASSETS_PREFIX + relative, environment, ...removed })
  }

  /** The regular file at `relative` when its folder chain is real (no symlinked folder); else null. */
  private async fileInside (environment: string, relative: string): Promise<{ path: string, stat: Stats } | null> {
    const root = this.roots.dir(environment)
    const absolute = this.roots.lexical(environment, relative)
    let st: Stats
    let parent: string
    let realRoot: string
    try {
      st = await lstat(absolute)
      parent = await realpath(path.dirname(absolute))
      realRoot = await realpath(root)
    } catch (err) {
      if (isMissing(err)) return null
      throw err
    }
    if (!st.isFile()) return null
    const expected = path.join(realRoot, path.dirname(relative))
    if (parent !== expected || !isInside(realRoot, parent)) return null
    return { path: absolute, stat: st }
  }
}

function lockKey (environment: string, folder: string): string {
  return `${environment}\0${folder}`
}

async function exists (file: string): Promise<boolean> {
  try {
    await lstat(file)
    return true
  } catch (err) {
    if (isMissing(err)) return false
    throw err
  }
}

/** The stored name of an uploaded file: path characters refused, then normalized like a slug. */
export function uploadName (filename: unknown): string {
  if (typeof filename !== 'string' || filename.trim() === '') throw badRequest('Every file part needs a file name.')
  if (filename.includes('\0') || filename.includes('/') || filename.includes('\\') || filename.trim() === '..') {
    throw badRequest('The file name must not contain path characters (/, \\, .. or NUL).')
  }
  const name = normalizeFileName(filename)
  if (name === null) throw badRequest(`The file name '${filename}' has no usable characters.`)
  if (name.length > MAX_NAME_LENGTH) throw badRequest(`The file name must be at most ${MAX_NAME_LENGTH} characters.`)
  return name
}

function tooLarge (limit: number): CmsError {
  return payloadTooLarge(`A file is larger than the upload limit of ${limit} bytes.`)
}

/** Multipart limit errors (file size, file or part counts) become the contract's 413. */
/** An upload's parts, where an error reading them (the request body's) is the client's. */
async function * bodyParts (parts: AsyncIterable<UploadPart>): AsyncGenerator<UploadPart> {
  try {
    yield * parts
  } catch (err) {
    throw malformedUpload(err)
  }
}

/**
 * An error raised while parsing an upload's body is a 400 (busboy's: no boundary, a bad part
 * header, a body that ends early), unless the multipart plugin gave it a 4xx of its own (a limit).
 */
function malformedUpload (err: unknown): unknown {
  if (err instanceof CmsError) return err
  const status = (err as { statusCode?: unknown } | null)?.statusCode
  if (typeof status === 'number' && status >= 400 && status < 500) return err
  return badRequest(`The multipart body is malformed${err instanceof Error ? `: ${err.message}` : ''}.`)
}

function asUploadError (err: unknown, limit: number): unknown {
  if (err instanceof CmsError) return err
  const e = err as { statusCode?: number, code?: string }
  if (e?.statusCode === 413) {
    return e.code === 'FST_REQ_FILE_TOO_LARGE' ? tooLarge(limit) : payloadTooLarge('The upload has too many parts.')
  }
  return err
}
