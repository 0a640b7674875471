// The entry list of one collection: search, filters on select fields, sort, status, paging.
// Every control lives in the URL, so a filtered list can be bookmarked and shared.
import type { JSX } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api, seg, type Query } from '../api.js'
import { scopeQuery, useApp } from '../context.js'
import { href, setQuery, useRoute } from '../router.js'
import { displayField, entryTitle, fieldLabel, filterFields, schemaLabel, sortChoices } from '../schema.js'
import { canWriteContent } from '../session.js'
import type { Entry, ListEnvelope, ResolvedSchema } from '../types.js'
import { Link, Loading, PageTitle, Problem, StatusBadge, formatDate, useDebounced, useLoad } from '../ui.js'

const PER_PAGE = 20
const FILTER_PREFIX = 'filter.'

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

function EntryTable ({ schema, query, canWrite }: { schema: ResolvedSchema, query: URLSearchParams, canWrite: boolean }): JSX.Element {
  const { scope } = useApp()
  const collection = schema.name
  const title = schemaLabel(schema)
  const titleField = displayField(schema)
  const filters = filterFields(schema)

  const q = query.get('q') ?? ''
  const status = query.get('status') ?? 'all'
  const sort = query.get('sort') ?? ''
  const order = query.get('order') === 'desc' ? 'desc' : 'asc'
  const page = Math.max(1, Number.parseInt(query.get('page') ?? '1', 10) || 1)
  const filterValues: Record<string, string> = {}
  for (const [name] of filters) {
    const value = query.get(FILTER_PREFIX + name)
    if (value !== null && value !== '') filterValues[name] = value
  }

  const request: Query = {
    ...scopeQuery(scope),
    _page: page,
    _per_page: PER_PAGE,
    _status: status,
    _q: q,
    _sort: sort,
    _order: sort !== '' ? order : undefined,
    ...filterValues
  }
  const key = JSON.stringify(request)
  const list = useLoad(async signal => await api.get<ListEnvelope<Entry>>(`/api/content/${seg(collection)}`, request, signal), [collection, key], { keep: true })

  const [search, setSearch] = useState(q)
  const debounced = useDebounced(search, 300)
  useEffect(() => {
    if (debounced !== q) setQuery({ q: debounced, page: null })
  }, [debounced])

  const result = list.data
  const filtered = q !== '' || status !== 'all' || Object.keys(filterValues).length > 0

  return (
    <>
      <div class='page-head'>
        <PageTitle title={title}>{title}</PageTitle>
        {canWrite && <Link class='button primary' href={href(['content', collection, 'new'])}>New entry</Link>}
      </div>
      {schema.description !== undefined && schema.description !== null && <p class='muted'>{schema.description}</p>}

      <form class='toolbar' role='search' aria-label={`Filter ${title}`} onSubmit={e => { e.preventDefault(); setQuery({ q: search, page: null }) }}>
        <div class='control grow'>
          <label for='list-search'>Search</label>
          <input id='list-search' type='search' value={search} placeholder='Text in any field' onInput={e => { setSearch(e.currentTarget.value) }} />
        </div>
        <div class='control'>
          <label for='list-status'>Status</label>
          <select id='list-status' value={status} onChange={e => { setQuery({ status: e.currentTarget.value === 'all' ? null : e.currentTarget.value, page: null }) }}>
            <option value='all'>All</option>
            <option value='published'>Published</option>
            <option value='draft'>Draft</option>
          </select>
        </div>
        {filters.map(([name, def]) => (
          <div class='control' key={name}>
            <label for={`list-filter-${name}`}>{fieldLabel(name, def)}</label>
            <select id={`list-filter-${name}`} value={filterValues[name] ?? ''} onChange={e => { setQuery({ [FILTER_PREFIX + name]: e.currentTarget.value, page: null }) }}>
              <option value=''>Any</option>
              {(def.options ?? []).map(option => <option key={String(option)} value={String(option)}>{String(option)}</option>)}
            </select>
          </div>
        ))}
        <div class='control'>
          <label for='list-sort'>Sort by</label>
          <select id='list-sort' value={sort} onChange={e => { setQuery({ sort: e.currentTarget.value, page: null }) }}>
            <option value=''>Default{schema.default_sort !== undefined && schema.default_sort !== null ? ` (${schema.default_sort})` : ''}</option>
            {sortChoices(schema).map(c => <option key={c.value} value={c.value}>{c.label}</option>)}
          </select>
        </div>
        <div class='control'>
          <label for='list-order'>Order</label>
          <select id='list-order' value={sort === '' ? (schema.default_order ?? 'desc') : order} disabled={sort === ''} onChange={e => { setQuery({ order: e.currentTarget.value === 'desc' ? 'desc' : null, page: null }) }}>
            <option value='asc'>Ascending</option>
            <option value='desc'>Descending</option>
          </select>
        </div>
      </form>

      {list.error !== null && <Problem error={list.error} retry={list.reload} />}
      {list.loading && result === undefined && <Loading />}
      {result !== undefined && (
        <>
          <p class='muted' role='status'>
            {result.total === 0
              ? (filtered ? 'No entries match.' : 'No entries yet.')
              : `${result.total} ${result.total === 1 ? 'entry' : 'entries'}${result.pages > 1 ? `, page ${result.page} of ${result.pages}` : ''}`}
          </p>
          {result.items.length > 0 && (
            <table class='entries'>
              <thead>
                <tr><th scope='col'>Title</th><th scope='col'>Status</th><th scope='col'>Updated</th></tr>
              </thead>
              <tbody>
                {result.items.map(entry => (
                  <tr key={entry._slug}>
                    <td data-label='Title'>
                      <Link href={href(['content', collection, 'entry', entry._slug])}>{entryTitle(entry, titleField)}</Link>
                      <span class='slug'>{entry._slug}</span>
                    </td>
                    <td data-label='Status'><StatusBadge status={entry._status} /></td>
                    <td data-label='Updated'>{formatDate(entry._updated_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {result.pages > 1 && (
            <nav class='pager' aria-label='Pages'>
              <button type='button' disabled={result.page <= 1} onClick={() => { setQuery({ page: result.page - 1 === 1 ? null : result.page - 1 }) }}>Previous</button>
              <span>Page {result.page} of {result.pages}</span>
              <button type='button' disabled={result.page >= result.pages} onClick={() => { setQuery({ page: result.page + 1 }) }}>Next</button>
            </nav>
          )}
        </>
      )}
    </>
  )
}
