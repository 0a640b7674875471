// The file store's kept versions (types/editorial.ts, contract §13): one append-only JSON-lines
// file per entry, `<bucket>/.versions/<slug>.jsonl`, beside the entry files (a hidden folder: the
// entry reader, the fingerprint and the folder listing pass it by). Each line is one version:
//   {"version":3,"status":"published","created_at":…,"entry_created_at":…,"floor":1,"data":{…}}
// `floor` is what the write that stored it dropped: versions numbered at or below the highest
// floor of the file are gone, whether or not a compaction has removed their lines yet. So a write
// appends one line (no rewrite), and the file is rewritten (atomically: temp, fsync, rename, folder
// fsync) with its live lines only once it holds about twice what it keeps. A line a merge of two
// entries' versions wrote (layout moves, file-layout.ts) also carries `move`: the merge's id.
//
// Crash safety: a line is appended and fdatasync'ed (by the store's writer threads) in parallel
// with the entry file's write, after the write's change record is durable. A torn last line (a crash mid-append) is never read and is
// cut off before the next append. A line whose entry write never landed is dropped at open
// (`dropIfUnmatched`): its change record, durable first, is then one the entry does not match,
// which the change log's reconcile finds.
import { open, readFile, truncate } from 'node:fs/promises'
import path from 'node:path'
import { writeFileAtomic } from '../durable.js'
import { deepFreeze } from '../query/values.js'
import { isEntryStatus } from './common.js'
import type { EntryVersion, VersionSummary } from '../../types/editorial.js'
import type { EntryStatus, StoredEntry } from '../../types/store.js'

/** Lines a file may hold beyond twice what it keeps before a write compacts it. */
const SLACK_LINES = 8

/** One line of a versions file. */
export interface VersionLine {
  version: number
  status: EntryStatus
  created_at: string
  entry_created_at: string
  floor: number
  data: Record<string, unknown>
  move?: string
}

/** A versions file as read: its whole lines, and the bytes they take (a torn tail follows them). */
export interface ParsedVersions {
  lines: VersionLine[]
  validBytes: number
  size: number
}

/** What the last write to a file left: known once the file was read since open. */
interface Meta {
  highest: number
  floor: number
  lines: number
  bytes: number
}

/** How to take back an appended version when its entry write failed. */
export interface VersionUndo {
  file: string
  /** The file's size before (append), or its text before (compaction). */
  before: number | string
}

function isVersionLine (value: unknown): value is VersionLine {
  if (value === null || typeof value !== 'object') return false
  const v = value as Record<string, unknown>
  return Number.isSafeInteger(v.version) && (v.version as number) > 0 && isEntryStatus(v.status) &&
    typeof v.created_at === 'string' && typeof v.entry_created_at === 'string' && Number.isSafeInteger(v.floor) &&
    v.data !== null && typeof v.data === 'object' && !Array.isArray(v.data)
}

/** The lines of a file's text: complete lines only (a torn or damaged one is skipped). */
export function parseVersions (bytes: Buffer): ParsedVersions {
  const lines: VersionLine[] = []
  let start = 0
  for (let end = bytes.indexOf(10, start); end !== -1; end = bytes.indexOf(10, start)) {
    try {
      const value: unknown = JSON.parse(bytes.toString('utf8', start, end))
      if (isVersionLine(value)) lines.push(value)
    } catch {}
    start = end + 1
  }
  return { lines, validBytes: start, size: bytes.length }
}

export async function readVersions (file: string): Promise<ParsedVersions> {
  try {
    return parseVersions(await readFile(file))
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return { lines: [], validBytes: 0, size: 0 }
    throw err
  }
}

/** The highest number stored and the highest floor. */
export function extent (lines: readonly VersionLine[]): { highest: number, floor: number } {
  let highest = 0
  let floor = 0
  for (const line of lines) {
    highest = Math.max(highest, line.version)
    floor = Math.max(floor, line.floor)
  }
  return { highest, floor }
}

/** The live versions, newest first, one per number (the last line of a number wins). */
export function liveVersions (lines: readonly VersionLine[]): VersionLine[] {
  const { floor } = extent(lines)
  const byNumber = new Map<number, VersionLine>()
  for (const line of lines) if (line.version > floor) byNumber.set(line.version, line)
  return [...byNumber.values()].sort((a, b) => b.version - a.version)
}

export function lineText (line: VersionLine): string {
  return JSON.stringify(line) + '\n'
}

const summary = (line: VersionLine): VersionSummary =>
  ({ version: line.version, status: line.status, createdAt: line.created_at, entryCreatedAt: line.entry_created_at })

/** The disk writes of versions files: the file store's writer threads (writer.ts) do them. */
export interface VersionsIO {
  /** Writes `text` at `position` of `dir/name`, fdatasync'ed; the file and folder made (durably) when missing. */
  append: (dir: string, name: string, text: string, position: number) => Promise<void>
  /** Replaces `dir/name` atomically and durably. */
  write: (dir: string, name: string, text: string) => Promise<void>
}

/** The versions files of one store: appends, compaction, reads that leave out versions whose write is in flight. */
export class FileVersions {
  private readonly meta = new Map<string, Meta>()
  /** The number each file is being written with (its entry write not yet over): not read until then. */
  private readonly writing = new Map<string, number>()

