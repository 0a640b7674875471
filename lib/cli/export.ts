// `lectern export` (contract §16): schemas, entries (each the body the API answers for it) and,
// with `--assets`, the files, read through the API page by page so that memory stays flat. The
// entries come from an initial sync run, whose cursor the manifest keeps: an export is a valid
// initial sync.
import { rmSync, writeFileSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { Api, scopeQuery } from './api.js'
import type { Progress } from './progress.js'
import { readSyncAnswer } from './sync-answer.js'

export interface ExportOptions {
  out: string
  /** `all` (drafts too: needs a key when keys are on) or `published`. */
  status: 'all' | 'published'
  environment?: string
  /** `all`, or the locale codes to export. */
  locales: 'all' | string[]
  /** Only these collections; all when absent. */
  collections?: string[]
  assets: boolean
  version: string
}

export interface Manifest {
  lectern: string
  created_at: string
  status: ExportOptions['status']
  environment: string | null
  /** The exported locales; `[null]` when locales are off (directories `_`). */
  locales: Array<string | null>
  schemas: string[]
  collections: string[]
  /** Entries per collection and locale directory. */
  counts: Record<string, Record<string, number>>
  assets: number | null
  /**
   * Per locale directory, the cursor of the initial sync run the export was read from: GET
   * /api/sync?cursor=<it> goes on from the export (contract §9, §16).
   */
  cursors: Record<string, string>
}

/** The directory of a locale: its code, or `_` when locales are off. */
export const localeDir = (locale: string | null): string => locale ?? '_'

const writeJson = async (file: string, value: unknown): Promise<void> => { await writeFile(file, `${JSON.stringify(value, null, 2)}\n`) }

async function exportSchemas (api: Api, out: string): Promise<string[]> {
  const { names } = await api.get<{ names: string[] }>('/api/schemas')
  await mkdir(path.join(out, 'schemas'), { recursive: true })
  for (const name of names) {
    await writeJson(path.join(out, 'schemas', `${name}.json`), await api.get(`/api/schemas/${name}/raw`))
  }
  return names
}

/**
 * Entries per sync answer. Measured on an export of 100,000 entries (bench export row): answers of
 * 1,000 peaked at 389 MB of RSS (6,795 entries/s), answers of 100 at 326 MB (5,750 entries/s),
 * both when each entry was parsed and serialized again and written asynchronously.
 */
const SYNC_PAGE = 100

/**
 * One locale: every entry through an initial sync run (GET /api/sync, contract §9), each written as
 * the body of GET on it (what a sync item's `entry` is, written as the server sent it), so the
 * export is a valid initial sync and the run's last cursor goes on from it. Returns that cursor and
 * the entries per collection. Files are written synchronously: one answer at a time, with nothing
 * else to wait for, and without a promise and a file handle per entry.
 */
async function exportLocale (api: Api, out: string, locale: string | null, collections: string[], options: ExportOptions, progress: Progress): Promise<{ cursor: string, counts: Map<string, Set<string>> }> {
  const counts = new Map(collections.map(c => [c, new Set<string>()]))
  for (const collection of collections) await mkdir(path.join(out, 'content', collection, localeDir(locale)), { recursive: true })
  const params = new URLSearchParams({ initial: 'true', _status: options.status, _per_page: String(SYNC_PAGE) })
  if (options.collections !== undefined) params.set('collections', collections.join(','))
  const scope = scopeQuery(locale, options.environment)
  let url = `/api/sync?${params.toString()}${scope === '' ? '' : `&${scope}`}`
  let seen = 0
  for (;;) {
    const answer = readSyncAnswer(await api.getBytes(url))
    for (const item of answer.items) {
      const slugs = counts.get(item.collection)
      if (slugs === undefined) continue
      const file = path.join(out, 'content', item.collection, localeDir(locale), `${item.slug}.json`)
      if (item.entry !== undefined) {
        slugs.add(item.slug)
        writeFileSync(file, item.entry)
      } else {
        // A delete in an initial run: the entry went while the run was under way.
        slugs.delete(item.slug)
        rmSync(file, { force: true })
      }
    }
    seen += answer.items.length
    progress.update(`${localeDir(locale)}: ${seen} entries`)
    if (!answer.more) return { cursor: answer.cursor, counts }
    url = `/api/sync?${new URLSearchParams({ cursor: answer.cursor, _per_page: String(SYNC_PAGE) }).toString()}`
  }
}

/** index.json of a collection in a locale: the exported slugs in `default_sort` order. */
async function writeIndex (api: Api, out: string, collection: string, locale: string | null, exported: Set<string>, options: ExportOptions): Promise<void> {
  const query = [scopeQuery(locale, options.environment), `_status=${options.status}`, '_fields=_slug'].filter(q => q !== '').join('&')
  const slugs: string[] = []
  for await (const items of api.pages<{ _slug: string }>(`/api/content/${collection}?${query}`)) {
    for (const { _slug: slug } of items) if (exported.has(slug)) slugs.push(slug)
  }
  await writeJson(path.join(out, 'content', collection, localeDir(locale), 'index.json'), slugs)
}

interface AssetRecord { path: string, folder: string, name: string }

async function exportAssets (api: Api, out: string, environment: string | undefined, progress: Progress): Promise<number> {
  const records: AssetRecord[] = []
  const query = scopeQuery(null, environment)
  for await (const items of api.pages<AssetRecord>(`/api/assets${query === '' ? '' : `?${query}`}`)) {
    for (const asset of items) {
      const reply = await api.request('GET', `${asset.path}${query === '' ? '' : `?${query}`}`)
      if (reply.status !== 200) throw new Error(`GET ${asset.path}: status ${reply.status}`)
      const file = path.join(out, 'assets', asset.folder, asset.name)
      await mkdir(path.dirname(file), { recursive: true })
      await writeFile(file, reply.body)
      records.push(asset)
      progress.update(`assets: ${records.length}`)
    }
  }
  await mkdir(path.join(out, 'assets'), { recursive: true })
  await writeJson(path.join(out, 'assets', 'index.json'), records)
  return records.length
}

/** Writes the export; returns its manifest (also written as manifest.json). */
export async function exportAll (api: Api, options: ExportOptions, progress: Progress): Promise<Manifest> {
  await mkdir(options.out, { recursive: true })
  const schemas = await exportSchemas(api, options.out)
  const available = (await api.get<{ collections: Array<{ name: string }> }>('/api/collections')).collections.map(c => c.name)
  const unknown = (options.collections ?? []).filter(c => !available.includes(c))
  if (unknown.length > 0) throw new Error(`Unknown collection(s): ${unknown.join(', ')}`)
  const collections = options.collections ?? available
  const configured = (await api.get<{ locales: string[] }>('/api/locales')).locales
  const locales: Array<string | null> = configured.length === 0 ? [null] : options.locales === 'all' ? configured : options.locales
  const counts: Manifest['counts'] = Object.fromEntries(collections.map(c => [c, {}]))
  const cursors: Manifest['cursors'] = {}
  for (const locale of locales) {
    const run = await exportLocale(api, options.out, locale, collections, options, progress)
    cursors[localeDir(locale)] = run.cursor
    for (const [collection, slugs] of run.counts) {
      await writeIndex(api, options.out, collection, locale, slugs, options)
      const perLocale = counts[collection] ?? {}
      perLocale[localeDir(locale)] = slugs.size
    }
  }
  const assets = options.assets ? await exportAssets(api, options.out, options.environment, progress) : null
  progress.done()
  const manifest: Manifest = {
    lectern: options.version,
    created_at: new Date().toISOString(),
    status: options.status,
    environment: options.environment ?? null,
    locales,
    schemas,
    collections,
    counts,
    assets,
    cursors
  }
  await writeJson(path.join(options.out, 'manifest.json'), manifest)
  return manifest
}
