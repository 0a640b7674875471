// The file store (CMS_STORE=file): one pretty-printed JSON file per entry at
// `<data>/content/<environment>/<collection>/<locale or _>/<slug>.json` holding
// { status, created_at, updated_at, version?, data } (the slug is the file name, never inside data;
// `version`: the number of the version the write kept, file-versions.ts). Versions, drafts,
// schedules and layout moves: file-paths.ts lists their files.
//
// Every entry is read once, at open, into an in-memory index; reads and lists never touch the
// disk. Writes are atomic and durable (temp file, fsync, rename, folder fsync; done by worker
// threads, writer.ts) before their promise resolves, and only then become visible to reads.
//
// The store is its own single writer (one process owns the data dir: lib/data-lock.ts), so it
// decides each write's rules without any lock: a write is checked and registered as "in flight"
// in the same synchronous step (a taken unique value → VALIDATION_FAILED, duplicate slug →
// CONFLICT, missing entry → NOT_FOUND, all against committed and in-flight writes), so no check
// can interleave with another write's. The disk work of writes to different entries then runs
// in parallel (their fsyncs overlap across the writer threads, folder fsyncs are shared), while
// writes to one entry are chained so its file and the index always end in the same state.
// Reads are answered from memory; they return promises because the interface is asynchronous.
//
// The change log (`content/changes.log`, changes/file.ts): each write takes its seq in the same
// synchronous step that registers it, so seqs follow the order writes are decided in (and, per
// entry, the order they are chained in); its record is appended and made durable before the entry
// file is written, and the change is settled once the write is over, as it ended; the write
// resolves once its change is readable (every lower seq is settled too), so an acknowledged write
// is in the log. A crash between the append and the entry write leaves a record the entry does
// not match, which the log's reconcile, run at every open with the entries read, replaces by one
// that does.
import { constants } from 'node:fs'
import { access, readdir, readFile, mkdir, unlink, stat } from 'node:fs/promises'
import path from 'node:path'
import { CmsError, conflict } from '../errors.js'
import { compilePredicate, selectAfter, selectPage, sortCandidates, type Candidate } from '../query/memory.js'
import { firstAfter } from '../query/keyset.js'
import { instant, searchText, typedKey, valueAtPath, type Key } from '../query/values.js'
import {
  checkUniqueHolders, conditionsKey, entryChanged, entryMissing, holdsPrecondition, frozenEntry, isEntryStatus, isLookupValue, lookupKind, slugTaken, timestamps,
  silentLogger, uniqueValues, type StoreLogger, type StoreOptions
} from './common.js'
import { isTempFile } from '../durable.js'
import { checkBucket, assertStoredSlug, isCollectionName, isScopeName, isSlug } from './names.js'
import { entryChange, storeChangeLogOptions } from './changes/common.js'
import { FileChangeLog } from './changes/file.js'
import { FileWriter } from './writer.js'
import { contentFingerprint } from './file-fingerprint.js'
import { CONTENT_DIR, DRAFTS_DIR, ENTRY_EXT, NO_LOCALE_DIR, bucketDir, draftFile, makeDirs, versionsFile } from './file-paths.js'
import { FileVersions, entryVersion, type VersionLine } from './file-versions.js'
import { FileDrafts, type DraftRepairs } from './file-drafts.js'
import { FileSchedules, scheduleKeyText } from './file-schedules.js'
import { applyLayout, type LayoutOutcome } from './file-layout.js'
import { layoutOf, type Layout } from './layout.js'
import { MAX_STORED_DEPTH, valueDepthExceeds } from '../json-depth.js'
import { TransientMap } from '../transient-map.js'
import type { KeysetPosition, ListQuery, ValueKind } from '../../types/query.js'
import type { ResolvedSchema } from '../../types/schema.js'
import { DEFAULT_ENVIRONMENT, type Scope } from '../../types/scope.js'
import type { ChangeLog } from '../../types/changes.js'
import type { ContentStore, EntryInput, EntryStatus, ListResult, StoredEntry, StoredLocation, StoredWrite } from '../../types/store.js'
import type { EntryVersion, ScheduleFilter, ScheduleInput, ScheduleRecord, SchedulePage, ScheduleStatus, StoredDraft, VersionSummary } from '../../types/editorial.js'

export { CONTENT_DIR, NO_LOCALE_DIR }
/** Files read in parallel at open. */
const READ_CONCURRENCY = 32
/** Sorted orders kept per bucket (one per distinct `_sort`), until the next write to it. */
const SORTED_ORDERS = 16
/** Match lists kept per bucket (one per distinct conditions and `_sort`), until the next write to it. */
const MATCH_LISTS = 32
/** About what sorting the bucket costs per entry (ms), for the rent-or-buy choice of list(). */
const SORT_COST_MS = 0.001

type Record_ = Candidate

/** What a write stores besides the entry (EntryInput). */
type WriteOptions = Pick<EntryInput, 'keepVersions' | 'clearDraft'>

