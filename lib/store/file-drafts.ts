// The file store's pending drafts (types/editorial.ts, contract §13): one JSON file per entry,
// `<bucket>/.drafts/<slug>.json`, { created_at, updated_at, data }, written atomically and durably
// (temp, fsync, rename, folder fsync); all of them are read at open and kept in memory (drafts are
// few: one per published entry being edited).
//
// A write that publishes the draft (EntryInput.clearDraft) first marks the file with the time the
// entry is written at (`published_at`, durably, in parallel with the change record's append),
// then writes the entry, then removes the draft. A crash in between leaves a marked draft: at open, one whose
// entry carries that time was published and is removed; one whose entry does not (the write never
// landed) is pending still and loses the mark. A draft whose entry is gone (a delete a crash cut
// short before removing it) is removed at open too.
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { isTempFile, removeFileDurably, writeFileAtomic } from '../durable.js'
import { deepFreeze } from '../query/values.js'
import { isSlug } from './names.js'
import { DRAFT_EXT, DRAFTS_DIR, makeDirs } from './file-paths.js'
import type { StoredDraft } from '../../types/editorial.js'
import type { StoredEntry } from '../../types/store.js'

interface DraftFile {
  created_at: string
  updated_at: string
  data: Record<string, unknown>
  published_at?: string
}

function isDraftFile (value: unknown): value is DraftFile {
  if (value === null || typeof value !== 'object') return false
  const d = value as Record<string, unknown>
  return typeof d.created_at === 'string' && typeof d.updated_at === 'string' &&
    d.data !== null && typeof d.data === 'object' && !Array.isArray(d.data) &&
    (d.published_at === undefined || typeof d.published_at === 'string')
}

const fileText = (draft: StoredDraft, publishedAt?: string): string =>
  JSON.stringify({ created_at: draft.createdAt, updated_at: draft.updatedAt, data: draft.data, published_at: publishedAt }, null, 2) + '\n'

/** What opening found in the draft folders. */
export interface DraftRepairs {
  /** Drafts removed: published by a write a crash cut short, or of an entry that is gone. */
  removed: number
  /** Drafts whose publish never landed: pending again. */
  restored: number
}

/** Every pending draft of a store, by file. */
export class FileDrafts {
  private readonly drafts = new Map<string, StoredDraft>()

  clear (): void {
    this.drafts.clear()
  }

  get (file: string): StoredDraft | undefined {
    return this.drafts.get(file)
  }

  /** Saves the draft durably, keeping the created_at of the one it replaces. */
  async put (file: string, data: Record<string, unknown>, now: string): Promise<StoredDraft> {
    const draft = deepFreeze({ data: structuredClone(data), createdAt: this.drafts.get(file)?.createdAt ?? now, updatedAt: now })
    await makeDirs(path.dirname(path.dirname(file)), path.dirname(file))
    await writeFileAtomic(file, fileText(draft))
    this.drafts.set(file, draft)
    return draft
  }

  /** Discards the draft durably: whether there was one. */
  async remove (file: string): Promise<boolean> {
    if (!this.drafts.has(file)) return false
    await removeFileDurably(file)
    this.drafts.delete(file)
    return true
  }

  /** Marks the draft as being published by the entry write at `updatedAt` (durably), when there is one. */
  async markPublishing (file: string, updatedAt: string): Promise<void> {
    const draft = this.drafts.get(file)
    if (draft !== undefined) await writeFileAtomic(file, fileText(draft, updatedAt))
  }

  /** At open: reads a bucket's draft folder, repairing what a crash left (see the header). */
  async load (bucketDir: string, entryOf: (slug: string) => StoredEntry | undefined, repairs: DraftRepairs): Promise<void> {
    const dir = path.join(bucketDir, DRAFTS_DIR)
    for (const name of await readdir(dir)) {
      const file = path.join(dir, name)
      const slug = name.slice(0, -DRAFT_EXT.length)
      if (isTempFile(name)) { await removeFileDurably(file); continue }
      if (!name.endsWith(DRAFT_EXT) || !isSlug(slug)) continue
      const draft = await readDraft(file)
      if (draft === null) continue
      const entry = entryOf(slug)
      if (entry === undefined || (draft.published_at !== undefined && draft.published_at === entry.updatedAt)) {
        await removeFileDurably(file)
        repairs.removed++
        continue
      }
      const stored = deepFreeze({ data: draft.data, createdAt: draft.created_at, updatedAt: draft.updated_at })
      if (draft.published_at !== undefined) {
        await writeFileAtomic(file, fileText(stored))
        repairs.restored++
      }
      this.drafts.set(file, stored)
    }
  }
}

async function readDraft (file: string): Promise<DraftFile | null> {
  try {
    const value: unknown = JSON.parse(await readFile(file, 'utf8'))
    return isDraftFile(value) ? value : null
  } catch {
    return null
  }
}
