// Where the file store keeps things under `<data>/content/` (file.ts, and the editorial files
// beside the entries: file-versions.ts, file-drafts.ts, file-schedules.ts, file-layout.ts):
//   <environment>/<collection>/<locale or _>/<slug>.json        an entry
//   <environment>/<collection>/<locale or _>/.versions/<slug>.jsonl  its kept versions
//   <environment>/<collection>/<locale or _>/.drafts/<slug>.json     its pending draft
//   changes.log, schedules.json, layout.json (and layout-journal.json while a layout move runs)
// The hidden folders are no entries: the entry reader, the fingerprint and the listing pass them by.
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { fsyncDir } from '../durable.js'
import type { Scope } from '../../types/scope.js'

export const CONTENT_DIR = 'content'
/** The folder of entries without a locale (locales off). Never a valid locale name. */
export const NO_LOCALE_DIR = '_'
export const ENTRY_EXT = '.json'
export const VERSIONS_DIR = '.versions'
export const VERSIONS_EXT = '.jsonl'
export const DRAFTS_DIR = '.drafts'
export const DRAFT_EXT = '.json'

/** The folder name of a locale ('' or null: no locale). */
export const localeDirName = (locale: string | null): string => locale === null || locale === '' ? NO_LOCALE_DIR : locale

export function bucketDir (root: string, scope: Scope, collection: string): string {
  return path.join(root, scope.environment, collection, localeDirName(scope.locale))
}

export function versionsFile (dir: string, slug: string): string {
  return path.join(dir, VERSIONS_DIR, slug + VERSIONS_EXT)
}

export function draftFile (dir: string, slug: string): string {
  return path.join(dir, DRAFTS_DIR, slug + DRAFT_EXT)
}

/** mkdir -p `dir` under `root`, then fsync the parent of each folder it created. */
export async function makeDirs (root: string, dir: string): Promise<void> {
  const created = await mkdir(dir, { recursive: true })
  if (created === undefined) return
  // `created` is the first folder made; every folder from there down to `dir` is new.
  let current = dir
  const parents: string[] = []
  while (current.length >= created.length && current !== root) {
    parents.push(path.dirname(current))
    current = path.dirname(current)
  }
  for (const parent of parents) await fsyncDir(parent)
}
