// The controls of an entry list (entries.tsx): the toolbar, filters with the right input per
// field type, and the column picker. Each change is a step in the URL (list-state.ts).
import type { JSX } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { FROM_START, OPERATOR_LABELS, PAGE_SIZES, filterParam, operatorsFor, scalarFields, type ListState } from '../list-state.js'
import { setQuery } from '../router.js'
import { fieldLabel, sortChoices } from '../schema.js'
import type { FieldDefinition, ResolvedSchema } from '../types.js'
import { formatDate, useDebounced } from '../ui.js'

export function ListToolbar ({ schema, state }: { schema: ResolvedSchema, state: ListState }): JSX.Element {
  const title = schema.label ?? schema.name
  const [search, setSearch] = useState(state.q)
  const debounced = useDebounced(search, 300)
  useEffect(() => { setSearch(state.q) }, [state.q])
  // Typing is one step, not one per key: the search replaces the entry it started from.
  useEffect(() => { if (debounced !== state.q) setQuery({ q: debounced, ...FROM_START }, { replace: true }) }, [debounced])
  const change = (name: string, value: string | null): void => { setQuery({ [name]: value, ...FROM_START }) }
  return (
    <form class='toolbar' role='search' aria-label={`Filter ${title}`} onSubmit={e => { e.preventDefault(); setQuery({ q: search, ...FROM_START }) }}>
      <div class='control grow'>
        <label for='list-search'>Search</label>
        <input id='list-search' type='search' value={search} placeholder='Text in any field' onInput={e => { setSearch(e.currentTarget.value) }} />
      </div>
      <div class='control'>
        <label for='list-status'>Status</label>
        <select id='list-status' value={state.status} onChange={e => { change('status', e.currentTarget.value === 'all' ? null : e.currentTarget.value) }}>
          <option value='all'>All</option>
          <option value='published'>Published</option>
          <option value='draft'>Draft</option>
        </select>
      </div>
      <div class='control'>
        <label for='list-sort'>Sort by</label>
        <select id='list-sort' value={state.sort} onChange={e => { change('sort', e.currentTarget.value) }}>
          <option value=''>Default{typeof schema.default_sort === 'string' ? ` (${schema.default_sort})` : ''}</option>
          {sortChoices(schema).map(c => <option key={c.value} value={c.value}>{c.label}</option>)}
        </select>
      </div>
      <div class='control'>
        <label for='list-order'>Order</label>
        <select id='list-order' value={state.sort === '' ? (schema.default_order ?? 'desc') : state.order} disabled={state.sort === ''} onChange={e => { change('order', e.currentTarget.value === 'desc' ? 'desc' : null) }}>
          <option value='asc'>Ascending</option>
          <option value='desc'>Descending</option>
        </select>
      </div>
      <div class='control narrow'>
        <label for='list-per-page'>Per page</label>
        <select id='list-per-page' value={String(state.perPage)} onChange={e => { change('per', e.currentTarget.value === '20' ? null : e.currentTarget.value) }}>
          {PAGE_SIZES.map(n => <option key={n} value={String(n)}>{n}</option>)}
        </select>
      </div>
    </form>
  )
}

/** The value input of a filter, by field type. */
function FilterValue ({ def, value, onChange }: { def: FieldDefinition, value: string, onChange: (value: string) => void }): JSX.Element {
  const common = { id: 'filter-value', value, onInput: (e: Event) => { onChange((e.currentTarget as HTMLInputElement).value) } }
  switch (def.field_type) {
    case 'boolean':
      return <select id='filter-value' value={value} onChange={e => { onChange(e.currentTarget.value) }}><option value='true'>Yes</option><option value='false'>No</option></select>
    case 'select': case 'multiselect':
      return (
        <select id='filter-value' value={value} onChange={e => { onChange(e.currentTarget.value) }}>
          {(def.options ?? []).map(o => <option key={String(o)} value={String(o)}>{String(o)}</option>)}
        </select>
      )
    case 'number': case 'integer':
      return <input type='number' step={def.field_type === 'integer' ? 1 : 'any'} {...common} />
    case 'date':
      return <input type='date' {...common} />
    case 'datetime':
      return <input type='datetime-local' {...common} />
    default:
      return <input type='text' {...common} />
  }
}

const initialValue = (def: FieldDefinition): string =>
  def.field_type === 'boolean' ? 'true' : (def.field_type === 'select' || def.field_type === 'multiselect') ? String(def.options?.[0] ?? '') : ''

