// Reference fields: slugs of entries in the target collection, chosen by searching it.
import type { JSX } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api, describeError, seg } from '../api.js'
import { scopeQuery, type Scope } from '../context.js'
import { href } from '../router.js'
import { displayField, entryTitle } from '../schema.js'
import type { Entry, FieldDefinition, ListEnvelope, ResolvedSchema } from '../types.js'
import { Dialog, Link, Loading, StatusBadge, useDebounced, useLoad } from '../ui.js'
import { isRecord, useForm } from './form.js'
import type { Control } from './fields.js'

const schemas = new Map<string, Promise<ResolvedSchema>>()

/** Resolved schemas of reference targets, fetched once per page life. */
export async function targetSchema (collection: string): Promise<ResolvedSchema> {
  let pending = schemas.get(collection)
  if (pending === undefined) {
    pending = api.get<ResolvedSchema>(`/api/collections/${seg(collection)}`)
    pending.catch(() => { schemas.delete(collection) })
    schemas.set(collection, pending)
  }
  return await pending
}

/** After a schema write the cached target schemas may be stale. */
export function forgetSchemas (): void {
  schemas.clear()
}

/** A stored reference is a slug; a resolved one is an entry object. */
const slugOf = (value: unknown): string | null =>
  typeof value === 'string' ? value : isRecord(value) && typeof value._slug === 'string' ? value._slug : null

async function titlesOf (collection: string, slugs: string[], scope: Scope): Promise<Map<string, Entry>> {
  const out = new Map<string, Entry>()
  if (slugs.length === 0) return out
  const schema = await targetSchema(collection)
  const title = displayField(schema)
  const list = await api.get<ListEnvelope<Entry>>(`/api/content/${seg(collection)}`, {
    ...scopeQuery(scope),
    '_slug[in]': slugs.join(','),
    _per_page: Math.min(1000, slugs.length),
    _status: 'all',
    _fields: title ?? undefined
  })
  for (const entry of list.items) out.set(entry._slug, entry)
  return out
}

interface Props {
  def: FieldDefinition
  value: unknown
  control: Control
  onChange: (value: unknown) => void
  label: string
}

