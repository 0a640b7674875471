// `lectern import` (contract §16): every entry of an export created or updated through the API's
// normal write rules, schemas first, collections in an order that satisfies references; nothing
// is deleted. An entry equal to the stored one (timestamps aside) is left alone, so importing an
// export back into its source changes nothing.
import { existsSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import type { FieldDefinition } from '../../types/schema.js'
import { Api, replyMessage, scopeQuery } from './api.js'
import { localeDir, type Manifest } from './export.js'
import type { Progress } from './progress.js'

export interface ImportReport {
  created: number
  updated: number
  unchanged: number
  /** Schemas created through the API (`--server`). */
  schemas: string[]
  /** Every refused entry or schema, one line each. */
  problems: string[]
}

export async function readManifest (dir: string): Promise<Manifest> {
  return JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8')) as Manifest
}

/** The schema files of an export, by name. */
export async function exportedSchemas (dir: string): Promise<Map<string, Record<string, unknown>>> {
  const out = new Map<string, Record<string, unknown>>()
  const folder = path.join(dir, 'schemas')
  if (!existsSync(folder)) return out
  for (const file of (await readdir(folder)).filter(f => f.endsWith('.json')).sort()) {
    out.set(file.slice(0, -'.json'.length), JSON.parse(await readFile(path.join(folder, file), 'utf8')) as Record<string, unknown>)
  }
  return out
}

const parentsOf = (schema: Record<string, unknown>): string[] =>
  Array.isArray(schema.extends) ? schema.extends.filter((e): e is string => typeof e === 'string') : typeof schema.extends === 'string' ? [schema.extends] : []

/** Names in an order where each comes after what it depends on (cycles: in name order). */
export function dependencyOrder (names: readonly string[], dependsOn: (name: string) => string[]): string[] {
  const order: string[] = []
  const state = new Map<string, 'visiting' | 'done'>()
  const visit = (name: string): void => {
    if (state.has(name) || !names.includes(name)) return
    state.set(name, 'visiting')
    for (const d of dependsOn(name)) visit(d)
    state.set(name, 'done')
    order.push(name)
  }
  for (const name of [...names].sort()) visit(name)
  return order
}

/** `--server`: creates the schemas the server lacks, parents first; a reusable partial cannot be created over the API. */
export async function importSchemasOverApi (api: Api, schemas: Map<string, Record<string, unknown>>, dryRun: boolean, report: ImportReport): Promise<void> {
  const existing = new Set((await api.get<{ names: string[] }>('/api/schemas')).names)
  const missing = [...schemas.keys()].filter(n => !existing.has(n))
  for (const name of dependencyOrder(missing, n => parentsOf(schemas.get(n) ?? {}))) {
    const schema = schemas.get(name) ?? {}
    if (schema.reusable === true) {
      report.problems.push(`schema ${name}: a reusable partial cannot be created through the API; copy schemas/${name}.json into the server's types directory`)
      continue
    }
    if (dryRun) { report.schemas.push(name); continue }
    const reply = await api.request('POST', '/api/schemas', schema)
    if (reply.status === 201) report.schemas.push(name)
    else report.problems.push(`schema ${name}: ${replyMessage(reply)}`)
  }
}

function referencedCollections (fields: Record<string, FieldDefinition>): string[] {
  return Object.values(fields).flatMap(f => [
    ...(f.field_type === 'reference' && f.collection !== undefined ? [f.collection] : []),
    ...(f.fields !== undefined ? referencedCollections(f.fields) : []),
    ...(f.items !== undefined ? referencedCollections({ items: f.items }) : [])
  ])
}

const TIMESTAMPS = new Set(['_created_at', '_updated_at'])
const withoutTimestamps = (entry: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(entry).filter(([k]) => !TIMESTAMPS.has(k)))

interface Pending { collection: string, locale: string | null, environment: string | undefined, slug: string, body: Record<string, unknown> }

/** Writes one entry: created, updated, unchanged, or a problem line. */
async function importEntry (api: Api, p: Pending, dryRun: boolean): Promise<'created' | 'updated' | 'unchanged' | string> {
  const query = scopeQuery(p.locale, p.environment)
  const url = `/api/content/${p.collection}/${p.slug}${query === '' ? '' : `?${query}`}`
  const current = await api.request('GET', url)
  if (current.status === 200 && JSON.stringify(withoutTimestamps(JSON.parse(current.body.toString('utf8')) as Record<string, unknown>)) === JSON.stringify(p.body)) return 'unchanged'
  const create = current.status === 404
  if (dryRun) return create ? 'created' : 'updated'
  const listUrl = `/api/content/${p.collection}${query === '' ? '' : `?${query}`}`
  const reply = create ? await api.request('POST', listUrl, p.body) : await api.request('PUT', url, p.body)
  if (reply.status === 200 || reply.status === 201) return create ? 'created' : 'updated'
  return `${p.collection}/${localeDir(p.locale)}/${p.slug}: ${reply.status} ${replyMessage(reply)}`
}

async function pendingEntries (dir: string, manifest: Manifest, order: string[]): Promise<Pending[]> {
  const out: Pending[] = []
  for (const collection of order) {
    for (const locale of manifest.locales) {
      const folder = path.join(dir, 'content', collection, localeDir(locale))
      if (!existsSync(folder)) continue
      const slugs = JSON.parse(await readFile(path.join(folder, 'index.json'), 'utf8')) as string[]
      for (const slug of slugs) {
        const entry = JSON.parse(await readFile(path.join(folder, `${slug}.json`), 'utf8')) as Record<string, unknown>
        out.push({ collection, locale, environment: manifest.environment ?? undefined, slug, body: withoutTimestamps(entry) })
      }
    }
  }
  return out
}

/** Imports the entries of the export at `dir`; refused ones are tried again while others land (references within a collection). */
export async function importEntries (api: Api, dir: string, dryRun: boolean, report: ImportReport, progress: Progress): Promise<void> {
  const manifest = await readManifest(dir)
  const fields = new Map<string, string[]>()
  for (const collection of manifest.collections) {
    const resolved = await api.request('GET', `/api/collections/${collection}`)
    const schema = resolved.status === 200 ? JSON.parse(resolved.body.toString('utf8')) as { fields: Record<string, FieldDefinition> } : { fields: {} }
    fields.set(collection, referencedCollections(schema.fields))
  }
  let pending = await pendingEntries(dir, manifest, dependencyOrder(manifest.collections, c => fields.get(c) ?? []))
  let problems: string[] = []
  for (let done = 0; pending.length > 0;) {
    const refused: Pending[] = []
    problems = []
    for (const p of pending) {
      const outcome = await importEntry(api, p, dryRun)
      if (outcome === 'created' || outcome === 'updated' || outcome === 'unchanged') report[outcome]++
      else { refused.push(p); problems.push(outcome) }
      progress.update(`entries: ${++done}`)
    }
    if (refused.length === pending.length) break
    pending = refused
  }
  progress.done()
  report.problems.push(...problems)
}
