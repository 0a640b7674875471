// Inserting the sample entries of examples/content on first start, through the same compiled
// model as an API write (defaults, normalization, validation), referenced collections first.
import type { CollectionModel, SchemaRegistry } from '../../types/schema.js'
import type { Scope } from '../../types/scope.js'
import type { ContentStore } from '../../types/store.js'
import { CmsError } from '../errors.js'
import type { SampleEntry } from './examples.js'

export interface SeedLogger {
  info: (obj: object, msg: string) => void
  warn: (obj: object, msg: string) => void
}

export interface SeedOptions {
  samples: readonly SampleEntry[]
  schemas: Pick<SchemaRegistry, 'collection'>
  store: Pick<ContentStore, 'create' | 'ensureCollection'>
  scope: Scope
  log: SeedLogger
  /** CMS_REVISIONS: a sample is created as any entry is, with its first version (0: none). */
  keepVersions?: number
}

/** Collections ordered so that the ones referenced come before the ones referencing them. */
export function referencedFirst (models: ReadonlyMap<string, CollectionModel>): string[] {
  const order: string[] = []
  const state = new Map<string, 'visiting' | 'done'>()
  const visit = (name: string): void => {
    if (state.has(name)) return // done, or a reference cycle between collections: any order will do
    state.set(name, 'visiting')
    const model = models.get(name)
    for (const ref of model?.referenceFields ?? []) {
      if (ref.collection !== name && models.has(ref.collection)) visit(ref.collection)
    }
    state.set(name, 'done')
    order.push(name)
  }
  for (const name of [...models.keys()].sort()) visit(name)
  return order
}

/**
 * Inserts every sample. A sample that does not validate is a bug in the package and throws; an
 * entry that already exists (a store kept from an earlier install) is left alone and logged.
 */
export async function insertSamples (options: SeedOptions): Promise<number> {
  const { samples, schemas, store, scope, log, keepVersions = 0 } = options
  const models = new Map<string, CollectionModel>()
  for (const sample of samples) {
    const model = schemas.collection(sample.collection)
    if (model === null) throw new Error(`sample entry ${sample.collection}/${sample.slug}: '${sample.collection}' is not a collection`)
    models.set(sample.collection, model)
  }
  let inserted = 0
  for (const collection of referencedFirst(models)) {
    const model = models.get(collection) as CollectionModel
    await store.ensureCollection(collection)
    for (const sample of samples.filter(s => s.collection === collection)) {
      const data = model.normalize(model.applyDefaults(sample.data))
      const errors = model.validate(data)
      if (errors.length > 0) throw new Error(`sample entry ${collection}/${sample.slug} is not valid: ${errors.join('; ')}`)
      try {
        await store.create(scope, collection, { slug: sample.slug, status: sample.status, data, keepVersions })
        inserted++
      } catch (err) {
        if (!(err instanceof CmsError && err.code === 'CONFLICT')) throw err
        log.warn({ collection, slug: sample.slug }, 'sample entry skipped: an entry with that slug exists')
      }
    }
  }
  log.info({ entries: inserted, scope }, 'first start: sample entries inserted')
  return inserted
}
