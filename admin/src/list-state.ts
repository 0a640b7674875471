// The state of an entry list, all of it in the URL (so Back and Forward restore it, and a list can
// be bookmarked): search, status, sort, page size, keyset position, columns and filters. This
// module turns that state into the list request (contract §4 and §10) and back.
import type { Query } from './api.js'
import type { FieldDefinition, ResolvedSchema } from './types.js'

export const PAGE_SIZES = [10, 20, 50, 100] as const
const DEFAULT_PER_PAGE = 20
/** URL parameter of a filter: `f.<field>.<op>`. */
const FILTER = /^f\.([A-Za-z0-9_$-]+)\.([a-z]+)$/

export interface Filter { field: string, op: string, value: string }

export interface ListState {
  q: string
  status: string
  sort: string
  order: 'asc' | 'desc'
  perPage: number
  /** The keyset cursor of this page; null on the first. */
  after: string | null
  /** The cursors of the pages before this one (the first page's is FIRST), for Previous. */
  trail: string[]
  columns: string[]
  filters: Filter[]
}

/** Operators by field type (contract §4), the first being the default. */
const OPERATORS: Record<string, readonly string[]> = {
  number: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte'],
  integer: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte'],
  date: ['eq', 'gt', 'gte', 'lt', 'lte'],
  datetime: ['gte', 'lte', 'gt', 'lt'],
  boolean: ['eq'],
  select: ['eq', 'ne'],
  multiselect: ['eq'],
  reference: ['eq', 'ne']
}
const TEXT_OPERATORS = ['contains', 'eq', 'ne', 'starts'] as const
const SCALAR = new Set(['string', 'text', 'markdown', 'richtext', 'slug', 'email', 'url', 'color', 'number', 'integer', 'boolean', 'date', 'datetime', 'select', 'multiselect'])

export const OPERATOR_LABELS: Record<string, string> = {
  eq: 'is', ne: 'is not', gt: 'after / above', gte: 'from / at least', lt: 'before / below', lte: 'until / at most', contains: 'contains', starts: 'starts with'
}

export function operatorsFor (def: FieldDefinition): readonly string[] {
  return OPERATORS[def.field_type] ?? TEXT_OPERATORS
}

/** Top-level fields a list can filter on and show as a column: scalars and single references. */
export function scalarFields (schema: ResolvedSchema): Array<[string, FieldDefinition]> {
  return Object.entries(schema.fields).filter(([, def]) => SCALAR.has(def.field_type) || (def.field_type === 'reference' && def.multiple !== true))
}

export function readListState (query: URLSearchParams, schema: ResolvedSchema): ListState {
  const per = Number.parseInt(query.get('per') ?? '', 10)
  const known = new Map(scalarFields(schema))
  const filters: Filter[] = []
  for (const [name, value] of query) {
    const m = FILTER.exec(name)
    const def = m === null ? undefined : known.get(m[1] ?? '')
    if (m !== null && def !== undefined && operatorsFor(def).includes(m[2] ?? '') && value !== '') filters.push({ field: m[1] ?? '', op: m[2] ?? '', value })
  }
  const trail = query.get('prev')
  return {
    q: query.get('q') ?? '',
    status: query.get('status') ?? 'all',
    sort: query.get('sort') ?? '',
    order: query.get('order') === 'desc' ? 'desc' : 'asc',
    perPage: (PAGE_SIZES as readonly number[]).includes(per) ? per : DEFAULT_PER_PAGE,
    after: query.get('after'),
    trail: trail === null ? [] : trail.split(' '),
    columns: (query.get('cols') ?? '').split(',').filter(c => known.has(c)),
    filters
  }
}

/** The API request of a list state, in `scope` (`_locale`, `_environment`). */
export function listRequest (state: ListState, scope: Query): Query {
  const query: Query = {
    ...scope,
    _per_page: state.perPage,
    _status: state.status,
    _q: state.q,
    _sort: state.sort,
    _order: state.sort !== '' ? state.order : undefined,
    _after: state.after
  }
  for (const f of state.filters) query[f.op === 'eq' ? f.field : `${f.field}[${f.op}]`] = f.value
  return query
}

/** The first page's place in the trail (it has no cursor). */
const FIRST = '-'

/** URL changes that start the list over from its first page (any change but paging). */
export const FROM_START = { after: null, prev: null } as const

/** The URL changes of Next: this page's cursor joins the trail. */
export function nextPage (state: ListState, next: string): Record<string, string> {
  return { after: next, prev: [...state.trail, state.after ?? FIRST].join(' ') }
}

/** The URL changes of Previous: the last cursor of the trail. */
export function previousPage (state: ListState): Record<string, string | null> {
  const trail = state.trail.slice(0, -1)
  const after = state.trail[state.trail.length - 1] ?? FIRST
  return { after: after === FIRST ? null : after, prev: trail.length === 0 ? null : trail.join(' ') }
}

export const filterParam = (f: { field: string, op: string }): string => `f.${f.field}.${f.op}`
