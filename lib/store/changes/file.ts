// The file store's change log: `<data>/content/changes.log` (format.ts), appends with group
// commit (appender.ts). What it keeps in memory is bounded by the entries that exist, not by the
// history: the latest record of each existing entry (an upsert, memory.ts), and, for the keys
// written since the last rewrite, their latest seq (the "tail"). Tombstones stay on disk only:
// a read finds them in the file (scan.ts), and a tombstone there is its key's latest record
// unless the tail holds a higher seq for the key (a rewrite keeps only latest records, so the
// tail says everything that superseded a line since).
//
// A write goes: `begin(change)` (its seq is given at once, in the write's synchronous step, so
// writes to one entry get growing seqs in the order they are chained), the record is appended
// and fdatasync'ed (`durable`), then the entry file is written, then `settle(seq)` once the
// write is over. A change becomes readable when it is settled and every lower seq is settled too:
// the entry writes of different entries finish in any order, but readers meet their records in
// seq order and never have to go back. A write that failed is settled with the entry as it really
// is (`settle(seq, actual)`), so the log says what a reader will find (until the next rewrite
// puts it in the file, the tail holds that record in place of its line); a crash between the
// append and the entry write leaves a record the entry does not match, which `reconcile` (called
// at every open with the store's entries) replaces by one that does. A record never misses a
// durable write.
//
// A rewrite (compaction) streams the file into a new one (temp file, fdatasync, rename, folder
// fsync) with each key's latest record, without the tombstones past the retention period, and
// the new horizon. It runs when the tail holds more keys than the entries (at least
// MIN_TAIL_KEYS), when the lines appended since the last one outnumber those it kept (so the
// file stays within about twice its live records), at open, and at most hourly (checked on
// write) for tombstones past retention.
import { mkdir, open, readdir, readFile, rename, rm, unlink, type FileHandle } from 'node:fs/promises'
import path from 'node:path'
import { fsyncDir, isTempFile, tempPathFor } from '../../durable.js'
import { GroupAppender, type AppendTarget } from './appender.js'
import {
  COMPACTION_INTERVAL_MS, changeKeyText, changeRecord, checkChange, checkPageArguments, entryChange, isExpiredTombstone,
  matchesChangeFilter, recordMatchesEntry, resolveChangeLogOptions, retentionCutoff, type ChangeLogOptions, type ResolvedChangeLogOptions
} from './common.js'
import {
  CHANGE_LOG_FILE, PADDED_HEADER_BYTES, headerLine, paddedHeaderLine, parseChangeLog, parseRecordLine, recordFields, recordLine, type ParsedChangeLog
} from './format.js'
import { ChangeIndex } from './memory.js'
import { firstLineAbove, lineBatches, seqOfLine } from './scan.js'
import type { Change, ChangeFilter, ChangeLog, ChangePage, ChangeRecord, CompactionResult } from '../../../types/changes.js'
import type { EntryStatus, StoredLocation } from '../../../types/store.js'

/** Lines appended since the last rewrite tolerated before the next, whatever the number it kept. */
const MIN_WASTE = 1000
/** Keys the tail may hold before a rewrite, whatever the number of entries (about 100 bytes each). */
export const MIN_TAIL_KEYS = 16_384

export interface FileChangeLogOptions extends ChangeLogOptions {
  /** The file store's content folder (`<data>/content`): the log is `changes.log` in it. */
  dir: string
  /** Keys the tail may hold before a rewrite when there are fewer entries: MIN_TAIL_KEYS by default (tests lower it). */
  tailKeys?: number
}

/**
 * A change whose record is appended; `durable` resolves once it is on disk, `readable` once it
 * and every lower seq are over (readable by `since`, or never, if its append failed).
 */
export interface BegunChange {
  seq: number
  durable: Promise<void>
  readable: Promise<void>
}

/** An entry as it is, for `settle` after a failed write: null when there is none. */
export type ActualEntry = { status: EntryStatus, updatedAt: string } | null

/** What the in-memory part of the log holds (`footprint`): bounded by the entries, not by the history. */
export interface ChangeLogFootprint {
  /** Records in memory: the latest upsert of each existing entry. */
  records: number
  /** Keys in the tail (and in the one a rewrite under way works from). */
  tailKeys: number
  /** Records held in place of their line: failed writes settled since the last rewrite. */
  corrections: number
}

/** What supersedes lines of the file since the last rewrite. */
interface Tail {
  /** Each key's latest readable seq. */
  latest: Map<string, number>
  /** Records that differ from their line (settled as the entry really is), by seq. */
  corrections: Map<number, ChangeRecord>
}

const newTail = (): Tail => ({ latest: new Map(), corrections: new Map() })

