// The file store's change log: `<data>/content/changes.log` (format.ts), an in-memory index of
// each key's latest record (memory.ts) rebuilt at open, appends with group commit (appender.ts).
//
// A write goes: `begin(change)` (its seq is given at once, in the write's synchronous step, so
// writes to one entry get growing seqs in the order they are chained), the record is appended
// and fdatasync'ed (`durable`), then the entry file is written, then `settle(seq)` once the
// write is over. A change becomes readable when it is settled and every lower seq is settled too:
// the entry writes of different entries finish in any order, but readers meet their records in
// seq order and never have to go back. A write that failed is settled with the entry as it really
// is (`settle(seq, actual)`), so the log says what a reader will find; a crash between the append
// and the entry write leaves a record the entry does not match, which `reconcile` (called at every
// open with the store's entries) replaces by one that does. A record never misses a durable write.
//
// Compaction rewrites the file atomically (temp file, fdatasync, rename, folder fsync) with each
// key's latest record, without the tombstones past the retention period, and the new horizon. It
// runs when superseded lines outnumber the live ones (so the file stays within about twice the
// records), at open, and at most hourly (checked on write) for tombstones past retention.
import { mkdir, open, readdir, readFile, rename, rm, unlink } from 'node:fs/promises'
import path from 'node:path'
import { fsyncDir, isTempFile, tempPathFor } from '../../durable.js'
import { GroupAppender, type AppendTarget } from './appender.js'
import {
  COMPACTION_INTERVAL_MS, changeKeyText, changeRecord, checkChange, checkPageArguments, entryChange, isExpiredTombstone,
  recordMatchesEntry, resolveChangeLogOptions, retentionCutoff, type ChangeLogOptions, type ResolvedChangeLogOptions
} from './common.js'
import { CHANGE_LOG_FILE, headerLine, parseChangeLog, recordLine, type ParsedChangeLog } from './format.js'
import { ChangeIndex } from './memory.js'
import type { Change, ChangeFilter, ChangeLog, ChangePage, ChangeRecord, CompactionResult } from '../../../types/changes.js'
import type { EntryStatus, StoredLocation } from '../../../types/store.js'

/** Superseded lines tolerated before a rewrite, whatever the number of live records. */
const MIN_WASTE = 1000

export interface FileChangeLogOptions extends ChangeLogOptions {
  /** The file store's content folder (`<data>/content`): the log is `changes.log` in it. */
  dir: string
}

/** A change whose record is appended; `durable` resolves once it is on disk. */
export interface BegunChange {
  seq: number
  durable: Promise<void>
}

/** An entry as it is, for `settle` after a failed write: null when there is none. */
export type ActualEntry = { status: EntryStatus, updatedAt: string } | null

interface Pending {
  record: ChangeRecord
  settled: boolean
  /** The append is on disk (`written`) or failed for good (`failed`, never readable). */
  written: boolean
  failed: boolean
}

export class FileChangeLog implements ChangeLog {
  readonly file: string
  private readonly options: ResolvedChangeLogOptions
  private appender: GroupAppender | null = null
  private index = new ChangeIndex()
  /** Changes begun and not yet readable, in seq order (consecutive seqs) from `head`. */
  private pending: Pending[] = []
  private head = 0
  private last = 0
  private readable = 0
  private horizonSeq = 0
  /** Record lines in the file. */
  private lines = 0
  private lastCompactionCheck = 0
  private compacting: Promise<unknown> | null = null

  constructor (options: FileChangeLogOptions) {
    this.file = path.join(options.dir, CHANGE_LOG_FILE)
    this.options = resolveChangeLogOptions(options)
  }

  // ---- life cycle ---------------------------------------------------------------------------

  /** Reads the log (a new one when there is none), cutting off a torn last line, and compacts it if due. */
  async open (): Promise<void> {
    if (this.appender !== null) return
    const dir = path.dirname(this.file)
    await mkdir(dir, { recursive: true })
    await this.removeTempFiles(dir)
    const parsed = parseChangeLog(await this.readOrCreate())
    this.index = new ChangeIndex()
    for (const record of parsed.records) this.index.put(record)
    this.pending = []
    this.head = 0
    this.lines = parsed.records.length
    this.horizonSeq = parsed.horizon
    this.last = this.readable = Math.max(parsed.horizon, parsed.records.at(-1)?.seq ?? 0)
    const handle = await open(this.file, 'r+')
    const appender = new GroupAppender(handle, parsed.validBytes)
    this.appender = appender
    try {
      await this.repair(handle, parsed.damage, parsed.validBytes)
      this.lastCompactionCheck = this.options.clock().getTime()
      const minWaste = parsed.damage === 'middle' ? -1 : this.wasteAllowed()
      await appender.exclusive(async () => await this.rewrite(minWaste))
    } catch (err) {
      this.appender = null
      await appender.close().catch(() => {})
      throw err
    }
  }