/** A datetime-local value is the editor's local time: the API compares UTC instants. */
const apiValue = (def: FieldDefinition, value: string): string =>
  def.field_type === 'datetime' && value !== '' && !Number.isNaN(new Date(value).getTime()) ? new Date(value).toISOString() : value

export function FilterAdder ({ schema }: { schema: ResolvedSchema }): JSX.Element | null {
  const fields = scalarFields(schema)
  const [field, setField] = useState(fields[0]?.[0] ?? '')
  const def = schema.fields[field]
  const [op, setOp] = useState('')
  const [value, setValue] = useState('')
  useEffect(() => { if (def !== undefined) { setOp(operatorsFor(def)[0] ?? 'eq'); setValue(initialValue(def)) } }, [field])
  if (fields.length === 0 || def === undefined) return null
  const add = (e: Event): void => {
    e.preventDefault()
    if (value.trim() === '') return
    setQuery({ [filterParam({ field, op })]: apiValue(def, value.trim()), ...FROM_START })
    setValue(initialValue(def))
  }
  return (
    <details class='list-panel'>
      <summary>Add a filter</summary>
      <form class='toolbar' onSubmit={add} aria-label='Add a filter'>
        <div class='control'>
          <label for='filter-field'>Field</label>
          <select id='filter-field' value={field} onChange={e => { setField(e.currentTarget.value) }}>
            {fields.map(([name, d]) => <option key={name} value={name}>{fieldLabel(name, d)}</option>)}
          </select>
        </div>
        <div class='control'>
          <label for='filter-op'>Condition</label>
          <select id='filter-op' value={op} onChange={e => { setOp(e.currentTarget.value) }}>
            {operatorsFor(def).map(o => <option key={o} value={o}>{OPERATOR_LABELS[o] ?? o}</option>)}
          </select>
        </div>
        <div class='control'>
          <label for='filter-value'>Value</label>
          <FilterValue def={def} value={value} onChange={setValue} />
        </div>
        <button type='submit'>Apply filter</button>
      </form>
    </details>
  )
}

export function ActiveFilters ({ schema, state }: { schema: ResolvedSchema, state: ListState }): JSX.Element | null {
  if (state.filters.length === 0) return null
  return (
    <ul class='active-filters' aria-label='Active filters'>
      {state.filters.map(f => {
        const def = schema.fields[f.field]
        const label = `${def === undefined ? f.field : fieldLabel(f.field, def)} ${OPERATOR_LABELS[f.op] ?? f.op} ${f.value}`
        return (
          <li key={filterParam(f)}>
            <span>{label}</span>
            <button type='button' class='icon-button' aria-label={`Remove filter: ${label}`} onClick={() => { setQuery({ [filterParam(f)]: null, ...FROM_START }) }}>×</button>
          </li>
        )
      })}
    </ul>
  )
}

export function ColumnPicker ({ schema, state }: { schema: ResolvedSchema, state: ListState }): JSX.Element | null {
  const fields = scalarFields(schema)
  if (fields.length === 0) return null
  const toggle = (name: string, on: boolean): void => {
    const chosen = on ? [...state.columns, name] : state.columns.filter(c => c !== name)
    // Columns keep the schema's order, whatever order they were ticked in.
    setQuery({ cols: fields.map(([n]) => n).filter(n => chosen.includes(n)).join(',') })
  }
  return (
    <details class='list-panel'>
      <summary>Columns</summary>
      <fieldset class='columns'>
        <legend class='visually-hidden'>Columns to show</legend>
        {fields.map(([name, def]) => (
          <label key={name} class='check'>
            <input type='checkbox' checked={state.columns.includes(name)} onChange={e => { toggle(name, e.currentTarget.checked) }} />
            {fieldLabel(name, def)}
          </label>
        ))}
      </fieldset>
    </details>
  )
}

/** A short text of a value in a list cell. */
export function cellText (value: unknown, def: FieldDefinition | undefined): string {
  if (value === undefined || value === null) return ''
  if (typeof value === 'boolean') return value ? 'Yes' : 'No'
  if (def?.field_type === 'datetime' && typeof value === 'string') return formatDate(value)
  if (Array.isArray(value)) return value.map(v => String(v)).join(', ')
  if (typeof value === 'object') return JSON.stringify(value).slice(0, 80)
  const text = String(value)
  return text.length > 80 ? `${text.slice(0, 79)}…` : text
}
