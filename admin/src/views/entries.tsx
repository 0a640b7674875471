// The entry list of one collection: search, status, sort, page size, filters on any scalar field,
// chosen columns, keyset paging (contract §10), and bulk publish, unpublish and delete. Every
// control lives in the URL (list-state.ts), each change a history step: Back restores the list.
import type { JSX } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api, describeError, seg } from '../api.js'
import { scopeQuery, useApp } from '../context.js'
import { ask } from '../guard.js'
import { listRequest, nextPage, previousPage, readListState, type ListState } from '../list-state.js'
import { href, setQuery, useRoute } from '../router.js'
import { displayField, entryTitle, schemaLabel } from '../schema.js'
import { canWriteContent } from '../session.js'
import type { Entry, ListEnvelope, ResolvedSchema } from '../types.js'
import { Link, Loading, PageTitle, Problem, StatusBadge, formatDate, useLoad } from '../ui.js'
import { ActiveFilters, ColumnPicker, FilterAdder, ListToolbar, cellText } from './list-controls.js'

export function EntryList ({ collection }: { collection: string }): JSX.Element {
  const { session } = useApp()
  const route = useRoute()
  const schema = useLoad(async signal => await api.get<ResolvedSchema>(`/api/collections/${seg(collection)}`, undefined, signal), [collection])

  if (schema.loading && schema.data === undefined) return <Loading />
  if (schema.data === undefined) {
    return (
      <>
        <PageTitle title={collection}>{collection}</PageTitle>
        <Problem error={schema.error} retry={schema.reload} />
      </>
    )
  }
  return <EntryTable schema={schema.data} query={route.query} canWrite={canWriteContent(session.role)} />
}

type Bulk = 'publish' | 'unpublish' | 'delete'
const BULK_WORDS: Record<Bulk, [string, string]> = { publish: ['Publish', 'Published'], unpublish: ['Unpublish', 'Unpublished'], delete: ['Delete', 'Deleted'] }
/** Requests in flight at once during a bulk action: fast, without flooding the server. */
const BULK_PARALLEL = 6

async function runBulk (action: Bulk, collection: string, slugs: string[], scope: ReturnType<typeof scopeQuery>): Promise<string[]> {
  const failures: string[] = []
  const queue = [...slugs]
  const worker = async (): Promise<void> => {
    for (let slug = queue.shift(); slug !== undefined; slug = queue.shift()) {
      const path = `/api/content/${seg(collection)}/${seg(slug)}`
      try {
        if (action === 'delete') await api.delete(path, scope)
        else await api.patch(path, { _status: action === 'publish' ? 'published' : 'draft' }, scope)
      } catch (err) {
        failures.push(`${slug}: ${describeError(err)}`)
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(BULK_PARALLEL, slugs.length) }, worker))
  return failures
}

function EntryTable ({ schema, query, canWrite }: { schema: ResolvedSchema, query: URLSearchParams, canWrite: boolean }): JSX.Element {
  const { scope, notify } = useApp()
  const collection = schema.name
  const title = schemaLabel(schema)
  const state = readListState(query, schema)
  const request = listRequest(state, scopeQuery(scope))
  const key = JSON.stringify(request)
  const list = useLoad(async signal => await api.get<ListEnvelope<Entry>>(`/api/content/${seg(collection)}`, request, signal), [collection, key], { keep: true })
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set())
  const [busy, setBusy] = useState(false)
  useEffect(() => { setSelected(new Set()) }, [key])

  const bulk = async (action: Bulk): Promise<void> => {
    const count = selected.size
    const noun = count === 1 ? '1 entry' : `${count} entries`
    const [verb, done] = BULK_WORDS[action]
    const yes = await ask({
      title: `${verb} ${noun}?`,
      message: action === 'delete' ? `${noun} will be deleted. This cannot be undone.` : `${noun} will be ${done.toLowerCase()}.`,
      confirmLabel: `${verb} ${noun}`
    })
    if (!yes) return
    setBusy(true)
    const failures = await runBulk(action, collection, [...selected], scopeQuery(scope))
    setBusy(false)
    if (failures.length === 0) notify(`${done} ${noun}.`)
    else notify(`${done} ${count - failures.length} of ${count}; not done: ${failures.slice(0, 3).join('; ')}${failures.length > 3 ? '…' : ''}`, 'error')
    list.reload()
  }

  const result = list.data
  return (
    <>
      <div class='page-head'>
        <PageTitle title={title}>{title}</PageTitle>
        {canWrite && <Link class='button primary' href={href(['content', collection, 'new'])}>New entry</Link>}
      </div>
      {schema.description !== undefined && schema.description !== null && <p class='muted'>{schema.description}</p>}
      <ListToolbar schema={schema} state={state} />
      <div class='list-tools'>
        <FilterAdder schema={schema} />
        <ColumnPicker schema={schema} state={state} />
      </div>
      <ActiveFilters schema={schema} state={state} />
      {list.error !== null && <Problem error={list.error} retry={list.reload} />}
      {list.loading && result === undefined && <Loading />}
      {result !== undefined && (
        <>
          <ListSummary state={state} result={result} />
          {canWrite && selected.size > 0 && (
            <div class='bulk-bar' role='region' aria-label='Bulk actions'>
              <span>{selected.size} selected</span>
              {(['publish', 'unpublish', 'delete'] as const).map(action => (
                <button key={action} type='button' class={action === 'delete' ? 'danger' : action === 'publish' ? 'primary' : ''} disabled={busy} onClick={() => { void bulk(action) }}>
                  {BULK_WORDS[action][0]}
                </button>
              ))}
              <button type='button' class='link-button' onClick={() => { setSelected(new Set()) }}>Clear selection</button>
            </div>
          )}
          {result.items.length > 0 && <Rows schema={schema} state={state} items={result.items} canWrite={canWrite} selected={selected} onSelect={setSelected} />}
          <Pager state={state} next={result.next ?? null} />
        </>
      )}
    </>
  )
}