interface Pending {
  record: ChangeRecord
  /** The record as appended; `record` differs once settled as the entry really is. */
  readonly line: ChangeRecord
  settled: boolean
  /** The append is on disk (`written`) or failed for good (`failed`, never readable). */
  written: boolean
  failed: boolean
  /** Resolves BegunChange.readable. */
  over: () => void
}

/** What a rewrite copied: the new file's size, lines and tombstones, what it dropped, the horizon. */
interface Copy {
  bytes: number
  lines: number
  tombstones: number
  expired: number
  superseded: number
  horizon: number
}

/** Writes all of `text` at `position`; its length in bytes. */
async function writeAt (handle: FileHandle, text: string, position: number): Promise<number> {
  const bytes = Buffer.from(text, 'utf8')
  let offset = 0
  while (offset < bytes.length) {
    offset += (await handle.write(bytes, offset, bytes.length - offset, position + offset)).bytesWritten
  }
  return bytes.length
}

/** Two seq-ordered lists as one. */
function mergeBySeq (a: ChangeRecord[], b: ChangeRecord[]): ChangeRecord[] {
  if (b.length === 0) return a
  const out: ChangeRecord[] = []
  let i = 0
  let j = 0
  while (i < a.length || j < b.length) {
    const x = a[i]
    const y = b[j]
    if (y === undefined || (x !== undefined && x.seq < y.seq)) { out.push(x as ChangeRecord); i++ } else { out.push(y); j++ }
  }
  return out
}

export class FileChangeLog implements ChangeLog {
  readonly file: string
  private readonly options: ResolvedChangeLogOptions
  private readonly tailKeys: number
  private appender: GroupAppender | null = null
  /** The latest record of each existing entry (upserts only: tombstones are read from the file). */
  private index = new ChangeIndex()
  private tail: Tail = newTail()
  /** The tail a rewrite under way works from: reads of the file it replaces still need it. */
  private frozenTail: Tail | null = null
  /** Changes begun and not yet readable, in seq order (consecutive seqs) from `head`. */
  private pending: Pending[] = []
  private head = 0
  private last = 0
  private readable = 0
  private horizonSeq = 0
  /** Record lines in the file, and how many the last rewrite kept. */
  private lines = 0
  private linesKept = 0
  /** Tombstones the file may hold (0: a read need not look at it). */
  private tombstones = 0
  private lastCompactionCheck = 0
  private compacting: Promise<unknown> | null = null

  constructor (options: FileChangeLogOptions) {
    this.file = path.join(options.dir, CHANGE_LOG_FILE)
    this.options = resolveChangeLogOptions(options)
    this.tailKeys = options.tailKeys ?? MIN_TAIL_KEYS
  }

  /** What the log holds in memory (tests, diagnostics). */
  get footprint (): ChangeLogFootprint {
    const tails = this.tails()
    return {
      records: this.index.size,
      tailKeys: tails.reduce((n, tail) => n + tail.latest.size, 0),
      corrections: tails.reduce((n, tail) => n + tail.corrections.size, 0)
    }
  }

  // ---- life cycle ---------------------------------------------------------------------------