  /** What a crash or damage left: a torn last line is cut off; lost records expire every cursor so far (the rewrite after it persists that). */
  private async repair (handle: AppendTarget, damage: ParsedChangeLog['damage'], validBytes: number): Promise<void> {
    if (damage === 'tail') {
      // An append a crash cut short: never acknowledged, never read. Cut it off so appends follow whole lines.
      await handle.truncate(validBytes)
      await handle.datasync()
      this.options.log.warn({ file: CHANGE_LOG_FILE }, 'cut off a change log record left incomplete by a crash')
    } else if (damage === 'middle') {
      this.horizonSeq = this.last
      this.options.log.error({ file: CHANGE_LOG_FILE }, 'the change log has damaged records; every sync cursor so far is expired')
    }
  }

  /** Waits for appends and compaction under way, then closes the file. */
  async close (): Promise<void> {
    const appender = this.appender
    if (appender === null) return
    await this.compacting
    this.appender = null
    await appender.close()
  }

  private async readOrCreate (): Promise<Buffer> {
    try {
      const bytes = await readFile(this.file)
      if (bytes.length > 0) return bytes
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    }
    const text = headerLine(0)
    await (await this.writeNewFile(text)).close()
    await fsyncDir(path.dirname(this.file))
    return Buffer.from(text)
  }

  /** Rewrites left by a crash before their rename: the log itself is intact. */
  private async removeTempFiles (dir: string): Promise<void> {
    for (const name of await readdir(dir)) {
      if (isTempFile(name) && name.startsWith(`.${CHANGE_LOG_FILE}.`)) await unlink(path.join(dir, name)).catch(() => {})
    }
  }

  // ---- writes --------------------------------------------------------------------------------

  /** Gives the change its seq now and appends its record. Call `settle(seq)` when its entry write is over. */
  begin (change: Change): BegunChange {
    const appender = this.writable()
    checkChange(change)
    const item: Pending = { record: changeRecord(++this.last, change), settled: false, written: false, failed: false }
    this.pending.push(item)
    const durable = appender.append(recordLine(item.record)).then(() => {
      item.written = true
      this.lines++
      this.promote()
    }, (err: unknown) => {
      item.failed = true
      this.promote()
      throw err
    })
    this.compactIfDue()
    return { seq: item.record.seq, durable }
  }

  /**
   * The entry write of change `seq` is over: as recorded (no `actual`), or failed, with the entry
   * as it really is now (`actual`, null when there is none). Call it once per begun change, after
   * the store's own index shows the outcome. A change whose append failed needs none (settling
   * it, or one already readable, does nothing); settling one twice before that throws.
   */
  settle (seq: number, actual?: ActualEntry): void {
    const first = this.pending[this.head]
    // Below the queue: already readable, or its append failed.
    if (seq >= 1 && seq <= this.last && (first === undefined || seq < first.record.seq)) return
    const item = first === undefined ? undefined : this.pending[this.head + seq - first.record.seq]
    if (item === undefined || item.record.seq !== seq) throw new RangeError(`no change ${seq} is waiting to be settled`)
    if (item.settled) throw new RangeError(`change ${seq} is settled already`)
    if (actual !== undefined) item.record = changeRecord(seq, entryChange(item.record, actual, this.now()))
    item.settled = true
    this.promote()
  }

  /** Makes readable every change at the head of the queue whose write is over. */
  private promote (): void {
    while (this.head < this.pending.length) {
      const item = this.pending[this.head] as Pending
      if (!item.failed && !(item.settled && item.written)) break
      this.head++
      if (item.written) {
        this.index.put(item.record)
        this.readable = item.record.seq
      }
    }
    if (this.head > 1024 && this.head * 2 > this.pending.length) {
      this.pending = this.pending.slice(this.head)
      this.head = 0
    }
  }

