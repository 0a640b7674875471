// The reverse-reference index on disk: `<dataDir>/references.json`, written atomically (temp
// file, fsync, rename, folder fsync) a moment after changes (debounced) and on close.
//
// Crash consistency. The index changes after the content store has made a write durable, so a
// file written at any time but a clean close may lag behind the content. A marker file
// (`references.json.open`) is created durably when the server opens the index and removed only
// after the final save on close. At start, a marker still present means the last run did not
// close cleanly: the file may be stale and the index is rebuilt from the stored entries. The
// file also records a signature of every collection's reference fields, so schema files edited
// while the server was down cause a rebuild too, and the store's content fingerprint as it was at
// the final save (ContentStore.contentFingerprint), so entries added, removed or rewritten while
// the server was down (hand-written files of the file store) cause one as well.
import { writeFileSync } from 'node:fs'
import { access, readFile } from 'node:fs/promises'
import path from 'node:path'
import { DirSyncer, removeFileDurably, writeFileAtomic } from '../durable.js'
import { ReverseIndex } from './reverse-index.js'

export const REFERENCE_INDEX_FILE = 'references.json'
export const OPEN_MARKER = 'references.json.open'

export type LoadResult =
  | { status: 'loaded', index: ReverseIndex }
  | { status: 'missing' | 'unclean' | 'outdated' | 'stale', index: null }
  | { status: 'unreadable', index: null, error: Error }

export interface IndexFileOptions {
  /** The data directory. */
  dir: string
  /** Delay between a change and its save; later changes join the same save. */
  debounceMs?: number
  /** A failed background save (the next change or the close tries again). */
  onError?: (err: unknown) => void
}

async function exists (file: string): Promise<boolean> {
  try {
    await access(file)
    return true
  } catch {
    return false
  }
}

export class IndexFile {
  private readonly dir: string
  private readonly debounceMs: number
  private readonly onError: (err: unknown) => void
  private readonly syncer: DirSyncer
  private index: ReverseIndex | null = null
  private signature = ''
  private content: string | null = null
  private dirty = false
  private timer: NodeJS.Timeout | null = null
  private chain: Promise<void> = Promise.resolve()
  private closed = false
  private remarked = false
  /** Number of completed saves (tests observe the debounce with it). */
  saves = 0

  constructor (options: IndexFileOptions) {
    this.dir = options.dir
    this.debounceMs = options.debounceMs ?? 1000
    this.onError = options.onError ?? (() => {})
    this.syncer = new DirSyncer(options.dir)
  }

  get file (): string {
    return path.join(this.dir, REFERENCE_INDEX_FILE)
  }

  /**
   * Reads the saved index; says why not when it cannot be trusted: saved for other reference
   * fields (`outdated`) or for other content (`stale`: `content` is the store's fingerprint now).
   */
  async load (signature: string, content: string | null = null): Promise<LoadResult> {
    if (await exists(path.join(this.dir, OPEN_MARKER))) return { status: 'unclean', index: null }
    let text: string
    try {
      text = await readFile(this.file, 'utf8')
    } catch (err) {
      if ((err as { code?: string }).code === 'ENOENT') return { status: 'missing', index: null }
      return { status: 'unreadable', index: null, error: err as Error }
    }
    try {
      const saved = JSON.parse(text) as { signature?: unknown, content?: unknown }
      const index = ReverseIndex.fromJSON(saved)
      if (saved.signature !== signature) return { status: 'outdated', index: null }
      if ((saved.content ?? null) !== content) return { status: 'stale', index: null }
      return { status: 'loaded', index }
    } catch (err) {
      return { status: 'unreadable', index: null, error: err as Error }
    }
  }

  /**
   * Starts keeping `index`: creates the marker (durably, before any write can change the
   * index) and, when `save` is true (a rebuilt index), saves it at once.
   */
  async open (index: ReverseIndex, signature: string, save: boolean, content: string | null = null): Promise<void> {
    this.index = index
    this.signature = signature
    this.content = content
    await writeFileAtomic(path.join(this.dir, OPEN_MARKER), 'The reference index is open: if this file is here at start, the last run did not close cleanly and the index is rebuilt.\n', this.syncer)
    if (save) {
      this.dirty = true
      await this.flush()
    }
  }

  /** The reference fields changed (a schema write): later saves carry the new signature. */
  setSignature (signature: string): void {
    if (signature === this.signature) return
    this.signature = signature
    this.changed()
  }

  /**
   * The store's content fingerprint the index now matches (before the final save: the content
   * as it is at close); null when it could not be had, so the next start rebuilds.
   */
  setContent (content: string | null): void {
    if (content === this.content) return
    this.content = content
    this.changed()
  }

  /** The index changed: saved after the debounce delay. */
  changed (): void {
    this.dirty = true
    if (this.closed) {
      // A change after the final save: the file is behind again, so the next start rebuilds.
      if (!this.remarked) {
        this.remarked = true
        try { writeFileSync(path.join(this.dir, OPEN_MARKER), 'changed after close\n') } catch (err) { this.onError(err) }
      }
      return
    }
    if (this.timer !== null) return
    this.timer = setTimeout(() => {
      this.timer = null
      this.flush().catch(this.onError)
    }, this.debounceMs)
    this.timer.unref()
  }

  /** Saves now if anything changed since the last save; saves never overlap. */
  async flush (): Promise<void> {
    const run = this.chain.then(async () => { await this.save() })
    this.chain = run.catch(() => {})
    await run
  }

  private async save (): Promise<void> {
    if (!this.dirty || this.index === null) return
    this.dirty = false
    // Serialized synchronously: the saved state is the index at one instant.
    const text = JSON.stringify({ ...this.index.toJSON(), signature: this.signature, content: this.content })
    try {
      await writeFileAtomic(path.join(this.dir, REFERENCE_INDEX_FILE), text, this.syncer)
      this.saves++
    } catch (err) {
      this.dirty = true
      throw err
    }
  }

  /** Removes the saved index (it is not kept with environments); true when there was one. */
  async discard (): Promise<boolean> {
    return await removeFileDurably(path.join(this.dir, REFERENCE_INDEX_FILE), this.syncer)
  }

  /** Final save, then the marker goes: the file is current. If the save fails, the marker stays. */
  async close (): Promise<void> {
    this.closed = true
    if (this.timer !== null) {
      clearTimeout(this.timer)
      this.timer = null
    }
    if (this.index === null) return
    await this.flush()
    await removeFileDurably(path.join(this.dir, OPEN_MARKER), this.syncer)
  }
}