  /** Reads the log (a new one when there is none), cutting off a torn last line, and compacts it if due. */
  async open (): Promise<void> {
    if (this.appender !== null) return
    const dir = path.dirname(this.file)
    await mkdir(dir, { recursive: true })
    await this.removeTempFiles(dir)
    const parsed = parseChangeLog(await this.readOrCreate())
    this.load(parsed)
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

  /** The in-memory part from the file's records: each existing entry's upsert, and the tail of the keys with superseded lines. */
  private load (parsed: ParsedChangeLog): void {
    const latest = new Map<string, ChangeRecord>()
    for (const record of parsed.records) latest.set(changeKeyText(record), record)
    this.index = new ChangeIndex()
    this.tail = newTail()
    this.frozenTail = null
    this.tombstones = 0
    for (const record of parsed.records) {
      const key = changeKeyText(record)
      const newest = latest.get(key) as ChangeRecord
      if (newest !== record) this.tail.latest.set(key, newest.seq)
      else if (record.op === 'upsert') this.index.put(record)
      else this.tombstones++
    }
    this.pending = []
    this.head = 0
    this.lines = this.linesKept = parsed.records.length
    this.horizonSeq = parsed.horizon
    this.last = this.readable = Math.max(parsed.horizon, parsed.records.at(-1)?.seq ?? 0)
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
    let over!: () => void
    const readable = new Promise<void>(resolve => { over = resolve })
    const record = changeRecord(++this.last, change)
    const item: Pending = { record, line: record, settled: false, written: false, failed: false, over }
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
    return { seq: item.record.seq, durable, readable }
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
        this.admit(item)
        this.readable = item.record.seq
      }
      item.over()
    }
    if (this.head > 1024 && this.head * 2 > this.pending.length) {
      this.pending = this.pending.slice(this.head)
      this.head = 0
    }
  }

  /** A written change becomes readable: its key's record in memory if an upsert, in the file only if a tombstone. */
  private admit (item: Pending): void {
    const record = item.record
    // Its key's older lines are superseded, and its own line if the entry turned out otherwise.
    this.tail.latest.set(changeKeyText(record), record.seq)
    if (record !== item.line) this.tail.corrections.set(record.seq, record)
    if (record.op === 'upsert') {
      this.index.put(record)
      return
    }
    const before = this.index.get(record)
    if (before !== undefined) this.index.remove(before)
    this.tombstones++
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
    const latest = this.readable
    const tails = this.tails()
    const upserts = this.index.page(afterSeq, limit, filter)
    // Tombstones above the last upsert of a full page are not needed; none at or below an initial run's start are given.
    const bound = upserts.more ? (upserts.records.at(-1) as ChangeRecord).seq : latest
    const from = Math.max(afterSeq, filter.baseline?.seq ?? 0)
    const tombstones = this.tombstones === 0 || from >= bound ? [] : await this.readTombstones(from, bound, limit + 1, filter, tails)
    const records = mergeBySeq(upserts.records, tombstones)
    const more = upserts.more || records.length > limit
    if (records.length > limit) records.length = limit
    const upTo = more ? (records.at(-1) as ChangeRecord).seq : Math.max(afterSeq, latest)
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

  /** The tails that say which lines are superseded: the current one first, then a rewrite's. */
  private tails (): Tail[] {
    return this.frozenTail === null ? [this.tail] : [this.tail, this.frozenTail]
  }

  /**
   * Up to `max` tombstones in the file with a seq above `from` and at most `bound` that are their
   * key's latest record and match the filter. A tombstone superseded while the file is read may
   * be left out: what superseded it is above `bound`, so the reader meets the key again there.
   */
  private async readTombstones (from: number, bound: number, max: number, filter: ChangeFilter, tails: Tail[]): Promise<ChangeRecord[]> {
    const found: ChangeRecord[] = []
    const collections = filter.collections === undefined ? null : new Set(filter.collections)
    const handle = await open(this.file, 'r')
    try {
      const end = (await handle.stat()).size
      for await (const lines of lineBatches(handle, await firstLineAbove(handle, 0, end, from), end)) {
        for (const text of lines) {
          const seq = seqOfLine(text)
          if (seq > bound) return found
          const record = liveTombstone(seq, text, tails)
          if (record === null || record.environment !== filter.environment || record.locale !== filter.locale) continue
          if (!matchesChangeFilter(record, filter, collections)) continue
          found.push(record)
          if (found.length === max) return found
        }
      }
      return found
    } finally {
      await handle.close()
    }
  }

  // ---- compaction ----------------------------------------------------------------------------

  async compact (): Promise<CompactionResult> {
    const appender = this.writable()
    return await appender.exclusive(async () => await this.rewrite(0))
  }

  /** Superseded lines a rewrite at open or on the hourly check may leave: about as many as live records, and at least MIN_WASTE. */
  private wasteAllowed (): number {
    return Math.max(this.index.size, MIN_WASTE)
  }

  /** Starts a compaction when the tail or the lines appended since the last one are too many, or the hourly check is due. */
  private compactIfDue (): void {
    if (this.compacting !== null) return
    const now = this.options.clock().getTime()
    const due = now - this.lastCompactionCheck >= COMPACTION_INTERVAL_MS
    const full = this.tail.latest.size > Math.max(this.index.size, this.tailKeys) ||
      this.lines - this.linesKept > Math.max(this.linesKept, MIN_WASTE)
    if (!due && !full) return
    if (due) this.lastCompactionCheck = now
    const appender = this.writable()
    this.compacting = appender.exclusive(async () => await this.rewrite(full ? -1 : this.wasteAllowed()))
      .catch((err: unknown) => { this.options.log.warn({ err }, 'change log compaction failed') })
      .finally(() => { this.compacting = null })
  }

  /**
   * Inside an exclusive task of the appender: writes the file anew when tombstones have expired
   * or more than `minWaste` lines are superseded (-1: always), and only once the new file is in
   * place moves the horizon and starts an empty tail.
   */
  private async rewrite (minWaste: number): Promise<CompactionResult> {
    // The frozen tail says what superseded the lines readable now; lines made readable later are kept.
    const frozen = this.tail
    const readable = this.readable
    this.frozenTail = frozen
    this.tail = newTail()
    const tombstonesBefore = this.tombstones
    let installed = false
    try {
      const copy = await this.copyLive(frozen, readable, minWaste)
      if (copy === null) return { dropped: 0, horizon: this.horizonSeq }
      installed = true
      this.horizonSeq = copy.horizon
      this.lines = this.linesKept = copy.lines
      // Tombstones made readable during the rewrite are in the new file too.
      this.tombstones = copy.tombstones + this.tombstones - tombstonesBefore
      if (copy.expired > 0) this.options.log.info({ dropped: copy.expired, horizon: copy.horizon }, 'change log compacted')
      return { dropped: copy.expired, horizon: copy.horizon }
    } finally {
      this.frozenTail = null
      if (!installed) this.mergeTail(frozen)
    }
  }

  /** A tail whose lines were not rewritten goes on counting, under what came since. */
  private mergeTail (older: Tail): void {
    for (const [key, seq] of older.latest) if (!this.tail.latest.has(key)) this.tail.latest.set(key, seq)
    for (const [seq, record] of older.corrections) if (!this.tail.corrections.has(seq)) this.tail.corrections.set(seq, record)
  }

  /**
   * Streams the live lines into a temp file and puts it in place of the log, sending appends to
   * it; null (and nothing written) when there was not enough to drop.
   */
  private async copyLive (tail: Tail, readable: number, minWaste: number): Promise<Copy | null> {
    const temp = tempPathFor(path.dirname(this.file), CHANGE_LOG_FILE)
    const out = await open(temp, 'wx', 0o644)
    let copy: Copy
    try {
      copy = await this.copyLines(tail, readable, out)
      if (copy.expired === 0 && copy.superseded <= minWaste) {
        await out.close()
        await rm(temp, { force: true })
        return null
      }
      // The header last, over its placeholder, once the horizon is known.
      await writeAt(out, paddedHeaderLine(copy.horizon), 0)
      await out.datasync()
      await rename(temp, this.file)
    } catch (err) {
      await out.close().catch(() => {})
      await rm(temp, { force: true })
      throw err
    }
    await this.install(out, copy.bytes)
    return copy
  }

  /**
   * Writes to `out`, after room for a padded header, each line at or below `readable` that is
   * still its key's latest record as `tail` says, as the entry really is, but tombstones past the
   * retention period; and every line above (appended, maybe not yet readable: kept as it is).
   */
  private async copyLines (tail: Tail, readable: number, out: FileHandle): Promise<Copy> {
    const cutoff = retentionCutoff(this.options.clock(), this.options.retentionDays)
    const copy: Copy = { bytes: PADDED_HEADER_BYTES, lines: 0, tombstones: 0, expired: 0, superseded: 0, horizon: this.horizonSeq }
    const source = await open(this.file, 'r')
    let lastSeq = 0
    try {
      for await (const lines of lineBatches(source, 0, (this.appender as GroupAppender).bytes)) {
        let text = ''
        for (const line of lines) {
          // Fields, not records: a rewrite reads every line, and records are long-lived objects elsewhere.
          const correction = tail.corrections.get(seqOfLine(line))
          const record = correction ?? recordFields(line)
          // The header, or a line that open found damaged or out of order: not carried over.
          if (record === null || record.seq <= lastSeq) { if (seqOfLine(line) > 0) copy.superseded++; continue }
          lastSeq = record.seq
          if (record.seq <= readable && (tail.latest.get(changeKeyText(record)) ?? record.seq) !== record.seq) {
            copy.superseded++
          } else if (record.seq <= readable && isExpiredTombstone(record, cutoff)) {
            copy.expired++
            copy.horizon = Math.max(copy.horizon, record.seq)
          } else {
            text += correction === undefined ? line + '\n' : recordLine(correction)
            copy.lines++
            if (record.op === 'delete') copy.tombstones++
          }
        }
        copy.bytes += await writeAt(out, text, copy.bytes)
      }
    } finally {
      await source.close()
    }
    return copy
  }

  /**
   * Sends appends to the new log, renamed in place. Once renamed, the new file is the log: if its
   * folder cannot be synced, the rename may not survive a crash, and appends made to it would be
   * lost with it, so every later append fails instead.
   */
  private async install (handle: AppendTarget, size: number): Promise<void> {
    const appender = this.appender as GroupAppender
    await appender.replace(handle, size).close().catch(() => {})
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

/** The record of the line at `seq` if it is a tombstone still its key's latest record, else null. */
function liveTombstone (seq: number, text: string, tails: Tail[]): ChangeRecord | null {
  let record: ChangeRecord | null | undefined
  for (const tail of tails) record ??= tail.corrections.get(seq)
  // Upserts are in memory: only a tombstone's line is worth parsing (no name holds a quote).
  record ??= text.includes('"delete"') ? parseRecordLine(text) : null
  if (record === null || record.op !== 'delete') return null
  const key = changeKeyText(record)
  for (const tail of tails) {
    const latest = tail.latest.get(key)
    if (latest !== undefined) return latest === seq ? record : null
  }
  return record
}
