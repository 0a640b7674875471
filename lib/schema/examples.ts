// The example schemas and sample content seeded on first start (examples/ in the package root).
import { constants } from 'node:fs'
import { copyFile, readdir, readFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import path from 'node:path'
import type { EntryStatus } from '../../types/store.js'
import { checkSlug } from '../slug.js'
import { isJsonObject } from './rules.js'

/**
 * The nearest folder at or above `start` holding a package.json: the package root, whether this
 * module runs from the TypeScript sources or from the compiled dist/ (which holds no examples).
 */
export function findPackageRoot (start: string): string {
  let dir = path.resolve(start)
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return dir
    const parent = path.dirname(dir)
    if (parent === dir) throw new Error(`no package.json found above ${start}`)
    dir = parent
  }
}

/** The package's examples/ folder. */
export function examplesDir (): string {
  return path.join(findPackageRoot(import.meta.dirname), 'examples')
}

/** Copies `<examples>/types/*.json(5)` into `typesDir`, never over an existing file. Returns the names copied. */
export async function copyExampleTypes (examples: string, typesDir: string): Promise<string[]> {
  const source = path.join(examples, 'types')
  const copied: string[] = []
  for (const file of (await readdir(source)).sort()) {
    if (!/^[a-z0-9_]+\.json5?$/.test(file)) continue
    try {
      await copyFile(path.join(source, file), path.join(typesDir, file), constants.COPYFILE_EXCL)
      copied.push(file)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
  }
  return copied
}

export interface SampleEntry {
  collection: string
  slug: string
  status: EntryStatus
  /** The entry body without `_slug` and `_status`. */
  data: Record<string, unknown>
}

/**
 * Reads `<examples>/content/<collection>/<slug>.json`: each file is an entry body as a client
 * would POST it, its slug the file name. A malformed sample is a bug in the package: throws.
 */
export async function readSampleEntries (examples: string): Promise<SampleEntry[]> {
  const root = path.join(examples, 'content')
  const entries: SampleEntry[] = []
  const collections = existsSync(root) ? (await readdir(root, { withFileTypes: true })).filter(d => d.isDirectory()) : []
  for (const dir of collections.map(d => d.name).sort()) {
    for (const file of (await readdir(path.join(root, dir))).sort()) {
      if (!file.endsWith('.json')) continue
      const slug = file.slice(0, -'.json'.length)
      const check = checkSlug(slug)
      if (!check.valid || check.normalized !== slug) throw new Error(`sample entry ${dir}/${file}: the file name is not a normalized slug`)
      const body: unknown = JSON.parse(await readFile(path.join(root, dir, file), 'utf8'))
      if (!isJsonObject(body)) throw new Error(`sample entry ${dir}/${file}: not a JSON object`)
      const { _slug: _ignored, _status: status = 'published', ...data } = body
      if (status !== 'draft' && status !== 'published') throw new Error(`sample entry ${dir}/${file}: _status must be draft or published`)
      entries.push({ collection: dir, slug, status, data })
    }
  }
  return entries
}
