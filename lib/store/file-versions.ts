// The file store's kept versions (types/editorial.ts, contract §13). The newest version of an
// entry is its entry file: a write that keeps a version writes `"version": n` into the entry file
// (file.ts), and nothing else, so a version costs a create no extra disk write, and a crash can
// never leave a version of a write that did not land. The older ones are in one append-only
// JSON-lines file per entry, `<bucket>/.versions/<slug>.jsonl`, beside the entry files (a hidden
// folder: the entry reader, the fingerprint and the folder listing pass it by). Each line:
//   {"version":3,"status":"published","created_at":…,"entry_created_at":…,"floor":1,"data":{…}}
// Before an entry file that names a version is replaced (an update) or removed (a delete), that
// version is appended to the file and fdatasync'ed (by the writer threads, in parallel with the
// change record's append), so the versions file only ever holds versions of writes that landed.
//
// `floor` is what the write that appended it dropped (its own number minus keepVersions): versions
// numbered at or below the highest floor of the file are gone, whether or not a compaction has
// removed their lines yet. So a write appends one line, and the file is rewritten (atomically) with
// its live lines once it holds about twice what it keeps. A torn last line (a crash mid-append) is
// never read and is cut off before the next append. Lines a merge of two entries' versions wrote
// (layout moves, file-layout.ts) also carry `move`: the merge's id.
import { readFile, truncate } from 'node:fs/promises'
import path from 'node:path'
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

/** The newest version of an entry: what its file says, when it names a version (null: it names none). */
export function entryVersion (entry: StoredEntry, version: number | undefined, floor = 0): VersionLine | null {
  if (version === undefined) return null
  return { version, status: entry.status, created_at: entry.updatedAt, entry_created_at: entry.createdAt, floor, data: entry.data }
}

/** The versions files of one store: appends before an entry file is replaced, compaction, reads. */
export class FileVersions {
  private readonly meta = new Map<string, Meta>()

  constructor (private readonly io: VersionsIO) {}

  /** Forgets what was learnt of the files (at open: the files may have been moved or written by hand). */
  reset (): void {
    this.meta.clear()
  }

  /** The file's versions and the entry's own (`newest`), newest first, the newest `keep` of them. */
  private async visible (file: string, newest: VersionLine | null, keep: number): Promise<VersionLine[]> {
    if (keep <= 0) return []
    const { lines } = await readVersions(file)
    // The entry's own goes first among lines of its number: the file's may be older (written by hand).
    return liveVersions(newest === null ? lines : [...lines, newest]).slice(0, keep)
  }

  async list (file: string, newest: VersionLine | null, keep: number, offset: number, limit: number): Promise<{ items: VersionSummary[], total: number }> {
    const live = await this.visible(file, newest, keep)
    return { items: live.slice(offset, offset + limit).map(summary), total: live.length }
  }

  async get (file: string, newest: VersionLine | null, n: number, keep: number): Promise<EntryVersion | undefined> {
    const line = (await this.visible(file, newest, keep)).find(v => v.version === n)
    if (line === undefined) return undefined
    return deepFreeze({ ...summary(line), data: line.data })
  }

  /**
   * Before a write replaces or removes the entry file: appends the version that file names
   * (`current`, unless the file has it), durably, with the floor of the write's own version, and
   * returns that version's number (one above the highest ever stored; null when `keep` is 0),
   * which the new entry file names.
   */
  async beforeWrite (file: string, current: VersionLine | null, keep: number): Promise<number | null> {
    const meta = await this.load(file)
    const version = keep > 0 ? Math.max(meta.highest, current?.version ?? 0) + 1 : null
    if (current === null || current.version <= meta.highest) return version
    const line = { ...current, floor: Math.max(meta.floor, current.floor, version === null ? 0 : version - keep) }
    try {
      if (meta.lines + 1 > 2 * keep + SLACK_LINES) {
        await this.compact(file, line)
      } else {
        const text = lineText(line)
        await this.io.append(path.dirname(file), path.basename(file), text, meta.bytes)
        this.meta.set(file, { highest: line.version, floor: line.floor, lines: meta.lines + 1, bytes: meta.bytes + Buffer.byteLength(text) })
      }
    } catch (err) {
      this.meta.delete(file)
      throw err
    }
    return version
  }

  /** What the file holds, read once since open; a torn tail is cut off by the next append. */
  private async load (file: string): Promise<Meta> {
    const known = this.meta.get(file)
    if (known !== undefined) return known
    const parsed = await readVersions(file)
    const meta = { ...extent(parsed.lines), lines: parsed.lines.length, bytes: parsed.validBytes }
    if (parsed.size > parsed.validBytes) await truncate(file, parsed.validBytes)
    this.meta.set(file, meta)
    return meta
  }

  /** Rewrites the file with its live lines and `line` (atomic, durable). */
  private async compact (file: string, line: VersionLine): Promise<void> {
    const kept = liveVersions([...(await readVersions(file)).lines, line]).reverse()
    // The newest keeps the floor: a compacted file says what was dropped as the appended one did.
    const text = kept.map(lineText).join('')
    await this.io.write(path.dirname(file), path.basename(file), text)
    this.meta.set(file, { highest: line.version, floor: line.floor, lines: kept.length, bytes: Buffer.byteLength(text) })
  }
}
