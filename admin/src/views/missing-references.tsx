// "Create the de version": the copied entry may reference entries that have no version in this
// locale yet. This panel names them, and creates each one (a draft copy of its default-locale
// version) or links to it.
import type { JSX } from 'preact'
import { useState } from 'preact/hooks'
import { api, describeError, seg } from '../api.js'
import { useApp, type Scope } from '../context.js'
import { href } from '../router.js'
import type { Entry, ListEnvelope, ResolvedSchema } from '../types.js'
import { Link, useLoad } from '../ui.js'

interface Target { collection: string, slug: string }

/** The entries the top-level reference fields of `values` point to. */
function targetsOf (schema: ResolvedSchema, values: Record<string, unknown>): Target[] {
  const out = new Map<string, Target>()
  for (const [name, def] of Object.entries(schema.fields)) {
    if (def.field_type !== 'reference' || typeof def.collection !== 'string') continue
    const value = values[name]
    for (const slug of Array.isArray(value) ? value : [value]) {
      if (typeof slug === 'string' && slug !== '') out.set(`${def.collection}/${slug}`, { collection: def.collection, slug })
    }
  }
  return [...out.values()]
}

/** Those of `targets` with no entry in `scope`, one list request per collection. */
async function missingIn (scope: Scope, targets: Target[], signal: AbortSignal): Promise<Target[]> {
  const byCollection = new Map<string, string[]>()
  for (const t of targets) byCollection.set(t.collection, [...byCollection.get(t.collection) ?? [], t.slug])
  const missing: Target[] = []
  for (const [collection, slugs] of byCollection) {
    const found = await api.get<ListEnvelope<Entry>>(`/api/content/${seg(collection)}`, {
      '_slug[in]': slugs.join(','), _fields: '_slug', _per_page: 1000, _locale: scope.locale, _environment: scope.environment
    }, signal)
    const have = new Set(found.items.map(e => e._slug))
    for (const slug of slugs) if (!have.has(slug)) missing.push({ collection, slug })
  }
  return missing
}

export function MissingReferences ({ schema, values, scope }: { schema: ResolvedSchema, values: Record<string, unknown>, scope: Scope }): JSX.Element | null {
  const { locales, notify } = useApp()
  const [targets] = useState(() => targetsOf(schema, values))
  const [created, setCreated] = useState<ReadonlySet<string>>(new Set())
  const missing = useLoad(async signal => targets.length === 0 ? [] : await missingIn(scope, targets, signal), [scope.locale, scope.environment])
  const list = (missing.data ?? []).filter(t => !created.has(`${t.collection}/${t.slug}`))
  if (list.length === 0 || scope.locale === null) return null

  const create = async (target: Target): Promise<void> => {
    const path = `/api/content/${seg(target.collection)}`
    try {
      const source = await api.get<Entry>(`${path}/${seg(target.slug)}`, { _locale: locales.default, _environment: scope.environment })
      const { _created_at: _c, _updated_at: _u, ...copy } = source
      // A draft: a translation to be, not a page published in the default locale's words.
      await api.post<Entry>(path, { ...copy, _status: 'draft' }, { _locale: scope.locale, _environment: scope.environment })
      setCreated(s => new Set([...s, `${target.collection}/${target.slug}`]))
      notify(`Created the ${scope.locale ?? ''} version of ${target.collection}/${target.slug} as a draft (a copy of ${locales.default ?? 'the default'}).`)
    } catch (err) {
      notify(`Not created: ${describeError(err)}`, 'error')
    }
  }

  return (
    <section class='notice info missing-refs' aria-labelledby='missing-refs'>
      <h2 id='missing-refs'>Referenced entries without a {scope.locale} version</h2>
      <ul>
        {list.map(t => (
          <li key={`${t.collection}/${t.slug}`}>
            <Link href={href(['content', t.collection, 'entry', t.slug])}>{t.collection}/{t.slug}</Link>{' '}
            <button type='button' onClick={() => { void create(t) }}>Create the {scope.locale} version from {locales.default}</button>
          </li>
        ))}
      </ul>
    </section>
  )
}