interface InFlight {
  seq: number
  /** The entry as it will be once written; null for a delete. */
  rec: Record_ | null
}

/** findByValue's lookup table: typed value at a path → slugs of committed entries holding it. */
interface ValueIndex {
  path: string[]
  kind: ValueKind
  map: Map<Key, Set<string>>
}

/** The entries of one (environment, collection, locale). */
class Bucket {
  readonly committed = new Map<string, Record_>()
  /** The version each committed entry's file names (file-versions.ts: the newest version is the entry file). */
  readonly versionOf = new Map<string, number>()
  readonly inFlight = new TransientMap<string, InFlight>()
  /** Per sort signature: the committed records in that order, or what answering without it cost (ms); cleared by every commit. */
  readonly sorted = new Map<string, { spent: number, records: Record_[] | null }>()
  /**
   * Per (sort signature, conditions): how often the query was asked, then every match in the
   * kept order, so any page is a slice; cleared by every commit.
   */
  readonly matches = new Map<string, { asked: number, records: Record_[] | null }>()
  /** Counts per query conditions; cleared by every commit. */
  readonly counts = new Map<string, number>()
  /** findByValue's lookup tables per (path, kind), built on first use and kept up to date. */
  readonly values = new Map<string, ValueIndex>()
  private ready: Promise<void> | null = null

  /** `revision` is the store's (ContentStore.revision): that of a bucket not yet made, then a new number per commit. */
  constructor (
    readonly scope: Scope, readonly collection: string, readonly dir: string, private readonly root: string, public revision: number
  ) {}

  /** The folder is gone (removed behind the store's back): the next write makes it again. */
  forgetDir (): void {
    this.ready = null
  }

  /** Creates the folder on first write, making each new folder durable in its parent. */
  async ensureDir (): Promise<void> {
    this.ready ??= makeDirs(this.root, this.dir).catch(err => {
      this.ready = null
      throw err
    })
    await this.ready
  }

  /** The entry as the latest write to it will leave it (in flight or committed); undefined when none. */
  effective (slug: string): Record_ | undefined {
    const flight = this.inFlight.get(slug)
    if (flight !== undefined) return flight.rec ?? undefined
    return this.committed.get(slug)
  }

  commit (slug: string, rec: Record_ | null, revision: number, version: number | null): void {
    this.revision = revision
    const before = this.committed.get(slug)
    if (rec === null) this.committed.delete(slug)
    else this.committed.set(slug, rec)
    if (rec === null || version === null) this.versionOf.delete(slug)
    else this.versionOf.set(slug, version)
    for (const index of this.values.values()) {
      if (before !== undefined) removeFromIndex(index.map, typedKey(valueAtPath(before.entry.data, index.path), index.kind), slug)
      if (rec !== null) addToIndex(index.map, typedKey(valueAtPath(rec.entry.data, index.path), index.kind), slug)
    }
    this.sorted.clear()
    this.matches.clear()
    this.counts.clear()
  }
}

/** Drops `slug` from the value's holders, and the value with its last holder (memory stays flat under any number of writes). */
function removeFromIndex (map: Map<Key, Set<string>>, key: Key, slug: string): void {
  if (key === null) return
  const slugs = map.get(key)
  if (slugs === undefined) return
  slugs.delete(slug)
  if (slugs.size === 0) map.delete(key)
}

function addToIndex (map: Map<Key, Set<string>>, key: Key, slug: string): void {
  if (key === null) return
  let slugs = map.get(key)
  if (slugs === undefined) {
    slugs = new Set()
    map.set(key, slugs)
  }
  slugs.add(slug)
}

function record (slug: string, status: EntryStatus, data: Record<string, unknown>, createdAt: string, updatedAt: string): Record_ {
  return { entry: frozenEntry(slug, status, data, createdAt, updatedAt), search: searchText(data) }
}

/** The file's text: pretty-printed, system fields first (the version it is, when it keeps one), data last. */
function fileText (rec: Record_, version: number | null): string {
  const { entry } = rec
  const doc = { status: entry.status, created_at: entry.createdAt, updated_at: entry.updatedAt, version: version ?? undefined, data: entry.data }
  return JSON.stringify(doc, null, 2) + '\n'
}