function ListSummary ({ state, result }: { state: ListState, result: ListEnvelope<Entry> }): JSX.Element {
  const filtered = state.q !== '' || state.status !== 'all' || state.filters.length > 0
  const first = state.trail.length * state.perPage + 1
  const text = result.total === 0
    ? (filtered ? 'No entries match.' : 'No entries yet.')
    : `${result.total} ${result.total === 1 ? 'entry' : 'entries'}${result.total > result.items.length ? `, showing ${first}–${first + result.items.length - 1}` : ''}`
  return <p class='muted' role='status'>{text}</p>
}

function Rows ({ schema, state, items, canWrite, selected, onSelect }: {
  schema: ResolvedSchema
  state: ListState
  items: Entry[]
  canWrite: boolean
  selected: ReadonlySet<string>
  onSelect: (next: ReadonlySet<string>) => void
}): JSX.Element {
  const titleField = displayField(schema)
  const allOn = items.every(e => selected.has(e._slug))
  const toggle = (slug: string, on: boolean): void => {
    const next = new Set(selected)
    if (on) next.add(slug)
    else next.delete(slug)
    onSelect(next)
  }
  return (
    <table class='entries'>
      <thead>
        <tr>
          {canWrite && (
            <th scope='col' class='select'>
              <input type='checkbox' aria-label='Select every entry on this page' checked={allOn} onChange={e => { onSelect(e.currentTarget.checked ? new Set(items.map(i => i._slug)) : new Set()) }} />
            </th>
          )}
          <th scope='col'>Title</th>
          {state.columns.map(c => <th scope='col' key={c}>{schema.fields[c]?.label ?? c}</th>)}
          <th scope='col'>Status</th>
          <th scope='col'>Updated</th>
        </tr>
      </thead>
      <tbody>
        {items.map(entry => {
          const name = entryTitle(entry, titleField)
          return (
            <tr key={entry._slug}>
              {canWrite && (
                <td class='select'>
                  <input type='checkbox' aria-label={`Select ${name}`} checked={selected.has(entry._slug)} onChange={e => { toggle(entry._slug, e.currentTarget.checked) }} />
                </td>
              )}
              <td data-label='Title'>
                <Link href={href(['content', schema.name, 'entry', entry._slug])}>{name}</Link>
                <span class='slug'>{entry._slug}</span>
              </td>
              {state.columns.map(c => <td key={c} data-label={schema.fields[c]?.label ?? c}>{cellText(entry[c], schema.fields[c])}</td>)}
              <td data-label='Status'><StatusBadge status={entry._status} /></td>
              <td data-label='Updated'>{formatDate(entry._updated_at)}</td>
            </tr>
          )
        })}
      </tbody>
    </table>
  )
}

function Pager ({ state, next }: { state: ListState, next: string | null }): JSX.Element | null {
  const hasPrevious = state.after !== null
  if (!hasPrevious && next === null) return null
  return (
    <nav class='pager' aria-label='Pages'>
      <button type='button' disabled={!hasPrevious} onClick={() => { setQuery(previousPage(state)) }}>Previous</button>
      <span>Page {state.trail.length + 1}</span>
      <button type='button' disabled={next === null} onClick={() => { if (next !== null) setQuery(nextPage(state, next)) }}>Next</button>
    </nav>
  )
}
