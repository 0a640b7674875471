// `lectern validate` (contract §16): every stored entry against its collection's current schema,
// and every reference against the entries that exist, read through the API.
import type { CollectionModel, ResolvedSchema } from '../../types/schema.js'
import { compileCollection } from '../schema/compile.js'
import { valueAtPath } from '../query/values.js'
import { Api, scopeQuery } from './api.js'
import { localeDir } from './export.js'
import type { Progress } from './progress.js'

interface Reference { from: string, collection: string, slug: string }

/** The fields of an entry as the API sends it, system fields left out. */
const dataOf = (entry: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(entry).filter(([k]) => !k.startsWith('_')))

function referencesOf (model: CollectionModel, data: Record<string, unknown>, from: string): Reference[] {
  return model.referenceFields.flatMap(field => {
    const value = valueAtPath(data, field.path.split('.'))
    const slugs = Array.isArray(value) ? value : value === undefined || value === null ? [] : [value]
    return slugs.filter((s): s is string => typeof s === 'string').map(slug => ({ from: `${from} ${field.path}`, collection: field.collection, slug }))
  })
}

/** Every problem, one line each (`<collection>/<locale>/<slug>: <problem>`); empty when all is well. */
export async function validateAll (api: Api, progress: Progress, environment?: string): Promise<string[]> {
  const names = (await api.get<{ collections: Array<{ name: string }> }>('/api/collections')).collections.map(c => c.name)
  const configured = (await api.get<{ locales: string[] }>('/api/locales')).locales
  const locales: Array<string | null> = configured.length === 0 ? [null] : configured
  const problems: string[] = []
  let seen = 0
  for (const locale of locales) {
    const slugs = new Map<string, Set<string>>()
    const references: Reference[] = []
    for (const name of names) {
      const model = compileCollection(await api.get<ResolvedSchema>(`/api/collections/${name}`))
      const present = new Set<string>()
      slugs.set(name, present)
      const query = [scopeQuery(locale, environment), '_status=all'].filter(q => q !== '').join('&')
      for await (const items of api.pages<Record<string, unknown> & { _slug: string }>(`/api/content/${name}?${query}`)) {
        for (const entry of items) {
          const where = `${name}/${localeDir(locale)}/${entry._slug}`
          present.add(entry._slug)
          const data = dataOf(entry)
          for (const message of model.validate(data)) problems.push(`${where}: ${message}`)
          references.push(...referencesOf(model, data, where))
          progress.update(`validated ${++seen} entries`)
        }
      }
    }
    for (const ref of references) {
      if (slugs.get(ref.collection)?.has(ref.slug) !== true) problems.push(`${ref.from}: references '${ref.slug}', which is not an entry of '${ref.collection}'`)
    }
  }
  progress.done()
  return problems
}