export class FileStore implements ContentStore {
  readonly kind = 'file' as const
  private readonly root: string
  private readonly environments: readonly string[]
  private readonly locales: readonly string[]
  private readonly log: StoreLogger
  private readonly now: () => string
  private readonly buckets = new Map<string, Bucket>()
  /** The tail of the write chain of each entry (bucket key + slug). */
  // Keys per write in flight: transient maps, so finished writes die young (see transient-map.ts).
  private readonly chains = new TransientMap<string, Promise<void>>()
  private readonly writing = new TransientMap<Promise<unknown>, true>()
  private writer = new FileWriter()
  private readonly changeLog: FileChangeLog
  /** Orders the writes in flight per entry (InFlight.seq); not the change log's seq. */
  private seq = 0
  private opened = false
  /** ContentStore.revision: the last number handed out, and the one of buckets that do not exist. */
  private lastRevision = 0
  private openRevision = 0
  /** The last content fingerprint, with the revision it was taken at. */
  private fingerprint: { revision: number, text: string } | null = null
  private readonly layout: Layout
  private readonly versionFiles = new FileVersions({
    append: async (dir, name, text, position) => { await this.writer.append(dir, name, text, position) },
    write: async (dir, name, text) => { await this.writer.write(dir, name, text) }
  })

  private readonly drafts = new FileDrafts()
  private readonly schedules: FileSchedules

  constructor (options: StoreOptions) {
    this.root = path.join(options.dataDir, CONTENT_DIR)
    this.environments = options.environments !== undefined && options.environments.length > 0 ? options.environments : [DEFAULT_ENVIRONMENT]
    this.locales = options.locales ?? []
    this.log = options.log ?? silentLogger
    this.now = timestamps(options)
    this.changeLog = new FileChangeLog({ dir: this.root, ...storeChangeLogOptions(options) })
    this.layout = layoutOf(options)
    this.schedules = new FileSchedules(this.root)
  }

  /**
   * The size of findByValue's lookup tables, over every bucket: the values they hold and the
   * slugs listed under them (tests, diagnostics). Both stay at most what the entries hold.
   */
  get valueLookups (): { values: number, slugs: number } {
    let values = 0
    let slugs = 0
    for (const bucket of this.buckets.values()) {
      for (const index of bucket.values.values()) {
        values += index.map.size
        for (const holders of index.map.values()) slugs += holders.size
      }
    }
    return { values, slugs }
  }

  /** The log's read side (a closed store's rejects every call). */
  get changes (): ChangeLog {
    return this.changeLog
  }

  // ---- life cycle ---------------------------------------------------------------------------