export function ReferenceInput ({ def, value, control, onChange, label }: Props): JSX.Element {
  const form = useForm()
  const target = def.collection ?? ''
  const multiple = def.multiple === true
  const slugs = (multiple ? (Array.isArray(value) ? value : []) : [value]).map(slugOf).filter((s): s is string => s !== null)
  const [picking, setPicking] = useState(false)
  const known = useLoad(async () => {
    const [schema, entries] = await Promise.all([targetSchema(target), titlesOf(target, slugs, form.scope)])
    return { field: displayField(schema), entries }
  }, [target, slugs.join(','), form.scope.locale, form.scope.environment], { keep: true })

  const describe = (slug: string): JSX.Element => {
    const entry = known.data?.entries.get(slug)
    const missing = !known.loading && known.data !== undefined && entry === undefined
    return (
      <span class='ref-label'>
        <Link href={href(['content', target, 'entry', slug])} target='_blank' rel='noreferrer'>
          {entry !== undefined ? entryTitle(entry, known.data?.field ?? null) : slug}
        </Link>
        <code class='slug'>{slug}</code>
        {entry !== undefined && entry._status === 'draft' && <StatusBadge status='draft' />}
        {missing && <span class='field-error inline-error'>not found in this locale</span>}
      </span>
    )
  }

  const choose = (slug: string): void => {
    setPicking(false)
    if (multiple) {
      if (!slugs.includes(slug)) onChange([...slugs, slug])
    } else {
      onChange(slug)
    }
  }

  return (
    <div class='reference' id={control.id}>
      {!multiple && (
        <div class='ref-single'>
          {slugs[0] !== undefined ? describe(slugs[0]) : <span class='muted'>None chosen</span>}
        </div>
      )}
      {multiple && (
        slugs.length === 0
          ? <p class='muted'>None chosen</p>
          : (
            <ol class='ref-list'>
              {slugs.map((slug, i) => (
                <li key={slug}>
                  {describe(slug)}
                  {!control.disabled && (
                    <span class='item-actions'>
                      <button type='button' disabled={i === 0} aria-label={`Move ${slug} up`} onClick={() => { const next = [...slugs]; next.splice(i - 1, 0, ...next.splice(i, 1)); onChange(next) }}>↑</button>
                      <button type='button' disabled={i === slugs.length - 1} aria-label={`Move ${slug} down`} onClick={() => { const next = [...slugs]; next.splice(i + 1, 0, ...next.splice(i, 1)); onChange(next) }}>↓</button>
                      <button type='button' class='danger-text' aria-label={`Remove ${slug}`} onClick={() => { const next = slugs.filter(s => s !== slug); onChange(next.length === 0 ? undefined : next) }}>Remove</button>
                    </span>
                  )}
                </li>
              ))}
            </ol>
            )
      )}
      {!control.disabled && (
        <div class='actions'>
          <button type='button' onClick={() => { setPicking(true) }} aria-describedby={control.describedBy}>
            {multiple ? `Add ${label.toLowerCase()}…` : slugs.length > 0 ? `Change ${label.toLowerCase()}…` : `Choose ${label.toLowerCase()}…`}
          </button>
          {!multiple && slugs.length > 0 && <button type='button' class='danger-text' onClick={() => { onChange(undefined) }}>Clear</button>}
        </div>
      )}
      <Dialog open={picking} title={`Choose from ${target}`} onClose={() => { setPicking(false) }}>
        {picking && <ReferenceSearch collection={target} scope={form.scope} exclude={slugs} onChoose={choose} />}
      </Dialog>
    </div>
  )
}

function ReferenceSearch ({ collection, scope, exclude, onChoose }: { collection: string, scope: Scope, exclude: string[], onChoose: (slug: string) => void }): JSX.Element {
  const [q, setQ] = useState('')
  const query = useDebounced(q, 250)
  const results = useLoad(async signal => {
    const schema = await targetSchema(collection)
    const title = displayField(schema)
    const list = await api.get<ListEnvelope<Entry>>(`/api/content/${seg(collection)}`, {
      ...scopeQuery(scope), _q: query, _per_page: 20, _status: 'all', _fields: title ?? undefined
    }, signal)
    return { title, list }
  }, [collection, query, scope.locale, scope.environment], { keep: true })
  const [announce, setAnnounce] = useState('')
  useEffect(() => {
    if (results.data !== undefined) setAnnounce(`${results.data.list.total} ${results.data.list.total === 1 ? 'match' : 'matches'}`)
  }, [results.data])

  return (
    <div class='picker'>
      <label for='reference-search'>Search {collection}</label>
      <input id='reference-search' type='search' autoFocus value={q} onInput={e => { setQ(e.currentTarget.value) }} aria-describedby='reference-count' />
      <p id='reference-count' class='muted' role='status'>{announce}</p>
      {results.loading && results.data === undefined && <Loading />}
      {results.error !== null && <p role='alert'>{describeError(results.error)}</p>}
      {results.data !== undefined && (
        <ul class='pick-list'>
          {results.data.list.items.map(entry => {
            const taken = exclude.includes(entry._slug)
            return (
              <li key={entry._slug}>
                <button type='button' disabled={taken} onClick={() => { onChoose(entry._slug) }}>
                  <span>{entryTitle(entry, results.data?.title ?? null)}</span>
                  <code class='slug'>{entry._slug}</code>
                  {entry._status === 'draft' && <StatusBadge status='draft' />}
                  {taken && <span class='muted'> (chosen)</span>}
                </button>
              </li>
            )
          })}
        </ul>
      )}
    </div>
  )
}