  constructor (private readonly io: VersionsIO) {}

  /** Forgets what was learnt of the files (at open: the files may have been moved or written by hand). */
  reset (): void {
    this.meta.clear()
    this.writing.clear()
  }

  /** The visible versions of a file (without one being written), newest first, the newest `keep`. */
  private async visible (file: string, keep: number): Promise<VersionLine[]> {
    if (keep <= 0) return []
    const pending = this.writing.get(file)
    const { lines } = await readVersions(file)
    return liveVersions(pending === undefined ? lines : lines.filter(line => line.version !== pending)).slice(0, keep)
  }

  async list (file: string, keep: number, offset: number, limit: number): Promise<{ items: VersionSummary[], total: number }> {
    const live = await this.visible(file, keep)
    return { items: live.slice(offset, offset + limit).map(summary), total: live.length }
  }

  async get (file: string, n: number, keep: number): Promise<EntryVersion | undefined> {
    const line = (await this.visible(file, keep)).find(v => v.version === n)
    if (line === undefined) return undefined
    return deepFreeze({ ...summary(line), data: line.data })
  }

  /**
   * Stores the version of `entry` (durable before it resolves), numbered one above the highest
   * ever stored, dropping those at or below `number - keep`. Hidden from reads until `done`.
   */
  async append (file: string, entry: StoredEntry, keep: number): Promise<VersionUndo> {
    const meta = await this.load(file)
    const version = meta.highest + 1
    this.writing.set(file, version)
    const line: VersionLine = {
      version, status: entry.status, created_at: entry.updatedAt, entry_created_at: entry.createdAt, floor: Math.max(meta.floor, version - keep), data: entry.data
    }
    try {
      if (meta.lines + 1 > 2 * keep + SLACK_LINES) return await this.compact(file, line)
      const undo: VersionUndo = { file, before: meta.bytes }
      const text = lineText(line)
      await this.io.append(path.dirname(file), path.basename(file), text, meta.bytes)
      this.meta.set(file, { highest: version, floor: line.floor, lines: meta.lines + 1, bytes: meta.bytes + Buffer.byteLength(text) })
      return undo
    } catch (err) {
      this.meta.delete(file)
      this.writing.delete(file)
      throw err
    }
  }

  /** The entry write of the version being written is over: readable from now on. */
  done (file: string): void {
    this.writing.delete(file)
  }

  /** The entry write failed: the version goes too (the file as it was), then reads go on as before. */
  async undo (undo: VersionUndo): Promise<void> {
    this.meta.delete(undo.file)
    try {
      if (typeof undo.before === 'number') {
        await truncate(undo.file, undo.before)
        const handle = await open(undo.file, 'r+')
        try { await handle.datasync() } finally { await handle.close() }
      } else {
        await writeFileAtomic(undo.file, undo.before)
      }
    } finally {
      this.writing.delete(undo.file)
    }
  }

  /**
   * At open, for an entry its latest change record does not match (a write a crash cut short;
   * `recordedAt`: that record's time, null when the key has no upsert recorded): drops the newest
   * version when it is that write's and not the entry as it is. Lines a merge wrote are no
   * write's. Returns whether one was dropped.
   */
  async dropIfUnmatched (file: string, entry: StoredEntry | undefined, recordedAt: string | null): Promise<boolean> {
    const parsed = await readVersions(file)
    const last = parsed.lines.at(-1)
    if (last === undefined || last.move !== undefined) return false
    // The log's record of the key is another write's (a later one without a version): not this one's to judge.
    if (recordedAt !== null && recordedAt !== last.created_at) return false
    if (entry !== undefined && last.created_at === entry.updatedAt && last.status === entry.status &&
      JSON.stringify(last.data) === JSON.stringify(entry.data)) return false
    await writeFileAtomic(file, parsed.lines.slice(0, -1).map(lineText).join(''))
    this.meta.delete(file)
    return true
  }

  /** What the file holds, read once since open; a torn tail is cut off by the next append. */
  private async load (file: string): Promise<Meta> {
    const known = this.meta.get(file)
    if (known !== undefined) return known
    const parsed = await readVersions(file)
    const meta = { ...extent(parsed.lines), lines: parsed.lines.length, bytes: parsed.validBytes }
    if (parsed.size > parsed.validBytes) {
      await truncate(file, parsed.validBytes)
    }
    this.meta.set(file, meta)
    return meta
  }

  /** Rewrites the file with its live lines and `line` (atomic, durable). */
  private async compact (file: string, line: VersionLine): Promise<VersionUndo> {
    const before = (await readFile(file)).toString('utf8')
    const lines = parseVersions(Buffer.from(before)).lines
    const kept = liveVersions([...lines, line]).reverse()
    // The newest keeps the floor: a compacted file says what was dropped as the appended one did.
    const text = kept.map(lineText).join('')
    await this.io.write(path.dirname(file), path.basename(file), text)
    this.meta.set(file, { highest: line.version, floor: line.floor, lines: kept.length, bytes: Buffer.byteLength(text) })
    return { file, before }
  }
}
