// Schemas: the list, one schema's resolved and raw views, and (for admins) the editor.
import type { JSX } from 'preact'
import { useRef, useState } from 'preact/hooks'
import { api, describeError, isNotFound, seg } from '../api.js'
import { useApp } from '../context.js'
import { forgetSchemas } from '../fields/reference.js'
import { href, navigate } from '../router.js'
import { fieldLabel, schemaLabel } from '../schema.js'
import { canWriteSchemas } from '../session.js'
import type { FieldDefinition, ResolvedSchema, SchemaDefinition } from '../types.js'
import { ConfirmDialog, ErrorSummary, Link, Loading, PageTitle, Problem, useLoad } from '../ui.js'
import { SchemaEditor } from './schema-editor.js'

type Kind = 'collection' | 'reusable' | 'unavailable'

export function SchemaList (): JSX.Element {
  const { session } = useApp()
  const data = useLoad(async signal => {
    const [{ names }, { collections }] = await Promise.all([
      api.get<{ names: string[] }>('/api/schemas', undefined, signal),
      api.get<{ collections: Array<{ name: string, field_count: number, description: string | null, category: string | null }> }>('/api/collections', undefined, signal)
    ])
    const byName = new Map(collections.map(c => [c.name, c]))
    // A name that is not a collection is a reusable partial, or a schema the server could not load.
    const others = await Promise.all(names.filter(n => !byName.has(n)).map(async n => {
      try {
        const raw = await api.get<SchemaDefinition>(`/api/schemas/${seg(n)}/raw`, undefined, signal)
        return [n, raw.reusable === true ? 'reusable' : 'unavailable', raw] as const
      } catch {
        return [n, 'unavailable', null] as const
      }
    }))
    const kinds = new Map<string, { kind: Kind, raw: SchemaDefinition | null }>(others.map(([n, k, raw]) => [n, { kind: k, raw }]))
    return names.map(name => {
      const summary = byName.get(name)
      const other = kinds.get(name)
      return {
        name,
        kind: summary !== undefined ? 'collection' as Kind : other?.kind ?? 'unavailable',
        fields: summary?.field_count ?? (other?.raw !== null && other?.raw !== undefined ? Object.keys(other.raw.fields ?? {}).length : null),
        description: summary?.description ?? other?.raw?.description ?? null,
        category: summary?.category ?? other?.raw?.category ?? null
      }
    })
  }, [])

  return (
    <>
      <div class='page-head'>
        <PageTitle title='Schemas'>Schemas</PageTitle>
        {canWriteSchemas(session.role) && <Link class='button primary' href={href(['schemas', 'new'])}>New schema</Link>}
      </div>
      <p class='muted'>Each schema defines a content collection; reusable ones are partials that others extend.</p>
      {data.error !== null && <Problem error={data.error} retry={data.reload} />}
      {data.loading && data.data === undefined && <Loading />}
      {data.data !== undefined && (
        <table class='entries'>
          <thead><tr><th scope='col'>Name</th><th scope='col'>Kind</th><th scope='col'>Fields</th><th scope='col'>Description</th></tr></thead>
          <tbody>
            {data.data.map(row => (
              <tr key={row.name}>
                <td data-label='Name'><Link href={href(['schemas', 'edit', row.name])}>{row.name}</Link></td>
                <td data-label='Kind'>
                  <span class={`badge kind-${row.kind}`}>{row.kind === 'collection' ? 'collection' : row.kind === 'reusable' ? 'reusable' : 'not loaded'}</span>
                </td>
                <td data-label='Fields'>{row.fields ?? '–'}</td>
                <td data-label='Description'>{row.description ?? ''}{row.category !== null ? <span class='muted'> · {row.category}</span> : null}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  )
}

type Tab = 'edit' | 'resolved' | 'raw'

export function SchemaPage ({ name }: { name: string | null }): JSX.Element {
  const { session, notify, reloadCollections } = useApp()
  const admin = canWriteSchemas(session.role)
  const names = useLoad(async signal => (await api.get<{ names: string[] }>('/api/schemas', undefined, signal)).names, [])
  const raw = useLoad(async signal => name === null ? null : await api.get<SchemaDefinition>(`/api/schemas/${seg(name)}/raw`, undefined, signal), [name])
  const resolved = useLoad(async signal => {
    if (name === null) return null
    try {
      return await api.get<ResolvedSchema>(`/api/collections/${seg(name)}`, undefined, signal)
    } catch (err) {
      if (isNotFound(err)) return null
      throw err
    }
  }, [name])
  const [tab, setTab] = useState<Tab>(admin ? 'edit' : 'resolved')
  const [confirming, setConfirming] = useState(false)
  const [deleteError, setDeleteError] = useState<string | null>(null)

  if (name === null) {
    if (!admin) {
      return <><PageTitle title='New schema'>New schema</PageTitle><p class='notice info'>Only the admin role can create schemas.</p></>
    }
    return (
      <>
        <PageTitle title='New schema'>New schema</PageTitle>
        <SchemaEditor
          initial={null} resolved={null} names={names.data ?? []}
          onSaved={saved => {
            forgetSchemas()
            reloadCollections()
            notify(`Created schema ${saved.name}.`)
            navigate(href(['schemas', 'edit', saved.name]))
          }}
        />
      </>
    )
  }

  if ((raw.loading && raw.data === undefined) || (resolved.loading && resolved.data === undefined)) return <Loading />
  if (raw.error !== null && raw.data === undefined) {
    return <><PageTitle title={name}>{name}</PageTitle><Problem error={raw.error} retry={raw.reload} /></>
  }

  const remove = async (): Promise<void> => {
    setConfirming(false)
    try {
      await api.delete(`/api/schemas/${seg(name)}`)
      forgetSchemas()
      reloadCollections()
      notify(`Deleted schema ${name}.`)
      navigate(href(['schemas']))
    } catch (err) {
      setDeleteError(describeError(err))
    }
  }

  const tabs: Array<{ id: Tab, label: string }> = [
    ...(admin ? [{ id: 'edit' as Tab, label: 'Edit' }] : []),
    { id: 'resolved', label: 'Resolved' },
    { id: 'raw', label: 'Raw file' }
  ]
  const title = raw.data !== null && raw.data !== undefined ? schemaLabel(raw.data) : name

  return (
    <>
      <nav class='breadcrumbs' aria-label='Breadcrumbs'><Link href={href(['schemas'])}>Schemas</Link><span aria-hidden='true'> / </span><span>{name}</span></nav>
      <div class='page-head'>
        <PageTitle title={`Schema ${name}`}>{title}</PageTitle>
        {resolved.data !== null && resolved.data !== undefined && <Link class='button' href={href(['content', name])}>Open entries</Link>}
        {admin && <button type='button' class='danger' onClick={() => { setConfirming(true) }}>Delete…</button>}
      </div>
      {deleteError !== null && <ErrorSummary title='The schema was not deleted' errors={[deleteError]} />}
      <Tabs tabs={tabs} current={tab} onChange={setTab} />
      <div role='tabpanel' id={`panel-${tab}`} aria-labelledby={`tab-${tab}`} tabIndex={0} class='tabpanel'>
        {tab === 'edit' && admin && raw.data !== null && raw.data !== undefined && (
          <SchemaEditor
            initial={raw.data} resolved={resolved.data ?? null} names={names.data ?? []}
            onSaved={saved => {
              forgetSchemas()
              reloadCollections()
              raw.reload()
              resolved.reload()
              notify(`Saved schema ${saved.name}.`)
            }}
          />
        )}
        {tab === 'resolved' && (
          resolved.data === null || resolved.data === undefined
            ? <p class='muted'>{raw.data?.reusable === true ? 'A reusable partial has no resolved collection: other schemas extend it.' : 'The server has not loaded this schema as a collection (see its log).'}</p>
            : <ResolvedView schema={resolved.data} />
        )}
        {tab === 'raw' && <pre class='code'>{JSON.stringify(raw.data, null, 2)}</pre>}
      </div>
      <ConfirmDialog
        open={confirming} title={`Delete schema ${name}?`} confirmLabel='Delete schema'
        message={<p>The schema file is removed and the collection disappears from the API. Other schemas that extend it stop loading.</p>}
        onConfirm={() => { void remove() }} onCancel={() => { setConfirming(false) }}
      />
    </>
  )
}

/** A WAI-ARIA tab list: arrow keys move between tabs, only the current tab is in the tab order. */
function Tabs ({ tabs, current, onChange }: { tabs: Array<{ id: Tab, label: string }>, current: Tab, onChange: (tab: Tab) => void }): JSX.Element {
  const list = useRef<HTMLDivElement>(null)
  const onKeyDown = (event: KeyboardEvent): void => {
    const index = tabs.findIndex(t => t.id === current)
    let next = index
    if (event.key === 'ArrowRight') next = (index + 1) % tabs.length
    else if (event.key === 'ArrowLeft') next = (index - 1 + tabs.length) % tabs.length
    else if (event.key === 'Home') next = 0
    else if (event.key === 'End') next = tabs.length - 1
    else return
    event.preventDefault()
    const tab = tabs[next]
    if (tab === undefined) return
    onChange(tab.id)
    list.current?.querySelector<HTMLElement>(`#tab-${tab.id}`)?.focus()
  }
  return (
    <div role='tablist' class='tabs' ref={list} onKeyDown={onKeyDown}>
      {tabs.map(t => (
        <button
          key={t.id} type='button' role='tab' id={`tab-${t.id}`} aria-selected={t.id === current}
          aria-controls={`panel-${t.id}`} tabIndex={t.id === current ? 0 : -1} onClick={() => { onChange(t.id) }}
        >
          {t.label}
        </button>
      ))}
    </div>
  )
}

function describeField (def: FieldDefinition): string {
  const parts: string[] = [def.field_type]
  if (def.field_type === 'reference') parts.push(`→ ${def.collection ?? '?'}${def.multiple === true ? ' (many)' : ''}`)
  if (def.field_type === 'array' && def.items !== undefined) parts.push(`of ${def.items.field_type}`)
  if (def.required === true) parts.push('required')
  if (def.unique === true) parts.push('unique')
  if (def.readonly === true) parts.push('readonly')
  if (def.auto !== undefined) parts.push(`auto ${def.auto}`)
  if (def.options !== undefined) parts.push(`options: ${def.options.join(', ')}`)
  if (def.min !== undefined || def.max !== undefined) parts.push(`range ${def.min ?? '…'}–${def.max ?? '…'}`)
  if (def.min_length !== undefined || def.max_length !== undefined) parts.push(`length ${def.min_length ?? 0}–${def.max_length ?? '…'}`)
  if (def.pattern !== undefined) parts.push(`pattern ${def.pattern}`)
  if (def.accept !== undefined) parts.push(`accept ${Array.isArray(def.accept) ? def.accept.join(', ') : def.accept}`)
  if (def.default !== undefined) parts.push(`default ${JSON.stringify(def.default)}`)
  return parts.join(' · ')
}

function FieldTree ({ fields }: { fields: Record<string, FieldDefinition> }): JSX.Element {
  return (
    <ul class='field-tree'>
      {Object.entries(fields).map(([name, def]) => (
        <li key={name}>
          <strong>{fieldLabel(name, def)}</strong> <code>{name}</code> <span class='muted'>{describeField(def)}</span>
          {def.field_type === 'object' && def.fields !== undefined && <FieldTree fields={def.fields} />}
          {def.field_type === 'array' && def.items?.field_type === 'object' && def.items.fields !== undefined && <FieldTree fields={def.items.fields} />}
        </li>
      ))}
    </ul>
  )
}

function ResolvedView ({ schema }: { schema: ResolvedSchema }): JSX.Element {
  const parents = schema.extends === null ? [] : Array.isArray(schema.extends) ? schema.extends : [schema.extends]
  return (
    <>
      <dl class='meta'>
        {parents.length > 0 && <><dt>Extends</dt><dd>{parents.map((p, i) => <span key={p}>{i > 0 ? ', ' : ''}<Link href={href(['schemas', 'edit', p])}>{p}</Link></span>)}</dd></>}
        <dt>Strict</dt><dd>{schema.strict ? 'yes: unknown fields are rejected' : 'no'}</dd>
        {schema.display_field !== undefined && schema.display_field !== null && <><dt>Title field</dt><dd>{schema.display_field}</dd></>}
        {schema.default_sort !== undefined && schema.default_sort !== null && <><dt>Default sort</dt><dd>{schema.default_sort} {schema.default_order ?? 'desc'}</dd></>}
      </dl>
      <h2>Fields</h2>
      <FieldTree fields={schema.fields} />
      <details>
        <summary>Resolved JSON</summary>
        <pre class='code'>{JSON.stringify(schema, null, 2)}</pre>
      </details>
    </>
  )
}