  /**
   * Brings the log up to date with the entries as they are (the store's, read at open; before any
   * write): a record for each entry it does not describe (back-fill, a hand-written file, a write
   * a crash cut short), a tombstone for each recorded entry that is gone. Returns how many.
   */
  async reconcile (entries: Iterable<StoredLocation> | AsyncIterable<StoredLocation>): Promise<number> {
    this.writable()
    const now = this.now()
    const seen = new Set<string>()
    const changes: Change[] = []
    for await (const { scope, collection, entry } of entries) {
      const key = { environment: scope.environment, locale: scope.locale, collection, slug: entry.slug }
      seen.add(changeKeyText(key))
      const record = this.index.get(key)
      if (record === undefined || !recordMatchesEntry(record, entry)) changes.push(entryChange(key, entry, now))
    }
    for (const record of this.index.records()) {
      if (record.op === 'upsert' && !seen.has(changeKeyText(record))) changes.push(entryChange(record, null, now))
    }
    // In the order they happened, as far as the entries tell.
    changes.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0))
    const durable = changes.map(change => {
      const begun = this.begin(change)
      this.settle(begun.seq)
      return begun.durable
    })
    await Promise.all(durable)
    if (changes.length > 0) this.options.log.info({ records: changes.length }, 'change log brought up to date with the entries')
    return changes.length
  }

  // ---- reads ---------------------------------------------------------------------------------

  async since (afterSeq: number, limit: number, filter: ChangeFilter): Promise<ChangePage> {
    this.writable()
    checkPageArguments(afterSeq, limit)
    const { records, more } = this.index.page(afterSeq, limit, filter)
    const upTo = more ? (records.at(-1) as ChangeRecord).seq : Math.max(afterSeq, this.readable)
    return { records, more, upTo }
  }

  async latestSeq (): Promise<number> {
    this.writable()
    return this.readable
  }

  async horizon (): Promise<number> {
    this.writable()
    return this.horizonSeq
  }

  // ---- compaction ----------------------------------------------------------------------------

  async compact (): Promise<CompactionResult> {
    const appender = this.writable()
    return await appender.exclusive(async () => await this.rewrite(0))
  }

  /** Superseded lines the file may hold: about as many as live records, and at least MIN_WASTE. */
  private wasteAllowed (): number {
    return Math.max(this.index.size, MIN_WASTE)
  }

  /** Starts a compaction when superseded lines look too many, or the hourly check is due. */
  private compactIfDue (): void {
    if (this.compacting !== null) return
    const now = this.options.clock().getTime()
    const due = now - this.lastCompactionCheck >= COMPACTION_INTERVAL_MS
    if (!due && this.lines - this.index.size <= this.wasteAllowed()) return
    if (due) this.lastCompactionCheck = now
    const appender = this.writable()
    this.compacting = appender.exclusive(async () => await this.rewrite(this.wasteAllowed()))
      .catch((err: unknown) => { this.options.log.warn({ err }, 'change log compaction failed') })
      .finally(() => { this.compacting = null })
  }

  /**
   * Inside an exclusive task of the appender: writes the file anew when tombstones have expired
   * or more than `minWaste` lines are superseded (-1: always), and only once the new file is in
   * place forgets the expired tombstones and moves the horizon.
   */
  private async rewrite (minWaste: number): Promise<CompactionResult> {
    const cutoff = retentionCutoff(this.options.clock(), this.options.retentionDays)
    const keep: ChangeRecord[] = []
    const expired: ChangeRecord[] = []
    for (const record of this.index.records()) (isExpiredTombstone(record, cutoff) ? expired : keep).push(record)
    // Appended, not yet readable: in the file, so in the new one (after their key's older record).
    for (let i = this.head; i < this.pending.length; i++) {
      const item = this.pending[i] as Pending
      if (item.written) keep.push(item.record)
    }
    const superseded = this.lines - keep.length - expired.length
    if (expired.length === 0 && superseded <= minWaste) return { dropped: 0, horizon: this.horizonSeq }
    keep.sort((a, b) => a.seq - b.seq)
    const horizon = expired.reduce((max, r) => Math.max(max, r.seq), this.horizonSeq)
    await this.install(headerLine(horizon) + keep.map(recordLine).join(''))
    for (const record of expired) this.index.remove(record)
    this.horizonSeq = horizon
    this.lines = keep.length
    if (expired.length > 0) this.options.log.info({ dropped: expired.length, horizon }, 'change log compacted')
    return { dropped: expired.length, horizon }
  }

  /**
   * Puts `text` in place of the log and sends appends to it. Once renamed, the new file is the
   * log: if its folder cannot be synced, the rename may not survive a crash, and appends made to
   * it would be lost with it, so every later append fails instead.
   */
  private async install (text: string): Promise<void> {
    const appender = this.appender as GroupAppender
    const handle = await this.writeNewFile(text)
    await appender.replace(handle, Buffer.byteLength(text)).close().catch(() => {})
    try {
      await fsyncDir(path.dirname(this.file))
    } catch (err) {
      appender.fail(err as Error)
      throw err
    }
  }

  /** Writes `text` to a temp file, syncs it and renames it over the log; the handle stays open for appends. */
  private async writeNewFile (text: string): Promise<AppendTarget> {
    const temp = tempPathFor(path.dirname(this.file), CHANGE_LOG_FILE)
    const handle = await open(temp, 'wx', 0o644)
    try {
      await handle.writeFile(text)
      await handle.datasync()
      await rename(temp, this.file)
    } catch (err) {
      await handle.close()
      await rm(temp, { force: true })
      throw err
    }
    return handle
  }

  // ---- helpers -------------------------------------------------------------------------------

  private writable (): GroupAppender {
    if (this.appender === null) throw new Error('the change log is not open')
    return this.appender
  }

  private now (): string {
    return this.options.clock().toISOString()
  }
}