  async open (): Promise<void> {
    if (this.opened) return
    this.writer = new FileWriter()
    this.buckets.clear()
    this.openRevision = ++this.lastRevision
    await mkdir(this.root, { recursive: true })
    // Before anything is read: the content moves to the layout of the settings (contract §14).
    const moved = await applyLayout(this.root, this.layout, this.log)
    this.versionFiles.reset()
    this.drafts.clear()
    const files: Array<{ bucket: Bucket, slug: string, file: string }> = []
    const withDrafts: Bucket[] = []
    let removed = 0
    for (const environment of await this.subdirs(this.root)) {
      if (!isScopeName(environment)) { this.skip(path.join(this.root, environment), 'not a valid environment name'); continue }
      const envDir = path.join(this.root, environment)
      for (const collection of await this.subdirs(envDir)) {
        if (!isCollectionName(collection)) { this.skip(path.join(envDir, collection), 'not a valid collection name'); continue }
        const collDir = path.join(envDir, collection)
        for (const localeDir of await this.subdirs(collDir)) {
          const locale = localeDir === NO_LOCALE_DIR ? null : localeDir
          if (locale !== null && !isScopeName(locale)) { this.skip(path.join(collDir, localeDir), 'not a valid locale name'); continue }
          const bucket = this.bucket({ environment, locale }, collection)
          for (const name of await readdir(bucket.dir)) {
            if (isTempFile(name)) {
              // A write that a crash interrupted before its rename: the old file is intact.
              await unlink(path.join(bucket.dir, name)).catch(() => {})
              removed++
            } else if (name === DRAFTS_DIR) {
              withDrafts.push(bucket)
            } else if (name.endsWith(ENTRY_EXT) && isSlug(name.slice(0, -ENTRY_EXT.length))) {
              files.push({ bucket, slug: name.slice(0, -ENTRY_EXT.length), file: path.join(bucket.dir, name) })
            } else if (!name.startsWith('.')) {
              this.skip(path.join(bucket.dir, name), 'not an entry file (<slug>.json)')
            }
          }
        }
      }
    }
    if (removed > 0) this.log.warn({ files: removed }, 'removed temporary files left by an interrupted write')
    let next = 0
    const worker = async (): Promise<void> => {
      while (next < files.length) {
        const item = files[next++] as (typeof files)[number]
        const read = await this.readEntry(item.file, item.slug)
        if (read === null) continue
        item.bucket.committed.set(item.slug, read.rec)
        if (read.version !== undefined) item.bucket.versionOf.set(item.slug, read.version)
      }
    }
    await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, files.length) }, worker))
    await this.openEditorial(withDrafts)
    // With every entry read: records for what a crash cut short, or what was written by hand.
    await this.changeLog.open()
    try {
      await this.recordMoves(moved)
      await this.changeLog.reconcile(this.entries())
    } catch (err) {
      await this.changeLog.close()
      throw err
    }
    this.opened = true
  }

  /** Drafts and schedules, with what a crash left of a publish or a delete repaired (file-drafts.ts). */
  private async openEditorial (withDrafts: readonly Bucket[]): Promise<void> {
    const repairs: DraftRepairs = { removed: 0, restored: 0 }
    for (const bucket of withDrafts) await this.drafts.load(bucket.dir, slug => bucket.committed.get(slug)?.entry, repairs)
    const orphans = await this.schedules.load(r => this.existingBucket(r.scope, r.collection)?.committed.has(r.slug) === true)
    if (repairs.removed + repairs.restored + orphans > 0) {
      this.log.warn({ drafts: repairs.removed, restored: repairs.restored, schedules: orphans }, 'repaired drafts and schedules a crash left behind')
    }
  }

  /** Each entry a layout move relabelled: a tombstone at its old key, then an upsert at its new one (contract §14). */
  private async recordMoves (moved: LayoutOutcome): Promise<void> {
    const durable: Array<Promise<void>> = []
    for (const { from, to } of moved.moved) {
      const entry = this.existingBucket(to, to.collection)?.committed.get(to.slug)?.entry
      if (entry === undefined) continue
      for (const change of [entryChange(from, null, this.now()), entryChange(to, entry, this.now())]) {
        const begun = this.changeLog.begin(change)
        this.changeLog.settle(begun.seq)
        durable.push(begun.durable)
      }
    }
    await Promise.all(durable)
  }

  async close (): Promise<void> {
    // Writes in flight finish (or fail) before the store lets go.
    while (this.writing.size > 0) await Promise.allSettled([...this.writing.keys()])
    await this.writer.close()
    await this.changeLog.close()
    this.opened = false
  }

  private async subdirs (dir: string): Promise<string[]> {
    try {
      const entries = await readdir(dir, { withFileTypes: true })
      return entries.filter(e => e.isDirectory()).map(e => e.name).sort()
    } catch (err) {
      if ((err as { code?: string }).code === 'ENOENT') return []
      throw err
    }
  }

  private skip (file: string, reason: string): void {
    this.log.warn({ file: path.relative(this.root, file), reason }, 'content file skipped')
  }

  /** One entry file and the version it names, or null (logged) when it cannot be used. */
  private async readEntry (file: string, slug: string): Promise<{ rec: Record_, version: number | undefined } | null> {
    let parsed: unknown
    try {
      parsed = JSON.parse(await readFile(file, 'utf8'))
    } catch (err) {
      this.skip(file, err instanceof SyntaxError ? 'not valid JSON' : 'unreadable')
      return null
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      this.skip(file, 'not a JSON object')
      return null
    }
    const doc = parsed as Record<string, unknown>
    const data = doc.data
    if (data === null || typeof data !== 'object' || Array.isArray(data)) {
      this.skip(file, "'data' must be an object")
      return null
    }
    // SQLite's JSON functions stop there: both stores keep the same entries.
    if (valueDepthExceeds(data, MAX_STORED_DEPTH)) {
      this.skip(file, `'data' nests deeper than ${MAX_STORED_DEPTH} levels`)
      return null
    }
    const status = doc.status ?? 'published'
    if (!isEntryStatus(status)) {
      this.skip(file, "'status' must be 'draft' or 'published'")
      return null
    }
    // Timestamps are kept in the stores' form (ISO 8601 UTC with milliseconds); a hand-written
    // file without them gets the file's modification time.
    let fallback: string | null = null
    const timestamp = async (value: unknown): Promise<string | null> => {
      if (value === undefined) {
        fallback ??= (await stat(file)).mtime.toISOString()
        return fallback
      }
      const ms = typeof value === 'string' ? instant(value) : null
      return ms === null ? null : new Date(ms).toISOString()
    }
    const createdAt = await timestamp(doc.created_at)
    const updatedAt = await timestamp(doc.updated_at)
    if (createdAt === null || updatedAt === null) {
      this.skip(file, "'created_at' and 'updated_at' must be ISO 8601 date-times")
      return null
    }
    // A version number it cannot be (written by hand) is no version.
    const version = Number.isSafeInteger(doc.version) && (doc.version as number) > 0 ? doc.version as number : undefined
    return { rec: record(slug, status, data as Record<string, unknown>, createdAt, updatedAt), version }
  }

  private bucketKey (scope: Scope, collection: string): string {
    return `${scope.environment}\u0000${collection}\u0000${scope.locale ?? ''}`
  }

  /** The bucket of a scope and collection, made on demand (names checked by the caller). */
  private bucket (scope: Scope, collection: string): Bucket {
    const key = this.bucketKey(scope, collection)
    let bucket = this.buckets.get(key)
    if (bucket === undefined) {
      const dir = bucketDir(this.root, scope, collection)
      bucket = new Bucket({ environment: scope.environment, locale: scope.locale }, collection, dir, this.root, this.openRevision)
      this.buckets.set(key, bucket)
    }
    return bucket
  }

  private existingBucket (scope: Scope, collection: string): Bucket | undefined {
    checkBucket(scope, collection)
    return this.buckets.get(this.bucketKey(scope, collection))
  }

  async ensureCollection (collection: string): Promise<void> {
    const locales = this.locales.length > 0 ? this.locales : [null]
    for (const environment of this.environments) {
      for (const locale of locales) {
        const scope = { environment, locale }
        checkBucket(scope, collection)
        await this.bucket(scope, collection).ensureDir()
      }
    }
  }

  async prepareCollection (_schema: ResolvedSchema): Promise<void> {
    // The in-memory index needs no preparation: sorted orders and lookups are built on demand.
  }

  // ---- reads ---------------------------------------------------------------------------------

  async get (scope: Scope, collection: string, slug: string): Promise<StoredEntry | undefined> {
    return this.existingBucket(scope, collection)?.committed.get(slug)?.entry
  }

  revision (scope: Scope, collection: string): number {
    return this.buckets.get(this.bucketKey(scope, collection))?.revision ?? this.openRevision
  }

  async getMany (scope: Scope, collection: string, slugs: readonly string[]): Promise<Map<string, StoredEntry>> {
    const bucket = this.existingBucket(scope, collection)
    const out = new Map<string, StoredEntry>()
    if (bucket === undefined) return out
    for (const slug of slugs) {
      const rec = bucket.committed.get(slug)
      if (rec !== undefined) out.set(slug, rec.entry)
    }
    return out
  }

  async ping (): Promise<void> {
    if (!this.opened) throw new Error('the file store is not open')
    // The data folder must still be there to read and write: a volume gone or made read-only
    // (a lost mount) fails here.
    await access(this.root, constants.R_OK | constants.W_OK | constants.X_OK)
  }

  async contentFingerprint (): Promise<string> {
    // Files change behind the store's back only while it is stopped: without a write since the
    // last walk, that walk's answer stands.
    if (this.fingerprint?.revision !== this.lastRevision) {
      this.fingerprint = { revision: this.lastRevision, text: contentFingerprint(this.root) }
    }
    return this.fingerprint.text
  }

  async findByValue (scope: Scope, collection: string, dottedPath: string, value: unknown, excludeSlug: string | null): Promise<string | null> {
    const bucket = this.existingBucket(scope, collection)
    if (bucket === undefined || !isLookupValue(value)) return null
    return this.holder(bucket, dottedPath, value, excludeSlug, false)
  }

  /**
   * The slug of another entry holding `value` at `dottedPath`: among committed entries, or, with
   * `inFlight`, as the writes in flight will leave them (what a write's unique check sees).
   */
  private holder (bucket: Bucket, dottedPath: string, value: string | number | boolean, excludeSlug: string | null, inFlight: boolean): string | null {
    const path_ = dottedPath.split('.')
    const kind = lookupKind(value)
    if (inFlight) {
      // Writes in flight decide for their slugs.
      for (const [slug, flight] of bucket.inFlight) {
        if (slug !== excludeSlug && flight.rec !== null && sameValue(valueAtPath(flight.rec.entry.data, path_), value)) return slug
      }
    }
    const indexKey = `${kind}\u0000${dottedPath}`
    let index = bucket.values.get(indexKey)
    if (index === undefined) {
      const map = new Map<Key, Set<string>>()
      for (const [slug, rec] of bucket.committed) addToIndex(map, typedKey(valueAtPath(rec.entry.data, path_), kind), slug)
      index = { path: path_, kind, map }
      bucket.values.set(indexKey, index)
    }
    const key = typedKey(value, kind)
    for (const slug of index.map.get(key as Key) ?? []) {
      if (slug !== excludeSlug && !(inFlight && bucket.inFlight.has(slug))) return slug
    }
    return null
  }

  /**
   * A page and its total. A sort order of the bucket is kept once answering without it has
   * cost about what sorting the bucket does (rent or buy, as the SQLite store's materialized
   * lists): a query asked again walks the kept order and stops at the page (with the total
   * counted once), and from its second time keeps its matches in that order, so a page is a
   * slice; a bucket written between reads is never sorted or filtered whole in vain.
   */
  async list (scope: Scope, collection: string, query: ListQuery): Promise<ListResult> {
    const bucket = this.existingBucket(scope, collection)
    if (bucket === undefined) return { items: [], total: 0 }
    if (query.after !== null) return this.listAfter(bucket, query, query.after)
    const countKey = conditionsKey(query)
    const known = bucket.counts.get(countKey)
    const offset = (query.page - 1) * query.perPage
    if (known !== undefined && offset >= known) return { items: [], total: known }
    const predicate = compilePredicate(query)
    const signature = sortSignature(query)
    const order = keptOrder(bucket, signature)
    if (order.records === null && order.spent >= bucket.committed.size * SORT_COST_MS) {
      order.records = sortCandidates(bucket.committed.values(), query.sort)
    }
    let result: ListResult
    if (order.records !== null) {
      // Asked again with the kept order: its matches are kept too (one pass), and each page
      // is a slice, however deep; the first time, the walk stops at the page.
      const matchKey = `${signature}\u0000${countKey}`
      let kept = bucket.matches.get(matchKey)
      if (kept === undefined) {
        if (bucket.matches.size >= MATCH_LISTS) bucket.matches.delete(bucket.matches.keys().next().value as string)
        kept = { asked: 0, records: null }
        bucket.matches.set(matchKey, kept)
      }
      if (kept.records === null && ++kept.asked >= 2) kept.records = order.records.filter(predicate)
      if (kept.records !== null) {
        const page = kept.records.slice(offset, offset + query.perPage)
        result = { items: page.map(rec => rec.entry), total: kept.records.length }
      } else {
        result = selectPage(order.records, predicate, offset, query.perPage, known ?? null)
      }
    } else {
      // Without a kept order: the matches only, sorted.
      const started = performance.now()
      const matching: Record_[] = []
      for (const rec of bucket.committed.values()) if (predicate(rec)) matching.push(rec)
      const page = sortCandidates(matching, query.sort).slice(offset, offset + query.perPage)
      result = { items: page.map(rec => rec.entry), total: matching.length }
      order.spent += performance.now() - started
    }
    if (known === undefined) bucket.counts.set(countKey, result.total)
    return result
  }

  /**
   * A keyset page (contract §10): the bucket's order for the sort is kept (a walk asks for many
   * pages), the position found in it by binary search, and the matches read from there; so a
   * page costs the same wherever it is in the walk. The total is counted once per bucket version.
   */
  private listAfter (bucket: Bucket, query: ListQuery, position: KeysetPosition): ListResult {
    const predicate = compilePredicate(query)
    const order = keptOrder(bucket, sortSignature(query))
    order.records ??= sortCandidates(bucket.committed.values(), query.sort)
    const page = selectAfter(order.records, predicate, firstAfter(order.records, query.sort, position), query.perPage)
    const countKey = conditionsKey(query)
    let total = bucket.counts.get(countKey)
    if (total === undefined) {
      total = 0
      for (const rec of bucket.committed.values()) if (predicate(rec)) total++
      bucket.counts.set(countKey, total)
    }
    return { items: page.items, total, more: page.more }
  }

  async * entries (): AsyncIterable<StoredLocation> {
    for (const bucket of [...this.buckets.values()]) {
      for (const rec of [...bucket.committed.values()]) {
        yield { scope: { ...bucket.scope }, collection: bucket.collection, entry: rec.entry }
      }
    }
  }

  // ---- editorial (types/editorial.ts) ---------------------------------------------------------

  /** The file of an entry's versions or draft, its names checked (they become path segments). */
  private editorialFile (scope: Scope, collection: string, slug: string, file: (dir: string, slug: string) => string): string {
    checkBucket(scope, collection)
    assertStoredSlug(slug)
    return file(bucketDir(this.root, scope, collection), slug)
  }

  async versions (scope: Scope, collection: string, slug: string, keep: number, offset: number, limit: number): Promise<{ items: VersionSummary[], total: number }> {
    const file = this.editorialFile(scope, collection, slug, versionsFile)
    return await this.versionFiles.list(file, this.newestVersion(this.existingBucket(scope, collection), slug), keep, offset, limit)
  }

  async version (scope: Scope, collection: string, slug: string, n: number, keep: number): Promise<EntryVersion | undefined> {
    const file = this.editorialFile(scope, collection, slug, versionsFile)
    return await this.versionFiles.get(file, this.newestVersion(this.existingBucket(scope, collection), slug), n, keep)
  }

  /** The version the committed entry's file is, if it names one. */
  private newestVersion (bucket: Bucket | undefined, slug: string): VersionLine | null {
    const rec = bucket?.committed.get(slug)
    return rec === undefined ? null : entryVersion(rec.entry, bucket?.versionOf.get(slug))
  }

  async getDraft (scope: Scope, collection: string, slug: string): Promise<StoredDraft | undefined> {
    return this.drafts.get(this.editorialFile(scope, collection, slug, draftFile))
  }

  async putDraft (scope: Scope, collection: string, slug: string, data: Record<string, unknown>): Promise<StoredDraft> {
    const file = this.editorialFile(scope, collection, slug, draftFile)
    const bucket = this.existingBucket(scope, collection)
    const current = bucket?.effective(slug)
    // Decided as writes are: against the entry as the writes decided before this leave it.
    if (bucket === undefined || current === undefined) throw entryMissing(slug, collection)
    if (current.entry.status === 'draft') throw conflict(`Entry '${slug}' is a draft: edit it directly.`)
    const stored = detach(data)
    return await this.onEntryChain(bucket, slug, async () => await this.drafts.put(file, stored, this.now()))
  }

  async deleteDraft (scope: Scope, collection: string, slug: string): Promise<boolean> {
    const file = this.editorialFile(scope, collection, slug, draftFile)
    const bucket = this.existingBucket(scope, collection)
    if (bucket === undefined) return false
    return await this.onEntryChain(bucket, slug, async () => await this.drafts.remove(file))
  }

  async addSchedule (input: ScheduleInput): Promise<ScheduleRecord> {
    if (!this.opened) throw new Error('the file store is not open')
    assertStoredSlug(input.slug)
    if (this.existingBucket(input.scope, input.collection)?.effective(input.slug) === undefined) throw entryMissing(input.slug, input.collection)
    return await this.schedules.add(input, this.now())
  }

  async getSchedule (id: string): Promise<ScheduleRecord | undefined> {
    return this.schedules.get(id)
  }

  async listSchedules (status: ScheduleStatus, filter: ScheduleFilter, offset: number, limit: number): Promise<SchedulePage> {
    return this.schedules.list(status, filter, offset, limit)
  }

  async deleteSchedule (id: string): Promise<boolean> {
    return await this.schedules.delete(id)
  }

  async claimSchedules (owner: string, now: string, leaseMs: number, limit: number): Promise<ScheduleRecord[]> {
    return await this.schedules.claim(owner, now, leaseMs, limit)
  }

  async finishSchedule (id: string, owner: string, error: string | null): Promise<boolean> {
    return await this.schedules.finish(id, owner, error)
  }

  async nextScheduleAt (): Promise<string | null> {
    return this.schedules.nextAt()
  }

  // ---- writes --------------------------------------------------------------------------------

  // Each write's rules are decided and the write registered in flight in one synchronous step
  // (before write()'s first await): no other write can come in between.

  async create (scope: Scope, collection: string, input: EntryInput): Promise<StoredWrite> {
    const bucket = this.writableBucket(scope, collection, input)
    this.checkUnique(bucket, input)
    if (bucket.effective(input.slug) !== undefined) throw slugTaken(input.slug, collection)
    const at = this.now()
    const rec = record(input.slug, input.status, detach(input.data), at, at)
    return { entry: rec.entry, seq: await this.write(bucket, input.slug, rec, input) }
  }

  async update (scope: Scope, collection: string, input: EntryInput): Promise<StoredWrite> {
    const bucket = this.writableBucket(scope, collection, input)
    const current = bucket.effective(input.slug)
    if (current === undefined) throw entryMissing(input.slug, collection)
    // EntryInput.expected: against the entry as the writes decided before this leave it (in
    // flight ones included), and the draft as saved (one process writes here: the pipeline's
    // entry lock orders a draft's save and its publish).
    if (input.expected !== undefined && !holdsPrecondition(input.expected, current.entry, this.drafts.get(draftFile(bucket.dir, input.slug)))) {
      throw entryChanged(input.slug, collection)
    }
    this.checkUnique(bucket, input)
    const rec = record(input.slug, input.status, detach(input.data), current.entry.createdAt, this.now())
    return { entry: rec.entry, seq: await this.write(bucket, input.slug, rec, input) }
  }

  async delete (scope: Scope, collection: string, slug: string): Promise<number | null> {
    checkBucket(scope, collection)
    assertStoredSlug(slug)
    const bucket = this.buckets.get(this.bucketKey(scope, collection))
    if (bucket === undefined || bucket.effective(slug) === undefined) return null
    return await this.write(bucket, slug, null)
  }

  /** EntryInput.unique against committed entries and the writes in flight. */
  private checkUnique (bucket: Bucket, input: EntryInput): void {
    checkUniqueHolders(uniqueValues(input).map(([path, value]) => [path, this.holder(bucket, path, value, input.slug, true)]))
  }

  private writableBucket (scope: Scope, collection: string, input: EntryInput): Bucket {
    if (!this.opened) throw new Error('the file store is not open')
    checkBucket(scope, collection)
    assertStoredSlug(input.slug)
    if (!isEntryStatus(input.status)) throw new CmsError('BAD_REQUEST', "Status must be 'draft' or 'published'.")
    return this.bucket(scope, collection)
  }

  /**
   * Begins the write's change and registers the write as in flight (synchronously, before any
   * await), writes the files once the change's record is durable and the entry's previous write
   * is over, then commits it to the index and settles the change. A failed write leaves the
   * index as the disk is, and settles its change as the entry is. Returns the change's seq.
   */
  private async write (bucket: Bucket, slug: string, rec: Record_ | null, options: WriteOptions = {}): Promise<number> {
    const key = { environment: bucket.scope.environment, locale: bucket.scope.locale, collection: bucket.collection, slug }
    const change = this.changeLog.begin(entryChange(key, rec?.entry ?? null, this.now()))
    const seq = ++this.seq
    bucket.inFlight.set(slug, { seq, rec })
    let late: unknown = null
    try {
      await this.onEntryChain(bucket, slug, async () => {
        let version: number | null
        try {
          // Durable before the entry file changes, in parallel with the change record: the version
          // the file being replaced is (file-versions.ts; the new file names its own), and the mark
          // of the draft it publishes (file-drafts.ts).
          const keep = rec === null ? 0 : options.keepVersions ?? 0
          const kept = this.versionFiles.beforeWrite(versionsFile(bucket.dir, slug), this.newestVersion(bucket, slug), keep)
          const marked = rec !== null && options.clearDraft === true ? this.drafts.markPublishing(draftFile(bucket.dir, slug), rec.entry.updatedAt) : null
          version = (await Promise.all([kept, change.durable, marked]))[0]
          late = await this.writeFiles(bucket, slug, rec, options, version)
        } catch (err) {
          this.changeLog.settle(change.seq, bucket.committed.get(slug)?.entry ?? null)
          throw err
        }
        bucket.commit(slug, rec, ++this.lastRevision, version)
        this.changeLog.settle(change.seq)
      })
      // As with SQLite, a write resolves once the log shows it: the changes with lower seqs,
      // finishing in any order, are over too.
      await change.readable
    } finally {
      if (bucket.inFlight.get(slug)?.seq === seq) bucket.inFlight.delete(slug)
    }
    // The entry is written, but not all that goes with it (a draft's removal, a delete's schedules): no success to answer.
    if (late !== null) throw late
    return change.seq
  }

  /**
   * Runs `task` once the entry's previous disk work (writes, draft changes) is over, as the new
   * tail of its chain, so one entry's files always end as its operations were decided.
   */
  private async onEntryChain<T> (bucket: Bucket, slug: string, task: () => Promise<T>): Promise<T> {
    const chainKey = `${this.bucketKey(bucket.scope, bucket.collection)}\u0000${slug}`
    const previous = this.chains.get(chainKey)
    const run = (async () => {
      if (previous !== undefined) await previous
      return await task()
    })()
    const tail = run.then(() => {}, () => {})
    this.chains.set(chainKey, tail)
    this.writing.set(run, true)
    try {
      return await run
    } finally {
      this.writing.delete(run)
      if (this.chains.get(chainKey) === tail) this.chains.delete(chainKey)
    }
  }

  /**
   * The write's files: the entry file (naming `version`); once that is in place, the draft a
   * publish or delete removes and a delete's schedules. Throws when the entry file was not
   * written; returns an error of what failed after it (null: none).
   */
  private async writeFiles (bucket: Bucket, slug: string, rec: Record_ | null, options: WriteOptions, version: number | null): Promise<unknown> {
    await this.writeFile(bucket, slug, rec, version)
    try {
      if (rec === null || options.clearDraft === true) await this.drafts.remove(draftFile(bucket.dir, slug))
      if (rec === null) await this.schedules.deleteOf(scheduleKeyText(bucket.scope.environment, bucket.scope.locale, bucket.collection, slug))
    } catch (err) {
      return err
    }
    return null
  }

  /** The entry's file as `rec` says (atomic, durable), or its removal (null). */
  private async writeFile (bucket: Bucket, slug: string, rec: Record_ | null, version: number | null): Promise<void> {
    const name = slug + ENTRY_EXT
    if (rec === null) {
      await this.writer.remove(bucket.dir, name)
      return
    }
    await bucket.ensureDir()
    try {
      await this.writer.write(bucket.dir, name, fileText(rec, version))
    } catch (err) {
      if ((err as { code?: string }).code === 'ENOENT') bucket.forgetDir()
      throw err
    }
  }
}

/** The data as stored: a JSON round trip detaches it from the caller and drops what JSON cannot hold. */
function detach (data: Record<string, unknown>): Record<string, unknown> {
  const json = JSON.stringify(data)
  if (typeof json !== 'string') throw new CmsError('BAD_REQUEST', 'Entry data must be a JSON object.')
  return JSON.parse(json) as Record<string, unknown>
}

function sameValue (stored: unknown, value: string | number | boolean): boolean {
  return typeof stored === typeof value && stored === value
}

/** A stable text of a query's sort: the key of the bucket's kept orders. */
function sortSignature (query: ListQuery): string {
  return JSON.stringify(query.sort.map(s => [s.field.name, s.field.kind, s.direction]))
}

/** The bucket's kept order for a sort signature, made (empty) when missing; the oldest goes past SORTED_ORDERS. */
function keptOrder (bucket: Bucket, signature: string): { spent: number, records: Record_[] | null } {
  let order = bucket.sorted.get(signature)
  if (order === undefined) {
    if (bucket.sorted.size >= SORTED_ORDERS) bucket.sorted.delete(bucket.sorted.keys().next().value as string)
    order = { spent: 0, records: null }
    bucket.sorted.set(signature, order)
  }
  return order
}
