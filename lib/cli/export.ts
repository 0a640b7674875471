// `lectern export` (contract §16): schemas, entries (each the body the API answers for it) and,
// with `--assets`, the files, read through the API page by page so that memory stays flat.
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { Api, scopeQuery } from './api.js'
import type { Progress } from './progress.js'

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

/** One collection in one locale: an entry file per entry and index.json (slugs in default_sort order). */
async function exportCollection (api: Api, out: string, collection: string, locale: string | null, options: ExportOptions, progress: Progress): Promise<number> {
  const dir = path.join(out, 'content', collection, localeDir(locale))
  await mkdir(dir, { recursive: true })
  const query = [scopeQuery(locale, options.environment), `_status=${options.status}`].filter(q => q !== '').join('&')
  const slugs: string[] = []
  for await (const items of api.pages<Record<string, unknown> & { _slug: string }>(`/api/content/${collection}?${query}`)) {
    // A list item is the body a GET of the entry answers (the same rendering, serialized alike).
    await Promise.all(items.map(async item => { await writeFile(path.join(dir, `${item._slug}.json`), JSON.stringify(item)) }))
    for (const item of items) slugs.push(item._slug)
    progress.update(`${collection}/${localeDir(locale)}: ${slugs.length} entries`)
  }
  await writeJson(path.join(dir, 'index.json'), slugs)
  return slugs.length
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
  const counts: Manifest['counts'] = {}
  for (const collection of collections) {
    const perLocale: Record<string, number> = {}
    for (const locale of locales) {
      perLocale[localeDir(locale)] = await exportCollection(api, options.out, collection, locale, options, progress)
    }
    counts[collection] = perLocale
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
    assets
  }
  await writeJson(path.join(options.out, 'manifest.json'), manifest)
  return manifest
}
