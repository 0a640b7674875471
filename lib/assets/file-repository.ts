// Asset metadata as one JSON index file, `<data>/assets-index.json`, held in memory and rewritten
// atomically (temp file + fsync + rename) after every change. Concurrent changes are coalesced:
// while one write runs, later changes wait for the next write, which carries all of them, so a
// burst of uploads costs a few rewrites rather than one each.
import { mkdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { matches, type AssetRepository, type OpenResult } from './repository.js'
import { writeFileAtomic } from '../durable.js'
import { oldestFirst } from './rows.js'
import type { AssetListQuery, AssetListResult, AssetMeta, AssetPosition } from './types.js'

export const ASSET_INDEX_FILE = 'assets-index.json'
const VERSION = 1

interface Entry {
  meta: AssetMeta
  /** Insertion order: breaks ties between equal timestamps (the later insert is newer). */
  seq: number
}

interface IndexFile {
  version: number
  assets: Array<AssetMeta & { seq: number }>
}

/** The index of the first entry after `position` in `newest` (list order), by binary search. */
function firstAfter (newest: readonly Entry[], position: AssetPosition): number {
  let low = 0
  let high = newest.length
  while (low < high) {
    const mid = (low + high) >>> 1
    const { meta, seq } = newest[mid] as Entry
    const after = meta.createdAt < position.createdAt || (meta.createdAt === position.createdAt && seq < position.ordinal)
    if (after) high = mid
    else low = mid + 1
  }
  return low
}

export class FileAssetRepository implements AssetRepository {
  readonly kind = 'file' as const
  readonly file: string
  private readonly environments = new Map<string, Map<string, Entry>>()
  /** Per environment, entries newest first; rebuilt lazily after a change. */
  private readonly sorted = new Map<string, Entry[]>()
  private seq = 0
  private opened = false

  private writing: Promise<void> | null = null
  private queued: Promise<void> | null = null

  constructor (dataDir: string) {
    this.file = path.join(dataDir, ASSET_INDEX_FILE)
  }

  async open (scan: () => Promise<AssetMeta[]>): Promise<OpenResult> {
    let rebuilt: OpenResult['rebuilt'] = null
    const stored = await this.read()
    if (typeof stored === 'string') {
      const metas = await scan()
      metas.sort(oldestFirst)
      for (const meta of metas) this.put(meta, ++this.seq)
      await mkdir(path.dirname(this.file), { recursive: true })
      await writeFileAtomic(this.file, this.serialize())
      rebuilt = stored
    } else {
      for (const { seq, ...meta } of stored.assets) {
        this.put(meta, seq)
        if (seq > this.seq) this.seq = seq
      }
    }
    this.opened = true
    let count = 0
    for (const map of this.environments.values()) count += map.size
    return { rebuilt, count }
  }

  /** The stored index, or why there is none (then it is rebuilt). */
  private async read (): Promise<IndexFile | 'missing' | 'unreadable'> {
    let text: string
    try {
      text = await readFile(this.file, 'utf8')
    } catch (err) {
      if ((err as { code?: string }).code === 'ENOENT') return 'missing'
      throw err
    }
    try {
      const parsed = JSON.parse(text) as IndexFile
      if (parsed === null || typeof parsed !== 'object' || parsed.version !== VERSION || !Array.isArray(parsed.assets)) return 'unreadable'
      return parsed
    } catch {
      return 'unreadable'
    }
  }

  async close (): Promise<void> {
    // Pending writes finish; nothing new is accepted after this.
    while (this.writing !== null || this.queued !== null) await (this.queued ?? this.writing)?.catch(() => {})
    this.opened = false
  }

  private put (meta: AssetMeta, seq: number): void {
    let map = this.environments.get(meta.environment)
    if (map === undefined) {
      map = new Map()
      this.environments.set(meta.environment, map)
    }
    map.set(meta.path, { meta, seq })
    this.sorted.delete(meta.environment)
  }

  async get (environment: string, assetPath: string): Promise<AssetMeta | undefined> {
    return this.environments.get(environment)?.get(assetPath)?.meta
  }

  async list (environment: string, query: AssetListQuery): Promise<AssetListResult> {
    const newest = this.newest(environment)
    // A keyset page starts at the first entry after the position; a numbered one skips `skip` matches.
    const from = query.after === undefined ? 0 : firstAfter(newest, query.after)
    let skip = query.after === undefined ? (query.page - 1) * query.perPage : 0
    const items: AssetMeta[] = []
    let last: Entry | null = null
    let more = false
    let total = 0
    for (let i = 0; i < newest.length; i++) {
      const entry = newest[i] as Entry
      if (!matches(entry.meta, query)) continue
      total++
      if (i < from) continue
      if (skip > 0) skip--
      else if (items.length < query.perPage) {
        items.push(entry.meta)
        last = entry
      } else more = true
    }
    return { items, total, next: more && last !== null ? { createdAt: last.meta.createdAt, ordinal: last.seq } : null }
  }

  /** The environment's entries in list order: newest first, then the later insert first. */
  private newest (environment: string): Entry[] {
    let newest = this.sorted.get(environment)
    if (newest === undefined) {
      newest = [...(this.environments.get(environment)?.values() ?? [])]
      newest.sort((a, b) => b.meta.createdAt.localeCompare(a.meta.createdAt) || b.seq - a.seq)
      this.sorted.set(environment, newest)
    }
    return newest
  }

  async insert (meta: AssetMeta): Promise<void> {
    this.assertOpen()
    this.put(meta, ++this.seq)
    await this.persist()
  }

  async remove (environment: string, assetPath: string): Promise<boolean> {
    this.assertOpen()
    const map = this.environments.get(environment)
    if (map === undefined || !map.delete(assetPath)) return false
    this.sorted.delete(environment)
    await this.persist()
    return true
  }

  private assertOpen (): void {
    if (!this.opened) throw new Error('the asset repository is not open')
  }

  private serialize (): string {
    const assets: IndexFile['assets'] = []
    for (const map of this.environments.values()) {
      for (const { meta, seq } of map.values()) assets.push({ ...meta, seq })
    }
    assets.sort((a, b) => a.seq - b.seq)
    return JSON.stringify({ version: VERSION, assets } satisfies IndexFile)
  }

  /**
   * Resolves once a write that includes every change made so far is on disk. At most one write
   * runs and at most one waits; the waiting one serializes the state when it starts, so it
   * carries every change made while the other was running.
   */
  private async persist (): Promise<void> {
    if (this.queued !== null) return await this.queued
    if (this.writing === null) return await this.startWrite()
    const queued = this.writing.catch(() => {}).then(async () => {
      this.queued = null
      await this.startWrite()
    })
    this.queued = queued
    return await queued
  }

  private startWrite (): Promise<void> {
    const write: Promise<void> = writeFileAtomic(this.file, this.serialize()).finally(() => {
      if (this.writing === write) this.writing = null
    })
    this.writing = write
    return write
  }
}
